// Cancellation with MPI (issue 20). Scenarios (argument):
//   local_recv   each rank cancels a task_group whose tasks are suspended in receives nobody
//                matches (blocking recv, a bound irecv, a probe), beside tasks of the group not
//                started and a successor outside it: the receives are cancelled, the tasks
//                resume with hytask::task_cancelled, wait_all returns, the runtime ends (no
//                operation left for MPI_Finalize); a cancelled task's later MPI call throws.
//   local_send   a task of a cancelled group suspended in a large send is drained: it resumes
//                only once the peer (not cancelled) has received (the peer posts its receive
//                only after the cancellation), sees this_task::cancelled(), and the data
//                arrived whole.
//   collective   every rank: tasks suspended in receives nobody matches, a large send and a
//                small one whose receiving tasks never start, queued tasks; every rank calls
//                cancel_collective: the receives are cancelled, the sends drained (the stale
//                small message too: a later receive on its tag gets the new message), the
//                queued tasks skipped; afterwards the job runs tasks and messages again.
//   broadcast    rank 0's task calls cancel_broadcast; the other ranks' tasks (suspended in
//                receives from rank 0, or computing and looking at this_task::cancelled())
//                stop when they learn it; main sees the job cancelled; cancel_collective
//                settles it on every rank, and the job goes on.
//   broadcast_at_end  the same without cancel_collective (and a large send left by a
//                cancelled task): the runtime's end drains it, MPI_Finalize does not hang.
//   global       global dependencies: tasks of later phases gated by matching, remote
//                successors, copyin transfers; some tasks of the first phase hold until they
//                see the cancellation, so that the tasks of later phases that depend on them
//                cannot have started; every rank calls cancel_collective in the middle: the
//                held tasks see it, their successors are skipped, the protocol stays
//                consistent, and the next phases compute right.
//   docs_example the pattern of docs/mpi.md as written: rank 0's task calls cancel_broadcast
//                only after every other rank's wait_all has returned (they tell it so from
//                main); settle_cancellation on every rank must say true everywhere, and a
//                second round without a cancellation false everywhere.
//   settle_one_rank  the pattern users wrote before settle_cancellation: only the rank that
//                saw the cancellation (rank 0, which broadcast it) calls cancel_collective;
//                the others, whose tasks had finished, go on to the runtime's end, where
//                every rank must meet rank 0 and end (each prints "ended").
// Rank 0 prints "cancel_mpi <scenario>: ok" when every rank's checks passed.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hang_guard.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int failures = 0;
int g_rank = -1;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "cancel_mpi: rank %d: FAILED: %s\n", g_rank, what);
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

// A cancelled task suspended in a rendezvous-sized send: drained, not abandoned. Rank 1 posts
// its receive only when rank 0's main says so, after the cancellation and a pause: until then
// the send cannot complete, so a task resumed before the "go" was abandoned, not drained. The
// task must see its cancellation once it resumes, and rank 1 must get the data whole.
void local_send() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  constexpr int n = 1 << 20;  // 8 MiB: not eager
  constexpr int tag = 31, go_tag = 32;
  if (size < 2) {
    check(false, "local_send needs 2 ranks");
    return;
  }
  hytask::mpi::barrier();
  if (rank == 0) {
    std::vector<double> out(n, 3.0);
    hytask::task_group g;
    std::atomic<bool> sending{false}, go_sent{false};
    std::atomic<int> resumed{0}, resumed_early{0}, saw_cancel{0}, threw{0};
    hytask::spawn({.name = "large send", .group = &g}, [&] {
      sending = true;
      try {
        hytask::mpi::send(out.data(), n, MPI_DOUBLE, 1, tag);
      } catch (const hytask::task_cancelled&) {
        threw++;
      }
      if (!go_sent.load()) resumed_early++;  // rank 1 had not even posted its receive
      if (hytask::this_task::cancelled()) saw_cancel++;
      resumed++;
    });
    while (!sending.load()) hytask::this_task::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // suspended in the send
    g.cancel();
    // Time for a wrong implementation to resume the task: a drained send cannot complete.
    const auto pause_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < pause_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      hytask::this_task::poll();
    }
    check(resumed.load() == 0, "the cancelled sender resumed before its peer posted the receive: "
                               "the send was abandoned, not drained");
    go_sent = true;
    int go = 1;
    hytask::mpi::send(&go, 1, MPI_INT, 1, go_tag);  // main is not in the group
    hytask::wait_all();
    check(resumed.load() == 1, "the cancelled sender did not resume");
    check(resumed_early.load() == 0, "the cancelled sender resumed before its peer received");
    check(saw_cancel.load() == 1, "the sender resumed without seeing its cancellation "
                                  "(this_task::cancelled() was false)");
    std::printf("cancel_mpi local_send: rank 0: the send %s after the drain\n",
                threw.load() ? "threw task_cancelled" : "returned");
  } else if (rank == 1) {
    int go = 0;
    hytask::mpi::recv(&go, 1, MPI_INT, 0, go_tag);
    std::vector<double> in(n, 0.0);
    hytask::mpi::request r = hytask::mpi::irecv(in.data(), n, MPI_DOUBLE, 0, tag);
    // Bounded: a send that the cancellation withdrew would never arrive.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!r.test() && std::chrono::steady_clock::now() < end) hytask::this_task::yield();
    if (!r.test()) {
      check(false, "the cancelled send's data did not arrive within 20 s: it was not drained");
      std::fflush(stderr);
      std::_Exit(1);  // a receive pending for ever: the runtime could not end
    }
    check(in[0] == 3.0 && in[n - 1] == 3.0, "the drained send's data");
  }
}

