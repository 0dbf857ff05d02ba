// hytask::omp with a stock OpenMP runtime: built by GCC (libgomp) and by Clang (libomp), run
// on 2 ranks with Open MPI and MPICH (tests/omp/CMakeLists.txt).
//   omp_checks late       detached tasks' successors run only after their requests complete:
//                         the peer sends late on purpose, the successors check the data
//   omp_checks ompt       with HYTASK_PROGRESS=none (no progress thread), OMPT callbacks at
//                         scheduling points complete a request while tasks compute (libomp)
//   omp_checks thread     every OpenMP thread idle in a taskwait: the progress thread
//                         completes the late request (libgomp: the only poller)
//   omp_checks one_thread the same in a team of one thread (libomp: refused with a message)
//   omp_checks loops      detached exchanges beside worksharing loops, round after round
//   omp_checks commtask   fork-join: requests handed over before a parallel region complete
//                         while its threads compute; finalize_each runs post-work in
//                         completion order
//   omp_checks <misuse>   funneled, no_session, in_parallel, two_sessions, refused (the
//                         environment makes the session refuse): "caught: <message>"
//   omp_checks truncate   a request that fails ends the job with a message naming it
//   omp_checks hooks      (libgomp) tasks pass through hytask's GOMP_task intact (a firstprivate
//                         copied by a copy constructor, an over-aligned one, an undeferred
//                         detached task), and a request completes while compute tasks run,
//                         polled at their starts and ends; with HYTASK_OMP_TASK_HOOKS=0 the
//                         tasks are not wrapped and the thread completes it
//   omp_checks state      prints whether OMPT is active, and why
//   omp_checks priority   priority clauses take effect without OMP_MAX_TASK_PRIORITY in the
//                         environment (hytask_omp sets it); the environment's value wins
//   omp_checks delay      (HYTASK_OMP_POLL_DELAY_US=30000) no poll until hand-overs have
//                         stopped for the delay: a receive whose message arrives 5 ms after
//                         it completes only 30 ms after the next hand-over; while hand-overs
//                         go on every 10 ms, one completes 4 delays after the first at most
// Each prints "omp_checks <scenario>: ok" when its checks pass; a guard turns a hang into a
// failure that names the scenario.
#include <mpi.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hang_guard.hpp"
#include "hytask/mpi.hpp"
#include "hytask/omp.hpp"

namespace {

int g_rank = 0, g_peer = 0;
const char* g_scenario = "";

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double value(int from, int round, int i) { return from * 1e6 + round * 1e3 + i; }

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "omp_checks %s: rank %d: FAILED: %s\n", g_scenario, g_rank, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();
}

void print_stats(const hytask::omp::session& hs) {
  const auto s = hs.stats();
  std::printf("omp_checks %s: rank %d: ompt %d (%s), progress %s, ompt polls %llu, task hooks %d, "
              "hook polls %llu, thread polls %llu, thread stood aside %llu, thread CPU %.3f ms, "
              "fulfilled %llu\n",
              g_scenario, g_rank, s.ompt ? 1 : 0, s.ompt_state, s.progress,
              static_cast<unsigned long long>(s.ompt_polls), s.task_hooks ? 1 : 0,
              static_cast<unsigned long long>(s.hook_polls),
              static_cast<unsigned long long>(s.thread_polls),
              static_cast<unsigned long long>(s.thread_aside), 1e-6 * static_cast<double>(s.thread_cpu_ns),
              static_cast<unsigned long long>(s.fulfilled));
}

