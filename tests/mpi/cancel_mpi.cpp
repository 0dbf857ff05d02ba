// Cancellation with MPI (issue 20). Scenarios (argument):
//   local_recv   each rank cancels a task_group whose tasks are suspended in receives nobody
//                matches (blocking recv, a bound irecv, a probe), beside tasks of the group not
//                started and a successor outside it: the receives are cancelled, the tasks
//                resume with hytask::task_cancelled, wait_all returns, the runtime ends (no
//                operation left for MPI_Finalize); a cancelled task's later MPI call throws.
//   local_send   a task of a cancelled group suspended in a large send is drained: it resumes
//                once the peer (not cancelled) has received, and the data arrived whole.
// Rank 0 prints "cancel_mpi <scenario>: ok" when every rank's checks passed.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hang_guard.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "cancel_mpi: rank %d: FAILED: %s\n", hytask::mpi::rank(), what);
    ++failures;
  }
}

// Tasks suspended in receives that no rank matches, cancelled with their group.
void local_recv() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int peer = (rank + 1) % size;
  constexpr int tag = 99;  // nobody sends on 97-99 (one tag per task: they post in any order)
  hytask::task_group g;
  std::atomic<int> posted{0}, cancelled_calls{0}, completed_normally{0}, not_started_ran{0};
  std::atomic<int> successor_ran{0}, after_cancel_refused{0};
  std::vector<double> buf(4, 0.0), buf2(4, 0.0);
  int x = 0;
  hytask::spawn({.name = "blocking recv", .group = &g}, [&] {
    posted++;
    try {
      hytask::mpi::recv(buf.data(), 4, MPI_DOUBLE, peer, tag);
      completed_normally++;
    } catch (const hytask::task_cancelled&) {
      cancelled_calls++;
      // A cancelled task posts nothing more: the next call throws at once.
      try {
        hytask::mpi::send(buf.data(), 1, MPI_DOUBLE, peer, tag + 1);
      } catch (const hytask::task_cancelled&) {
        after_cancel_refused++;
      }
      throw;  // leaving the task: it counts as cancelled, not failed
    }
  }, hytask::out(x));
  hytask::spawn([&] { successor_ran++; }, hytask::in(x));  // not in the group: skipped
  hytask::spawn({.name = "bound irecv", .group = &g}, [&] {
    posted++;
    hytask::mpi::bind(hytask::mpi::irecv(buf2.data(), 4, MPI_DOUBLE, peer, tag - 1));
  });
  hytask::spawn({.name = "probe", .group = &g}, [&] {
    posted++;
    try {
      hytask::mpi::probe(peer, tag - 2);
      completed_normally++;
    } catch (const hytask::task_cancelled&) {
      cancelled_calls++;
    }
  });
  // Wait until the three have posted (they suspend), then a little: cancel them suspended.
  while (posted.load() < 3) hytask::this_task::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  hytask::event gate;  // tasks of the group that have not started when it is cancelled
  for (int i = 0; i < 4; ++i) hytask::spawn({.group = &g}, [&] { not_started_ran++; }, hytask::after(gate));
  g.cancel();
  for (int i = 0; i < 4; ++i) hytask::spawn({.group = &g}, [&] { not_started_ran++; });  // after
  gate.set();
  hytask::wait_all();
  check(cancelled_calls.load() == 2, "the suspended recv and probe did not throw task_cancelled");
  check(completed_normally.load() == 0, "a receive nobody matched completed");
  check(after_cancel_refused.load() == 1, "a cancelled task's MPI call did not throw task_cancelled");
  check(successor_ran.load() == 0, "the successor of a cancelled task ran");
  check(not_started_ran.load() == 0, "a task of the cancelled group that had not started ran");
  // The rank goes on: messages still flow.
  int token = rank, got = -1;
  hytask::spawn([&] { hytask::mpi::send(&token, 1, MPI_INT, peer, 5); });
  hytask::spawn([&] { hytask::mpi::recv(&got, 1, MPI_INT, (rank + size - 1) % size, 5); });
  hytask::wait_all();
  check(got == (rank + size - 1) % size, "messages after the cancellation");
}

// A cancelled task suspended in a rendezvous-sized send: drained, not abandoned.
void local_send() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  if (size < 2) return;
  constexpr int n = 1 << 20;  // 8 MiB: not eager
  constexpr int tag = 31;
  if (rank == 0) {
    std::vector<double> out(n, 3.0);
    hytask::task_group g;
    std::atomic<bool> sending{false};
    std::atomic<int> resumed{0};
    hytask::spawn({.name = "large send", .group = &g}, [&] {
      sending = true;
      try {
        hytask::mpi::send(out.data(), n, MPI_DOUBLE, 1, tag);
      } catch (const hytask::task_cancelled&) {
      }
      resumed++;
    });
    while (!sending.load()) hytask::this_task::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    g.cancel();
    hytask::wait_all();
    check(resumed.load() == 1, "the cancelled sender did not resume");
  } else if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // after the cancellation
    std::vector<double> in(n, 0.0);
    hytask::mpi::recv(in.data(), n, MPI_DOUBLE, 0, tag);
    check(in[0] == 3.0 && in[n - 1] == 3.0, "the drained send's data");
  }
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  hang_guard guard(120, [&] {
    std::fprintf(stderr, "cancel_mpi %s: rank %d: HUNG\n", scenario.c_str(), hytask::mpi::rank());
    std::fflush(stderr);
    std::_Exit(3);
  });
  if (scenario == "local_recv") local_recv();
  else if (scenario == "local_send") local_send();
  else {
    std::fprintf(stderr, "usage: cancel_mpi local_recv|local_send\n");
    return 2;
  }
  int total = failures;
  hytask::mpi::allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM);
  if (total == 0 && hytask::mpi::rank() == 0) std::printf("cancel_mpi %s: ok\n", scenario.c_str());
  return failures == 0 ? 0 : 1;
}
