#include "trace/trace.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace hytask::trace {

bool g_enabled = false;

namespace {

struct record {
  std::uint64_t t0, t1;
  const char* name;
  const char* category;
  const char* note;
  std::uint64_t id;
  arg a, b;
  bool is_instant;
};

struct buffer {
  int tid = 0;
  std::vector<record> records;
};

std::mutex g_mutex;  // guards the file and the buffer list
std::FILE* g_file = nullptr;
bool g_first_event = true;
int g_pid = 0;
std::size_t g_capacity = 65536;
std::uint64_t g_generation = 0;
std::vector<std::unique_ptr<buffer>> g_buffers;
int g_next_anonymous_tid = 10000;
std::chrono::steady_clock::time_point g_origin;

thread_local buffer* t_buffer = nullptr;
thread_local std::uint64_t t_generation = 0;

void write_escaped(std::FILE* f, const char* s) {
  std::fputc('"', f);
  for (; s && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      std::fputc('\\', f);
      std::fputc(c, f);
    } else if (c < 0x20) {
      std::fprintf(f, "\\u%04x", c);
    } else {
      std::fputc(c, f);
    }
  }
  std::fputc('"', f);
}

void begin_event() {
  if (!g_first_event) std::fputs(",\n", g_file);
  g_first_event = false;
}

void write_ts(const char* key, std::uint64_t ns) {
  std::fprintf(g_file, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, static_cast<unsigned>(ns % 1000));
}

void write_metadata(const char* what, int tid, const std::string& name) {
  begin_event();
  std::fprintf(g_file, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what,
               g_pid, tid);
  write_escaped(g_file, name.c_str());
  std::fputs("}}", g_file);
}

// Caller holds g_mutex.
void flush_locked(buffer& b) {
  if (!g_file) {
    b.records.clear();
    return;
  }
  for (const record& r : b.records) {
    begin_event();
    std::fputs("{\"name\":", g_file);
    write_escaped(g_file, r.name ? r.name : "task");
    std::fputs(",\"cat\":", g_file);
    write_escaped(g_file, r.category ? r.category : "hytask");
    if (r.is_instant) {
      std::fprintf(g_file, ",\"ph\":\"i\",\"s\":\"t\"");
      write_ts("ts", r.t0);
    } else {
      std::fprintf(g_file, ",\"ph\":\"X\"");
      write_ts("ts", r.t0);
      write_ts("dur", r.t1 >= r.t0 ? r.t1 - r.t0 : 0);
    }
    std::fprintf(g_file, ",\"pid\":%d,\"tid\":%d,\"args\":{\"id\":%" PRIu64, g_pid, b.tid, r.id);
    if (r.note) {
      std::fputs(",\"event\":", g_file);
      write_escaped(g_file, r.note);
    }
    if (r.a.key) std::fprintf(g_file, ",\"%s\":%" PRId64, r.a.key, r.a.value);
    if (r.b.key) std::fprintf(g_file, ",\"%s\":%" PRId64, r.b.key, r.b.value);
    std::fputs("}}", g_file);
  }
  b.records.clear();
}

buffer& my_buffer() {
  if (t_buffer == nullptr || t_generation != g_generation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto b = std::make_unique<buffer>();
    b->tid = g_next_anonymous_tid++;
    b->records.reserve(g_capacity);
    write_metadata("thread_name", b->tid, "thread " + std::to_string(b->tid));
    t_buffer = b.get();
    t_generation = g_generation;
    g_buffers.push_back(std::move(b));
  }
  return *t_buffer;
}

void push(const record& r) {
  buffer& b = my_buffer();
  b.records.push_back(r);
  if (b.records.size() >= g_capacity) {
    std::lock_guard<std::mutex> lock(g_mutex);
    flush_locked(b);
  }
}

}  // namespace

std::uint64_t now() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                           g_origin)
          .count());
}

void start(const std::string& path, std::size_t buffer_events, int pid,
           const std::string& process_name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_file = std::fopen(path.c_str(), "w");
  if (!g_file)
    throw std::runtime_error("hytask: cannot open the trace file '" + path +
                             "' given by HYTASK_TRACE: check that its directory exists and is "
                             "writable");
  std::setvbuf(g_file, nullptr, _IOFBF, 1 << 20);
  g_first_event = true;
  g_pid = pid;
  g_capacity = buffer_events;
  ++g_generation;
  g_buffers.clear();
  g_next_anonymous_tid = 10000;
  g_origin = std::chrono::steady_clock::now();
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hytask\"},\"traceEvents\":[\n",
             g_file);
  write_metadata("process_name", 0, process_name);
  g_enabled = true;
}

void stop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_enabled = false;
  for (auto& b : g_buffers) flush_locked(*b);
  g_buffers.clear();
  ++g_generation;
  if (g_file) {
    std::fputs("\n]}\n", g_file);
    std::fclose(g_file);
    g_file = nullptr;
  }
}

void set_thread(int tid, const std::string& name) {
  if (!g_enabled) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (t_buffer != nullptr && t_generation == g_generation) {
    flush_locked(*t_buffer);
    t_buffer->tid = tid;
  } else {
    auto b = std::make_unique<buffer>();
    b->tid = tid;
    b->records.reserve(g_capacity);
    t_buffer = b.get();
    t_generation = g_generation;
    g_buffers.push_back(std::move(b));
  }
  write_metadata("thread_name", tid, name);
}

void slice(const char* name, const char* category, std::uint64_t t0, std::uint64_t t1,
           std::uint64_t id, const char* note, arg a, arg b) {
  if (!g_enabled) return;
  push(record{t0, t1, name, category, note, id, a, b, false});
}

void instant(const char* name, const char* category, std::uint64_t t, std::uint64_t id, arg a,
             arg b) {
  if (!g_enabled) return;
  push(record{t, t, name, category, nullptr, id, a, b, true});
}

}  // namespace hytask::trace
