// Joining the trace files of a job's ranks into one timeline: one process per rank, its
// threads as tracks, every time on the reference clock (corrected for the drift measured
// at the end), and a flow arrow from each traced send to its traced receive. The output is
// Chrome trace-event JSON, or OTF2 when its name ends in ".otf2" (trace/otf2_writer.hpp).
//
// The inputs are streamed: a rank's file goes through in chunks, whatever its size, and
// only the message ends not yet paired are held (and, for OTF2, one rank's events while
// they are put in time order). The runtime's rank 0 feeds it the ranks' files over MPI at
// the end of a run (comm/trace_gather.cpp); `hytask-trace merge` feeds it files.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "trace/clock_sync.hpp"
#include "trace/event_line.hpp"

namespace hytask::trace {

enum class format { json, otf2 };
format format_of(const std::string& path);  // otf2 for a name ending in ".otf2"

// One end of a message, as the merge saw it.
struct message_end {
  std::int64_t ts_ns = 0;
  int pid = 0;
  std::int64_t tid = 0;
  std::int64_t bytes = 0;
};

// Where the merged events go: JSON (merge.cpp) or OTF2 (otf2_writer.cpp).
class merge_sink {
 public:
  virtual ~merge_sink() = default;
  virtual void begin_input(int pid) = 0;
  // e's ts, dur and pid already rewritten; ts_ns and dur_ns are those values.
  virtual void add(const event& e, int pid, std::int64_t ts_ns, std::int64_t dur_ns) = 0;
  virtual void end_input() = 0;
  virtual void flow(std::uint64_t id, const message_end& send, const message_end& receive) = 0;
  virtual void finish() = 0;
};

struct merge_input {
  int pid = 0;             // the process (rank) its events go to
  clock_drift drift{};     // applied to its times
  std::int64_t shift_ns = 0;  // added to its times (files whose clocks were not aligned)
};

struct merge_stats {
  int inputs = 0;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t unmatched_sends = 0;     // traced sends whose receive is not in the trace
  std::uint64_t unmatched_receives = 0;
};

class merger {
 public:
  // Opens `output` (throws std::runtime_error naming it when it cannot).
  explicit merger(const std::string& output);
  ~merger();
  merger(const merger&) = delete;
  merger& operator=(const merger&) = delete;

  void begin_input(const merge_input& in);
  void feed(std::string_view chunk);  // any piece of the file, lines split anywhere
  void end_input();
  merge_stats finish();

 private:
  void line(std::string_view l);
  struct key {
    std::string cat;
    std::int64_t comm, src, dst, tag, seq;
    auto operator<=>(const key&) const = default;
  };
  std::unique_ptr<merge_sink> sink_;
  merge_input in_{};
  std::string partial_;
  event ev_;
  merge_stats stats_{};
  std::map<key, message_end> sends_, receives_;  // ends waiting for their partner
  bool finished_ = false;
};

// The drift a file's last lines record ({} when none).
clock_drift read_drift(const std::string& path);
// Merges files written by HYTASK_TRACE. Each goes to the process its header's rank names,
// or to its place in the list when ranks are missing or repeat; files whose clocks were not
// aligned are laid out by the steady-clock origin they record. Throws std::runtime_error.
merge_stats merge_files(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace hytask::trace
