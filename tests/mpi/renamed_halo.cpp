// Renaming with MPI (issue 20): halos received from the left neighbour of a ring into one
// hytask::versioned buffer, each read by slow readers. With renaming, the receive of halo
// k + 1 gets a fresh version and posts while halo k is still read: each reader of the first
// halos waits (letting other tasks run) until the next receive has started, which it could
// not without renaming (write-after-read on the buffer). Every reader checks it read its
// own halo, and the buffer holds the last halo after wait_all.
//
// Modes: recv (a task suspended in mpi::recv), bind (a task posts mpi::irecv and binds it: it
// returns at once, and its version stays with it until the receive completes — a small cap
// makes versions reused often, so one released early would be overwritten while read).
// HYTASK_RENAME_MAX_BYTES=0 turns renaming off: the program must then report that the next
// receive waited for the readers (so the check can fail); only the first halo's reader waits
// then, for 1 s instead of 3.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

constexpr int halos = 40, readers = 3, checked = 3, n = 2048;  // 16 KiB per halo

double value(int rank, int k, int i) { return rank * 100000.0 + k * 1000.0 + i; }

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "recv";
  if (mode != "recv" && mode != "bind") {
    std::fprintf(stderr, "usage: renamed_halo recv|bind\n");
    return 2;
  }
  const bool renaming = rt.settings().rename_max_bytes != 0;
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  constexpr int tag = 7;

  std::vector<double> halo(n, -1.0);
  std::atomic<int> wrong{0}, waited{0};
  std::vector<std::atomic<bool>> posted(halos + 1);
  // Without renaming the next receive cannot start: one reader of one halo waiting a second
  // shows it.
  const int waiting_halos = renaming ? checked : 1;
  const auto wait_limit = std::chrono::seconds(renaming ? 3 : 1);
  {
    hytask::versioned<double> h(halo);
    for (int k = 0; k < halos; ++k) {
      if (mode == "recv")
        hytask::spawn({.name = "receive"},
                      [&posted, k, left](double* p) {
                        posted[static_cast<std::size_t>(k)] = true;
                        hytask::mpi::recv(p, n, MPI_DOUBLE, left, tag);
                      },
                      hytask::out(h), hytask::mpi::recv_channel(left, tag));
      else
        hytask::spawn({.name = "receive"},
                      [&posted, k, left](double* p) {
                        posted[static_cast<std::size_t>(k)] = true;
                        hytask::mpi::bind(hytask::mpi::irecv(p, n, MPI_DOUBLE, left, tag));
                      },
                      hytask::out(h), hytask::mpi::recv_channel(left, tag));
      for (int r = 0; r < readers; ++r)
        hytask::spawn({.name = "read"},
                      [&, k, r](const double* p) {
                        if (r == 0 && k < waiting_halos) {
                          // Wait for the next receive to start: it does not need this version.
                          const auto end = std::chrono::steady_clock::now() + wait_limit;
                          while (!posted[static_cast<std::size_t>(k + 1)].load()) {
                            if (std::chrono::steady_clock::now() > end) {
                              waited++;
                              break;
                            }
                            hytask::this_task::yield();
                          }
                        }
                        for (int i = 0; i < n; i += 97)
                          if (p[i] != value(left, k, i)) {
                            wrong++;
                            break;
                          }
                      },
                      hytask::in(h));
    }
    std::vector<double> out(n);
    for (int k = 0; k < halos; ++k) {
      for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = value(rank, k, i);
      hytask::mpi::send(out.data(), n, MPI_DOUBLE, right, tag);  // main runs tasks meanwhile
    }
    hytask::wait_all();
  }
  bool ok = wrong.load() == 0;
  for (int i = 0; i < n; ++i)
    if (halo[static_cast<std::size_t>(i)] != value(left, halos - 1, i)) ok = false;
  const hytask::rename_counters c = hytask::rename_stats();
  if (c.bytes_in_use != 0 || c.bytes_peak > c.cap) ok = false;
  int all_ok = ok ? 1 : 0, all_waited = waited.load();
  hytask::mpi::allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN);
  hytask::mpi::allreduce(MPI_IN_PLACE, &all_waited, 1, MPI_INT, MPI_SUM);
  if (rank == 0) {
    std::printf("renamed_halo %s: %d renamed, %d refused, peak %zu of %zu bytes\n", mode.c_str(),
                static_cast<int>(c.renamed), static_cast<int>(c.refused), c.bytes_peak, c.cap);
    if (!all_ok) std::printf("renamed_halo %s: FAILED: a reader saw another halo, or the last halo is not home\n", mode.c_str());
    else if (renaming && all_waited == 0) std::printf("renamed_halo %s: ok\n", mode.c_str());
    else if (renaming) std::printf("renamed_halo %s: FAILED: %d readers waited 3 s for the next receive\n", mode.c_str(), all_waited);
    else if (all_waited > 0) std::printf("renamed_halo %s: without renaming the next receive waited for the readers\n", mode.c_str());
    else std::printf("renamed_halo %s: FAILED: without renaming the next receive did not wait\n", mode.c_str());
  }
  return 0;
}