// Tasks that wait for something no rank will send, beside queued work, on every rank.
struct stuck_tasks {
  std::vector<double> big;
  double small = 0, small_in = 0, in[4] = {0, 0, 0, 0};
  std::vector<double> big_in;
  std::atomic<int> recv_cancelled{0}, recv_completed{0}, sends_resumed{0}, queued_ran{0}, gated_ran{0};
  std::atomic<int> started{0};  // of the unmatched receive and the two stray sends
  int x = 0;  // written by the unmatched receive's task: its successors cannot start before it

  void spawn(int peer_out, int peer_in, int queued) {
    big.assign(1 << 20, 1.0 + hytask::mpi::rank());  // 8 MiB: rendezvous
    big_in.assign(1 << 20, 0.0);
    hytask::spawn({.name = "unmatched recv"}, [this, peer_in] {
      started++;
      try {
        hytask::mpi::recv(in, 4, MPI_DOUBLE, peer_in, 99);
        recv_completed++;
      } catch (const hytask::task_cancelled&) {
        recv_cancelled++;
        throw;
      }
    }, hytask::out(x));
    // Sends whose receiving tasks (on peer_out) wait for the unmatched receive: nobody will
    // match them.
    hytask::spawn({.name = "stray large send"}, [this, peer_out] {
      started++;
      try {
        hytask::mpi::send(big.data(), static_cast<MPI_Count>(big.size()), MPI_DOUBLE, peer_out, 77);
      } catch (const hytask::task_cancelled&) {
      }
      sends_resumed++;
    });
    small = 1000.0 + hytask::mpi::rank();
    hytask::spawn({.name = "stray small send"}, [this, peer_out] {
      started++;
      try {
        hytask::mpi::send(&small, 1, MPI_DOUBLE, peer_out, 78);
      } catch (const hytask::task_cancelled&) {
      }
      sends_resumed++;
    });
    hytask::spawn({.name = "gated large recv"}, [this, peer_in] {
      gated_ran++;
      hytask::mpi::recv(big_in.data(), static_cast<MPI_Count>(big_in.size()), MPI_DOUBLE, peer_in, 77);
    }, hytask::in(x));
    hytask::spawn({.name = "gated small recv"}, [this, peer_in] {
      gated_ran++;
      hytask::mpi::recv(&small_in, 1, MPI_DOUBLE, peer_in, 78);
    }, hytask::in(x));
    for (int i = 0; i < queued; ++i)
      hytask::spawn({.name = "queued"}, [this] {
        queued_ran++;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }, hytask::in(x));
  }
  // Main runs tasks until the unmatched receive and both sends have started, then waits for
  // every rank to get there: a task the cancellation finds not started is skipped (rightly),
  // and then the checks below would not see what they test. Under TSan with more ranks than
  // cores, a fixed sleep was not enough (a CI run skipped a stray send).
  void wait_started() {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (started.load() < 3 && std::chrono::steady_clock::now() < end) hytask::this_task::yield();
    check(started.load() == 3, "the stuck tasks did not start within a minute");
    hytask::mpi::barrier();
  }
  void check_after(const char* how) {
    std::string h(how);
    check(recv_cancelled.load() == 1, (h + ": the unmatched receive did not throw task_cancelled").c_str());
    check(recv_completed.load() == 0, (h + ": a receive nobody sent to completed").c_str());
    check(sends_resumed.load() == 2, (h + ": a stray send's task did not resume").c_str());
    check(gated_ran.load() == 0 && queued_ran.load() == 0, (h + ": a task that had not started ran").c_str());
  }
};

