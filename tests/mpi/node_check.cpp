// HYTASK_PROGRESS=node (seed 002), checked on what it must do. One mode per test:
//   idle      over an idle second the agent wakes nobody and spends (almost) no CPU, nor does
//             any rank (run with HYTASK_PROGRESS=node);
//   progress  with its only worker computing, a rank's receive still completes: the agent
//             woke its progress thread (HYTASK_THREADS=1); 'progress 0': the receiver is the
//             agent's own rank, which the agent polls itself in multiple mode (and wakes in
//             funneled mode, where only the MPI thread may call MPI);
//   rules     the agent on a table of one rank, driven by hand: no wake while the rank is
//             inside MPI (counted as suppressed), wakes once it is out, no second wake while
//             the rank's thread has not taken the first, none once nothing is pending, and it
//             parks (no MPI needs to run: the table is the whole interface); a long exchange
//             stretches the rank's longest period for the next one; with a poll function for
//             its own rank, the agent calls it instead of waking the rank's thread;
//   hold      rank 0 keeps a receive pending for HOLD_S seconds (for hytask-info --node);
//   kill      rank 1 (or rank 0 with 'kill 0') kills itself with SIGKILL while its peer
//             waits for its message: the job must end, not hang.
// Prints "node_check <mode>: ok" on rank 0 when every check passed.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "node/agent.hpp"
#include "node/node_table.hpp"

namespace {

using namespace std::chrono_literals;

int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "node_check: FAILED: %s\n", what.c_str());
  }
}

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

void spin_for(std::chrono::steady_clock::duration d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile unsigned long spin = 0;
  while (std::chrono::steady_clock::now() < end) spin = spin + 1;
}

// With a runtime, through it (its access mode may reserve MPI to one thread); without, plainly.
int finish(const char* mode, int rank, bool runtime = true) {
  int all = failures;
  if (runtime) hytask::mpi::allreduce(std::span(&all, 1), MPI_SUM);
  else MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0) std::printf("node_check %s: ok\n", mode);
  return all == 0 ? 0 : 1;
}

int idle(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  check(rt.settings().progress == hytask::progress_policy::node, "run with HYTASK_PROGRESS=node");
  const int rank = hytask::mpi::rank();
  // One exchange first, so that the agent and the threads have run at least once.
  int v = rank;
  hytask::spawn([&] {
    const int peer = rank ^ 1;
    if (peer < hytask::mpi::size()) {
      int got = -1;
      auto r = hytask::mpi::irecv(std::span(&got, 1), peer, 1);
      hytask::mpi::send(std::span(&v, 1), peer, 1);
      r.wait();
      check(got == peer, "the warm-up exchange delivered its value");
    }
  });
  hytask::wait_all();
  hytask::mpi::barrier();
  std::this_thread::sleep_for(100ms);  // wakes already due are sent
  const auto before = hytask::mpi::progress_stats();
  const double cpu0 = process_cpu_ms();
  std::this_thread::sleep_for(1s);
  const double cpu = process_cpu_ms() - cpu0;
  const auto after = hytask::mpi::progress_stats();
  check(after.wakes == before.wakes,
        "rank " + std::to_string(rank) + ": the agent woke it " +
            std::to_string(after.wakes - before.wakes) + " times over an idle second");
  check(after.suppressed == before.suppressed, "no wake was even due over the idle second");
  const double agent_ms = static_cast<double>(after.agent_cpu_ns - before.agent_cpu_ns) / 1e6;
  check(agent_ms < 5, "the agent used " + std::to_string(agent_ms) + " ms of CPU over an idle second");
  check(cpu < 50, "rank " + std::to_string(rank) + " used " + std::to_string(cpu) +
                      " ms of CPU over an idle second");
  std::printf("node_check idle: rank %d: %.2f ms CPU, agent %.3f ms, %llu wakes over 1 s\n", rank,
              cpu, agent_ms, static_cast<unsigned long long>(after.wakes - before.wakes));
  return finish("idle", rank);
}

