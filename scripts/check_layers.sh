#!/usr/bin/env bash
# Checks the layering of src/ against the layer table of DESIGN.md (between the markers
# "<!-- layers" and "<!-- /layers -->"): every file of a folder may include its own folder,
# the public headers (include/hytask) and what its row's last column names — a folder, or
# one file such as core/face.hpp. Fails, naming the file, the include and the rule, when a
# file includes anything else, or when a folder of src/ has no row.
#
#   scripts/check_layers.sh [REPO]     (default: the repository this script is in)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
design=$root/DESIGN.md
src=$root/src
[[ -f $design && -d $src ]] || { echo "check_layers: no DESIGN.md or src/ under $root" >&2; exit 2; }

# folder -> allowed list, from the table: | floor | `folder` | what | `a` `b` ... |
declare -A allowed
while IFS=$'\t' read -r folder allow; do
  allowed[$folder]=$allow
done < <(awk '
  /<!-- layers/ { on = 1; next }
  /<!-- \/layers -->/ { on = 0 }
  on && /^\| *[0-9]+ *\|/ {
    n = split($0, f, "|")
    folder = f[3]; gsub(/[` ]/, "", folder); sub(/\(.*/, "", folder)
    allow = f[n - 1]; gsub(/`/, "", allow); gsub(/—/, "", allow)
    gsub(/^ +| +$/, "", allow)
    print folder "\t" allow
  }' "$design")
((${#allowed[@]} > 0)) || { echo "check_layers: no layer table in $design" >&2; exit 2; }

fail=0
folder_of() {  # src-relative path -> its layer folder ("." for files at the top of src/)
  [[ $1 == */* ]] && echo "${1%%/*}" || echo .
}
for d in "$src"/*/; do
  d=$(basename "$d")
  [[ -n ${allowed[$d]+x} ]] || { echo "check_layers: src/$d has no row in DESIGN.md's layer table"; fail=1; }
done
checked=0
while IFS= read -r file; do
  rel=${file#"$src"/}
  me=$(folder_of "$rel")
  [[ -n ${allowed[$me]+x} ]] || continue
  read -r -a allow <<<"${allowed[$me]}"
  while IFS= read -r inc; do
    [[ -e $src/$inc ]] || continue  # public headers, system headers
    them=$(folder_of "$inc")
    [[ $them == "$me" ]] && continue
    ok=0
    for a in "${allow[@]}"; do
      if [[ $a == "$them" || $a == "$inc" ]]; then ok=1; break; fi
    done
    if ((!ok)); then
      echo "check_layers: src/$rel includes \"$inc\": layer '$me' may include only its own folder and: ${allowed[$me]:-nothing else} (DESIGN.md, Layers)"
      fail=1
    fi
    checked=$((checked + 1))
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find "$src" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | sort)
if ((fail)); then exit 1; fi
echo "check_layers: ${#allowed[@]} layers, $checked includes across layers, all allowed"
