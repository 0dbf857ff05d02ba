// The process's threads and their allowed CPUs (thread_cpus.hpp), read from /proc.
#include "platform/thread_cpus.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace hytask::core {

std::vector<thread_cpus> process_thread_cpus() {
  std::vector<thread_cpus> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    thread_cpus t;
    try {
      t.tid = std::stol(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    std::ifstream comm(entry.path() / "comm");
    std::getline(comm, t.name);
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        t.cpus = line.substr(line.find(':') + 1);
        t.cpus.erase(0, t.cpus.find_first_not_of(" \t"));
        break;
      }
    }
    if (!comm || t.cpus.empty()) continue;  // the thread ended while we read it
    out.push_back(std::move(t));
  }
  const long main_tid = static_cast<long>(getpid());
  std::sort(out.begin(), out.end(), [main_tid](const thread_cpus& a, const thread_cpus& b) {
    if ((a.tid == main_tid) != (b.tid == main_tid)) return a.tid == main_tid;
    return a.tid < b.tid;
  });
  return out;
}

}  // namespace hytask::core
