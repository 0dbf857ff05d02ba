// Task-aware MPI against plain MPI, in the same run, on 2 ranks.
//
//   mpiexec -n 2 build/bench/bench_mpi --case latency|rate|busy|waiting [options]
//
// latency  ping-pong round trip of --bytes (8): plain MPI_Send/MPI_Recv from main, hytask's
//          send/recv from main, and hytask's send/recv inside one task per rank. The three
//          alternate --reps times (each --n round trips); medians are reported.
// rate     message rate: rank 0 sends windows of --window (64) small messages, rank 1
//          receives them, with an acknowledgement per window (as osu_mbw_mr): plain MPI
//          (Isend/Irecv + Waitall), hytask requests from main (isend/irecv + waitall), and
//          one task per message (send / recv inside the task). --n windows per repetition.
// busy     ping-pong while every worker runs compute tasks (--task-us long): round-trip
//          time and compute throughput, beside the same compute without communication.
//          This is where the progress policies (HYTASK_PROGRESS) differ.
// waiting  rank 1 computes (--tasks tasks, each a fixed amount of work that takes --task-us
//          alone, on its workers) while rank 0 waits
//          for the message rank 1 sends at the end: in MPI_Recv (plain MPI: the library
//          polls), in hytask::mpi::recv inside a task (hytask's idle workers poll), or asleep
//          (a 1 ms sleep between MPI_Iprobe calls: the reference). Rank 1's compute time in
//          each. On a node with fewer cores than the two ranks' threads, the waiting rank's
//          polling takes cores from the computing one. --rounds N splits the tasks into N
//          rounds, each ending with a message: N waits instead of one.
//
// Prints one line per variant: `bench_mpi case=... variant=... value=... unit=...`.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  std::string case_name = "latency";
  long n = 20000;
  int reps = 7;
  std::size_t bytes = 8;
  int window = 64;
  double task_us = 20;
  long tasks = 20000;
  long rounds = 1;
};

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void report(const options& o, const char* variant, double value, const char* unit,
            const std::string& extra = "") {
  if (hytask::mpi::rank() != 0) return;
  std::printf("bench_mpi case=%s variant=%s value=%.3f unit=%s progress=%s mode=%s workers=%u%s%s\n",
              o.case_name.c_str(), variant, value, unit,
              std::getenv("HYTASK_PROGRESS") ? std::getenv("HYTASK_PROGRESS") : "default",
              std::getenv("HYTASK_MPI_MODE") ? std::getenv("HYTASK_MPI_MODE") : "default",
              hytask::worker_count(), extra.empty() ? "" : " ", extra.c_str());
  std::fflush(stdout);
}

// ---- latency ---------------------------------------------------------------------------