// After a cancellation: messages on the tags the cancelled tasks used carry the new values.
void exchange_again(int peer_out, int peer_in) {
  double out = 2000.0 + hytask::mpi::rank(), got = -1;
  hytask::spawn([&] { hytask::mpi::send(&out, 1, MPI_DOUBLE, peer_out, 78); },
                hytask::mpi::send_channel(peer_out, 78));
  hytask::spawn([&] { hytask::mpi::recv(&got, 1, MPI_DOUBLE, peer_in, 78); },
                hytask::mpi::recv_channel(peer_in, 78));
  hytask::wait_all();
  check(got == 2000.0 + peer_in, "after the cancellation, a receive got a stale message");
}

void collective() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  stuck_tasks s;
  s.spawn(right, left, 20);
  s.wait_started();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the tasks post and suspend
  hytask::mpi::cancel_collective();
  check(!hytask::mpi::job_cancelled(), "the job is still cancelled after cancel_collective");
  check(!hytask::this_task::cancelled(), "main still sees a cancellation");
  hytask::wait_all();
  s.check_after("collective");
  exchange_again(right, left);
}

// Outlive broadcast(false): its tasks end at the runtime's end.
std::atomic<int> g_started{0}, g_saw{0}, g_timed_out{0};
stuck_tasks* g_stuck = nullptr;

void broadcast(bool settle) {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  std::atomic<int>& saw = g_saw;
  std::atomic<int>& timed_out = g_timed_out;
  g_stuck = new stuck_tasks;
  stuck_tasks& s = *g_stuck;
  if (!settle) {
    s.spawn(right, left, 5);  // strays that the runtime's end must drain
    s.wait_started();
  } else {
    hytask::spawn({.name = "unmatched recv from 0"}, [&s] {
      s.started++;
      try {
        hytask::mpi::recv(s.in, 4, MPI_DOUBLE, 0, 99);
        s.recv_completed++;
      } catch (const hytask::task_cancelled&) {
        s.recv_cancelled++;
        throw;
      }
    });
  }
  // Tasks that compute until they learn the cancellation (a minute at most).
  for (int i = 0; i < 2; ++i)
    hytask::spawn({.name = "compute"}, [&] {
      g_started++;
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!hytask::this_task::cancelled()) {
        if (std::chrono::steady_clock::now() > end) {
          timed_out++;
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        // A long computation lets MPI progress (in masteronly mode main's tasks must: only
        // main polls), and with it the notice of a broadcast cancellation.
        hytask::this_task::poll();
        try {
          hytask::this_task::yield();
        } catch (const hytask::task_cancelled&) {  // yield is a cancellation point
          break;
        }
      }
      saw++;
    });
  // Every rank's computing tasks (and the receive from rank 0) are running before rank 0
  // cancels: one the cancellation found not started would be skipped, and the checks that
  // the tasks saw it would hold for no task at all. A task waits for them and meets the other
  // ranks' in a barrier (not main: a blocking call of main may run a computing task, which
  // would keep main until the cancellation); on rank 0 it then cancels.
  const int want = settle ? 1 : 3;
  hytask::spawn({.name = "canceller"}, [&s, want, rank] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((g_started.load() < 2 || s.started.load() < want) && std::chrono::steady_clock::now() < end)
      hytask::this_task::yield();
    check(g_started.load() == 2 && s.started.load() == want, "the tasks did not start within a minute");
    hytask::mpi::barrier();
    if (rank != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    hytask::mpi::cancel_broadcast();
  }, hytask::mpi::collective());
  if (!settle) {
    // Tasks stay suspended in the stray sends until the runtime's end drains them: no
    // wait_all. Main learns the cancellation as it polls (running tasks meanwhile).
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!hytask::mpi::job_cancelled() && std::chrono::steady_clock::now() < end)
      hytask::this_task::yield();
    check(hytask::mpi::job_cancelled(), "main never learnt the broadcast cancellation");
    return;
  }
  hytask::wait_all();
  check(timed_out.load() == 0, "a computing task never learnt the broadcast cancellation");
  check(saw.load() == 2, "a computing task did not see the cancellation");
  check(hytask::this_task::cancelled() && hytask::mpi::job_cancelled(), "main does not see the job cancelled");
  // While the job is cancelled, tasks spawned are skipped and main posts nothing.
  std::atomic<int> ran{0};
  hytask::spawn([&] { ran++; });
  hytask::wait_all();
  check(ran.load() == 0, "a task spawned while the job is cancelled ran");
  bool refused = false;
  try {
    double x = 0;
    hytask::mpi::send(&x, 1, MPI_DOUBLE, right, 5);
  } catch (const hytask::task_cancelled&) {
    refused = true;
  }
  check(refused, "main posted while the job is cancelled");
  check(s.recv_cancelled.load() == 1 && s.recv_completed.load() == 0,
        "the receive from rank 0 was not cancelled");
  hytask::mpi::cancel_collective();
  check(!hytask::mpi::job_cancelled(), "the job is still cancelled after cancel_collective");
  hytask::spawn([&] { ran++; });
  hytask::wait_all();
  check(ran.load() == 1, "tasks do not run after cancel_collective");
  exchange_again(right, left);
}

}  // namespace

