#!/usr/bin/env bash
# Two or more builds of bench_tasks, interleaved: ROUNDS rounds, each running every binary
# once (3 repetitions after a warm-up), then the median per binary. Interleaving is what
# makes a before/after comparison meaningful on a host whose speed drifts by 20-50 %; the
# cache-line round trip (bench_core_to_core) is printed before and after, as it moves the
# figures of cases whose tasks cross cores.
#   bench/run_ab_tasks.sh CASE N THREADS ROUNDS BIN...
# e.g., against the commit before the scheduling issue:
#   git worktree add /tmp/base d1709a1 && cmake -S /tmp/base -B /tmp/base/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/base/build --target bench_tasks
#   bench/run_ab_tasks.sh deps 1000000 2 5 /tmp/base/build/bench/bench_tasks build/bench/bench_tasks
set -euo pipefail
[[ $# -ge 5 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
case=$1 n=$2 threads=$3 rounds=$4
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)
c2c=${HYTASK_BUILD_DIR:-$root/build}/bench/bench_core_to_core
for b in "$@"; do [[ -x $b ]] || { echo "not an executable: $b" >&2; exit 2; }; done
[[ -x $c2c ]] && "$c2c" | sed 's/^/before: /'
declare -A values
for ((r = 0; r < rounds; ++r)); do
  for b in "$@"; do
    v=$("$b" --case "$case" --n "$n" --threads "$threads" --reps 3 | sed -nE 's/.*ns_per_unit=([0-9.]+).*/\1/p')
    [[ -n $v ]] || { echo "$b printed no ns_per_unit" >&2; exit 1; }
    values[$b]+="$v "
  done
done
[[ -x $c2c ]] && "$c2c" | sed 's/^/after: /'
for b in "$@"; do
  median=$(tr ' ' '\n' <<<"${values[$b]}" | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  echo "case=$case threads=$threads bin=$b median_ns=$median runs=[${values[$b]% }]"
done
