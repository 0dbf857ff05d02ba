#include "trace/event_line.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace hytask::trace {

namespace {

struct cursor {
  std::string_view s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // The JSON text of the value at the cursor, skipped.
  bool value(std::string_view& out) {
    ws();
    const std::size_t start = i;
    if (i >= s.size()) return false;
    const char c = s[i];
    if (c == '"') {
      if (!string_end()) return false;
    } else if (c == '{' || c == '[') {
      int depth = 0;
      while (i < s.size()) {
        const char d = s[i];
        if (d == '"') {
          if (!string_end()) return false;
          continue;
        }
        ++i;
        if (d == '{' || d == '[') ++depth;
        else if (d == '}' || d == ']') {
          if (--depth == 0) break;
        }
      }
      if (depth != 0) return false;
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' &&
             !std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
      if (i == start) return false;
    }
    out = s.substr(start, i - start);
    return true;
  }
  bool string_end() {  // at a '"': past the closing one
    ++i;
    while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
    if (i >= s.size()) return false;
    ++i;
    return true;
  }
};

std::string unescape(std::string_view q) {
  if (q.size() < 2 || q.front() != '"') return std::string(q);
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (c != '\\' || i + 2 >= q.size()) {
      out.push_back(c);
      continue;
    }
    c = q[++i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        unsigned v = 0;
        if (i + 4 < q.size()) std::from_chars(q.data() + i + 1, q.data() + i + 5, v, 16);
        i += 4;
        if (v < 0x80) out.push_back(static_cast<char>(v));
        else out.push_back('?');  // hytask escapes control characters only
        break;
      }
      default: out.push_back(c);
    }
  }
  return out;
}

bool parse_object(std::string_view text, std::vector<std::pair<std::string, std::string>>& out) {
  cursor c{text};
  if (!c.eat('{')) return false;
  if (c.eat('}')) return true;
  for (;;) {
    std::string_view key, val;
    c.ws();
    if (!c.value(key) || key.empty() || key.front() != '"') return false;
    if (!c.eat(':')) return false;
    if (!c.value(val)) return false;
    out.emplace_back(unescape(key), std::string(val));
    if (c.eat(',')) continue;
    return c.eat('}');
  }
}

std::optional<double> to_number(std::string_view v) {
  double d = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
  return d;
}

}  // namespace

const std::string* event::field(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

void event::set_field(std::string_view key, std::string value) {
  for (auto& [k, v] : fields)
    if (k == key) {
      v = std::move(value);
      return;
    }
  fields.emplace_back(std::string(key), std::move(value));
}

std::string event::text(std::string_view key) const {
  const std::string* v = field(key);
  return v ? unescape(*v) : std::string();
}

std::optional<double> event::number(std::string_view key) const {
  const std::string* v = field(key);
  return v ? to_number(*v) : std::nullopt;
}

std::optional<std::int64_t> event::arg_int(std::string_view key) const {
  for (const auto& [k, v] : args)
    if (k == key) {
      std::int64_t x = 0;
      auto r = std::from_chars(v.data(), v.data() + v.size(), x);
      if (r.ec == std::errc() && r.ptr == v.data() + v.size()) return x;
      if (auto d = to_number(v)) return static_cast<std::int64_t>(*d);
      return std::nullopt;
    }
  return std::nullopt;
}

std::string event::arg_text(std::string_view key) const {
  for (const auto& [k, v] : args)
    if (k == key) return unescape(v);
  return {};
}

std::optional<std::int64_t> event::ts_ns() const {
  auto t = number("ts");
  if (!t) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(*t * 1000.0));
}

std::int64_t event::dur_ns() const {
  auto d = number("dur");
  return d ? static_cast<std::int64_t>(std::llround(*d * 1000.0)) : 0;
}

std::string event::to_json() const {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : fields) {
    if (!first) out.push_back(',');
    first = false;
    out += quote(k);
    out.push_back(':');
    out += v;
  }
  out.push_back('}');
  return out;
}

bool parse_event(std::string_view line, event& out) {
  while (!line.empty() && (std::isspace(static_cast<unsigned char>(line.back())) || line.back() == ','))
    line.remove_suffix(1);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
  if (line.empty() || line.front() != '{' || line.back() != '}') return false;
  out.fields.clear();
  out.args.clear();
  if (!parse_object(line, out.fields)) return false;
  if (const std::string* a = out.field("args"); a && !a->empty() && a->front() == '{')
    if (!parse_object(*a, out.args)) out.args.clear();
  return out.field("ph") != nullptr;
}

std::string format_us(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t u = neg ? static_cast<std::uint64_t>(-ns) : static_cast<std::uint64_t>(ns);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%llu.%03u", neg ? "-" : "", static_cast<unsigned long long>(u / 1000),
                static_cast<unsigned>(u % 1000));
  return buf;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      char tmp[8];
      std::snprintf(tmp, sizeof tmp, "\\u%04x", c);
      out += tmp;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

file_header parse_header(std::string_view line) {
  file_header h;
  const auto at = line.find("\"otherData\":");
  if (at == std::string_view::npos) return h;
  cursor c{line, at + 12};
  std::string_view obj;
  if (!c.value(obj)) return h;
  std::vector<std::pair<std::string, std::string>> kv;
  if (!parse_object(obj, kv)) return h;
  for (const auto& [k, v] : kv) {
    if (k == "producer") h.ours = unescape(v) == "hytask";
    else if (k == "rank") {
      if (auto d = to_number(v)) h.rank = static_cast<int>(*d);
    } else if (k == "clock") h.aligned = unescape(v) == "aligned";
    else if (k == "origin_ns") {
      std::int64_t x = 0;
      std::from_chars(v.data(), v.data() + v.size(), x);
      h.origin_ns = x;
    }
  }
  return h;
}

}  // namespace hytask::trace