// Successors of detached tasks see the data of late messages, through each form of
// fulfill_when. Rank 0 sends late (its send tasks sleep first), rank 1 at once.
bool late() {
  hytask::omp::session hs;
  constexpr int rounds = 30, n = 512;
  std::vector<std::vector<double>> in(rounds, std::vector<double>(n, -1.0)),
      both(rounds, std::vector<double>(n, -1.0)), mine(rounds, std::vector<double>(n, -1.0));
  std::vector<std::vector<double>> out(rounds, std::vector<double>(n));
  for (int k = 0; k < rounds; ++k)
    for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] = value(g_rank, k, i);
  std::atomic<int> seen{0}, wrong{0};
  auto check = [&](const std::vector<double>& v, int k) {
    for (int i = 0; i < n; ++i)
      if (v[static_cast<std::size_t>(i)] != value(g_peer, k, i)) {
        ++wrong;
        return;
      }
    ++seen;
  };
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int k = 0; k < rounds; ++k) {
    double* a = in[static_cast<std::size_t>(k)].data();
    double* b = both[static_cast<std::size_t>(k)].data();
    double* c = mine[static_cast<std::size_t>(k)].data();
    const double* o = out[static_cast<std::size_t>(k)].data();
    const bool slow = g_rank == 0 && k % 3 == 0;
    // One request, handed over as an MPI_Request.
    {
      omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: a[0]) firstprivate(a, k)
      {
        MPI_Request r;
        MPI_Irecv(a, n, MPI_DOUBLE, g_peer, 3 * k, MPI_COMM_WORLD, &r);
        hytask::omp::fulfill_when(ev, r);
      }
    }
#pragma omp task depend(in: a[0]) firstprivate(k) shared(in, check)
    check(in[static_cast<std::size_t>(k)], k);
    // A receive and a late send, both in one detached task.
    {
      omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: b[0]) firstprivate(b, o, k, slow)
      {
        if (slow) sleep_ms(20);
        MPI_Request r[2];
        MPI_Irecv(b, n, MPI_DOUBLE, g_peer, 3 * k + 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(o, n, MPI_DOUBLE, g_peer, 3 * k + 1, MPI_COMM_WORLD, &r[1]);
        hytask::omp::fulfill_when(ev, {r[0], r[1]});
      }
    }
#pragma omp task depend(in: b[0]) firstprivate(k) shared(both, check)
    check(both[static_cast<std::size_t>(k)], k);
    // A hytask request (posted through hytask).
    {
      omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: c[0]) firstprivate(c, k)
      hytask::omp::fulfill_when(ev, hytask::mpi::irecv(c, n, MPI_DOUBLE, g_peer, 3 * k + 2, MPI_COMM_WORLD));
    }
#pragma omp task depend(in: c[0]) firstprivate(k) shared(mine, check)
    check(mine[static_cast<std::size_t>(k)], k);
    // The sends the peer's receives above wait for, late on rank 0.
#pragma omp task firstprivate(o, k, slow)
    {
      if (slow) sleep_ms(20);
      MPI_Send(o, n, MPI_DOUBLE, g_peer, 3 * k, MPI_COMM_WORLD);
      MPI_Send(o, n, MPI_DOUBLE, g_peer, 3 * k + 2, MPI_COMM_WORLD);
    }
    // libgomp's barrier misses a last task completed by hytask's thread (docs/omp.md).
    if (k == rounds - 1) {
#pragma omp taskwait
    }
  }
  print_stats(hs);
  if (wrong.load() != 0) fail(std::to_string(wrong.load()) + " successors saw a buffer before its message");
  if (seen.load() != 3 * rounds) fail(std::to_string(seen.load()) + " successors ran, expected " + std::to_string(3 * rounds));
  if (hs.stats().fulfilled != 3 * rounds) fail("fulfilled " + std::to_string(hs.stats().fulfilled));
  return true;
}

// A detached receive whose message is sent 30 ms into `tasks` compute tasks of `task_time`
// each on 2 threads (by a thread outside OpenMP: a send task could wait behind the compute
// tasks in the team's queues). Returns how many compute tasks had finished when the
// receive's successor ran (`tasks`: only once the compute ended).
int successor_among_compute(int tasks, std::chrono::microseconds task_time, int tag) {
  std::atomic<int> done{0};
  std::atomic<bool> posted{false};
  MPI_Barrier(MPI_COMM_WORLD);
  int at_successor = -1;
  double in = -1, out = value(g_rank, 0, 0);
  std::thread sender([&] {
    sleep_ms(30);
    MPI_Send(&out, 1, MPI_DOUBLE, g_peer, tag, MPI_COMM_WORLD);
  });
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: in) shared(in, posted)
    {
      MPI_Request r;
      MPI_Irecv(&in, 1, MPI_DOUBLE, g_peer, tag, MPI_COMM_WORLD, &r);
      hytask::omp::fulfill_when(ev, r);
      posted.store(true);
    }