void global_scenario();

// Rank 0's task waits for a word from every other rank's main, sent after that rank's
// wait_all returned, and then cancels the job: no other rank can have seen it in wait_all.
void cancel_after_others_waited() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  hytask::spawn([rank, size] {
    if (rank != 0) return;
    for (int r = 1; r < size; ++r) {
      int word = 0;
      hytask::mpi::recv(&word, 1, MPI_INT, r, 31);
    }
    hytask::mpi::cancel_broadcast();
  });
  hytask::wait_all();
  if (rank != 0) {
    const int word = 1;
    hytask::mpi::send(&word, 1, MPI_INT, 0, 31);
  }
}

void docs_example() {
  cancel_after_others_waited();
  const bool settled = hytask::mpi::settle_cancellation();
  check(settled, "settle_cancellation said false after rank 0's cancel_broadcast");
  check(!hytask::mpi::job_cancelled(), "the job is still cancelled after settle_cancellation");
  std::atomic<int> ran{0};
  hytask::spawn([&] { ran++; });
  hytask::wait_all();
  check(ran.load() == 1, "a task did not run after the settlement");
  check(!hytask::mpi::settle_cancellation(), "settle_cancellation said true with no cancellation");
}

void settle_one_rank() {
  cancel_after_others_waited();
  if (hytask::this_task::cancelled()) hytask::mpi::cancel_collective();
  check(!hytask::mpi::job_cancelled(), "the job is still cancelled after cancel_collective");
}

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  g_rank = hytask::mpi::rank();
  hang_guard guard(120, [&] {
    std::fprintf(stderr, "cancel_mpi %s: rank %d: HUNG\n", scenario.c_str(), g_rank);
    std::fflush(stderr);
    std::_Exit(3);
  });
  if (scenario == "local_recv") local_recv();
  else if (scenario == "local_send") local_send();
  else if (scenario == "collective") collective();
  else if (scenario == "broadcast") broadcast(true);
  else if (scenario == "broadcast_at_end") broadcast(false);
  else if (scenario == "global") global_scenario();
  else if (scenario == "docs_example") docs_example();
  else if (scenario == "settle_one_rank") settle_one_rank();
  else {
    std::fprintf(stderr, "usage: cancel_mpi local_recv|local_send|collective|broadcast|broadcast_at_end|"
                 "global|docs_example|settle_one_rank\n");
    return 2;
  }
  if (scenario == "settle_one_rank") {
    // Rank 0 is in cancel_collective until the others reach their end: no collective here.
    const int rank = hytask::mpi::rank();
    rt.shutdown();
    if (failures == 0) std::printf("cancel_mpi %s: rank %d: ended\n", scenario.c_str(), rank);
    return failures == 0 ? 0 : 1;
  }
  if (scenario == "broadcast_at_end") {
    // The job is cancelled: report first (main may not communicate), then the runtime's end
    // settles it on every rank.
    const int rank = hytask::mpi::rank();
    if (failures == 0) std::printf("cancel_mpi %s: rank %d: checks passed\n", scenario.c_str(), rank);
    std::fflush(stdout);
    rt.shutdown();
    check(g_timed_out.load() == 0 && g_saw.load() == 2, "a computing task did not see the cancellation");
    check(g_stuck->sends_resumed.load() == 2, "a stray send's task did not resume");
    if (failures == 0) std::printf("cancel_mpi %s: rank %d: ended\n", scenario.c_str(), rank);
    return failures == 0 ? 0 : 1;
  }
  int total = failures;
  hytask::mpi::allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM);
  if (total == 0 && hytask::mpi::rank() == 0) std::printf("cancel_mpi %s: ok\n", scenario.c_str());
  return failures == 0 ? 0 : 1;
}