double pingpong_plain(long n, std::vector<char>& buf, int rank) {
  const int peer = 1 - rank;
  const int count = static_cast<int>(buf.size());
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = clock_type::now();
  for (long i = 0; i < n; ++i) {
    if (rank == 0) {
      MPI_Send(buf.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
    }
  }
  return since(t0);
}

double pingpong_hytask(long n, std::vector<char>& buf, int rank) {
  const int peer = 1 - rank;
  for (long i = 0; i < n; ++i) {
    if (rank == 0) {
      hytask::mpi::send(buf, peer, 2);
      hytask::mpi::recv(buf, peer, 2);
    } else {
      hytask::mpi::recv(buf, peer, 2);
      hytask::mpi::send(buf, peer, 2);
    }
  }
  return 0;
}

void latency(const options& o) {
  const int rank = hytask::mpi::rank();
  std::vector<char> buf(o.bytes);
  std::vector<double> plain, main_, task;
  for (int r = 0; r < o.reps + 1; ++r) {  // the first repetition warms up
    double p = pingpong_plain(o.n, buf, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clock_type::now();
    pingpong_hytask(o.n, buf, rank);
    double m = since(t0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    t0 = clock_type::now();
    hytask::spawn({.name = "pingpong"}, [&] { pingpong_hytask(o.n, buf, rank); });
    hytask::wait_all();
    t = since(t0);
    if (r == 0) continue;
    plain.push_back(1e6 * p / o.n);
    main_.push_back(1e6 * m / o.n);
    task.push_back(1e6 * t / o.n);
  }
  const double p = median(plain), m = median(main_), t = median(task);
  const std::string b = "bytes=" + std::to_string(o.bytes);
  report(o, "plain-mpi", p, "us_per_round_trip", b);
  report(o, "hytask-main", m, "us_per_round_trip", b + " added_us=" + std::to_string(m - p));
  report(o, "hytask-task", t, "us_per_round_trip", b + " added_us=" + std::to_string(t - p));
}

// ---- message rate ----------------------------------------------------------------------

void rate(const options& o) {
  const int rank = hytask::mpi::rank();
  const int w = o.window;
  std::vector<double> sendbuf(static_cast<std::size_t>(w)), recvbuf(static_cast<std::size_t>(w));
  char ack = 0;
  std::vector<MPI_Request> reqs(static_cast<std::size_t>(w));
  std::vector<double> plain, requests, tasks;
  for (int r = 0; r < o.reps + 1; ++r) {
    // plain MPI
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clock_type::now();
    for (long i = 0; i < o.n; ++i) {
      for (int k = 0; k < w; ++k) {
        if (rank == 0)
          MPI_Isend(&sendbuf[static_cast<std::size_t>(k)], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
        else
          MPI_Irecv(&recvbuf[static_cast<std::size_t>(k)], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
      }
      MPI_Waitall(w, reqs.data(), MPI_STATUSES_IGNORE);
      if (rank == 0) MPI_Recv(&ack, 1, MPI_CHAR, 1, w, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else MPI_Send(&ack, 1, MPI_CHAR, 0, w, MPI_COMM_WORLD);
    }
    const double p = since(t0);
    // hytask requests from main
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = clock_type::now();
    std::vector<hytask::mpi::request> hr(static_cast<std::size_t>(w));
    for (long i = 0; i < o.n; ++i) {
      for (int k = 0; k < w; ++k) {
        auto kk = static_cast<std::size_t>(k);
        hr[kk] = rank == 0 ? hytask::mpi::isend(std::span(&sendbuf[kk], 1), 1, k)
                           : hytask::mpi::irecv(std::span(&recvbuf[kk], 1), 0, k);
      }
      hytask::mpi::waitall(hr);
      if (rank == 0) hytask::mpi::recv(std::span(&ack, 1), 1, w);
      else hytask::mpi::send(std::span(&ack, 1), 0, w);
    }
    const double q = since(t0);
    // one task per message
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = clock_type::now();
    for (long i = 0; i < o.n; ++i) {
      for (int k = 0; k < w; ++k) {
        auto kk = static_cast<std::size_t>(k);
        if (rank == 0)
          hytask::spawn([&sendbuf, kk, k] { hytask::mpi::send(std::span(&sendbuf[kk], 1), 1, k); });
        else
          hytask::spawn([&recvbuf, kk, k] { hytask::mpi::recv(std::span(&recvbuf[kk], 1), 0, k); });
      }
      hytask::wait_all();
      if (rank == 0) hytask::mpi::recv(std::span(&ack, 1), 1, w);
      else hytask::mpi::send(std::span(&ack, 1), 0, w);
    }
    const double t = since(t0);
    if (r == 0) continue;
    const double msgs = static_cast<double>(o.n) * w;
    plain.push_back(msgs / p / 1e6);
    requests.push_back(msgs / q / 1e6);
    tasks.push_back(msgs / t / 1e6);
  }
  const std::string b = "window=" + std::to_string(w);
  const double p = median(plain);
  report(o, "plain-mpi", p, "million_msgs_per_s", b);
  report(o, "hytask-requests", median(requests), "million_msgs_per_s",
         b + " vs_plain=" + std::to_string(median(requests) / p));
  report(o, "hytask-task-per-message", median(tasks), "million_msgs_per_s",
         b + " vs_plain=" + std::to_string(median(tasks) / p));
}

// ---- ping-pong while busy --------------------------------------------------------------

void spin_for(double us) {
  const auto until = clock_type::now() + std::chrono::duration<double, std::micro>(us);
  while (clock_type::now() < until) {
  }
}

void busy(const options& o) {
  const int rank = hytask::mpi::rank();
  const int peer = 1 - rank;
  std::vector<double> rt, compute_with, compute_alone;
  for (int r = 0; r < o.reps + 1; ++r) {
    // compute alone
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clock_type::now();
    for (long i = 0; i < o.tasks; ++i) hytask::spawn({.name = "compute"}, [&o] { spin_for(o.task_us); });
    hytask::wait_all();
    const double alone = since(t0);
    // compute beside a ping-pong that lasts as long as the compute
    MPI_Barrier(MPI_COMM_WORLD);
    std::atomic<long> left{o.tasks};
    std::atomic<bool> stop{false};
    long rounds = 0;
    double pp_seconds = 0;
    double busy_seconds = 0;
    t0 = clock_type::now();
    hytask::spawn({.name = "pingpong"}, [&] {
      char c = 0;
      auto p0 = clock_type::now();
      for (;;) {
        // rank 0 decides when to stop and tells rank 1 in the message
        if (rank == 0) {
          c = stop.load() ? 1 : 0;
          hytask::mpi::send(std::span(&c, 1), peer, 3);
          hytask::mpi::recv(std::span(&c, 1), peer, 3);
        } else {
          hytask::mpi::recv(std::span(&c, 1), peer, 3);
          hytask::mpi::send(std::span(&c, 1), peer, 3);
        }
        ++rounds;
        if (c == 1) break;
      }
      pp_seconds = since(p0);
    }, hytask::mpi::channel(peer, 3));
    for (long i = 0; i < o.tasks; ++i)
      hytask::spawn({.name = "compute"}, [&] {
        spin_for(o.task_us);
        if (left.fetch_sub(1) == 1) {
          busy_seconds = since(t0);
          stop.store(true);
        }
      });
    hytask::wait_all();
    if (rank == 1) stop.store(true);
    if (r == 0) continue;
    // Round trips while the compute ran (the last few run after it, on idle workers).
    rt.push_back(1e6 * pp_seconds / static_cast<double>(std::max(1L, rounds)));
    compute_with.push_back(busy_seconds);
    compute_alone.push_back(alone);
  }
  const double a = median(compute_alone), w = median(compute_with);
  report(o, "pingpong-while-busy", median(rt), "us_per_round_trip",
         "task_us=" + std::to_string(o.task_us));
  report(o, "compute-slowdown", 100.0 * (w / a - 1.0), "percent",
         "alone_s=" + std::to_string(a) + " with_pingpong_s=" + std::to_string(w));
}

// ---- waiting --------------------------------------------------------------------------

// A fixed amount of work (not a wall-clock spin, which a preempted task would still end on
// time): `n` dependent multiply-adds.
double work(long n) {
  volatile double x = 1.0;
  for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

void waiting(const options& o) {
  const int rank = hytask::mpi::rank();
  // Iterations of work() per task: --task-us at this core's speed, measured alone.
  long per_task = 0;
  if (rank == 1) {
    const long probe = 20'000'000;
    const auto t0 = clock_type::now();
    work(probe);
    per_task = std::max(1L, static_cast<long>(static_cast<double>(probe) * o.task_us * 1e-6 / since(t0)));
  }
  const char* names[] = {"asleep", "plain-mpi", "hytask-task"};
  std::vector<double> seconds[3];
  for (int r = 0; r < o.reps + 1; ++r)
    for (int v = 0; v < 3; ++v) {
      MPI_Barrier(MPI_COMM_WORLD);
      int msg = 0;
      if (rank == 1) {
        // --rounds rounds (1 by default): each computes its share of the tasks, then sends.
        const auto t0 = clock_type::now();
        for (long round = 0; round < o.rounds; ++round) {
          for (long i = 0; i < o.tasks / o.rounds; ++i)
            hytask::spawn({.name = "compute"}, [per_task] { work(per_task); });
          hytask::wait_all();
          msg = 1;
          MPI_Send(&msg, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
        }
        const double dt = since(t0);
        MPI_Send(&dt, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
      } else for (long round = 0; round < o.rounds; ++round) {
        if (v == 0) {
          for (int flag = 0; !flag;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            MPI_Iprobe(1, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
          }
          MPI_Recv(&msg, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (v == 1) {
          MPI_Recv(&msg, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          hytask::spawn([&msg] { hytask::mpi::recv(std::span(&msg, 1), 1, 4, MPI_COMM_WORLD); });
          hytask::wait_all();
        }
      }
      if (rank == 0) {
        double dt = 0;
        MPI_Recv(&dt, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r > 0) seconds[v].push_back(dt);
      }
    }
  if (rank != 0) return;
  const double alone = median(seconds[0]);
  for (int v = 0; v < 3; ++v)
    report(o, names[v], median(seconds[v]), "s_rank1_compute",
           "slowdown_pct=" + std::to_string(100.0 * (median(seconds[v]) / alone - 1.0)));
}

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "bench_mpi", "--case latency|rate|busy|waiting [options]   (under mpiexec -n 2)",
      "Task-aware MPI against plain MPI, in the same run, on 2 ranks (bench/bench_mpi.cpp says what\n"
      "each case measures). Prints one line per variant: bench_mpi case=... variant=... value=... unit=...");
  cli.custom("--case", "CASE", [&o](const std::string& v) {
    if (v != "latency" && v != "rate" && v != "busy" && v != "waiting")
      throw hytask_cli::usage_error("--case: '" + v + "' is not latency, rate, busy or waiting");
    o.case_name = v;
  }, "latency: ping-pong round trip; rate: message rate; busy: ping-pong beside\n"
     "compute tasks; waiting: one rank computes while the other waits\n"
     "(default latency)");
  cli.integer("--n", o.n, 1, 10000000000L, "latency: round trips, rate: windows per repetition (default 20000)");
  cli.integer("--reps", o.reps, 1, 1000000, "repetitions after a warm-up; medians reported (default 7)");
  cli.integer("--bytes", o.bytes, 0, 1L << 30, "latency: message size (default 8)");
  cli.integer("--window", o.window, 1, 1 << 20, "rate: messages per window (default 64)");
  cli.number("--task-us", o.task_us, 0, 1e9, "busy, waiting: a compute task's length in microseconds (default 20)");
  cli.integer("--tasks", o.tasks, 1, 1000000000L, "busy, waiting: compute tasks (default 20000)");
  cli.integer("--rounds", o.rounds, 1, 1000000000L,
              "waiting: the tasks in N rounds, each ending with a message (default 1)");
  if (!cli.parse(argc, argv, print_help)) return false;
  if (o.case_name == "waiting" && o.rounds > o.tasks)
    throw hytask_cli::usage_error("--rounds " + std::to_string(o.rounds) + ": more rounds than --tasks (" +
                                  std::to_string(o.tasks) + "): a round needs a task");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status = hytask_cli::parse_before_mpi("bench_mpi", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  hytask::runtime rt(argc, argv);
  if (hytask::mpi::size() != 2) {
    if (hytask::mpi::rank() == 0) std::fprintf(stderr, "bench_mpi: run it on 2 ranks\n");
    return 2;
  }
  if (o.case_name == "latency") latency(o);
  else if (o.case_name == "rate") rate(o);
  else if (o.case_name == "busy") busy(o);
  else waiting(o);
  return 0;
}
