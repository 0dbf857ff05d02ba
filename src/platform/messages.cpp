// The library's messages to stderr (messages.hpp).
#include "platform/messages.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string>

namespace hytask::core {
namespace {

std::atomic<message_rank_fn> g_rank_source{nullptr};

const char* verbosity_name(verbosity v) {
  switch (v) {
    case verbosity::error: return "error";
    case verbosity::warning: return "warning";
    case verbosity::info: return "info";
    case verbosity::debug: return "debug";
  }
  return "?";
}

void write_stderr(const std::string& s) {
  const char* p = s.data();
  std::size_t n = s.size();
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

std::string vformat(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[512];
  const int n = std::vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  if (n < 0) return format;
  if (static_cast<std::size_t>(n) < sizeof small) return std::string(small, static_cast<std::size_t>(n));
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(big.data(), big.size(), format, args);
  big.resize(static_cast<std::size_t>(n));
  return big;
}

}  // namespace

void set_message_rank_source(message_rank_fn source) noexcept {
  g_rank_source.store(source, std::memory_order_release);
}

int message_rank() noexcept {
  const message_rank_fn f = g_rank_source.load(std::memory_order_acquire);
  return f != nullptr ? f() : -1;
}

namespace {

// Every line of `text` prefixed; the first also with `level` and ": " unless it is empty.
std::string format_lines(int rank, std::string_view level, std::string_view text) {
  constexpr std::string_view own = "hytask: ";
  if (text.substr(0, own.size()) == own) text.remove_prefix(own.size());
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const std::string prefix =
      rank >= 0 ? "hytask[rank " + std::to_string(rank) + "]: " : std::string("hytask: ");
  std::string out;
  out.reserve(text.size() + prefix.size() + 16);
  out += prefix;
  if (!level.empty()) {
    out += level;
    out += ": ";
  }
  for (;;) {
    const std::size_t nl = text.find('\n');
    out += text.substr(0, nl);
    out += '\n';
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
    out += prefix;
  }
  return out;
}

}  // namespace

std::string format_message(verbosity v, int rank, std::string_view text) {
  return format_lines(rank, verbosity_name(v), text);
}

void report(std::string_view text) { write_stderr(format_lines(message_rank(), {}, text)); }

void reportf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  const std::string text = vformat(format, args);
  va_end(args);
  report(text);
}

void message_as(verbosity v, int rank, std::string_view text) {
  if (!message_enabled(v)) return;
  std::fflush(stderr);  // anything the program left in stdio's buffer goes first
  write_stderr(format_message(v, rank, text));
}

void message_current_exception(std::string_view what) {
  try {
    throw;
  } catch (const std::exception& e) {
    message(verbosity::error, e.what());
  } catch (...) {
    message(verbosity::error, std::string(what) + " failed with an unknown exception");
  }
}

void message(verbosity v, std::string_view text) {
  if (message_enabled(v)) message_as(v, message_rank(), text);
}

void message_once_per_job(verbosity v, std::string_view text) {
  if (!message_enabled(v)) return;
  const int rank = message_rank();
  if (rank <= 0) message_as(v, rank, text);
}

void messagef(verbosity v, const char* format, ...) {
  if (!message_enabled(v)) return;
  va_list args;
  va_start(args, format);
  const std::string text = vformat(format, args);
  va_end(args);
  message(v, text);
}

void messagef_once_per_job(verbosity v, const char* format, ...) {
  if (!message_enabled(v) || message_rank() > 0) return;
  va_list args;
  va_start(args, format);
  const std::string text = vformat(format, args);
  va_end(args);
  message_once_per_job(v, text);
}

}  // namespace hytask::core
