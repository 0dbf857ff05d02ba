// Waiting for a CPU (core/cpu_wait.hpp): the second field of each thread's
// /proc/self/task/<tid>/schedstat ("time on CPU, time waiting to run, time slices"), and the
// first line of /proc/pressure/cpu ("some avg10=... avg60=... avg300=... total=...").
#include "platform/cpu_wait.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

namespace hytask::core {

namespace {
// The second field of a schedstat file, or -1.
std::int64_t read_waiting(const char* path) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  std::uint64_t on_cpu = 0, waiting = 0;
  if (std::sscanf(buf, "%" SCNu64 " %" SCNu64, &on_cpu, &waiting) != 2) return -1;
  return static_cast<std::int64_t>(waiting);
}
}  // namespace

std::int64_t thread_run_delay_ns() noexcept { return read_waiting("/proc/thread-self/schedstat"); }

std::int64_t process_run_delay_ns() noexcept {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  std::int64_t sum = 0;
  bool any = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    const std::int64_t waiting = read_waiting(path);
    if (waiting < 0) continue;  // the thread exited meanwhile, or no schedstat
    sum += waiting;
    any = true;
  }
  ::closedir(dir);
  return any ? sum : -1;
}

double node_cpu_pressure_pct() noexcept {
  std::FILE* f = std::fopen("/proc/pressure/cpu", "re");
  if (f == nullptr) return -1;
  double avg10 = -1;
  if (std::fscanf(f, "some avg10=%lf", &avg10) != 1) avg10 = -1;
  std::fclose(f);
  return avg10;
}

}  // namespace hytask::core
