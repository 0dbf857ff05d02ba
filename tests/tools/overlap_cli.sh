#!/usr/bin/env bash
# hytask-overlap's command line without MPI: usage errors exit with 2 and print the usage,
# --help exits with 0, and --merge combines runs into CSV, JSON and (with gnuplot) a PNG.
#   overlap_cli.sh TOOL OUTDIR [JSON...]
set -uo pipefail
tool=$1 out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$out"

expect_usage_error() {
  local err status
  err=$("$tool" "$@" 2>&1 >/dev/null); status=$?
  ((status == 2)) || fail "'$*' exited with $status, expected 2"
  grep -q "^usage: hytask-overlap" <<<"$err" || fail "'$*' printed no usage text"
  grep -q "^hytask-overlap: " <<<"$err" || fail "'$*' did not say what is wrong"
}
expect_usage_error --no-such-option
expect_usage_error --sizes 7
expect_usage_error --sizes 16M:1M
expect_usage_error --modes mpi,nosuchmode
expect_usage_error --modes mpi,mpi
expect_usage_error --modes mpi,mpi-progress
expect_usage_error --patterns async:0
expect_usage_error --steps 0.1:1
expect_usage_error --partners 0
expect_usage_error --layout vector:4
expect_usage_error --layout vector:8:4
expect_usage_error --sizes 1000 --layout vector:4:8
expect_usage_error --iters
expect_usage_error --merge

"$tool" --help | grep -q "^usage: hytask-overlap" || fail "--help printed no usage"

if (($#)); then
  "$tool" --merge "$@" --csv "$out/merged.csv" --json "$out/merged.json" >"$out/merged.txt" \
    || fail "--merge failed"
  rows=0
  for f in "$@"; do
    n=$(grep -c '"run":' "$f"); rows=$((rows + n))
  done
  cmake -DCSV="$out/merged.csv" -DJSON="$out/merged.json" -DROWS=$rows \
    -P "$here/check_overlap_output.cmake" || fail "merged output is invalid"
  grep -q "overlap" "$out/merged.txt" || fail "--merge printed no table"
  if command -v gnuplot >/dev/null; then
    "$tool" --merge "$@" --plot "$out/merged.png" >/dev/null || fail "--plot failed"
    [[ $(head -c 4 "$out/merged.png" | od -An -c | tr -d ' ') == "211PNG" ]] \
      || fail "--plot did not write a PNG"
  fi
  echo '{"tool": "something else"}' >"$out/bad.json"
  "$tool" --merge "$out/bad.json" >/dev/null 2>&1 && fail "--merge accepted a foreign JSON file"
fi
echo PASS
