#!/usr/bin/env bash
# Runs tests/mpi/messages.cpp's job under HYTASK_VERBOSE=LEVEL and checks hytask's messages:
# one format ("hytask[rank R]: <level>: "); the workers warning, which every rank would print
# alike, exactly once and from rank 0; the failed-tasks warning once from each rank with its
# own prefix; at level 0 no warning at all; the runtime's info line (level 2) once per job;
# the debug lines (level 3) once per rank.
#   expect_messages.sh LEVEL RANKS COMMAND...
set -u
level=$1 ranks=$2
shift 2
out=$(HYTASK_VERBOSE=$level "$@" 2>&1)
status=$?
printf '%s\n' "$out"
fail() { echo "expect_messages: $*" >&2; exit 1; }
[[ $status -eq 0 ]] || fail "the job failed (status $status)"
grep -q "^messages: every rank ok" <<<"$out" || fail "the program did not finish its checks"
count() { grep -cE "$1" <<<"$out"; }
# Every line of hytask's carries a rank prefix in this MPI job.
bad=$(grep -E "^hytask" <<<"$out" | grep -vE "^hytask\[rank [0-9]+\]: " | head -n 1)
[[ -z $bad ]] || fail "a message without the rank prefix: $bad"
workers="warning: HYTASK_THREADS=9 is more than 8 times the 1 core"
failed="warning: wait_all: 2 tasks failed \(2 threw, 0 skipped"
if ((level >= 1)); then
  [[ $(count "^hytask\[rank [0-9]+\]: $workers") -eq 1 ]] ||
    fail "the workers warning appeared $(count "$workers") times, expected once per job"
  [[ $(count "^hytask\[rank 0\]: $workers") -eq 1 ]] || fail "the workers warning did not come from rank 0"
  for ((r = 0; r < ranks; ++r)); do
    [[ $(count "^hytask\[rank $r\]: $failed") -eq 1 ]] ||
      fail "rank $r: the failed-tasks warning with its prefix appeared $(count "^hytask\[rank $r\]: $failed") times, expected once"
  done
  [[ $(count "$failed") -eq $ranks ]] || fail "$(count "$failed") failed-tasks warnings, expected $ranks"
else
  [[ $(count "warning:") -eq 0 ]] || fail "HYTASK_VERBOSE=0 printed a warning"
fi
started="info: runtime started: 9 worker\(s\) per process, $ranks rank\(s\)"
if ((level >= 2)); then
  [[ $(count "^hytask\[rank 0\]: $started") -eq 1 && $(count "info: runtime started") -eq 1 ]] ||
    fail "the runtime's info line appeared $(count "info: runtime started") times, expected once, from rank 0"
else
  [[ $(count "info:") -eq 0 ]] || fail "HYTASK_VERBOSE=$level printed an info line"
fi
if ((level >= 3)); then
  for ((r = 0; r < ranks; ++r)); do
    [[ $(count "^hytask\[rank $r\]: debug: pid [0-9]+, ") -eq 1 ]] || fail "rank $r: no debug line"
  done
else
  [[ $(count "debug:") -eq 0 ]] || fail "HYTASK_VERBOSE=$level printed a debug line"
fi
echo "expect_messages: ok"
