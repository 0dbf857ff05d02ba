#include "node/node_report.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "node/node_table.hpp"

namespace hytask::node {
namespace {

constexpr const char* table_prefix = "/dev/shm/hytask-node-";

struct found {
  std::string path;  // /proc/<pid>/fd/<n>
  std::string name;  // what it points at
};

// Every descriptor of every process we may look at that refers to a node table, one per table.
std::vector<found> find_tables() {
  std::vector<found> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* p = readdir(proc)) {
    if (p->d_name[0] < '1' || p->d_name[0] > '9') continue;
    const std::string fd_dir = std::string("/proc/") + p->d_name + "/fd";
    DIR* fds = opendir(fd_dir.c_str());
    if (fds == nullptr) continue;  // gone, or another user's
    while (dirent* f = readdir(fds)) {
      if (f->d_name[0] == '.') continue;
      const std::string link = fd_dir + "/" + f->d_name;
      char target[256] = {};
      const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0 || std::string(target, static_cast<std::size_t>(n)).rfind(table_prefix, 0) != 0)
        continue;
      struct stat st {};
      if (stat(link.c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
      out.push_back({link, std::string(target, static_cast<std::size_t>(n))});
    }
    closedir(fds);
  }
  closedir(proc);
  return out;
}

const char* state_name(std::uint32_t s) {
  switch (s) {
    case row_attached: return "attached";
    case row_detached: return "detached";
    default: return "empty";
  }
}

void append(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string& out, const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  out += line;
}

void describe_one(const found& t, std::string& out) {
  const int fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < sizeof(node_header)) {
    if (fd >= 0) close(fd);
    append(out, "%s: cannot be read\n", t.name.c_str());
    return;
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* base = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    append(out, "%s: cannot be mapped\n", t.name.c_str());
    return;
  }
  const auto* h = static_cast<const node_header*>(base);
  const std::size_t rows = (bytes - sizeof(node_header)) / sizeof(node_row);
  if (h->local_size == 0 || h->local_size > rows) {
    append(out, "%s: not a node table of this hytask version (%u ranks, room for %zu)\n",
           t.name.c_str(), h->local_size, rows);
    munmap(base, bytes);
    return;
  }
  append(out, "%s: %u rank(s); agent in pid %d, %s, %" PRIu64 " rounds, CPU %.3f ms\n",
         t.name.c_str(), h->local_size, static_cast<int>(h->agent_pid.load()),
         h->agent_running.load() ? (h->agent_parked.load() ? "parked (nothing pending)" : "running")
                                 : "stopped",
         h->agent_rounds.load(), static_cast<double>(h->agent_cpu_ns.load()) / 1e6);
  append(out, "  %5s %5s %8s %-8s %7s %6s %10s %10s %6s %10s %10s %10s\n", "local", "rank", "pid",
         "state", "pending", "in_mpi", "wakes", "futile", "%", "suppressed", "completed",
         "own polls");
  const auto* row = reinterpret_cast<const node_row*>(static_cast<const char*>(base) +
                                                      sizeof(node_header));
  for (std::uint32_t i = 0; i < h->local_size; ++i) {
    const node_row& r = row[i];
    const std::uint64_t wakes = r.wakes.load(), futile = r.futile.load();
    append(out,
           "  %5u %5d %8d %-8s %7u %6u %10" PRIu64 " %10" PRIu64 " %6.1f %10" PRIu64
           " %10" PRIu64 " %10" PRIu64 "\n",
           i, r.world_rank, static_cast<int>(r.pid.load()), state_name(r.state.load()),
           r.pending.load(), r.in_mpi.load(), wakes, futile,
           wakes ? 100.0 * static_cast<double>(futile) / static_cast<double>(wakes) : 0.0,
           r.suppressed.load(), r.completed.load(), r.engine_polls.load() - r.woken_polls.load());
  }
  munmap(base, bytes);
}

}  // namespace

std::string describe_tables() {
  std::string out;
  for (const found& t : find_tables()) describe_one(t, out);
  if (out.empty())
    out = "no HYTASK_PROGRESS=node job runs on this machine (or its processes belong to another "
          "user)\n";
  return out;
}

}  // namespace hytask::node