#pragma omp task depend(in: in) shared(in, at_successor, done)
    {
      if (in != value(g_peer, 0, 0)) fail("the successor ran before the message");
      at_successor = done.load();
    }
    // The receive is posted before the compute starts (libomp's threads take their own
    // newest tasks first: under load the receive could otherwise run last).
    while (!posted.load()) {
#pragma omp taskyield
    }
    for (int t = 0; t < tasks; ++t) {
#pragma omp task shared(done)
      {
        std::this_thread::sleep_for(task_time);  // compute
        ++done;
      }
    }
  }
  sender.join();
  return at_successor;
}

// OMPT alone (HYTASK_PROGRESS=none): compute tasks run while the message arrives; the
// successor must run before they are all done, so a callback at a task switch polled.
bool ompt() {
  hytask::omp::session hs;
  if (!hs.stats().ompt) fail(std::string("OMPT is not active: ") + hs.stats().ompt_state);
  constexpr int tasks = 400;
  const int at_successor = successor_among_compute(tasks, std::chrono::milliseconds(1), 7);
  print_stats(hs);
  const auto s = hs.stats();
  std::printf("omp_checks ompt: rank %d: the successor ran after %d of %d compute tasks\n", g_rank,
              at_successor, tasks);
  if (at_successor < 0 || at_successor >= tasks)
    fail("the request completed only when the compute ended (" + std::to_string(at_successor) + ")");
  if (s.ompt_polls == 0 || s.thread_polls != 0)
    fail("expected polls from OMPT callbacks only");
  return true;
}

// A firstprivate that the compiler copies with a copy function (its constructor), and one
// aligned beyond the argument block's usual alignment.
struct copied {
  std::vector<int> v;
  alignas(64) double x = 0;
};

// libgomp's task entry point interposed (gomp_task_hook.cpp), `wrapped`: whether the session
// says it wraps tasks (HYTASK_OMP_TASK_HOOKS).
bool hooks(bool wrapped) {
  hytask::omp::session hs;
  if (hs.stats().task_hooks != wrapped)
    fail(std::string("task hooks ") + (wrapped ? "off" : "on") + ", expected " + (wrapped ? "on" : "off"));
  std::atomic<int> wrong{0};
  double early = -1, early_out = value(g_rank, 2, 0), late_in = -1, late_out = value(g_rank, 3, 0);
  MPI_Request early_send, late_send;
  MPI_Isend(&early_out, 1, MPI_DOUBLE, g_peer, 31, MPI_COMM_WORLD, &early_send);
  MPI_Isend(&late_out, 1, MPI_DOUBLE, g_peer, 33, MPI_COMM_WORLD, &late_send);
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int t = 0; t < 16; ++t) {
      copied c;
      c.v.assign(100, t);
      c.x = t;
#pragma omp task firstprivate(c, t) shared(wrong)
      if (c.v.size() != 100 || c.v[99] != t || c.x != t || reinterpret_cast<std::uintptr_t>(&c.x) % 64 != 0)
        ++wrong;
    }
    // Undeferred: the generating thread runs it at once and waits for its event.
    omp_event_handle_t ev;
#pragma omp task detach(ev) if (0) shared(early)
    {
      MPI_Request r;
      MPI_Irecv(&early, 1, MPI_DOUBLE, g_peer, 31, MPI_COMM_WORLD, &r);
      hytask::omp::fulfill_when(ev, r);
    }
    if (early != value(g_peer, 2, 0)) ++wrong;
    // Detached, with a firstprivate copied by its constructor: the event reaches the body
    // through the compiler's copy function.
    copied c;
    c.v.assign(10, 7);
    omp_event_handle_t ev2;
#pragma omp task detach(ev2) firstprivate(c) shared(late_in, wrong) depend(out: late_in)
    {
      if (c.v.size() != 10 || c.v[9] != 7) ++wrong;
      MPI_Request r;
      MPI_Irecv(&late_in, 1, MPI_DOUBLE, g_peer, 33, MPI_COMM_WORLD, &r);
      hytask::omp::fulfill_when(ev2, r);
    }