int progress(int argc, char** argv, int receiver) {
  hytask::runtime rt(argc, argv);
  check(rt.settings().threads == 1, "run with HYTASK_THREADS=1");
  const int rank = hytask::mpi::rank();
  const int sender = 1 - receiver;
  // 4 MiB: above every eager limit, so the receiver's library must act while it computes.
  std::vector<double> buf(std::size_t{1} << 19, rank == sender ? 1.5 : 0.0);
  if (rank == receiver) {
    const auto start = hytask::mpi::progress_stats();
    hytask::mpi::request r;
    std::atomic<bool> done{false};
    hytask::spawn({.name = "receive"}, [&] {
      r = hytask::mpi::irecv(std::span(buf), sender, 7);
      r.wait();
      done.store(true);
    });
    // The only worker computes until the receive is complete, or 10 s.
    bool completed_while_busy = false;
    hytask::spawn({.name = "compute"}, [&] {
      const auto end = std::chrono::steady_clock::now() + 10s;
      while (std::chrono::steady_clock::now() < end) {
        spin_for(1ms);
        if (hytask::mpi::progress_stats().completed > start.completed) {
          completed_while_busy = true;
          break;
        }
      }
    });
    hytask::wait_all();
    const auto s = hytask::mpi::progress_stats();
    check(completed_while_busy,
          "the receive completed through a woken poll while the only worker computed (" +
              std::to_string(s.wakes - start.wakes) + " wakes, " +
              std::to_string(s.suppressed - start.suppressed) + " suppressed)");
    check(done.load() && buf.front() == 1.5 && buf.back() == 1.5, "the message arrived intact");
    // The agent's own rank (local 0) in multiple mode: polled by the agent itself, its
    // thread never woken; any other rank, or funneled mode: woken, never polled by the agent.
    const bool self = s.local_rank == 0 && rt.settings().mpi_mode == hytask::mpi_mode::multiple;
    const auto agent_polls = s.agent_polls - start.agent_polls;
    if (self)
      check(agent_polls > 0, "the agent polled its own rank itself (" +
                                 std::to_string(agent_polls) + " polls)");
    else
      check(agent_polls == 0, "the agent polled rank " + std::to_string(rank) + " itself (" +
                                  std::to_string(agent_polls) + " times) though it may not");
    std::printf("node_check progress: rank %d (local %d): %llu wakes, %llu of them the agent's "
                "own polls\n", rank, s.local_rank,
                static_cast<unsigned long long>(s.wakes - start.wakes),
                static_cast<unsigned long long>(agent_polls));
  } else if (rank == sender) {
    std::this_thread::sleep_for(200ms);  // the receiver computes by now
    hytask::spawn([&] { hytask::mpi::send(std::span(buf), receiver, 7); });
    hytask::wait_all();
  }
  hytask::mpi::barrier();
  return finish("progress", rank);
}

