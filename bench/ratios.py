#!/usr/bin/env python3
"""Runs fuse-bench with interleaved repetitions and prints, per shape, the
median rate of Fuse and of its reference, and the ratio of the medians.

On a machine whose speed drifts (shared hosts, turbo), a ratio of two runs
minutes apart measures the drift; random interleaving of the repetitions
exposes both sides to the same drift, and the medians drop the outliers.
The last column is the ratio of the best rates: each side at its fastest,
the steadiest figure when the drift outlasts a repetition.

  bench/ratios.py build/bin/fuse-bench 'Sgemm|FuseMatmul' [repetitions]
"""
import json
import statistics
import subprocess
import sys

PAIRS = [("BM_OpenBLASSgemm/", "BM_FuseMatmul/", "GFLOP/s"),
         ("BM_OpenBLASConvGemm/", "BM_FuseConv2d/", "GFLOP/s")]


def main():
    binary, pattern = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    out = subprocess.run(
        [binary, f"--benchmark_filter={pattern}", "--benchmark_min_time=0.2",
         f"--benchmark_repetitions={reps}",
         "--benchmark_enable_random_interleaving=true",
         "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        for ref, fuse, unit in PAIRS:
            if unit in b:
                rates.setdefault(b["run_name"], []).append(b[unit])
    print(f"{'shape':<28}{'reference':>12}{'fuse':>12}{'ratio':>8}"
          f"{'best':>8}")
    for ref, fuse, unit in PAIRS:
        for name in rates:
            if not name.startswith(ref):
                continue
            shape = name[len(ref):]
            if fuse + shape not in rates:
                continue
            r = statistics.median(rates[name])
            f = statistics.median(rates[fuse + shape])
            best = max(rates[fuse + shape]) / max(rates[name])
            print(f"{shape:<28}{r:>12.1f}{f:>12.1f}{f / r:>8.2f}"
                  f"{best:>8.2f}")


if __name__ == "__main__":
    main()