#pragma omp task depend(in: late_in) shared(late_in, wrong)
    if (late_in != value(g_peer, 3, 0)) ++wrong;
  }
  MPI_Wait(&early_send, MPI_STATUS_IGNORE);
  MPI_Wait(&late_send, MPI_STATUS_IGNORE);
  if (wrong.load() != 0) fail(std::to_string(wrong.load()) + " tasks saw their arguments changed");

  // A request completes while compute tasks of 0.3 ms run (the message is sent 30 ms in).
  constexpr int tasks = 400;
  const hytask::omp::session_stats before = hs.stats();
  const int at_successor = successor_among_compute(tasks, std::chrono::microseconds(300), 32);
  print_stats(hs);
  const hytask::omp::session_stats s = hs.stats();
  std::printf("omp_checks hooks: rank %d: the successor ran after %d of %d compute tasks\n", g_rank,
              at_successor, tasks);
  if (at_successor < 0 || at_successor >= tasks)
    fail("the request completed only when the compute ended (" + std::to_string(at_successor) + ")");
  if (wrapped && s.hook_polls == before.hook_polls) fail("no poll at a task's start or end");
  if (!wrapped && s.hook_polls != 0) fail("polls at task boundaries with the hooks off");
  return true;
}

// Every OpenMP thread waits idle (no callback): the progress thread completes the request.
// `threads` 1: libgomp has a team of one thread; libomp runs it serialised, and fulfill_when
// must refuse (libomp would abort at the region's end).
bool thread(int threads) {
  hytask::omp::session hs;
  double in = -1, out = value(g_rank, 1, 0);
  bool ok = false;
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: in) shared(in)
    {
      MPI_Request r;
      MPI_Irecv(&in, 1, MPI_DOUBLE, g_peer, 8, MPI_COMM_WORLD, &r);
      hytask::omp::fulfill_when(ev, r);
    }
#pragma omp task depend(in: in) shared(in, ok)
    ok = in == value(g_peer, 1, 0);
    // Sent by a thread outside OpenMP once the receiving team has waited for 100 ms (the
    // ranks may reach this point far apart): each rank tells the peer when its own team has
    // waited that long, and the peer's data follows that token.
    std::thread sender([&] {
      sleep_ms(100);
      char go = 0;
      MPI_Send(&go, 1, MPI_CHAR, g_peer, 18, MPI_COMM_WORLD);
      MPI_Recv(&go, 1, MPI_CHAR, g_peer, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&out, 1, MPI_DOUBLE, g_peer, 8, MPI_COMM_WORLD);
    });
#pragma omp taskwait
    sender.join();
  }
  print_stats(hs);
  const auto s = hs.stats();
  if (!ok) fail("the successor saw the buffer before the message");
  if (s.thread_polls == 0) fail("the progress thread did not poll");
  if (s.thread_cpu_ns == 0) fail("the progress thread polled, but its CPU time reads 0");
  if (!s.ompt && s.ompt_polls != 0) fail("OMPT polls without OMPT");
  return true;
}

// Detached exchanges beside worksharing loops, round after round: completions also happen in
// the callbacks at a loop's start and end and at its barrier (under libomp); the successors
// see the data.
bool loops() {
  hytask::omp::session hs;
  constexpr int rounds = 20, n = 64;
  std::vector<double> in(rounds * n, -1.0), out(rounds * n);
  for (int k = 0; k < rounds; ++k)
    for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(k * n + i)] = value(g_rank, k, i);
  std::atomic<int> seen{0}, wrong{0};
  double sink = 0;
