#!/usr/bin/env bash
# Compiles every C++ code block of one documentation file (Markdown, or a public header's
# comments) against hytask, and reports each block that does not compile by file and line.
#   check_code_blocks.sh ROOT FILE WORK_DIR COMMAND_FILE
# FILE is relative to ROOT; COMMAND_FILE holds the compiler and its flags, one per line.
# The conventions (DEVELOPERS.md, "Code in the documentation"):
#  - ```cpp blocks are C++; every block names its language (```sh, ```text...).
#  - A block that defines main() is a program, compiled as it stands. Any other block is a
#    fragment: the body of a function.
#  - context=NAME puts tests/docs/context/NAME.hpp (the declarations the block assumes)
#    before the block; a fragment without one gets context/default.hpp (hytask's headers).
#  - file=PATH: the block must be identical to PATH, a file the build compiles (and a test
#    runs), e.g. examples/first_program.cpp.
# Blocks are checked with -fsyntax-only: a fragment's names must exist and its calls must
# type-check, templates instantiated. Fragments of one file and context share one
# translation unit (one function each); #line directives make every diagnostic point into
# FILE.
set -u
root=$1 rel=$2 work=$3 command_file=$4
compile=()
while IFS= read -r a; do [[ -n $a ]] && compile+=("$a"); done <"$command_file"
contexts="$root/tests/docs/context"
src="$root/$rel"

rm -rf "$work" && mkdir -p "$work" || exit 2
case "$rel" in
  *.md) kind=md ;;
  *) kind=header ;;
esac
manifest=$(awk -v kind="$kind" -v out="$work" -f "$root/tests/docs/extract_code_blocks.awk" "$src") || {
  echo "$rel: could not read it" >&2
  exit 2
}

failures=0
fail() {  # LINE MESSAGE [DETAILS]
  echo "$rel:$1: $2"
  [[ -n ${3:-} ]] && printf '%s\n' "$3" | sed 's/^/    /'
  failures=$((failures + 1))
}

# Runs the compiler on TU; on failure, reports every block (fence line, first code line,
# last code line in the triples of $2) that a diagnostic points into, or the first block.
compile_tu() {  # TU "FENCE FIRST LAST ..."
  local tu=$1 blocks=$2 out status
  out=$("${compile[@]}" -fsyntax-only -Wno-unused -x c++ "$tu" 2>&1)
  status=$?
  set -- $2
  if ((status == 0)); then
    while (($# >= 3)); do echo "$rel:$1: ok"; shift 3; done
    return
  fi
  local blamed=0 fence first last clean=()
  while (($# >= 3)); do
    fence=$1 first=$2 last=$3
    shift 3
    if grep -qE "(^|[^[:alnum:]_/.])$(printf '%s' "$rel" | sed 's/[.[\*^$/]/\\&/g'):($(seq -s '|' "$first" "$last"))[:,)]" <<<"$out"; then
      fail "$fence" "this code block does not compile"
      blamed=1
    else
      clean+=("$fence")
    fi
  done
  if ((blamed)); then
    for fence in "${clean[@]}"; do echo "$rel:$fence: ok"; done
  fi
  ((blamed)) || fail "$(awk '{print $1}' <<<"$blocks")" "a code block of this file does not compile"
  printf '%s\n' "$out" | sed 's/^/    /'
}

declare -A fragments  # context -> TU path
declare -A fragment_blocks  # context -> "fence first last ..."
nblocks=0
while read -r what fence first attrs_line; do
  if [[ $what == error ]]; then
    fail "$fence" "$first${attrs_line:+ $attrs_line}"
    continue
  fi
  [[ $what == block ]] || continue
  nblocks=$((nblocks + 1))
  block="$work/block_$fence.cpp"
  last=$((first + $(wc -l <"$block") - 1))
  context="" same_as=""
  for attr in $attrs_line; do
    case "$attr" in
      context=*) context=${attr#context=} ;;
      file=*) same_as=${attr#file=} ;;
      *) fail "$fence" "unknown attribute '$attr' (context=NAME or file=PATH)" ;;
    esac
  done
  if [[ -n $context && ! -f "$contexts/$context.hpp" ]]; then
    fail "$fence" "context=$context: there is no tests/docs/context/$context.hpp"
    continue
  fi
  if [[ -n $same_as ]]; then
    if [[ ! -f "$root/$same_as" ]]; then
      fail "$fence" "file=$same_as: no such file"
    elif ! cmp -s "$block" "$root/$same_as"; then
      fail "$fence" "this block must be identical to $same_as (it is built and tested); the difference:" \
        "$(diff -u --label "$same_as" --label "$rel:$first" "$root/$same_as" "$block")"
    fi
  fi
  if grep -qE '^(int|auto)[[:space:]]+main[[:space:]]*\(' "$block"; then
    tu="$work/program_$fence.cpp"
    {
      [[ -n $context ]] && echo "#include \"$contexts/$context.hpp\""
      echo "#line $first \"$rel\""
      cat "$block"
    } >"$tu"
    compile_tu "$tu" "$fence $first $last"
  else
    key=${context:-default}
    tu="$work/fragments_$key.cpp"
    if [[ -z ${fragments[$key]:-} ]]; then
      echo "#include \"$contexts/$key.hpp\"" >"$tu"
      fragments[$key]=$tu
    fi
    {
      echo "void hytask_doc_block_$fence() {"
      echo "#line $first \"$rel\""
      cat "$block"
      echo "}"
    } >>"$tu"
    fragment_blocks[$key]="${fragment_blocks[$key]:-} $fence $first $last"
  fi
done <<<"$manifest"

for key in "${!fragments[@]}"; do
  compile_tu "${fragments[$key]}" "${fragment_blocks[$key]}"
done

if ((failures)); then
  echo "$rel: $nblocks C++ block(s), $failures problem(s)"
  exit 1
fi
if ((nblocks == 0)); then
  echo "$rel: no C++ code blocks, and no example outside a fence"
else
  echo "$rel: $nblocks C++ block(s), all compile"
fi
