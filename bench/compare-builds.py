#!/usr/bin/env python3
"""Times one function of an .mlir file as compiled by two fusec builds, in
one process, alternating between them, and prints each build's fastest and
median time per call and the speedup of the second over the first.

  bench/compare-builds.py OLD_FUSEC NEW_FUSEC FILE.mlir --entry=f [--rounds=N]
      [other fusec options, e.g. --shape=x=64x28x28x1]

This VM's speed drifts by up to 2x for seconds at a time, so two runs of a
benchmark minutes apart compare the drift. Here both builds run in the same
process, within milliseconds of each other, many times over; each build's
fastest round is its figure when the host was fast.

A K-step function (`--entry=train_steps`) also takes its dynamic sizes
(K: the stacked batches' and metrics' leading dim) as integers: give K
with --dynamic-size=K (and the rest with --shape, e.g. x=8x64x28x28); the
time is then per call of K steps.

Each build emits an object file (`fusec --emit=obj`) whose function takes
one pointer per argument, result and workspace buffer; every buffer is
--buffer-mib MiB (64 by default: raise it for larger tensors) of zeros (the
arithmetic of x86 runs as fast on zeros as on other normal numbers, and
integer arguments stay valid indices). Needs cc and objcopy.

Compiled code forks into LLVM's OpenMP runtime (libomp); --old-threads and
--new-threads set the threads of each build's calls (default: the runtime's,
all CPUs), so `--old-threads=1 --new-threads=2` with the same fusec twice
measures the speed-up of two threads over one.

--old-args and --new-args give each build fusec options of its own (split
at spaces), so the same fusec twice compares two flag sets, e.g.
`--old-args=--master-weights=copy --new-args=--master-weights=split`.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void f_old(%(old_params)s);
void f_new(%(new_params)s);
void omp_set_num_threads(int);
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(void) {
  void *p[%(n)d + 1];
  for (int i = 0; i < %(n)d; i++) {
    p[i] = aligned_alloc(64, (size_t)%(mib)d << 20);
    memset(p[i], 0, (size_t)%(mib)d << 20);
  }
  static const int threads[2] = {%(old_threads)d, %(new_threads)d};
  f_old(%(old_args)s);
  f_new(%(new_args)s);
  double t0 = now();
  f_old(%(old_args)s);
  int inner = (int)(0.01 / (now() - t0)) + 1;
  static double times[2][%(rounds)d];
  for (int r = 0; r < %(rounds)d; r++)
    for (int v = 0; v < 2; v++) {
      if (threads[v])
        omp_set_num_threads(threads[v]);
      t0 = now();
      for (int i = 0; i < inner; i++) {
        if (v)
          f_new(%(new_args)s);
        else
          f_old(%(old_args)s);
      }
      times[v][r] = (now() - t0) / inner * 1e6;
    }
  for (int v = 0; v < 2; v++)
    qsort(times[v], %(rounds)d, sizeof(double), cmp);
  printf("%%-6s %%12s %%12s\n", "build", "fastest us", "median us");
  printf("%%-6s %%12.1f %%12.1f\n", "old", times[0][0], times[0][%(rounds)d / 2]);
  printf("%%-6s %%12.1f %%12.1f\n", "new", times[1][0], times[1][%(rounds)d / 2]);
  printf("speedup (fastest): %%.3f\n", times[0][0] / times[1][0]);
  return 0;
}
"""


def argument_kinds(fusec, args, extra):
    """The arguments of the entry function `fusec` emits (with the build's
    own options `extra`): "ptr" (tensors, results and workspace buffers) or
    "i64" (a dynamic size, such as the step count K of a `_steps` function,
    given by --dynamic-size)."""
    ir = subprocess.run([fusec, "--emit=llvm-ir", args.file,
                         f"--entry={args.entry}", "-o", "-"] +
                        args.fusec_args + extra,
                        check=True, capture_output=True, text=True).stdout
    define = re.search(r"^define .*@%s\((.*)\)" % re.escape(args.entry), ir,
                       re.M)
    if not define:
        sys.exit(f"compare-builds: no function @{args.entry} in the IR")
    flat = define.group(1)
    while "(" in flat:  # attributes such as initializes((0, 64))
        flat = re.sub(r"\([^()]*\)", "", flat)
    params = [p.strip().split()[0] for p in flat.split(",") if p.strip()]
    for p in params:
        if p == "i64" and args.dynamic_size is None:
            sys.exit(f"compare-builds: @{args.entry} takes dynamic sizes "
                     "(i64 arguments): give their value with --dynamic-size")
        if p not in ("ptr", "i64"):
            sys.exit(f"compare-builds: @{args.entry} takes a {p} argument; "
                     "only tensors and dynamic sizes are supported")
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("file")
    parser.add_argument("--entry", required=True)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--buffer-mib", type=int, default=64)
    parser.add_argument("--old-threads", type=int, default=0)
    parser.add_argument("--new-threads", type=int, default=0)
    parser.add_argument("--dynamic-size", type=int, default=None)
    parser.add_argument("--old-args", default="")
    parser.add_argument("--new-args", default="")
    args, fusec_args = parser.parse_known_args()
    args.fusec_args = [a for a in fusec_args if a != "--"]

    with tempfile.TemporaryDirectory() as work:
        objects = []
        extras = [shlex.split(args.old_args), shlex.split(args.new_args)]
        for (name, fusec), extra in zip(
                (("old", args.old), ("new", args.new)), extras):
            obj = os.path.join(work, name + ".o")
            subprocess.run([fusec, "--emit=obj", args.file,
                            f"--entry={args.entry}", "-o", obj] +
                           args.fusec_args + extra, check=True)
            subprocess.run(["objcopy", f"--redefine-sym={args.entry}=f_{name}",
                            obj], check=True)
            objects.append(obj)
        # The builds may take different numbers of workspace buffers: each
        # gets its own signature, pointers from one shared pool (as many as
        # the larger count) and every dynamic size --dynamic-size.
        kinds = [argument_kinds(fusec, args, extra)
                 for fusec, extra in zip((args.old, args.new), extras)]
        n = max(k.count("ptr") for k in kinds)

        def signature(params):
            return ", ".join("void *" if p == "ptr" else "long"
                             for p in params)

        def call(params):
            values, next_ptr = [], 0
            for p in params:
                if p == "ptr":
                    values.append(f"p[{next_ptr}]")
                    next_ptr += 1
                else:
                    values.append(f"{args.dynamic_size}L")
            return ", ".join(values)

        source = os.path.join(work, "harness.c")
        with open(source, "w") as f:
            f.write(HARNESS % {
                "n": n, "rounds": args.rounds, "mib": args.buffer_mib,
                "old_threads": args.old_threads,
                "new_threads": args.new_threads,
                "old_params": signature(kinds[0]),
                "new_params": signature(kinds[1]),
                "old_args": call(kinds[0]), "new_args": call(kinds[1])})
        binary = os.path.join(work, "harness")
        libomp = "/usr/lib/llvm-22/lib"
        # compiler-rt's builtins: bf16 code calls __truncsfbf2, which
        # GCC 12's libgcc lacks (the JIT resolves it from LLVM's).
        builtins = [b for b in [os.path.join(
            libomp, "clang/22/lib/linux/libclang_rt.builtins-x86_64.a")]
            if os.path.exists(b)]
        subprocess.run(["cc", "-O2", "-no-pie", source] + objects + builtins +
                       ["-o", binary, "-lm", f"-L{libomp}", "-lomp",
                        f"-Wl,-rpath,{libomp}"], check=True)
        subprocess.run([binary], check=True)


if __name__ == "__main__":
    main()
