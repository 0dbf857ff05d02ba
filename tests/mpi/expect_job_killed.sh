#!/usr/bin/env bash
# Runs an MPI job in which rank VICTIM kills itself (SIGKILL) while a peer waits for its
# message, and checks that the job ends, with a failure status and a message that names the
# killed process, instead of hanging (60 s at most).
#   expect_job_killed.sh VICTIM COMMAND...
set -u
victim=$1
shift
out=$(timeout 60 "$@" 2>&1)
status=$?
printf '%s\n' "$out"
fail() { echo "expect_job_killed: $*" >&2; exit 1; }
[[ $status -ne 124 ]] || fail "the job hung: still running after 60 s"
[[ $status -ne 0 ]] || fail "the job exited with status 0 although rank $victim was killed"
grep -q "node_check kill: rank $victim kills itself" <<<"$out" || fail "rank $victim did not reach its kill"
grep -q "got a message from a dead rank" <<<"$out" && fail "a rank returned from a receive nobody sent"
# Open MPI: "... exited on signal 9 (Killed)"; MPICH: "... KILLED BY SIGNAL: 9 (Killed)".
grep -qiE "signal:? 9|killed" <<<"$out" || fail "no message names the killed process"
echo "expect_job_killed: ok (status $status)"
