// Event log and timeline export (Chrome trace-event JSON, which Perfetto and
// chrome://tracing open).
//
// Every thread records into its own buffer; a full buffer is appended to the output file
// under a lock, so memory stays bounded however long the run. Recording is guarded by
// enabled(), a plain load of a flag set before any worker starts: tracing costs one
// predictable branch when off.
//
// The times are nanoseconds on the trace's clock: the process's steady clock, or, when
// start() is given a clock alignment (trace/clock_sync.hpp), the reference rank's clock, so
// that the files of a job's ranks lie on one time line (trace/merge.hpp joins them).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "trace/clock_sync.hpp"

namespace hytask::trace {

extern std::atomic<bool> g_enabled;
inline bool enabled() noexcept { return g_enabled.load(std::memory_order_relaxed); }

// Nanoseconds since the trace's origin, on the trace's clock.
std::uint64_t now() noexcept;

// An optional numeric argument shown in the event's details.
struct arg {
  const char* key = nullptr;
  std::int64_t value = 0;
};

// A point-to-point message, as both its ends see it: the trace pairs the send with its
// receive by (category, communicator, source, destination, tag, sequence number).
struct message {
  std::uint32_t comm = 0;     // the communicator's id, the same on every rank
  std::int32_t source = -1;   // ranks in the job (MPI_COMM_WORLD)
  std::int32_t dest = -1;
  std::int32_t tag = -1;
  std::uint64_t seq = 0;      // the message's place in its (comm, source, dest, tag) stream
  std::int64_t bytes = 0;
};

// Starts writing to `path` (throws std::runtime_error if it cannot be opened). `pid` and
// `process_name` label the timeline (the rank). `clock`: the offset to the reference clock
// and the common origin, when the ranks' clocks were aligned.
void start(const std::string& path, std::size_t buffer_events, int pid,
           const std::string& process_name, const clock_alignment& clock = {});
// Whether a trace file is open.
bool started() noexcept;
// Flushes every buffer and closes the file. A thread still recording (the node agent, which
// its rank stops after MPI's end) is waited for, and records nothing after. `end`:
// the clock alignment measured again at the end (its drift is written to the file, and
// applied by the merge). Does nothing when no trace is open.
void stop(const clock_drift& end = {});

// Names the calling thread's track. Threads that record without it get a generated name.
void set_thread(int tid, const std::string& name);

// A span of time on the calling thread's track.
void slice(const char* name, const char* category, std::uint64_t t0, std::uint64_t t1,
           std::uint64_t id, const char* note = nullptr, arg a = {}, arg b = {});
// A point in time on the calling thread's track.
void instant(const char* name, const char* category, std::uint64_t t, std::uint64_t id,
             arg a = {}, arg b = {});
// The post of a send (an instant named after the call, with peer and bytes, like any post)
// and the completion of its receive (the "complete" instant, with the time since the post),
// carrying the message's identity.
void send(const char* name, const char* category, std::uint64_t t, std::uint64_t id, int peer,
          const message& m);
void receive(const char* category, std::uint64_t t, std::uint64_t id, int peer,
             std::int64_t after_ns, const message& m);

}  // namespace hytask::trace