#pragma omp parallel num_threads(2) reduction(+ : sink)
  for (int k = 0; k < rounds; ++k) {
    double* a = &in[static_cast<std::size_t>(k * n)];
    const double* o = &out[static_cast<std::size_t>(k * n)];
#pragma omp single nowait
    {
      omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: a[0]) firstprivate(a, o, k)
      {
        MPI_Request r[2];
        MPI_Irecv(a, n, MPI_DOUBLE, g_peer, 20 + k, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(o, n, MPI_DOUBLE, g_peer, 20 + k, MPI_COMM_WORLD, &r[1]);
        hytask::omp::fulfill_when(ev, {r[0], r[1]});
      }
#pragma omp task depend(in: a[0]) firstprivate(a, k) shared(seen, wrong)
      {
        bool ok = true;
        for (int i = 0; i < n; ++i) ok = ok && a[i] == value(g_peer, k, i);
        ++(ok ? seen : wrong);
      }
    }
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < 16; ++c) {
      const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      while (std::chrono::steady_clock::now() < end) sink += 1e-9;
    }
  }  // the region's barrier waits for the tasks
  print_stats(hs);
  if (wrong.load() != 0 || seen.load() != rounds)
    fail(std::to_string(seen.load()) + " successors saw the data, " + std::to_string(wrong.load()) + " did not");
  return true;
}

// Fork-join: a large exchange (rendezvous: it moves only when polled) handed over before a
// parallel loop completes during it; then two commtasks finalised in completion order.
bool commtask() {
  hytask::omp::session hs;
  constexpr int n = 1 << 19;  // 4 MiB
  std::vector<double> in(n, -1.0), out(n);
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = value(g_rank, 2, i);
  hytask::omp::commtask ct;
  MPI_Request r[2];
  MPI_Irecv(in.data(), n, MPI_DOUBLE, g_peer, 9, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out.data(), n, MPI_DOUBLE, g_peer, 9, MPI_COMM_WORLD, &r[1]);
  ct.add({r[0], r[1]});
  // Communication-independent work, with no MPI call: each thread computes in 1 ms slices
  // until hytask's progress has completed the exchange (ct.done() polls nothing), 20 s at most.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  double sink = 0;
  int slices = 0;
#pragma omp parallel num_threads(2) reduction(+ : sink, slices)
  while (!ct.done() && std::chrono::steady_clock::now() < deadline) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (std::chrono::steady_clock::now() < end) sink += 1e-9;
    ++slices;
  }
  const bool early = ct.done();
  std::printf("omp_checks commtask: rank %d: the exchange completed during %d ms of compute\n", g_rank,
              slices / 2);
  print_stats(hs);
  bool checked = false;
  ct.finalize([&] {
    for (int i = 0; i < n; ++i)
      if (in[static_cast<std::size_t>(i)] != value(g_peer, 2, i)) fail("wrong data after finalize");
    checked = true;
  });
  if (!early) fail("the exchange had not completed after 20 s of compute: nothing progressed it");
  if (!checked || ct.size() != 0) fail("finalize did not run the post-work or keep the requests");

  // Two IDs: a small message sent at once and a large one sent 200 ms later by rank 0.
  MPI_Barrier(MPI_COMM_WORLD);
  hytask::omp::commtask small, large;
  double s_in = -1, s_out = value(g_rank, 3, 0);
  std::fill(in.begin(), in.end(), -1.0);
  MPI_Request q[4];
  MPI_Irecv(in.data(), n, MPI_DOUBLE, g_peer, 10, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(&s_in, 1, MPI_DOUBLE, g_peer, 11, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(&s_out, 1, MPI_DOUBLE, g_peer, 11, MPI_COMM_WORLD, &q[2]);
  large.add(q[0]);
  small.add({q[1], q[2]});
  if (g_rank == 0) sleep_ms(200);
  MPI_Isend(out.data(), n, MPI_DOUBLE, g_peer, 10, MPI_COMM_WORLD, &q[3]);
  large.add(q[3]);
  std::vector<std::size_t> order;
  hytask::omp::finalize_each({&large, &small}, [&](std::size_t i) { order.push_back(i); });
  if (s_in != value(g_peer, 3, 0) || in[1] != value(g_peer, 2, 1)) fail("wrong data after finalize_each");
  if (order.size() != 2 || order[0] == order[1]) fail("finalize_each ran the post-work wrongly");
  if (g_rank == 1 && order[0] != 1) fail("finalize_each did not run the small message's post-work first");
  print_stats(hs);
  return true;
}

// Priority clauses: with OMP_MAX_TASK_PRIORITY unset, hytask_omp raised the ICV before the
// OpenMP runtime read it; a value in the environment is kept. Under libgomp, a team of one
// thread defers its tasks: created with priorities 3, 2, 1, they run in that order (with the
// clauses ignored, libgomp runs the newest first: 1, 2, 3).
bool priority() {
  hytask::omp::session hs;
  const auto st = hs.stats();
  const char* env = std::getenv("OMP_MAX_TASK_PRIORITY");
  std::printf("omp_checks priority: rank %d: max task priority %d (%s)\n", g_rank,
              st.max_task_priority, st.task_priority);
  const bool from_env = std::strstr(st.task_priority, "from the environment") != nullptr;
  const int expected = from_env ? std::atoi(env) : 1000000;
  if (st.max_task_priority != expected)
    fail("omp_get_max_task_priority() is " + std::to_string(st.max_task_priority) + ", expected " +
         std::to_string(expected) + " (" + st.task_priority + ")");
  if (std::strcmp(hytask::omp::openmp_runtime(), "libgomp") != 0 || expected == 0) return true;
  std::vector<int> order;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
    for (int p = 3; p >= 1; --p) {
#pragma omp task priority(p) shared(order)
      order.push_back(p);
    }
#pragma omp taskwait
  }
  if (order != std::vector<int>{3, 2, 1})
    fail("tasks of priorities 3, 2, 1 (created in that order) ran as " + std::to_string(order[0]) +
         ", " + std::to_string(order[1]) + ", " + std::to_string(order[2]) +
         ": the priority clauses were ignored");
  return true;
}

