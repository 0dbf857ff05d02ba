#!/usr/bin/env bash
# Runs check_code_blocks.sh on the fixtures, which hold one problem of each kind, and checks
# that it fails and reports each at its line (and the good blocks as good).
#   expect_problems.sh ROOT WORK_DIR COMMAND_FILE
set -u
root=$1 work=$2 command_file=$3
md=tests/docs/fixtures/problems.md hpp=tests/docs/fixtures/problems.hpp
expected=(
  "$md:3: ok"
  "$md:7: this code block does not compile"
  "$md:11: a code block without a language"
  "$md:15: ok"
  "$md:19: this block must be identical to tests/docs/fixtures/program.cpp"
  "$md:23: context=no_such_context: there is no tests/docs/context/no_such_context.hpp"
  "$hpp:3: this looks like an example outside a \`\`\`cpp fence"
  "$hpp:7: this code block does not compile"
)
out=""
for f in "$md" "$hpp"; do
  o=$("$root/tests/docs/check_code_blocks.sh" "$root" "$f" "$work/$f" "$command_file" 2>&1)
  status=$?
  printf '%s\n' "$o"
  ((status == 1)) || { echo "expect_problems: $f: exit status $status, expected 1" >&2; exit 1; }
  out+="$o"$'\n'
done
missing=0
for line in "${expected[@]}"; do
  grep -qF -- "$line" <<<"$out" || { echo "expect_problems: missing: $line" >&2; missing=1; }
done
((missing == 0)) || exit 1
# The broken block is blamed alone: no other block of the file is reported as failing.
n=$(grep -cE "^tests/docs/fixtures/[a-z.]+:[0-9]+: this code block does not compile" <<<"$out")
((n == 2)) || { echo "expect_problems: $n blocks reported as not compiling, expected 2" >&2; exit 1; }
echo "expect_problems: ok"
