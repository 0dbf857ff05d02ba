#!/usr/bin/env bash
# ctest's check of run_metg.sh at a tiny size: two passes over one pattern of hytask and MPI
# must give one analysis line per sweep point with both passes in it, and a METG table with
# a figure for each system; a bad --passes must be refused. The sweep tops out at 50 µs tasks,
# twenty times hytask's METG at this size, so a loaded CI machine still reaches 50 % (at a top of
# 5 µs it once did not); when other processes hold much of the machine, it is skipped (77).
#   test_run_metg.sh BUILD_DIR
set -euo pipefail
build=$1
here="$(cd "$(dirname "$0")" && pwd)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "test_run_metg: $*" >&2; exit 1; }

"$here/run_metg.sh" --build "$build" --systems "hytask mpi" --patterns trivial --steps 50 \
  --top-us 50 --reps 1 --passes 2 --plots "" --no-latency --out "$out" >"$out/log" 2>&1 ||
  { cat "$out/log" >&2; fail "run_metg.sh failed"; }
[[ $(grep -c '^system=' "$out/raw.txt") -gt 0 ]] || fail "no result lines in raw.txt"
# Every point appears in both passes, once per pass, and analysis.txt holds each point once.
points=$(grep -c '^trivial ' "$out/analysis.txt")
runs=$(grep -c '^system=' "$out/raw.txt")
((runs == 2 * points)) || fail "raw.txt has $runs runs for $points points, not two passes of each"
awk '$1 == "trivial" && $10 != 2 { bad = 1 } END { exit bad }' "$out/analysis.txt" ||
  fail "an analysis line is not the median of 2 passes: $(cat "$out/analysis.txt")"
grep -q 'Each point: the median of 2 passes' "$out/summary.md" || fail "the summary does not say so"
# The round trip is sampled after each pattern of each pass, and the summary gives its range.
(($(grep -c '^# round trip after pass ' "$out/raw.txt") == 2)) ||
  fail "raw.txt has not one round trip per pass and pattern: $(grep '^# round trip' "$out/raw.txt")"
grep -Eq 'and [0-9.]+-[0-9.]+ ns after each pattern of each pass \([0-9]+ of 2 over 150 ns' "$out/summary.md" ||
  fail "the summary does not give the round trips between patterns: $(head -5 "$out/summary.md")"
row=$(grep -m1 '^| trivial |' "$out/summary.md") || fail "no trivial row in the summary"
# Half the peak cannot be reached while other processes hold a share of the two cores: the
# row then says "not reached" for a reason outside hytask. The runner measured that share
# around each run ("# cpu other=X% steal=Y%"); above a quarter of the machine the check
# cannot judge, and says so (status 77, skipped) instead of failing or passing.
if [[ $row == *"not reached"* ]]; then
  busiest=$(awk '/^# cpu other=/ { split($3, o, /[=%]/); split($4, t, /[=%]/)
                                   x = o[2] + t[2]; if (x > m) m = x } END { printf "%.0f", m }' "$out/raw.txt")
  if ((busiest > 25)); then
    echo "test_run_metg: skipped: other processes took up to $busiest % of the CPU during the sweep," \
         "so 50 % of the peak could not be judged: $row"
    exit 77
  fi
fi
[[ $row =~ ^\|\ trivial\ \|\ (\<\ )?[0-9.]+(\ \([0-9.]+×\))?\ \|\ (\<\ )?[0-9.]+\ \|$ ]] ||
  fail "the trivial row has no METG for both systems: $row"$'\n'"$(cat "$out/analysis.txt")"

if "$here/run_metg.sh" --build "$build" --passes 0 --out "$out/bad" >"$out/bad.log" 2>&1; then
  fail "--passes 0 was accepted"
fi
grep -q "passes must be a positive integer" "$out/bad.log" || fail "--passes 0: $(cat "$out/bad.log")"
echo "test_run_metg: ok ($points points, 2 passes; $row)"