// The program initialised MPI with MPI_THREAD_FUNNELED: the session refuses, naming the level.
bool misuse(const std::string& what) {
  try {
    if (what == "no_session") {
      try {
        hytask::omp::fulfill_when(omp_event_handle_t{}, MPI_REQUEST_NULL);
        fail("fulfill_when without a session did not throw");
      } catch (const hytask::usage_error& e) {
        std::printf("caught: %s\n", e.what());
      }
      hytask::omp::commtask ct;
      fail("a commtask without a session did not throw");
    }
    if (what == "in_parallel") {
      std::string msg;
#pragma omp parallel num_threads(2)
#pragma omp single
      try {
        hytask::omp::session hs;
      } catch (const hytask::usage_error& e) {
        msg = e.what();
      }
      if (msg.empty()) fail("a session inside a parallel region did not throw");
      throw hytask::usage_error(msg);
    }
    if (what == "two_sessions") {
      hytask::omp::session one;
      hytask::omp::session two;
      fail("a second session did not throw");
    }
    hytask::omp::session hs;  // funneled, refused
    print_stats(hs);
    std::printf("omp_checks %s: the session started\n", what.c_str());
    return true;
  } catch (const hytask::usage_error& e) {
    std::printf("caught: %s\n", e.what());
  }
  return true;
}

// A receive whose message is larger than its buffer: MPI_ERR_TRUNCATE at completion, on the
// polling thread, ends the job with the request named.
bool truncate() {
  hytask::omp::session hs;
  double in[1], out[4] = {1, 2, 3, 4};
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: in) shared(in)
    {
      MPI_Request r;
      MPI_Irecv(in, 1, MPI_DOUBLE, g_peer, 12, MPI_COMM_WORLD, &r);
      hytask::omp::fulfill_when(ev, hytask::mpi::adopt(r, "MPI_Irecv", g_peer, 12, MPI_COMM_WORLD));
    }
#pragma omp task depend(in: in)
    fail("the successor of a failed receive ran");
    sleep_ms(20);
    MPI_Send(out, 4, MPI_DOUBLE, g_peer, 12, MPI_COMM_WORLD);
  }
  fail("the job went on after a failed request");
}

