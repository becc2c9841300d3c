#!/usr/bin/env bash
# Cold compiles of builds against each other, the same run: for each round,
#   each FUSEC in turn runs `fusec train MODEL --epochs EPOCHS --json` with
#   an empty FUSE_CACHE_DIR and its `compile_seconds` (the step function's
#   and the evaluation's compiles, everything training calls) is kept;
#   prints every round, then each build's median and its ratio to the
#   first build's median. Under TASKSET (e.g. TASKSET="taskset -c 1") for
#   one core. Run it under the build lock, `uptime` before and after.
# usage: ROUNDS=9 bench/cold-compile.sh MODEL EPOCHS FUSEC...
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1
epochs=$2
shift 2
rounds=${ROUNDS:-9}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A times
for ((r = 1; r <= rounds; r++)); do
  line="round $r:"
  for ((b = 1; b <= $#; b++)); do
    fusec=${!b}
    dir=$out/cache$r.$b
    mkdir -p "$dir"
    FUSE_CACHE_DIR=$dir ${TASKSET:-} "$fusec" train "$model" --epochs "$epochs" \
      --json "$out/o.json" > /dev/null
    t=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["compile_seconds"])' "$out/o.json")
    times[$b]="${times[$b]:-} $t"
    line+=" $(printf '%.3f' "$t")"
  done
  echo "$line"
done
first=""
for ((b = 1; b <= $#; b++)); do
  median=$(python3 -c 'import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))' ${times[$b]})
  [ -z "$first" ] && first=$median
  printf '%s: median %.3f s, %.2f of the first\n' "${!b}" "$median" \
    "$(python3 -c "print($median / $first)")"
done
