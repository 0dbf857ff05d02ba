#!/usr/bin/env bash
# The layer check must fail on a tree that breaks the rules: a layer that includes the
# scheduler past the core's face, the core including a layer above it, and a folder with
# no row. Builds each tree in a temporary directory from DESIGN.md's real table.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/scripts/check_layers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree() {  # a minimal tree: the face, a scheduler header, a comm file that uses the face
  rm -rf "$tmp/r" && mkdir -p "$tmp/r/src/core/sched" "$tmp/r/src/comm"
  cp "$root/DESIGN.md" "$tmp/r/"
  : >"$tmp/r/src/core/face.hpp"
  : >"$tmp/r/src/core/sched/scheduler.hpp"
  printf '#include "core/face.hpp"\n' >"$tmp/r/src/comm/ok.cpp"
}
expect() {  # expect <what> <pattern>: the check fails and says pattern
  local what=$1 pattern=$2 out
  if out=$("$check" "$tmp/r" 2>&1); then
    echo "FAIL: the check passed a tree where $what"; exit 1
  fi
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $what: no '$pattern' in: $out"; exit 1; }
  echo "ok: $what"
}
tree
"$check" "$tmp/r" >/dev/null || { echo "FAIL: the check rejects a tree that keeps the rules"; exit 1; }
echo "ok: a tree that keeps the rules passes"
printf '#include "core/sched/scheduler.hpp"\n' >"$tmp/r/src/comm/bad.cpp"
expect "comm includes the scheduler" 'src/comm/bad.cpp includes "core/sched/scheduler.hpp"'
tree
printf '#include "comm/ok.cpp"\n' >"$tmp/r/src/core/sched/up.cpp"
expect "the core includes comm" 'src/core/sched/up.cpp includes "comm/ok.cpp"'
tree
mkdir -p "$tmp/r/src/stray" && : >"$tmp/r/src/stray/x.cpp"
expect "a folder has no row" 'src/stray has no row'
