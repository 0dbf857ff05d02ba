// One event of a trace file, read back: the files trace.cpp writes hold one JSON object per
// line, which is what the merge and the tools read (they stream a file line by line instead
// of parsing it whole). The values are kept as their JSON text, so that an event rewritten
// with a new time or process keeps everything else byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hytask::trace {

struct event {
  // The object's fields in their order, each value as JSON text (args included).
  std::vector<std::pair<std::string, std::string>> fields;
  // args, split the same way (empty when it is not an object).
  std::vector<std::pair<std::string, std::string>> args;

  const std::string* field(std::string_view key) const;
  void set_field(std::string_view key, std::string value);  // replaces, or appends
  std::string text(std::string_view key) const;  // a string field, unescaped ("" if none)
  std::optional<double> number(std::string_view key) const;
  std::optional<std::int64_t> arg_int(std::string_view key) const;
  std::string arg_text(std::string_view key) const;  // a string argument, unescaped
  // ts and dur in nanoseconds (the file has microseconds).
  std::optional<std::int64_t> ts_ns() const;
  std::int64_t dur_ns() const;
  std::string to_json() const;
};

// Parses a line holding one JSON object (a trailing comma and spaces are ignored). False
// when the line is not an object (the file's first and last lines).
bool parse_event(std::string_view line, event& out);

// Microseconds with three decimals, as the files write them.
std::string format_us(std::int64_t ns);
// A JSON string literal.
std::string quote(std::string_view s);

// The header of a trace file (its first line): what otherData says.
struct file_header {
  bool ours = false;           // written by hytask
  std::optional<int> rank;
  bool aligned = false;        // its times are on the reference clock
  std::int64_t origin_ns = 0;  // time 0 on the (reference) steady clock
};
file_header parse_header(std::string_view first_line);

}  // namespace hytask::trace
