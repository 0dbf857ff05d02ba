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
  grep -q "^run 'hytask-overlap --help'" <<<"$err" || fail "'$*' did not point at --help"
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

# Into a file, not a pipe: grep -q would close it after the first line, and the tool's later
# writes of its long help would die of SIGPIPE (a failed pipeline under pipefail).
"$tool" --help >"$out/help.txt" || fail "--help exited with $?"
grep -q "^usage: hytask-overlap" "$out/help.txt" || fail "--help printed no usage"

if (($#)); then
  "$tool" --merge "$@" --csv "$out/merged.csv" --json "$out/merged.json" >"$out/merged.txt" \
    || fail "--merge failed"
  rows=0
  for f in "$@"; do
    n=$(grep -c '"run":' "$f"); rows=$((rows + n))
  done
  cmake -DCSV="$out/merged.csv" -DJSON="$out/merged.json" -DROWS=$rows \
    -P "$here/check_overlap_output.cmake" || fail "merged output is invalid"
  # The table: its header, and one row per result (size, MPI, mode, pattern, overlap %).
  grep -qE "^size +mpi +mode +pattern +overlap +T_lat +\+latency +compute" "$out/merged.txt" ||
    fail "--merge printed no table header"
  table_rows=$(grep -cE "^[0-9]+ (B|KiB|MiB) +(openmpi|mpich) +(mpi|mpi-progress|hytask-[a-z]+) +[A-Z]+(\([0-9]+\))? +-?[0-9]+\.[0-9][ *] " \
    "$out/merged.txt")
  ((table_rows == rows)) || fail "--merge printed $table_rows table rows for $rows results"
  if command -v gnuplot >/dev/null; then
    "$tool" --merge "$@" --plot "$out/merged.png" >/dev/null || fail "--plot failed"
    [[ $(head -c 4 "$out/merged.png" | od -An -c | tr -d ' ') == "211PNG" ]] \
      || fail "--plot did not write a PNG"
  fi
fi

# Files --merge cannot use: status 1 (docs/overlap.md: 2 is for usage errors, 1 for any other
# failure, a crash is neither) and a message naming the file and the problem.
expect_merge_error() {  # FILE MESSAGE
  local err status
  err=$("$tool" --merge "$1" 2>&1 >/dev/null); status=$?
  ((status == 1)) || fail "--merge $1 exited with $status, expected 1"
  grep -qF "hytask-overlap: $1: $2" <<<"$err" || fail "--merge $1 did not say '$1: $2': $err"
}
echo '{"tool": "something else"}' >"$out/bad.json"
expect_merge_error "$out/bad.json" "not written by hytask-overlap --json"
echo '{"tool": "hytask-overlap", "runs": [' >"$out/truncated.json"
expect_merge_error "$out/truncated.json" "not a valid hytask-overlap JSON file"
rm -f "$out/missing.json"
expect_merge_error "$out/missing.json" "cannot open it"
echo PASS
