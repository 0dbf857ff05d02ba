// `hytask-trace summary`: where each rank's threads spent the run, from a trace that
// HYTASK_TRACE wrote (a rank's file or the merged one).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace hytask::trace_tool {

struct task_total {
  std::uint64_t runs = 0;      // bodies that ended (a suspended task's stretches count once)
  std::uint64_t stretches = 0;
  std::int64_t ns = 0;
};

struct rank_summary {
  std::int64_t first_ns = 0, last_ns = 0;  // the span of its events
  int workers = 0;                          // tracks named "worker ..."
  std::int64_t busy_ns = 0;                 // task slices on the workers
  std::int64_t mpi_ns = 0;                  // poll slices, every thread
  std::int64_t mpi_workers_ns = 0;          // poll slices on the workers
  std::uint64_t polls = 0;
  std::uint64_t posts = 0, sends = 0, receives = 0;  // the program's (category mpi)
  std::uint64_t wakes = 0, suppressed_wakes = 0;     // the node agent's
  std::map<std::string, task_total> tasks;
  std::int64_t span_ns() const { return last_ns > first_ns ? last_ns - first_ns : 0; }
  // The workers' time in neither a task nor a poll.
  std::int64_t idle_ns() const;
};

// Reads the files (throws std::runtime_error naming a file it cannot read); ranks by pid.
std::map<int, rank_summary> summarize(const std::vector<std::string>& files);
void print(std::ostream& out, const std::map<int, rank_summary>& ranks);

}  // namespace hytask::trace_tool