// Global dependencies (issue 17) under a collective cancellation: phases of tasks with remote
// reads (copyin), writes after them, tasks gated by their phase's matching; every rank cancels
// in the middle. Then new phases must compute the right values.
//
// Deterministic: the first `held` writers of each rank's block in phase 0 hold (yielding)
// until they see the cancellation, which cancel_collective sets on their rank before it waits
// for the tasks. The writers of those elements in later phases (same rank) depend on them,
// directly and through the previous rank's copyin of phase 1 (a global dependency each way):
// they cannot have started when the job is cancelled, and must be skipped, as the rank stays
// cancelled until every task of the job is done. (That copyin itself may run: its rank may
// not have reached cancel_collective yet when the held task ends, and a completion from
// another rank is a normal one.) So not every task runs, whatever the timing. Several held
// tasks per rank: each yields to another, so that main, the only worker with
// HYTASK_THREADS=1, gets back to its own waits. 3 rounds of 2 phases: fewer phases than
// HYTASK_PHASE_WINDOW's default (8), so fence() never waits for the held phase.
void global_scenario() {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const std::size_t per = 16, n = per * static_cast<std::size_t>(size);
  constexpr std::size_t held = 4;  // of each rank's block
  constexpr int rounds = 3;
  auto is_held = [](std::size_t i) { return i % per < held; };
  hytask::global_array<long> a(n);
  for (long& x : a.local()) x = -1;
  std::atomic<int> ran{0}, held_started{0}, held_saw{0}, held_timed_out{0}, held_done{0};
  std::atomic<int> after_held_ran{0};  // writers of later phases on a held element
  std::vector<long> copies(n, 0);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = a.local_begin(); i < a.local_begin() + per; ++i) {
      if (round == 0 && is_held(i)) {
        hytask::spawn({.name = "held writer"}, [&] {
          ran++;
          held_started++;
          const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (!hytask::this_task::cancelled()) {
            if (std::chrono::steady_clock::now() > end) {
              held_timed_out++;
              break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            try {
              hytask::this_task::yield();
            } catch (const hytask::task_cancelled&) {  // yield is a cancellation point
              break;
            }
          }
          if (hytask::this_task::cancelled()) held_saw++;
          held_done++;
        }, hytask::out(a[i]));
        continue;
      }
      hytask::spawn([&a, &ran, &after_held_ran, is_held, i, round] {
        ran++;
        if (is_held(i)) after_held_ran++;
        a[i].put(static_cast<long>(round * 1000 + static_cast<int>(i)));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }, hytask::out(a[i]));
    }
    hytask::fence();
    for (std::size_t k = 0; k < per; ++k) {
      const std::size_t j = (a.local_begin() + per + k) % n;  // the next rank's elements
      hytask::spawn([&copies, &ran, j] {
        ran++;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        (void)copies[j];
      }, hytask::copyin(a[j], &copies[j]));
    }
    hytask::fence();
  }
  // Every rank's held tasks are running (main runs tasks while it yields) before any rank
  // cancels: one not started would be skipped, and not show that it saw the cancellation.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (held_started.load() < static_cast<int>(held) && std::chrono::steady_clock::now() < end)
    hytask::this_task::yield();
  check(held_started.load() == static_cast<int>(held), "the held tasks did not start within a minute");
  hytask::mpi::barrier();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the other chains go on
  hytask::mpi::cancel_collective();
  const int total = rounds * 2 * static_cast<int>(per);
  check(held_done.load() == held_started.load(),
        "cancel_collective returned while a held task was still running");
  check(ran.load() < total, "every global task ran: nothing was cancelled");
  check(!hytask::mpi::job_cancelled(), "the job is still cancelled after cancel_collective");
  // New phases: each rank writes its block, then reads the next rank's.
  for (std::size_t i = a.local_begin(); i < a.local_begin() + per; ++i)
    hytask::spawn([&a, i] { a[i].put(static_cast<long>(7000 + i)); }, hytask::out(a[i]));
  hytask::fence();
  std::vector<long> got(per, 0);
  for (std::size_t k = 0; k < per; ++k) {
    const std::size_t j = (a.local_begin() + per + k) % n;
    hytask::spawn([&got, &a, j, k] { got[k] = a[j].get(); }, hytask::in(a[j]));
  }
  hytask::wait_all();
  // Checked after every task is done (a wrong cancel_collective may return with some running).
  check(held_timed_out.load() == 0, "a held task did not see the cancellation within 10 s");
  check(held_saw.load() == static_cast<int>(held), "a held task ended without seeing the cancellation");
  check(after_held_ran.load() == 0,
        "a writer of a later phase on a held element ran: it started before its global "
        "predecessors completed, or the cancellation did not skip it");
  for (std::size_t k = 0; k < per; ++k) {
    const std::size_t j = (static_cast<std::size_t>(rank) * per + per + k) % n;
    check(got[k] == static_cast<long>(7000 + j), "a value written after the cancellation");
  }
}
