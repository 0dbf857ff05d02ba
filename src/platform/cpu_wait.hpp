// cpu_wait: how long threads waited for a CPU while runnable. For the process, summed over
// its live threads (Linux's per-thread scheduler statistics, /proc/self/task/*/schedstat);
// for the whole node, the kernel's CPU pressure (/proc/pressure/cpu).
//
// A thread that sleeps accrues none; one that is ready to run while the node's CPUs are taken
// by others (more runnable threads than cores, other jobs, spinning peers) accrues all the
// time it stands in the run queue. The watchdog uses it to tell a rank that made no progress
// because nothing could happen (a hang) from one that made none because it did not run.
// Threads that have exited no longer count, so the sum may fall: compare two readings only
// over an interval in which the process kept its threads. Costs a directory walk and a read
// per thread: for occasional looks, not a hot path.
#pragma once

#include <cstdint>

namespace hytask::core {

// The sum, in ns; -1 when the kernel does not provide it (no schedstat, no /proc).
std::int64_t process_run_delay_ns() noexcept;

// The same for the calling thread alone (/proc/thread-self/schedstat); -1 when unknown. About
// 3 us (an open, a read, a close).
std::int64_t thread_run_delay_ns() noexcept;

// The share of the last 10 s in which some thread of the node waited for a CPU, in percent
// (PSI's "some avg10"); -1 when the kernel does not provide it.
double node_cpu_pressure_pct() noexcept;

}  // namespace hytask::core
