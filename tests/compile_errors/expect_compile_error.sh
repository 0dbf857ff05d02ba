#!/usr/bin/env bash
# Compiles SOURCE with -DCASE_<NAME, dots as underscores>: it must fail, with MESSAGE among
# the errors. Then with -DFIXED as well: it must compile — what the message suggests works.
#   expect_compile_error.sh NAME MESSAGE SOURCE COMMAND_FILE
# COMMAND_FILE holds the compiler and its flags, one per line (tests/CMakeLists.txt).
set -u
name=$1 message=$2 source=$3 command_file=$4
compile=()
while IFS= read -r a; do [[ -n $a ]] && compile+=("$a"); done <"$command_file"
case_flag="-DCASE_${name//./_}"
fail() { echo "expect_compile_error: $name: $*" >&2; exit 1; }

out=$("${compile[@]}" -fsyntax-only "$case_flag" "$source" 2>&1)
status=$?
printf '%s\n' "$out"
((status != 0)) || fail "it compiled; it must not"
grep -qF -- "$message" <<<"$out" || fail "it failed, but without the message: $message"

out=$("${compile[@]}" -fsyntax-only "$case_flag" -DFIXED "$source" 2>&1) || {
  printf '%s\n' "$out"
  fail "the fix (-DFIXED) does not compile"
}
echo "expect_compile_error: $name: ok"
