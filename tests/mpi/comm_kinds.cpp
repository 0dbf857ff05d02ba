// The comm layer's operation kinds for calls hytask has no call of its own for (the
// interception library's MPI_Bsend, MPI_Scan, MPI_Wait..., src/intercept), driven through
// the comm layer's internal interface, on 2 ranks, one worker, in every access mode:
//   comm_kinds custom   a non-blocking call posted by a function (kind custom): the function
//                       runs on the thread allowed to call MPI (the MPI thread in funneled
//                       mode), the request completes through the engine while the task is
//                       suspended, and a failed post fails the operation with its name
//   comm_kinds polled   a completion test called at post and then by the poller each round
//                       (kind polled): the waiting task is suspended while another task runs
//                       on the only worker, the test is called again until it reports
//                       completion, and an error it returns fails the operation
// Prints "comm_kinds <case>: ok" on rank 0.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "hang_guard.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;
namespace md = hytask::mpi::detail;

namespace {

int g_rank = 0;
const char* g_case = "";

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: rank %d, comm_kinds %s: %s\n", g_rank, g_case, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

struct owner {
  md::operation* op;
  ~owner() { md::release(op); }
};

// Submits op and waits for it from the calling task.
void run(md::operation* op) {
  md::comm_system& c = *md::comm_system::instance();
  c.submit(op);
  c.wait(op);
}

// ---- custom ---------------------------------------------------------------------------

struct isend_args {
  const int* value;
  int dest;
  std::thread::id poster;  // the thread that ran post
  int calls = 0;
};

int post_isend(void* arg, MPI_Request* req) {
  auto* a = static_cast<isend_args*>(arg);
  a->poster = std::this_thread::get_id();
  ++a->calls;
  return MPI_Issend(a->value, 1, MPI_INT, a->dest, 41, mpi::comm_world(), req);
}

int post_fails(void*, MPI_Request* req) {
  *req = MPI_REQUEST_NULL;
  return MPI_ERR_OTHER;
}

void custom_case(hytask::mpi_mode mode) {
  const int peer = 1 - g_rank;
  if (g_rank == 0) {
    // A synchronous send through a custom post: it completes only once rank 1 receives,
    // which rank 1 does only after the "go" message that the second task sends.
    int value = 1234;
    isend_args a{&value, peer, {}};
    std::atomic<bool> second_ran{false};
    bool second_first = false;
    std::thread::id task_thread;
    hytask::spawn([&] {
      task_thread = std::this_thread::get_id();
      auto* op = new md::operation;
      owner hold{op};
      op->what = md::kind::custom;
      op->call_name = "MPI_Issend (test)";
      op->peer = peer;
      op->tag = 41;
      op->comm = mpi::comm_world();
      op->post = post_isend;
      op->call_arg = &a;
      run(op);
      check(op->error == MPI_SUCCESS, "the custom send failed: " + md::describe_failure(op, op->error));
      second_first = second_ran.load();
    });
    hytask::spawn([&] {
      second_ran.store(true);
      int go = 1;
      mpi::send(std::span(&go, 1), peer, 40);
    });
    hytask::wait_all();
    check(a.calls == 1, "post was called " + std::to_string(a.calls) + " times");
    check(second_first, "the task waiting for the custom operation was not suspended: the "
                        "other task on the only worker ran after it");
    const bool funneled = mode == hytask::mpi_mode::funneled;
    check(funneled ? a.poster != task_thread : a.poster == task_thread,
          funneled ? "funneled: post did not run on the MPI thread"
                   : "post did not run on the posting task's thread");

    // A post that fails: the operation completes with its error, named by call_name.
    auto* op = new md::operation;
    owner hold{op};
    op->what = md::kind::custom;
    op->call_name = "MPI_Ifails";
    op->peer = peer;
    op->tag = 3;
    op->comm = mpi::comm_world();
    op->post = post_fails;
    hytask::spawn([op] { run(op); });
    hytask::wait_all();
    const std::string text = md::describe_failure(op, op->error);
    check(op->error == MPI_ERR_OTHER, "a failed post gave error " + std::to_string(op->error));
    check(text.find("MPI_Ifails with rank " + std::to_string(peer) + " (tag 3") != std::string::npos,
          "the failure does not name the call and the peer: " + text);
  } else {
    int go = 0, got = 0;
    hytask::spawn([&] {
      mpi::recv(std::span(&go, 1), peer, 40);
      mpi::recv(std::span(&got, 1), peer, 41);
    });
    hytask::wait_all();
    check(go == 1 && got == 1234, "received " + std::to_string(got));
  }
}

// ---- polled ---------------------------------------------------------------------------

struct flag_args {
  std::atomic<bool>* flag;
  std::atomic<int> calls{0};
  int fail_with = MPI_SUCCESS;
};

// Counts a call only once it has read the flag: the task that sets the flag waits for the
// first call, so that call always finds it unset (counting first let the setter slip in
// between the count and the read, and the first call completed the operation).
int test_flag(void* arg, int* flag, MPI_Status*) {
  auto* a = static_cast<flag_args*>(arg);
  if (a->fail_with != MPI_SUCCESS) {
    a->calls.fetch_add(1);
    return a->fail_with;
  }
  *flag = a->flag->load() ? 1 : 0;
  a->calls.fetch_add(1);
  return MPI_SUCCESS;
}

void polled_case() {
  std::atomic<bool> flag{false};
  flag_args a;
  a.flag = &flag;
  bool set_first = false;
  hytask::spawn([&] {
    auto* op = new md::operation;
    owner hold{op};
    op->what = md::kind::polled;
    op->call_name = "MPI_Waitall (test)";
    op->scount = 2;
    op->test = test_flag;
    op->call_arg = &a;
    const std::string pending = md::describe(op);
    check(pending.find("MPI_Waitall (test) (2 request(s) of the program)") != std::string::npos,
          "the watchdog's description: " + pending);
    run(op);
    check(op->error == MPI_SUCCESS, "the polled operation failed");
    set_first = flag.load();
  });
  // Runs while the first task is suspended, after the test at post (made by another thread
  // in funneled mode, or by main at a scheduling point in masteronly mode).
  hytask::spawn([&] {
    while (a.calls.load() == 0) hytask::this_task::yield();
    flag.store(true);
  });
  hytask::wait_all();
  check(set_first, "the polled operation completed before its condition held");
  check(a.calls.load() >= 2, "the test was called " + std::to_string(a.calls.load()) +
                                 " times: once at post, then again by the poller");

  // A test that returns an error completes the operation with it.
  flag_args b;
  b.flag = &flag;
  b.fail_with = MPI_ERR_REQUEST;
  auto* op = new md::operation;
  owner hold{op};
  op->what = md::kind::polled;
  op->call_name = "MPI_Wait (test)";
  op->scount = 1;
  op->test = test_flag;
  op->call_arg = &b;
  hytask::spawn([op] { run(op); });
  hytask::wait_all();
  check(op->error == MPI_ERR_REQUEST, "a failing test gave " + std::to_string(op->error));
  check(b.calls.load() == 1, "a failing test was called again after its error");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  if (which != "custom" && which != "polled") {
    std::fprintf(stderr, "usage: comm_kinds custom|polled\n");
    return 2;
  }
  g_case = which == "custom" ? "custom" : "polled";
  hytask::runtime rt(argc, argv);
  g_rank = mpi::rank();
  hang_guard guard(60, [] {
    std::fprintf(stderr, "FAILED: rank %d, comm_kinds %s: hung for 60 s\n", g_rank, g_case);
    std::_Exit(3);
  });
  if (mpi::size() != 2) {
    check(false, "run on 2 ranks");
  }
  if (which == "custom") custom_case(rt.settings().mpi_mode);
  else polled_case();
  mpi::barrier();
  if (g_rank == 0) std::printf("comm_kinds %s: ok\n", g_case);
  return 0;
}
