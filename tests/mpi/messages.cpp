// hytask's messages across ranks (src/platform/messages.hpp), checked by expect_messages.sh:
// a warning every rank would print alike comes once per job, from rank 0 (too many workers
// for the cores: each rank is bound to one CPU and asks for 9 workers); a per-rank warning
// (two failed tasks in a wait_all) carries each rank's prefix; HYTASK_VERBOSE filters both.
#include <mpi.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "hytask/hytask.hpp"

namespace {

// This process on one CPU of those it may use (the rank's, round robin), so that the
// runtime sees one core whatever the machine.
void bind_to_one_cpu() {
  int rank = 0;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* r = std::getenv(v)) rank = std::atoi(r);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  const int n = CPU_COUNT(&set);
  int want = rank % n, seen = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    if (seen++ == want) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      sched_setaffinity(0, sizeof one, &one);
      return;
    }
  }
}

}  // namespace

int main() {
  bind_to_one_cpu();
  int ok = 1;
  {
    hytask::runtime rt(hytask::config{.threads = 9});  // more than 8 per core: warned
    hytask::spawn([] { throw std::runtime_error("first"); });
    hytask::spawn([] { throw std::runtime_error("second"); });
    try {
      hytask::wait_all();  // warns that 2 tasks failed, on every rank
      ok = 0;
      std::printf("messages: wait_all did not rethrow\n");
    } catch (const std::runtime_error&) {
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && all == 1) std::printf("messages: every rank ok\n");
    ok = all;
  }
  return ok == 1 ? 0 : 1;
}