// The agent's rules, on a table of this rank alone.
int rules(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    hytask::node::node_table table(MPI_COMM_SELF);
    hytask::node::node_row& row = table.mine();
    hytask::node::node_header& h = table.header();
    hytask::node::agent agent(table, 100'000, 2'000'000);  // periods 0.1-2 ms
    std::this_thread::sleep_for(50ms);
    check(row.wakes.load() == 0, "no wake with nothing pending");

    row.in_mpi.store(1);
    row.pending.store(1);
    hytask::node::notify_agent(h);
    std::this_thread::sleep_for(200ms);
    check(row.suppressed.load() > 0, "a wake due while inside MPI was counted as suppressed");
    check(row.wakes.load() == 0, "no wake while the rank is inside MPI (" +
                                     std::to_string(row.wakes.load()) + " were sent)");

    row.in_mpi.store(0);
    std::this_thread::sleep_for(200ms);
    const auto woken = row.wakes.load();
    check(woken > 0, "the rank is woken once it is out of MPI with an operation pending");
    check(row.wake.load() >= woken, "each wake bumped the rank's futex word");
    // Nobody took the wake (no thread serves this row): it is not sent again.
    check(woken == 1, "no second wake while the first was not taken (" + std::to_string(woken) +
                          " sent)");
    check(row.unserved.load() > 0, "the wakes held back were counted");
    // A thread that takes each wake at once: wakes follow on the rank's period.
    std::atomic<bool> serve{true};
    std::thread server([&] {
      while (serve.load()) {
        row.served.store(row.agent_wakes.load());
        std::this_thread::sleep_for(20us);
      }
    });
    std::this_thread::sleep_for(200ms);
    check(row.wakes.load() > woken + 10, "a rank whose thread takes its wakes is woken again (" +
                                             std::to_string(row.wakes.load() - woken) +
                                             " wakes in 0.2 s)");

    serve.store(false);
    server.join();

    row.pending.store(0);
    std::this_thread::sleep_for(50ms);
    const auto wakes = row.wakes.load();
    const auto rounds = h.agent_rounds.load();
    std::this_thread::sleep_for(500ms);
    check(row.wakes.load() == wakes, "no wake once nothing is pending");
    // Parked, the agent looks only for dead ranks, every 100 ms.
    check(h.agent_rounds.load() - rounds <= 10,
          "the agent parks with nothing pending (" + std::to_string(h.agent_rounds.load() - rounds) +
              " rounds in 0.5 s)");
  }
  {
    // A long exchange: the next one, as long, is looked at less often (its longest period
    // follows the exchanges' length, an eighth of it, up to 4x the configured ceiling).
    hytask::node::node_table table(MPI_COMM_SELF);
    hytask::node::node_row& row = table.mine();
    hytask::node::node_header& h = table.header();
    hytask::node::agent agent(table, 100'000, 2'000'000);
    std::atomic<bool> serve{true};
    std::thread server([&] {  // the rank's thread, taking each wake at once
      while (serve.load()) {
        row.served.store(row.agent_wakes.load());
        std::this_thread::sleep_for(20us);
      }
    });
    auto exchange = [&] {
      row.pending.store(1);
      hytask::node::notify_agent(h);
      const auto before = row.wakes.load();
      std::this_thread::sleep_for(400ms);
      row.pending.store(0);
      std::this_thread::sleep_for(20ms);
      return row.wakes.load() - before;
    };
    const auto first_long = exchange(), next_long = exchange();
    check(next_long * 2 < first_long, "after a long exchange the rank is woken less often (" +
                                          std::to_string(first_long) + " then " +
                                          std::to_string(next_long) + " wakes in 0.4 s)");
    std::printf("node_check rules: wakes in 0.4 s of a long exchange: %llu, then %llu\n",
                static_cast<unsigned long long>(first_long),
                static_cast<unsigned long long>(next_long));
    serve.store(false);
    server.join();
  }
  {
    // With a poll function for its own rank, the agent calls it and never wakes the thread.
    hytask::node::node_table table(MPI_COMM_SELF);
    hytask::node::node_row& row = table.mine();
    struct counter {
      std::atomic<int> calls{0};
    } polls;
    auto poll = [](void* ctx) {
      static_cast<counter*>(ctx)->calls.fetch_add(1);
      return hytask::core::poll_result::pending;
    };
    hytask::node::agent agent(table, 100'000, 2'000'000, poll, &polls);
    row.pending.store(1);
    hytask::node::notify_agent(table.header());
    std::this_thread::sleep_for(200ms);
    check(polls.calls.load() > 10, "the agent polled its own rank itself (" +
                                       std::to_string(polls.calls.load()) + " calls in 0.2 s)");
    check(row.wake.load() == 0, "the agent did not wake its own rank's thread");
    agent.stop_self_polls();
    check(row.agent_polls.load() == static_cast<std::uint64_t>(polls.calls.load()),
          "each of its polls was counted in the row");
    const int calls = polls.calls.load();
    std::this_thread::sleep_for(100ms);
    check(polls.calls.load() == calls, "no poll of its own once MPI is about to end");
    check(row.wake.load() > 0, "then it wakes the rank's thread instead");
    row.pending.store(0);
  }
  const int status = finish("rules", rank, false);
  MPI_Finalize();
  return status;
}

int hold(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank();
  const char* env = std::getenv("HOLD_S");
  const auto hold_for = std::chrono::milliseconds(static_cast<long>(1000 * (env ? std::atof(env) : 3)));
  int v = 0;
  if (rank == 0) {
    hytask::spawn([&] { hytask::mpi::recv(std::span(&v, 1), 1, 3); });
    hytask::wait_all();
    check(v == 42, "the held receive completed");
  } else if (rank == 1) {
    std::this_thread::sleep_for(hold_for);
    v = 42;
    hytask::spawn([&] { hytask::mpi::send(std::span(&v, 1), 0, 3); });
    hytask::wait_all();
  }
  hytask::mpi::barrier();
  return finish("hold", rank);
}

int kill_one(int argc, char** argv, int victim) {
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank();
  hytask::mpi::barrier();
  int v = 0;
  if (rank == victim) {
    std::this_thread::sleep_for(300ms);
    std::fprintf(stderr, "node_check kill: rank %d kills itself\n", rank);
    std::fflush(stderr);
    raise(SIGKILL);
  } else {
    // Waits for a message the victim never sends.
    hytask::spawn([&] { hytask::mpi::recv(std::span(&v, 1), victim, 9); });
    hytask::wait_all();
  }
  std::fprintf(stderr, "node_check kill: rank %d got a message from a dead rank\n", rank);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "idle") return idle(argc, argv);
  if (mode == "progress") return progress(argc, argv, argc > 2 ? std::atoi(argv[2]) : 1);
  if (mode == "rules") return rules(argc, argv);
  if (mode == "hold") return hold(argc, argv);
  if (mode == "kill") return kill_one(argc, argv, argc > 2 ? std::atoi(argv[2]) : 1);
  std::fprintf(stderr, "usage: node_check idle|progress|rules|hold|kill [RANK]\n");
  return 2;
}
