# Extracts the C++ code blocks of a Markdown file or of a header's comments, and checks
# that no code hides outside them. Run with -v kind=md|header -v out=DIR.
#
# A block is fenced as in Markdown, in a header inside // comments:
#   ```cpp [context=NAME] [file=PATH]        // ```cpp context=NAME
#   ...                                      // ...
#   ```                                      // ```
# For each C++ block (cpp, c++, cxx) it writes DIR/block_<line>.cpp — the code, prefixes
# stripped — and prints "block <line of the fence> <line of the first code line> <attrs>".
# Problems are printed as "error <line> <message>".

function problem(line, msg) { print "error " line " " msg }

function open_fence(info, line,    lang, n, words, i) {
  n = split(info, words, /[ \t]+/)
  lang = tolower(words[1])
  if (lang == "") {
    problem(line, "a code block without a language: say which (```cpp, ```sh, ```text...), so that C++ is compiled and the rest is not")
    lang = "none"
  }
  in_block = 1
  is_cpp = (lang == "cpp" || lang == "c++" || lang == "cxx")
  fence_line = line
  attrs = ""
  for (i = 2; i <= n; i++) attrs = attrs " " words[i]
  if (is_cpp) {
    file = out "/block_" line ".cpp"
    printf "" > file
    first_code = 0
  }
}

function close_fence() {
  if (is_cpp) {
    close(file)
    print "block " fence_line " " (first_code ? first_code : fence_line + 1) attrs
  }
  in_block = 0
}

function code_line(text, line) {
  if (!is_cpp) return
  if (!first_code) first_code = line
  print text > file
}

BEGIN { in_block = 0 }

kind == "md" {
  line = $0
  if (!in_block) {
    if (line ~ /^ ? ? ?```/) {
      indent = line; sub(/```.*$/, "", indent)
      info = line; sub(/^ *```+[ \t]*/, "", info); sub(/[ \t]+$/, "", info)
      # As in CommonMark, backticks after the fence make it inline code, not a fence.
      if (info !~ /`/) open_fence(info, NR)
    }
    next
  }
  if (line ~ /^ ? ? ?```+[ \t]*$/) { close_fence(); next }
  # Remove the fence's indentation, as Markdown does.
  for (k = length(indent); k > 0 && substr(line, 1, 1) == " "; k--) line = substr(line, 2)
  code_line(line, NR)
  next
}

kind == "header" {
  is_comment = ($0 ~ /^[ \t]*\/\//)
  text = $0
  if (is_comment) { sub(/^[ \t]*\/\/ ?/, "", text) }
  if (in_block) {
    if (!is_comment) {
      problem(fence_line, "this example's ``` fence is not closed before the comment ends")
      close_fence()
      next
    }
    if (text ~ /^```[ \t]*$/) { close_fence(); next }
    code_line(text, NR)
    next
  }
  if (!is_comment) next
  if (text ~ /^```/) {
    info = text; sub(/^```+[ \t]*/, "", info); sub(/[ \t]+$/, "", info)
    open_fence(info, NR)
    next
  }
  # An indented comment line that uses hytask's API reads like an example nobody compiles.
  if (text ~ /^  +[^ ]/ && text ~ /hytask::[A-Za-z_:]+[ (<{]/)
    problem(NR, "this looks like an example outside a ```cpp fence: fence it (see DEVELOPERS.md) so that it is compiled")
  next
}

END {
  if (in_block) problem(fence_line, "this code block's ``` fence is never closed")
}
