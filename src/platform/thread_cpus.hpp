// The threads of this process with the CPUs each may run on, as the kernel reports them
// (/proc/self/task): what a binding report prints.
#pragma once

#include <string>
#include <vector>

namespace hytask::core {

struct thread_cpus {
  long tid = 0;
  std::string name;  // the thread's name (comm), e.g. "hytask-worker"
  std::string cpus;  // the kernel's list of CPUs it may run on, e.g. "0-1" or "3"
};

// Every thread of the process, main first, then in the order of their thread ids.
std::vector<thread_cpus> process_thread_cpus();

}  // namespace hytask::core
