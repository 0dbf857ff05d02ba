#include "threads.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace overlap {
namespace {

enum group { g_main, g_worker, g_progress, g_library };

int group_of(int tid, const std::string& name) {
  if (tid == getpid()) return g_main;
  if (name == "hytask-worker") return g_worker;
  if (name.rfind("hytask-", 0) == 0) return g_progress;
  return g_library;
}

}  // namespace

std::map<int, std::pair<int, double>> thread_times() {
  std::map<int, std::pair<int, double>> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::string name;
    std::ifstream(base + "/comm") >> name;
    // schedstat: time on the CPU in ns (finer than stat's clock ticks).
    double ns = 0;
    std::ifstream(base + "/schedstat") >> ns;
    const int tid = std::atoi(e->d_name);
    out[tid] = {group_of(tid, name), ns * 1e-9};
  }
  closedir(dir);
  return out;
}

thread_cpu thread_cpu_between(const std::map<int, std::pair<int, double>>& before,
                              const std::map<int, std::pair<int, double>>& after) {
  thread_cpu out;
  for (const auto& [tid, now] : after) {
    auto it = before.find(tid);
    const double used = now.second - (it != before.end() ? it->second.second : 0.0);
    switch (now.first) {
      case g_main: out.main_s += used; break;
      case g_worker: out.workers_s += used; break;
      case g_progress: out.progress_s += used; break;
      default: out.library_s += used; break;
    }
  }
  return out;
}

}  // namespace overlap
