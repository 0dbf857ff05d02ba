// The examples' command-line numbers: the value after an option, checked, so that a typo is
// an error that names it rather than a 0 (atoi's answer). Exits with status 2; call it
// before the runtime starts MPI, so that every rank just ends.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace example {

// The integer in `text`, which must lie in [lo, hi]; `what` names it in the message.
inline long integer(const char* program, const char* what, const char* text, long lo = 0,
                    long hi = std::numeric_limits<long>::max()) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    std::fprintf(stderr, "%s: %s takes an integer from %ld to %ld, not '%s'\n", program, what, lo, hi, text);
    std::exit(2);
  }
  return v;
}

// The value of option argv[i] (advancing i to it), as integer() reads it.
inline long option_value(const char* program, int argc, char** argv, int& i, long lo = 0,
                         long hi = std::numeric_limits<long>::max()) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
    std::exit(2);
  }
  ++i;
  return integer(program, argv[i - 1], argv[i], lo, hi);
}

}  // namespace example
