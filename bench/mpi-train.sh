#!/usr/bin/env bash
# Data-parallel training against one process, the same run:
#   fusec train MODEL --epochs 1 [ARGS] on 1 rank x 1 thread, then under
#   mpirun -np RANKS with 1 thread each; prints each one's wall time (the
#   whole command, compile included, on a warm disk cache), its training
#   time, the speed-up and the all-reduce's share of rank 0's training time.
# usage: bench/mpi-train.sh [RANKS [MODEL [fusec train args...]]]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
model=${2:-examples/cnn.mlir}
shift $(( $# > 2 ? 2 : $# ))
fusec=build/bin/fusec
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpirun=(mpirun --oversubscribe --mca btl self,vader -np "$ranks")
[ "$(id -u)" -eq 0 ] && mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$ranks")

run() { # name, command...
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$@" --epochs 1 --threads 1 --progress=lines --json "$out/$name.json" > "$out/$name.log"
  end=$(date +%s.%N)
  echo "$end - $start" | bc > "$out/$name.wall"
}

# Warm the disk cache for both, then measure.
run warm1 "$fusec" train "$model" "$@" --max-seconds 0
run warmN "${mpirun[@]}" "$fusec" train "$model" "$@" --max-seconds 0
run one "$fusec" train "$model" "$@"
run many "${mpirun[@]}" "$fusec" train "$model" "$@"

python3 - "$out" "$ranks" <<'PY'
import json, sys
out, ranks = sys.argv[1], int(sys.argv[2])
one, many = (json.load(open(f"{out}/{n}.json")) for n in ("one", "many"))
wall = {n: float(open(f"{out}/{n}.wall").read()) for n in ("one", "many")}
print(f"1 rank x 1 thread:  {wall['one']:.2f} s wall, {one['train_seconds']:.2f} s training, "
      f"test accuracy {one['test_accuracy']:.4f}")
print(f"{ranks} ranks x 1 thread: {wall['many']:.2f} s wall, {many['train_seconds']:.2f} s training, "
      f"test accuracy {many['test_accuracy']:.4f}")
print(f"speed-up: {wall['one'] / wall['many']:.2f}x wall, "
      f"{one['train_seconds'] / many['train_seconds']:.2f}x training")
print(f"all-reduce: {many['allreduce_seconds']:.2f} s, "
      f"{100 * many['allreduce_seconds'] / many['train_seconds']:.1f}% of rank 0's training")
PY
