#!/usr/bin/env bash
# hytask-info --node, run beside a HYTASK_PROGRESS=node job whose rank 0 holds a receive
# pending for a few seconds: it must find the job's node table and show rank 0's row with
# one pending operation; the job must then finish normally.
#   node_info_test.sh HYTASK_INFO COMMAND...
set -u
info=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1 &
job=$!
fail() { echo "node_info_test: $*" >&2; cat "$log"; kill "$job" 2>/dev/null; exit 1; }
seen=""
for _ in $(seq 1 60); do
  report=$("$info" --node) || fail "hytask-info --node failed"
  # columns: local rank pid state pending ...
  if grep -qE "^ +[0-9]+ +0 +[0-9]+ attached +1 " <<<"$report"; then seen=$report; break; fi
  sleep 0.1
done
printf '%s\n' "$report"
[[ -n $seen ]] || fail "hytask-info --node never showed rank 0 attached with 1 pending operation"
grep -qE "rank\(s\); agent in pid [0-9]+, (running|parked)" <<<"$seen" || fail "no agent line in the report"
wait "$job"
status=$?
cat "$log"
[[ $status -eq 0 ]] || fail "the job failed (status $status)"
grep -q "node_check hold: ok" "$log" || fail "the job did not print its ok"
echo "node_info_test: ok"
