// Event log and timeline export (Chrome trace-event JSON, which Perfetto and
// chrome://tracing open).
//
// Every thread records into its own buffer; a full buffer is appended to the output file
// under a lock, so memory stays bounded however long the run. Recording is guarded by
// enabled(), a plain load of a flag set before any worker starts: tracing costs one
// predictable branch when off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hytask::trace {

extern bool g_enabled;
inline bool enabled() noexcept { return g_enabled; }

// Nanoseconds since the trace started.
std::uint64_t now() noexcept;

// An optional numeric argument shown in the event's details.
struct arg {
  const char* key = nullptr;
  std::int64_t value = 0;
};

// Starts writing to `path` (throws std::runtime_error if it cannot be opened). `pid` and
// `process_name` label the timeline (a rank, later).
void start(const std::string& path, std::size_t buffer_events, int pid,
           const std::string& process_name);
// Flushes every buffer and closes the file. No recording may happen concurrently.
void stop();

// Names the calling thread's track. Threads that record without it get a generated name.
void set_thread(int tid, const std::string& name);

// A span of time on the calling thread's track.
void slice(const char* name, const char* category, std::uint64_t t0, std::uint64_t t1,
           std::uint64_t id, const char* note = nullptr, arg a = {}, arg b = {});
// A point in time on the calling thread's track.
void instant(const char* name, const char* category, std::uint64_t t, std::uint64_t id,
             arg a = {}, arg b = {});

}  // namespace hytask::trace
