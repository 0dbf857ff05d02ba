#!/usr/bin/env bash
# Runs a job with HYTASK_DISPLAY_AFFINITY=1 and HYTASK_PIN=cores and checks its binding
# report: every rank printed its header and the node line (HYTASK_PROGRESS=node) once; main
# and WORKERS-1 hytask-worker threads, each pinned to one CPU, distinct within a rank; and
# `sort` keeps each rank's lines together, header first.
#   expect_affinity.sh RANKS WORKERS COMMAND...
set -u
ranks=$1 workers=$2
shift 2
out=$("$@" 2>&1)
status=$?
report=$(grep '^hytask affinity: ' <<<"$out")
printf '%s\n' "$report"
fail() { echo "expect_affinity: $*" >&2; exit 1; }
[[ $status -eq 0 ]] || { printf '%s\n' "$out"; fail "the job failed (status $status)"; }
last=$((ranks - 1))
for ((i = 0; i < ranks; ++i)); do
  r=$(printf '%0*d' "${#last}" "$i")  # ranks are padded to the width of the last
  p="hytask affinity: rank $r/$ranks "
  lines=$(grep -F "$p" <<<"$report")
  [[ $(grep -c "^${p}host " <<<"$lines") -eq 1 ]] || fail "rank $r: no single header line"
  [[ $(grep -c "^${p}node: local rank " <<<"$lines") -eq 1 ]] || fail "rank $r: no single node line"
  main=$(grep -E "^${p}thread main \(.*\) tid [0-9]+: cpus [0-9]+$" <<<"$lines" | sed 's/.*cpus //')
  [[ -n $main ]] || fail "rank $r: main is not reported pinned to one CPU"
  mapfile -t wk < <(grep -E "^${p}thread hytask-worker tid [0-9]+: cpus " <<<"$lines" | sed 's/.*cpus //')
  [[ ${#wk[@]} -eq $((workers - 1)) ]] || fail "rank $r: ${#wk[@]} worker lines, expected $((workers - 1))"
  seen=" $main "
  for c in "${wk[@]}"; do
    [[ $c =~ ^[0-9]+$ ]] || fail "rank $r: a worker may run on '$c', expected one CPU (HYTASK_PIN=cores)"
    [[ $seen == *" $c "* ]] && fail "rank $r: two threads pinned to CPU $c"
    seen+="$c "
  done
done
# Sorted, each rank's lines stay together and its header comes first.
sorted=$(sort <<<"$report")
prev=""
while IFS= read -r line; do
  rank=${line#hytask affinity: rank }; rank=${rank%%/*}
  if [[ $rank != "$prev" ]]; then
    [[ $line == *" host "* ]] || fail "sorted, rank $rank's first line is not its header: $line"
    prev=$rank
  fi
done <<<"$sorted"
echo "expect_affinity: ok"
