#!/usr/bin/env bash
# Data-parallel training against one process, the same run:
#   fusec train MODEL --epochs 1 [ARGS] on 1 rank x 1 thread, then under
#   mpirun -np RANKS with 1 thread each, with the all-reduces overlapped
#   with the backward pass (the default) and without (--overlap=false),
#   each all-reduce by the default (--allreduce=auto: through shared memory
#   on one machine), and with overlap by Fuse's ring over MPI's messages
#   (--allreduce=ring) and the MPI library's MPI_Iallreduce (--allreduce=mpi);
#   prints each one's wall time (the whole command, compile included, on a
#   warm disk cache), its training and evaluation times, the speed-ups and the all-reduce's
#   share of rank 0's training time (the time compiled code spent in the
#   collectives' calls: with overlap, what the backward pass did not hide).
#   The runs go in ROUNDS rounds (default 1), interleaved, each figure the
#   fastest of its rounds.
# usage: bench/mpi-train.sh [RANKS [MODEL [fusec train args...]]]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
model=${2:-examples/cnn.mlir}
shift $(( $# > 2 ? 2 : $# ))
rounds=${ROUNDS:-1}
fusec=build/bin/fusec
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpirun=(mpirun --oversubscribe --mca pml ob1 --mca btl self,vader -np "$ranks")
[ "$(id -u)" -eq 0 ] && mpirun=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader -np "$ranks")

run() { # name, command...
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$@" --epochs 1 --threads 1 --progress=lines --json "$out/$name.json" > "$out/$name.log"
  end=$(date +%s.%N)
  echo "$end - $start" | bc > "$out/$name.wall"
}

# Warm the disk cache for all three, then measure.
run warm1 "$fusec" train "$model" "$@" --max-seconds 0
run warmN "${mpirun[@]}" "$fusec" train "$model" "$@" --max-seconds 0
run warmB "${mpirun[@]}" "$fusec" train "$model" "$@" --max-seconds 0 --overlap=false
run warmR "${mpirun[@]}" "$fusec" train "$model" "$@" --max-seconds 0 --allreduce=ring
run warmL "${mpirun[@]}" "$fusec" train "$model" "$@" --max-seconds 0 --allreduce=mpi
for round in $(seq "$rounds"); do
  run "one.$round" "$fusec" train "$model" "$@"
  run "many.$round" "${mpirun[@]}" "$fusec" train "$model" "$@"
  run "blocking.$round" "${mpirun[@]}" "$fusec" train "$model" "$@" --overlap=false
  run "ring.$round" "${mpirun[@]}" "$fusec" train "$model" "$@" --allreduce=ring
  run "library.$round" "${mpirun[@]}" "$fusec" train "$model" "$@" --allreduce=mpi
done

python3 - "$out" "$ranks" "$rounds" <<'PY'
import json, sys
out, ranks, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def best(name):
    runs = [(float(open(f"{out}/{name}.{r}.wall").read()),
             json.load(open(f"{out}/{name}.{r}.json"))) for r in range(1, rounds + 1)]
    return min(runs, key=lambda run: run[1]['train_seconds'])
one, many, blocking, ring, library = (best("one"), best("many"),
                                      best("blocking"), best("ring"),
                                      best("library"))
for name in ("one", "many", "blocking", "ring", "library"):
    runs = [json.load(open(f"{out}/{name}.{r}.json")) for r in range(1, rounds + 1)]
    print(f"rounds, {name:8}: training " +
          ", ".join(f"{j['train_seconds']:.2f}" for j in runs) + " s; all-reduce " +
          ", ".join(f"{j.get('allreduce_seconds', 0):.2f}" for j in runs) + " s")
for label, (wall, j) in (("1 rank x 1 thread", one),
                         (f"{ranks} ranks x 1 thread, default", many),
                         (f"{ranks} ranks x 1 thread, --overlap=false", blocking),
                         (f"{ranks} ranks x 1 thread, --allreduce=ring", ring),
                         (f"{ranks} ranks x 1 thread, --allreduce=mpi", library)):
    line = (f"{label:36} {wall:7.2f} s wall, {j['train_seconds']:7.2f} s training, "
            f"{j.get('evaluation_seconds', 0):5.2f} s evaluation, "
            f"test accuracy {j['test_accuracy']:.4f}")
    if 'allreduce_seconds' in j:
        line += (f", all-reduce {j['allreduce_seconds']:.2f} s "
                 f"({100 * j['allreduce_seconds'] / j['train_seconds']:.1f}%)")
    if len(j.get('allreduce_seconds_per_rank', [])) > 1:
        line += " [each rank's: " + ", ".join(
            f"{t:.2f}" for t in j['allreduce_seconds_per_rank']) + " s]"
    print(line)
for label, (wall, j) in (("default", many), ("--overlap=false", blocking),
                         ("--allreduce=ring", ring),
                         ("--allreduce=mpi", library)):
    print(f"speed-up, {label}: {one[0] / wall:.2f}x wall, "
          f"{one[1]['train_seconds'] / j['train_seconds']:.2f}x training")
print(f"overlap against --overlap=false: "
      f"{blocking[1]['train_seconds'] / many[1]['train_seconds']:.3f}x training")
print(f"the default (auto) against --allreduce=ring: "
      f"{ring[1]['train_seconds'] / many[1]['train_seconds']:.3f}x training")
print(f"the default (auto) against --allreduce=mpi: "
      f"{library[1]['train_seconds'] / many[1]['train_seconds']:.3f}x training")
PY
