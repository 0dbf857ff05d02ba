#!/usr/bin/env bash
# Runs a command that must fail with a hytask error the program does not catch, and checks
# how it fails: status 1, the message printed exactly once for the whole job as
# "hytask[rank R]: error: <message>" ("hytask: error: " without a launcher), and no "terminate called" / core dump.
#   expect_fatal_message.sh PATTERN COMMAND...      (PATTERN: an extended regex of the message)
set -u
pattern=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
count=$(grep -cE "^hytask(\[rank [0-9]+\])?: error: $pattern" <<<"$out")
fail() { echo "expect_fatal_message: $*" >&2; exit 1; }
[[ $status -eq 1 ]] || fail "exit status $status, expected 1"
[[ $count -eq 1 ]] || fail "the message 'hytask[rank R]: error: $pattern' was printed $count times, expected once"
grep -q "terminate called" <<<"$out" && fail "std::terminate's own message was printed"
echo "expect_fatal_message: ok"
