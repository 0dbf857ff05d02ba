#!/usr/bin/env bash
# check_exit.sh [--skip N] EXPECTED COMMAND...: runs COMMAND, its output passing through, and
# requires its exit status to be EXPECTED (a number, or "nonzero"); with --skip, status N
# passes through (the test's SKIP_RETURN_CODE: it could not judge, and said why). ctest
# ignores the exit status of a test that has a PASS_REGULAR_EXPRESSION, so a program that
# prints its "ok" line and then crashes (in MPI_Finalize, say) would pass; hytask_add_test
# (cmake/hytask_testing.cmake) runs such tests through this script, whose mismatch line its
# FAIL_REGULAR_EXPRESSION matches.
skip=""
if [[ $1 == --skip ]]; then
  skip=$2
  shift 2
fi
expected=$1
shift
"$@"
status=$?
[[ -n $skip ]] && ((status == skip)) && exit "$status"
if [[ $expected == nonzero ]]; then
  ((status != 0)) && exit 0
elif ((status == expected)); then
  exit 0
fi
echo "check_exit: exit status $status, expected $expected" >&2
exit 1