// HYTASK_OMP_POLL_DELAY_US=30000: rank 0 hands receives over, rank 1 sends their messages
// 5 ms after the first; main sleeps meanwhile (the progress thread is the only poller).
bool delay() {
  hytask::omp::session hs;
  using clock = std::chrono::steady_clock;
  auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  constexpr int stream = 50;  // hand-overs every 10 ms in the second part
  double a = 0, b = 0, c = 0, more[stream] = {};
  if (g_rank == 1) {
    const double x = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(5);
    MPI_Send(&x, 1, MPI_DOUBLE, 0, 50, MPI_COMM_WORLD);
    MPI_Send(&x, 1, MPI_DOUBLE, 0, 51, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(5);
    MPI_Send(&x, 1, MPI_DOUBLE, 0, 52, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);  // after rank 0's stream
    for (int i = 0; i < stream; ++i) MPI_Send(&x, 1, MPI_DOUBLE, 0, 60 + i, MPI_COMM_WORLD);
    return true;
  }
  // Two hand-overs 20 ms apart: the first completes once 30 ms have passed after the second.
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock::now();
  hytask::omp::commtask first, second, third, rest;
  MPI_Request r;
  MPI_Irecv(&a, 1, MPI_DOUBLE, 1, 50, MPI_COMM_WORLD, &r);
  first.add(r);
  sleep_ms(20);
  MPI_Irecv(&b, 1, MPI_DOUBLE, 1, 51, MPI_COMM_WORLD, &r);
  second.add(r);
  while (!first.done() && ms_since(t0) < 5000) sleep_ms(1);
  const double done_after = ms_since(t0);
  if (!first.done()) fail("a receive handed over did not complete in 5 s");
  if (done_after < 49.0)
    fail("a receive completed " + std::to_string(done_after) +
         " ms after its hand-over, before the 30 ms of HYTASK_OMP_POLL_DELAY_US had passed "
         "after the next hand-over (20 ms later)");
  first.finalize();
  second.finalize();
  // Hand-overs every 10 ms for 500 ms: the receive handed over first completes within 4
  // delays (120 ms), not only after the stream.
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t1 = clock::now();
  MPI_Irecv(&c, 1, MPI_DOUBLE, 1, 52, MPI_COMM_WORLD, &r);
  third.add(r);
  double seen_after = -1;
  for (int i = 0; i < stream; ++i) {
    sleep_ms(10);
    if (seen_after < 0 && third.done()) seen_after = ms_since(t1);
    MPI_Irecv(&more[i], 1, MPI_DOUBLE, 1, 60 + i, MPI_COMM_WORLD, &r);
    rest.add(r);
  }
  const double stream_ms = ms_since(t1);
  MPI_Barrier(MPI_COMM_WORLD);
  third.finalize();
  rest.finalize();
  if (seen_after < 0)
    fail("while requests were handed over every 10 ms for " + std::to_string(stream_ms) +
         " ms, none completed: polls waited for the hand-overs to stop, past 4 delays");
  std::printf("omp_checks delay: rank 0: completed %.1f ms after its hand-over (quiet), %.1f ms "
              "(during a stream of hand-overs)\n", done_after, seen_after);
  return a == 1 && b == 1 && c == 1;
}

}  // namespace

int main(int argc, char** argv) {
  g_scenario = argc > 1 ? argv[1] : "";
  const std::string s = g_scenario;
  const int level = s == "funneled" ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, level, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_peer = size == 2 ? 1 - g_rank : g_rank;
  hang_guard guard(60, [] {
    std::fprintf(stderr, "omp_checks %s: rank %d: hung for 60 s\n", g_scenario, g_rank);
    std::_Exit(3);
  });
  bool ok = false;
  if (s == "late") ok = late();
  else if (s == "ompt") ok = ompt();
  else if (s == "thread") ok = thread(2);
  else if (s == "one_thread") ok = thread(1);
  else if (s == "commtask") ok = commtask();
  else if (s == "loops") ok = loops();
  else if (s == "truncate") ok = truncate();
  else if (s == "priority") ok = priority();
  else if (s == "delay") ok = delay();
  else if (s == "hooks") ok = hooks(true);
  else if (s == "hooks_off") ok = hooks(false);
  else if (s == "state") {
    hytask::omp::session hs;
    print_stats(hs);
    ok = true;
  } else if (s == "funneled" || s == "no_session" || s == "in_parallel" || s == "two_sessions" ||
             s == "refused")
    ok = misuse(s);
  else {
    std::fprintf(stderr, "omp_checks: unknown scenario '%s'\n", g_scenario);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (ok && g_rank == 0) std::printf("omp_checks %s: ok\n", g_scenario);
  MPI_Finalize();
  return ok ? 0 : 1;
}
