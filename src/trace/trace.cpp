#include "trace/trace.hpp"

#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace hytask::trace {

std::atomic<bool> g_enabled{false};

namespace {

// A message end's fields take the room of a plain event's note and arguments: a record
// stays 88 bytes.
struct plain_fields {
  const char* note;
  arg a, b;
};
struct message_fields {
  std::uint32_t comm;
  std::int32_t source, dest, tag, peer;
  std::uint32_t seq;  // a stream of more than 2^32 messages would wrap
  std::int64_t bytes, after_ns;
};

struct record {
  std::uint64_t t0, t1;
  const char* name;
  const char* category;
  std::uint64_t id;
  union {
    plain_fields plain;
    message_fields msg;
  };
  bool is_instant;
  std::uint8_t msg_kind;  // 0 plain, 1 a send, 2 a receive
};
static_assert(sizeof(record) <= 88, "a trace record stays small: HYTASK_TRACE_BUFFER's memory");

struct buffer {
  int tid = 0;
  std::vector<record> records;
  // Its thread is using it: stop waits for that, after it turned recording off.
  std::atomic<bool> busy{false};
};

std::mutex g_mutex;  // guards the file and the buffer list
std::FILE* g_file = nullptr;
int g_pid = 0;
std::size_t g_capacity = 65536;
std::atomic<std::uint64_t> g_generation{0};
std::vector<std::unique_ptr<buffer>> g_buffers;
// Buffers of a stopped trace: a thread may still hold one (its t_buffer) until it sees the
// new generation, so they go only when the next trace starts (no thread records then).
std::vector<std::unique_ptr<buffer>> g_retired;
int g_next_anonymous_tid = 10000;
std::int64_t g_origin_ns = 0;  // on the local steady clock (trace/clock_sync.hpp)

thread_local buffer* t_buffer = nullptr;
thread_local std::uint64_t t_generation = 0;

void append_escaped(std::string& out, const char* s) {
  out.push_back('"');
  for (; s && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char tmp[8];
      std::snprintf(tmp, sizeof tmp, "\\u%04x", c);
      out += tmp;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

template <class Int>
void append_int(std::string& out, Int v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  out.append(tmp, r.ptr);
}

// Microseconds with three decimals: exact nanoseconds, in the unit the format expects.
void append_us(std::string& out, std::uint64_t ns) {
  append_int(out, ns / 1000);
  unsigned frac = static_cast<unsigned>(ns % 1000);
  char tmp[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
  out.append(tmp, 4);
}

// Every event after the first (the process name, written by start) begins with ",\n".
void append_metadata(std::string& out, const char* what, int tid, const std::string& name) {
  out += ",\n{\"name\":\"";
  out += what;
  out += "\",\"ph\":\"M\",\"pid\":";
  append_int(out, g_pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"args\":{\"name\":";
  append_escaped(out, name.c_str());
  out += "}}";
}

void format_record(std::string& out, int tid, const record& r) {
  out += ",\n{\"name\":";
  append_escaped(out, r.name ? r.name : "task");
  out += ",\"cat\":";
  append_escaped(out, r.category ? r.category : "hytask");
  if (r.is_instant) {
    out += ",\"ph\":\"i\",\"s\":\"t\",\"ts\":";
    append_us(out, r.t0);
  } else {
    out += ",\"ph\":\"X\",\"ts\":";
    append_us(out, r.t0);
    out += ",\"dur\":";
    append_us(out, r.t1 >= r.t0 ? r.t1 - r.t0 : 0);
  }
  out += ",\"pid\":";
  append_int(out, g_pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"args\":{\"id\":";
  append_int(out, r.id);
  if (r.msg_kind == 0) {
    if (r.plain.note) {
      out += ",\"event\":";
      append_escaped(out, r.plain.note);
    }
    for (const arg* x : {&r.plain.a, &r.plain.b}) {
      if (!x->key) continue;
      out += ",\"";
      out += x->key;
      out += "\":";
      append_int(out, x->value);
    }
  } else {
    // The message's identity (trace/merge.cpp pairs the two ends with it).
    out += ",\"peer\":";
    append_int(out, r.msg.peer);
    if (r.msg_kind == 2) {
      out += ",\"after_ns\":";
      append_int(out, r.msg.after_ns);
    }
    out += ",\"bytes\":";
    append_int(out, r.msg.bytes);
    out += ",\"comm\":";
    append_int(out, r.msg.comm);
    out += ",\"src\":";
    append_int(out, r.msg.source);
    out += ",\"dst\":";
    append_int(out, r.msg.dest);
    out += ",\"tag\":";
    append_int(out, r.msg.tag);
    out += r.msg_kind == 1 ? ",\"send_seq\":" : ",\"recv_seq\":";
    append_int(out, r.msg.seq);
  }
  out += "}}";
}

// Formats the buffer outside the lock, then appends it to the file in one write.
void flush(buffer& b) {
  thread_local std::string text;
  text.clear();
  text.reserve(b.records.size() * 128);
  for (const record& r : b.records) format_record(text, b.tid, r);
  b.records.clear();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file) std::fwrite(text.data(), 1, text.size(), g_file);
}

buffer& my_buffer() {
  if (t_buffer == nullptr || t_generation != g_generation.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto b = std::make_unique<buffer>();
    b->tid = g_next_anonymous_tid++;
    b->records.reserve(g_capacity);
    std::string text;
    append_metadata(text, "thread_name", b->tid, "thread " + std::to_string(b->tid));
    if (g_file) std::fwrite(text.data(), 1, text.size(), g_file);
    t_buffer = b.get();
    t_generation = g_generation.load(std::memory_order_relaxed);
    g_buffers.push_back(std::move(b));
  }
  return *t_buffer;
}

// Busy first, then the flag (both sequentially consistent, as stop's are in the other
// order): either stop sees this buffer busy and waits, or this thread sees recording off.
void push(const record& r) {
  buffer& b = my_buffer();
  b.busy.store(true, std::memory_order_seq_cst);
  if (g_enabled.load(std::memory_order_seq_cst)) {
    b.records.push_back(r);
    if (b.records.size() >= g_capacity) flush(b);
  }
  b.busy.store(false, std::memory_order_release);
}

}  // namespace

std::uint64_t now() noexcept {
  const std::int64_t t = local_clock_ns() - g_origin_ns;
  return t > 0 ? static_cast<std::uint64_t>(t) : 0;  // an aligned origin a hair ahead
}

bool started() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_file != nullptr;
}

void start(const std::string& path, std::size_t buffer_events, int pid,
           const std::string& process_name, const clock_alignment& clock) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_file = std::fopen(path.c_str(), "w");
  if (!g_file)
    throw std::runtime_error("hytask: cannot open the trace file '" + path +
                             "' given by HYTASK_TRACE: check that its directory exists and is "
                             "writable");
  std::setvbuf(g_file, nullptr, _IOFBF, 1 << 20);
  g_pid = pid;
  g_capacity = buffer_events;
  ++g_generation;
  g_buffers.clear();
  g_retired.clear();
  g_next_anonymous_tid = 10000;
  // Aligned: time 0 is the common origin on the reference clock, read on the local clock.
  g_origin_ns = clock.aligned ? clock.origin_ns - clock.offset_ns : local_clock_ns();
  // origin_ns: time 0 on the machine's steady clock (the reference rank's, when aligned):
  // files whose clocks were not aligned can still be laid on one time line when their
  // ranks shared a machine.
  std::string text =
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hytask\",\"rank\":";
  append_int(text, pid);
  text += ",\"origin_ns\":";
  append_int(text, clock.aligned ? clock.origin_ns : g_origin_ns);
  text += ",\"clock\":";
  text += clock.aligned ? "\"aligned\"" : "\"local\"";
  if (clock.aligned) {
    text += ",\"clock_offset_ns\":";
    append_int(text, clock.offset_ns);
    text += ",\"clock_rtt_ns\":";
    append_int(text, clock.rtt_ns);
  }
  text +=
      "},\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
  append_int(text, g_pid);
  text += ",\"tid\":0,\"args\":{\"name\":";
  append_escaped(text, process_name.c_str());
  text += "}}";
  std::fwrite(text.data(), 1, text.size(), g_file);
  g_enabled.store(true, std::memory_order_seq_cst);
}

void stop(const clock_drift& end) {
  g_enabled.store(false, std::memory_order_seq_cst);
  std::vector<std::unique_ptr<buffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    buffers.swap(g_buffers);
    ++g_generation;
  }
  for (auto& b : buffers) {
    while (b->busy.load(std::memory_order_seq_cst)) std::this_thread::yield();
    flush(*b);
    std::vector<record>().swap(b->records);  // its memory; the buffer itself is retired
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& b : buffers) g_retired.push_back(std::move(b));
  if (g_file) {
    // The drift after the array, on a line of its own: the merge reads it from the end.
    std::string text = "\n]";
    if (end.measured) {
      text += ",\n\"clockEnd\":{\"drift_ns\":";
      append_int(text, end.drift_ns);
      text += ",\"at_ns\":";
      append_int(text, end.at_ns);
      text += "}";
    }
    text += "}\n";
    std::fwrite(text.data(), 1, text.size(), g_file);
    std::fclose(g_file);
    g_file = nullptr;
  }
}

void set_thread(int tid, const std::string& name) {
  if (!enabled()) return;
  const std::uint64_t generation = g_generation.load(std::memory_order_relaxed);
  if (t_buffer != nullptr && t_generation == generation) {
    // Renaming its own buffer: busy while it flushes and changes the id (stop's protocol).
    buffer& b = *t_buffer;
    b.busy.store(true, std::memory_order_seq_cst);
    if (g_enabled.load(std::memory_order_seq_cst)) {
      flush(b);
      std::lock_guard<std::mutex> lock(g_mutex);
      b.tid = tid;
      std::string text;
      append_metadata(text, "thread_name", tid, name);
      if (g_file) std::fwrite(text.data(), 1, text.size(), g_file);
    }
    b.busy.store(false, std::memory_order_release);
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  auto b = std::make_unique<buffer>();
  b->tid = tid;
  b->records.reserve(g_capacity);
  t_buffer = b.get();
  t_generation = g_generation.load(std::memory_order_relaxed);
  g_buffers.push_back(std::move(b));
  std::string text;
  append_metadata(text, "thread_name", tid, name);
  if (g_file) std::fwrite(text.data(), 1, text.size(), g_file);
}

void slice(const char* name, const char* category, std::uint64_t t0, std::uint64_t t1,
           std::uint64_t id, const char* note, arg a, arg b) {
  if (!enabled()) return;
  record r{t0, t1, name, category, id, {.plain = {note, a, b}}, false, 0};
  push(r);
}

void instant(const char* name, const char* category, std::uint64_t t, std::uint64_t id, arg a,
             arg b) {
  if (!enabled()) return;
  record r{t, t, name, category, id, {.plain = {nullptr, a, b}}, true, 0};
  push(r);
}

namespace {

message_fields fields_of(const message& m, int peer, std::int64_t after_ns) {
  return message_fields{m.comm, m.source, m.dest, m.tag, peer, static_cast<std::uint32_t>(m.seq), m.bytes, after_ns};
}

}  // namespace

void send(const char* name, const char* category, std::uint64_t t, std::uint64_t id, int peer,
          const message& m) {
  if (!enabled()) return;
  record r{t, t, name, category, id, {.msg = fields_of(m, peer, 0)}, true, 1};
  push(r);
}

void receive(const char* category, std::uint64_t t, std::uint64_t id, int peer,
             std::int64_t after_ns, const message& m) {
  if (!enabled()) return;
  record r{t, t, "complete", category, id, {.msg = fields_of(m, peer, after_ns)}, true, 2};
  push(r);
}

}  // namespace hytask::trace
