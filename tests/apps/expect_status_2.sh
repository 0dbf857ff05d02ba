#!/usr/bin/env bash
# expect_status_2.sh REGEX COMMAND...: the command must exit with status 2 (a usage error)
# and print a message matching the extended regular expression REGEX.
regex=$1
shift
out=$("$@" 2>&1)
status=$?
if [[ $status -ne 2 ]]; then
  printf 'FAIL: exit status %d, expected 2 (a usage error):\n%s\n' "$status" "$out"
  exit 1
fi
if ! grep -qE -- "$regex" <<<"$out"; then
  printf 'FAIL: the message does not match %s:\n%s\n' "$regex" "$out"
  exit 1
fi
echo "ok: status 2 with: $regex"
