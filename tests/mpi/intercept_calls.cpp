// The interception library (hytask::mpi_intercept): plain MPI calls, as an existing program
// makes them, inside hytask tasks and outside them. Linked with the library; run by CTest on
// 2 and 4 ranks, under several modes (tests/mpi/CMakeLists.txt).
//   intercept_calls <case> [<case> ...]      intercept_calls --list
// Most cases run their code twice: outside tasks (main's plain MPI calls, which the library
// passes to PMPI) and inside a task per rank (intercepted), and check the same results:
//   p2p          MPI_Send, MPI_Ssend, MPI_Recv with statuses, MPI_STATUS_IGNORE, wildcards
//   proc_null    every point-to-point call with MPI_PROC_NULL: success, MPI's empty status
//   zero         zero counts (point-to-point, a collective)
//   probe        MPI_Probe, then a receive of the probed count
//   bsend_rsend  MPI_Bsend with an attached buffer; MPI_Rsend to a posted receive
//   sendrecv     MPI_Sendrecv around a ring
//   waits        MPI_Wait, MPI_Waitall (statuses, MPI_STATUSES_IGNORE, MPI_REQUEST_NULL),
//                MPI_Waitany and MPI_Waitsome until MPI_UNDEFINED, on MPI_Irecv/MPI_Isend
//   persistent   MPI_Send_init / MPI_Recv_init started three times: the requests stay the
//                program's (inactive, not freed) after MPI_Waitall and MPI_Waitany
//   adopt        requests of MPI_Irecv/MPI_Isend handed to hytask::after / bind (adopt)
//   collectives  every blocking collective, MPI_IN_PLACE, the neighbourhood ones on a ring
//   errors       errors inside a task: a hytask::mpi::error naming the program's call and the
//                peer under the default handler (the task fails, wait_all rethrows); MPI's
//                code under MPI_ERRORS_RETURN, inside and outside tasks
//   suspends     ranks 0 and 1, one worker each: a task blocked in each kind of call
//                (receive, synchronous send, probe, sendrecv, the four waits, a collective of
//                hytask's and one posted through the engine) lets the next task run, whose
//                message to rank 1 is what the blocked call needs
//   deadlock     seed 004's pattern (the scenario deadlock_p2p) with plain MPI_Recv and
//                MPI_Ssend: rank 0 receives in the reverse order of rank 1's sends
//   cancel_waits tasks of a task_group suspended in MPI_Wait, MPI_Waitall, MPI_Waitany and
//                MPI_Waitsome on receives nobody matches (and sends the neighbour receives
//                later), one that waits after it was cancelled, one in MPI_Mprobe, one in
//                MPI_Sendrecv_replace: cancelling the group cancels the receives, drains
//                the sends, and each call throws task_cancelled
//   mprobe       more tasks than workers in MPI_Mprobe + MPI_Mrecv on one (source, tag),
//                suspended before the messages (of different sizes) are sent: each receives
//                the message it probed
//   sendrecv_replace  MPI_Sendrecv_replace around the ring in two tasks per rank whose
//                exchanges need each other (one worker: a blocking call would hold it),
//                contiguous against strided data
// A hang becomes a failure after INTERCEPT_GUARD_S seconds (default 60) with a message that
// says which case hung and whether interception was on (HYTASK_INTERCEPT). Prints
// "intercept_calls <case>: ok" on rank 0 for each case that passed.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "hang_guard.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

namespace {

int g_rank = 0, g_size = 1, g_left = 0, g_right = 0;
const char* g_case = "";
std::atomic<const char*> g_where{""};  // also read by the hang guard's thread
bool g_in_task = false;  // both() is running the body inside a task
bool g_funneled = false;
bool g_intercept = true;
// What a hang of the running case means, for the guard's message.
std::atomic<const char*> g_hang_means{"a blocking MPI call held the worker"};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: rank %d, intercept_calls %s (%s): %s\n", g_rank, g_case, g_where.load(),
               what.c_str());
  std::fflush(stderr);
  std::_Exit(1);  // not MPI_Abort: in funneled mode only hytask's MPI thread may call MPI
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

void check_rc(int rc, const char* call) {
  if (rc != MPI_SUCCESS) fail(std::string(call) + " returned " + std::to_string(rc));
}

int count_of(const MPI_Status& st, MPI_Datatype t = MPI_INT) {
  int n = -1;
  MPI_Get_count(&st, t, &n);
  return n;
}

// Runs body outside tasks (plain MPI, from main) and then in one task per rank; funneled
// mode skips the first (only hytask's MPI thread may call MPI there).
void both(const std::function<void()>& body) {
  if (!g_funneled) {
    g_where = "outside tasks";
    g_in_task = false;
    body();
  }
  g_where = "inside a task";
  g_in_task = true;
  hytask::spawn({.name = "case"}, [&] { body(); });
  hytask::wait_all();
  g_in_task = false;
}

// ---- point-to-point -------------------------------------------------------------------

void p2p() {
  both([] {
    int v = g_rank * 10 + 1, got = -1;
    MPI_Status st;
    check_rc(MPI_Send(&v, 1, MPI_INT, g_right, 1, MPI_COMM_WORLD), "MPI_Send");
    check_rc(MPI_Recv(&got, 1, MPI_INT, g_left, 1, MPI_COMM_WORLD, &st), "MPI_Recv");
    check(got == g_left * 10 + 1, "MPI_Recv got " + std::to_string(got));
    check(st.MPI_SOURCE == g_left && st.MPI_TAG == 1 && count_of(st) == 1,
          "MPI_Recv's status: source " + std::to_string(st.MPI_SOURCE) + ", tag " +
              std::to_string(st.MPI_TAG) + ", count " + std::to_string(count_of(st)));
    // Synchronous sends around the ring: even ranks send first, odd ones receive first.
    std::vector<double> out(5, g_rank + 0.5), in(5, -1);
    auto ssend = [&] { check_rc(MPI_Ssend(out.data(), 5, MPI_DOUBLE, g_right, 2, MPI_COMM_WORLD), "MPI_Ssend"); };
    auto recv = [&] {
      check_rc(MPI_Recv(in.data(), 5, MPI_DOUBLE, g_left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    };
    if (g_rank % 2 == 0) {
      ssend();
      recv();
    } else {
      recv();
      ssend();
    }
    check(in == std::vector<double>(5, g_left + 0.5), "MPI_Ssend's data");
    // Wildcards: the status says who and what.
    check_rc(MPI_Send(&v, 1, MPI_INT, g_right, 3, MPI_COMM_WORLD), "MPI_Send");
    check_rc(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Recv");
    check(st.MPI_SOURCE == g_left && st.MPI_TAG == 3, "a wildcard receive's status");
  });
}

void proc_null() {
  both([] {
    int v = 7;
    MPI_Status st;
    check_rc(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD), "MPI_Send to MPI_PROC_NULL");
    check_rc(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD), "MPI_Ssend to MPI_PROC_NULL");
    check_rc(MPI_Rsend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD), "MPI_Rsend to MPI_PROC_NULL");
    st.MPI_SOURCE = 12345;
    check_rc(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st), "MPI_Recv from MPI_PROC_NULL");
    check(v == 7, "a receive from MPI_PROC_NULL wrote the buffer");
    check(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count_of(st) == 0,
          "MPI_Recv from MPI_PROC_NULL: source " + std::to_string(st.MPI_SOURCE) + ", tag " +
              std::to_string(st.MPI_TAG) + ", count " + std::to_string(count_of(st)));
    st.MPI_SOURCE = 12345;
    check_rc(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st), "MPI_Probe on MPI_PROC_NULL");
    check(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Probe on MPI_PROC_NULL: source " + std::to_string(st.MPI_SOURCE));
    st.MPI_SOURCE = 12345;
    int w = 0;
    check_rc(MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, &w, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st),
             "MPI_Sendrecv with MPI_PROC_NULL");
    check(st.MPI_SOURCE == MPI_PROC_NULL && count_of(st) == 0, "MPI_Sendrecv with MPI_PROC_NULL: status");
    if (g_funneled) return;  // the program's own MPI_Irecv: not allowed in funneled mode
    MPI_Request r;
    check_rc(MPI_Irecv(&w, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r), "MPI_Irecv");
    st.MPI_SOURCE = 12345;
    check_rc(MPI_Wait(&r, &st), "MPI_Wait");
    check(r == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Wait on a receive from MPI_PROC_NULL");
  });
}

void zero() {
  both([] {
    int dummy = 5;
    MPI_Status st;
    check_rc(MPI_Send(nullptr, 0, MPI_INT, g_right, 4, MPI_COMM_WORLD), "MPI_Send of 0");
    check_rc(MPI_Recv(&dummy, 0, MPI_INT, g_left, 4, MPI_COMM_WORLD, &st), "MPI_Recv of 0");
    check(dummy == 5 && count_of(st) == 0 && st.MPI_SOURCE == g_left, "a zero-count message");
    check_rc(MPI_Bcast(&dummy, 0, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast of 0");
    check_rc(MPI_Allreduce(MPI_IN_PLACE, &dummy, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce of 0");
    check(dummy == 5, "zero-count collectives wrote the buffer");
  });
}

void probe() {
  both([] {
    std::vector<int> out{g_rank, g_rank + 1, g_rank + 2};
    check_rc(MPI_Send(out.data(), 3, MPI_INT, g_right, 5, MPI_COMM_WORLD), "MPI_Send");
    MPI_Status st;
    check_rc(MPI_Probe(g_left, 5, MPI_COMM_WORLD, &st), "MPI_Probe");
    check(st.MPI_SOURCE == g_left && st.MPI_TAG == 5 && count_of(st) == 3, "MPI_Probe's status");
    std::vector<int> in(static_cast<std::size_t>(count_of(st)));
    check_rc(MPI_Recv(in.data(), count_of(st), MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             "MPI_Recv");
    check(in == std::vector<int>{g_left, g_left + 1, g_left + 2}, "the probed message");
  });
}

void bsend_rsend() {
  // The program's buffer for MPI_Bsend, attached by main (outside tasks).
  int size = 0;
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &size);
  std::vector<char> buffer(static_cast<std::size_t>(size + MPI_BSEND_OVERHEAD) * 4);
  if (!g_funneled) MPI_Buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
  both([] {
    std::vector<int> out(4, g_rank), in(4, -1);
    if (!g_funneled) {
      check_rc(MPI_Bsend(out.data(), 4, MPI_INT, g_right, 6, MPI_COMM_WORLD), "MPI_Bsend");
      check_rc(MPI_Recv(in.data(), 4, MPI_INT, g_left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      check(in == std::vector<int>(4, g_left), "MPI_Bsend's data");
    }
    // MPI_Rsend needs the receive posted: each rank posts, tells its left neighbour (who
    // sends to it), and sends once its right neighbour said so.
    int ready = 1;
    MPI_Request r;
    if (g_funneled) {
      // In funneled mode the program may not post MPI_Irecv itself: a blocking receive in
      // another task is the posted receive, and an ssend handshake orders it.
      return;
    }
    check_rc(MPI_Irecv(in.data(), 4, MPI_INT, g_left, 7, MPI_COMM_WORLD, &r), "MPI_Irecv");
    check_rc(MPI_Send(&ready, 1, MPI_INT, g_left, 8, MPI_COMM_WORLD), "MPI_Send");
    check_rc(MPI_Recv(&ready, 1, MPI_INT, g_right, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    for (int& x : out) x = g_rank + 100;
    check_rc(MPI_Rsend(out.data(), 4, MPI_INT, g_right, 7, MPI_COMM_WORLD), "MPI_Rsend");
    check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    check(in == std::vector<int>(4, g_left + 100), "MPI_Rsend's data");
  });
  if (!g_funneled) {
    void* b = nullptr;
    MPI_Buffer_detach(&b, &size);
  }
}

void sendrecv() {
  both([] {
    long out = 1000 + g_rank, in = -1;
    MPI_Status st;
    check_rc(MPI_Sendrecv(&out, 1, MPI_LONG, g_right, 9, &in, 1, MPI_LONG, g_left, 9, MPI_COMM_WORLD, &st),
             "MPI_Sendrecv");
    check(in == 1000 + g_left && st.MPI_SOURCE == g_left && st.MPI_TAG == 9 && count_of(st, MPI_LONG) == 1,
          "MPI_Sendrecv's data or status");
  });
}

// ---- waits ----------------------------------------------------------------------------

void waits() {
  if (g_funneled) return;  // the program's own MPI_Irecv: not allowed in funneled mode
  both([] {
    // MPI_Wait: one receive, one send, MPI_REQUEST_NULL.
    int out = g_rank, in = -1;
    MPI_Request rr, sr;
    MPI_Status st;
    check_rc(MPI_Irecv(&in, 1, MPI_INT, g_left, 10, MPI_COMM_WORLD, &rr), "MPI_Irecv");
    check_rc(MPI_Isend(&out, 1, MPI_INT, g_right, 10, MPI_COMM_WORLD, &sr), "MPI_Isend");
    check_rc(MPI_Wait(&rr, &st), "MPI_Wait");
    check(rr == MPI_REQUEST_NULL && in == g_left && st.MPI_SOURCE == g_left && st.MPI_TAG == 10,
          "MPI_Wait on a receive");
    check_rc(MPI_Wait(&sr, MPI_STATUS_IGNORE), "MPI_Wait");
    check(sr == MPI_REQUEST_NULL, "MPI_Wait left a finished send's request");
    check_rc(MPI_Wait(&sr, &st), "MPI_Wait on MPI_REQUEST_NULL");
    check(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "MPI_Wait on MPI_REQUEST_NULL: empty status");

    // MPI_Waitall: three receives (tags 11-13) and three sends, and a null request.
    std::vector<int> ins(3, -1), outs{g_rank, g_rank + 1, g_rank + 2};
    std::vector<MPI_Request> reqs(7, MPI_REQUEST_NULL);
    for (int k = 0; k < 3; ++k) {
      check_rc(MPI_Irecv(&ins[static_cast<std::size_t>(k)], 1, MPI_INT, g_left, 11 + k, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]), "MPI_Irecv");
      check_rc(MPI_Isend(&outs[static_cast<std::size_t>(k)], 1, MPI_INT, g_right, 11 + k, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(4 + k)]), "MPI_Isend");
    }
    std::vector<MPI_Status> sts(7);
    check_rc(MPI_Waitall(7, reqs.data(), sts.data()), "MPI_Waitall");
    for (int k = 0; k < 3; ++k) {
      check(ins[static_cast<std::size_t>(k)] == g_left + k, "MPI_Waitall: data of request " + std::to_string(k));
      check(sts[static_cast<std::size_t>(k)].MPI_SOURCE == g_left && sts[static_cast<std::size_t>(k)].MPI_TAG == 11 + k,
            "MPI_Waitall: status " + std::to_string(k));
    }
    check(std::all_of(reqs.begin(), reqs.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; }),
          "MPI_Waitall left requests");
    // Again with MPI_STATUSES_IGNORE.
    for (int k = 0; k < 3; ++k) {
      check_rc(MPI_Irecv(&ins[static_cast<std::size_t>(k)], 1, MPI_INT, g_left, 14, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]), "MPI_Irecv");
      check_rc(MPI_Isend(&outs[static_cast<std::size_t>(k)], 1, MPI_INT, g_right, 14, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(4 + k)]), "MPI_Isend");
    }
    check_rc(MPI_Waitall(7, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall with MPI_STATUSES_IGNORE");
    check(ins == std::vector<int>{g_left, g_left + 1, g_left + 2}, "MPI_Waitall: ordered data");

    // MPI_Waitany until MPI_UNDEFINED: each index once, its request null, its status.
    std::vector<MPI_Request> any(3);
    for (int k = 0; k < 3; ++k) {
      check_rc(MPI_Irecv(&ins[static_cast<std::size_t>(k)], 1, MPI_INT, g_left, 20 + k, MPI_COMM_WORLD, &any[static_cast<std::size_t>(k)]), "MPI_Irecv");
    }
    for (int k = 2; k >= 0; --k)
      check_rc(MPI_Send(&outs[static_cast<std::size_t>(k)], 1, MPI_INT, g_right, 20 + k, MPI_COMM_WORLD), "MPI_Send");
    std::vector<int> seen(3, 0);
    for (;;) {
      int index = -5;
      check_rc(MPI_Waitany(3, any.data(), &index, &st), "MPI_Waitany");
      if (index == MPI_UNDEFINED) break;
      check(index >= 0 && index < 3 && !seen[static_cast<std::size_t>(index)], "MPI_Waitany's index " + std::to_string(index));
      seen[static_cast<std::size_t>(index)] = 1;
      check(any[static_cast<std::size_t>(index)] == MPI_REQUEST_NULL, "MPI_Waitany left request " + std::to_string(index));
      check(st.MPI_TAG == 20 + index && ins[static_cast<std::size_t>(index)] == g_left + index, "MPI_Waitany: status or data of " + std::to_string(index));
    }
    check(seen == std::vector<int>(3, 1), "MPI_Waitany did not return every request");

    // MPI_Waitsome until MPI_UNDEFINED.
    std::vector<MPI_Request> some(3);
    for (int k = 0; k < 3; ++k)
      check_rc(MPI_Irecv(&ins[static_cast<std::size_t>(k)], 1, MPI_INT, g_left, 30 + k, MPI_COMM_WORLD, &some[static_cast<std::size_t>(k)]), "MPI_Irecv");
    for (int k = 0; k < 3; ++k)
      check_rc(MPI_Send(&outs[static_cast<std::size_t>(k)], 1, MPI_INT, g_right, 30 + k, MPI_COMM_WORLD), "MPI_Send");
    int total = 0;
    std::fill(seen.begin(), seen.end(), 0);
    for (;;) {
      int outcount = -5;
      std::vector<int> indices(3, -1);
      std::vector<MPI_Status> ss(3);
      check_rc(MPI_Waitsome(3, some.data(), &outcount, indices.data(), ss.data()), "MPI_Waitsome");
      if (outcount == MPI_UNDEFINED) break;
      check(outcount >= 1 && outcount <= 3, "MPI_Waitsome's outcount " + std::to_string(outcount));
      for (int j = 0; j < outcount; ++j) {
        const int i = indices[static_cast<std::size_t>(j)];
        check(i >= 0 && i < 3 && !seen[static_cast<std::size_t>(i)], "MPI_Waitsome's index");
        seen[static_cast<std::size_t>(i)] = 1;
        check(ss[static_cast<std::size_t>(j)].MPI_TAG == 30 + i && some[static_cast<std::size_t>(i)] == MPI_REQUEST_NULL,
              "MPI_Waitsome: status or request of " + std::to_string(i));
      }
      total += outcount;
    }
    check(total == 3 && ins == std::vector<int>{g_left, g_left + 1, g_left + 2}, "MPI_Waitsome's data");

    // Only null requests: MPI_UNDEFINED at once.
    int index = 0, outcount = 0;
    check_rc(MPI_Waitany(3, any.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany on null requests");
    check_rc(MPI_Waitsome(3, some.data(), &outcount, seen.data(), MPI_STATUSES_IGNORE), "MPI_Waitsome on null requests");
    check(index == MPI_UNDEFINED && outcount == MPI_UNDEFINED, "waits on null requests");
  });
}

void persistent() {
  if (g_funneled) return;  // the program's own MPI_Start: not allowed in funneled mode
  both([] {
    int out = 0, in = -1;
    MPI_Request reqs[2];
    check_rc(MPI_Recv_init(&in, 1, MPI_INT, g_left, 40, MPI_COMM_WORLD, &reqs[0]), "MPI_Recv_init");
    check_rc(MPI_Send_init(&out, 1, MPI_INT, g_right, 40, MPI_COMM_WORLD, &reqs[1]), "MPI_Send_init");
    for (int round = 0; round < 3; ++round) {
      out = g_rank * 100 + round;
      check_rc(MPI_Startall(2, reqs), "MPI_Startall");
      if (round == 1) {
        // MPI_Waitany twice: the requests stay, inactive, and the third call finds none.
        int index = -1, done = 0;
        for (int k = 0; k < 3; ++k) {
          check_rc(MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE), "MPI_Waitany");
          if (index != MPI_UNDEFINED) ++done;
        }
        check(done == 2 && index == MPI_UNDEFINED, "MPI_Waitany on persistent requests");
      } else {
        check_rc(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
      }
      check(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "a persistent request was freed");
      check(in == g_left * 100 + round, "round " + std::to_string(round) + " got " + std::to_string(in));
    }
    MPI_Status st;
    check_rc(MPI_Wait(&reqs[0], &st), "MPI_Wait on an inactive request");
    check(reqs[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE, "MPI_Wait on an inactive request");
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
  });
}

// Requests the program posted, handed to hytask (adopt) inside a task: a successor that runs
// when the receive is in, and a send bound to the posting task.
void adopt() {
  if (g_funneled) return;  // the program's own MPI_Irecv
  std::vector<int> in(3, -1), seen;
  std::vector<int> out{g_rank, 2 * g_rank, 3 * g_rank};
  bool successor_ran = false;
  g_where = "inside a task";
  hytask::spawn({.name = "post"}, [&] {
    MPI_Request r, s;
    check_rc(MPI_Irecv(in.data(), 3, MPI_INT, g_left, 50, MPI_COMM_WORLD, &r), "MPI_Irecv");
    check_rc(MPI_Isend(out.data(), 3, MPI_INT, g_right, 50, MPI_COMM_WORLD, &s), "MPI_Isend");
    mpi::request received = mpi::adopt(r, "MPI_Irecv", g_left, 50, MPI_COMM_WORLD);
    hytask::spawn({.name = "use"}, [&] { seen = in; }, hytask::after(received));
    mpi::bind(mpi::adopt(s, "MPI_Isend", g_right, 50, MPI_COMM_WORLD));
  }, hytask::out(out));
  // Starts only once "post" completed, which its bound send holds back.
  hytask::spawn({.name = "after the send"}, [&] { successor_ran = true; }, hytask::inout(out));
  hytask::wait_all();
  check(seen == std::vector<int>{g_left, 2 * g_left, 3 * g_left}, "the adopted receive's successor read stale data");
  check(successor_ran, "the successor of the task bound to the adopted send did not run");
}

// ---- collectives ----------------------------------------------------------------------

// A 1-D Cartesian communicator for the neighbourhood collectives: periodic on 3 or more
// ranks; on 2 not (each rank would be both neighbours of the other, and Open MPI's blocking
// and non-blocking neighbourhood collectives then pair the two messages differently).
MPI_Comm g_ring = MPI_COMM_NULL;
int g_nb_left = MPI_PROC_NULL, g_nb_right = MPI_PROC_NULL;  // its neighbours

// What a neighbourhood collective leaves from neighbour `peer`: `value`, or the -1 it had when
// the neighbour is MPI_PROC_NULL.
int from(int peer, int value) { return peer == MPI_PROC_NULL ? -1 : value; }

void collectives() {
  both([] {
    const int n = g_size, r = g_rank;
    check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    int v = r == 0 ? 42 : -1;
    check_rc(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    check(v == 42, "MPI_Bcast");
    int sum = -1, mine = r + 1;
    check_rc(MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, n - 1, MPI_COMM_WORLD), "MPI_Reduce");
    if (r == n - 1) check(sum == n * (n + 1) / 2, "MPI_Reduce");
    check_rc(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    check(sum == n * (n + 1) / 2, "MPI_Allreduce");
    int inplace = r;
    check_rc(MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce in place");
    check(inplace == n - 1, "MPI_Allreduce in place");

    std::vector<int> all(static_cast<std::size_t>(n), -1), expect(static_cast<std::size_t>(n));
    std::iota(expect.begin(), expect.end(), 0);
    check_rc(MPI_Gather(&r, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    if (r == 0) check(all == expect, "MPI_Gather");
    std::vector<int> counts(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
    std::iota(displs.begin(), displs.end(), 0);
    std::fill(all.begin(), all.end(), -1);
    check_rc(MPI_Gatherv(&r, 1, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gatherv");
    if (r == 0) check(all == expect, "MPI_Gatherv");
    int one = -1;
    check_rc(MPI_Scatter(expect.data(), 1, MPI_INT, &one, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Scatter");
    check(one == r, "MPI_Scatter");
    one = -1;
    check_rc(MPI_Scatterv(expect.data(), counts.data(), displs.data(), MPI_INT, &one, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Scatterv");
    check(one == r, "MPI_Scatterv");
    std::fill(all.begin(), all.end(), -1);
    check_rc(MPI_Allgather(&r, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    check(all == expect, "MPI_Allgather");
    std::fill(all.begin(), all.end(), -1);
    check_rc(MPI_Allgatherv(&r, 1, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD), "MPI_Allgatherv");
    check(all == expect, "MPI_Allgatherv");
    // Alltoall(v,w): element j of rank i's send buffer is 100 i + j; rank j receives 100 i + j from i.
    std::vector<int> send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n), -1), want(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      send[static_cast<std::size_t>(j)] = 100 * r + j;
      want[static_cast<std::size_t>(j)] = 100 * j + r;
    }
    check_rc(MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
    check(recv == want, "MPI_Alltoall");
    std::fill(recv.begin(), recv.end(), -1);
    check_rc(MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD), "MPI_Alltoallv");
    check(recv == want, "MPI_Alltoallv");
    std::fill(recv.begin(), recv.end(), -1);
    std::vector<int> bdispls(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) bdispls[static_cast<std::size_t>(j)] = j * static_cast<int>(sizeof(int));
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), MPI_INT);
    check_rc(MPI_Alltoallw(send.data(), counts.data(), bdispls.data(), types.data(), recv.data(), counts.data(), bdispls.data(), types.data(), MPI_COMM_WORLD), "MPI_Alltoallw");
    check(recv == want, "MPI_Alltoallw");
    // Reduce_scatter(_block): element j of every rank's vector is j + rank; rank j gets
    // sum over ranks of (j + rank) = n j + n (n - 1) / 2.
    std::vector<int> vec(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) vec[static_cast<std::size_t>(j)] = j + r;
    int part = -1;
    check_rc(MPI_Reduce_scatter(vec.data(), &part, counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Reduce_scatter");
    check(part == n * r + n * (n - 1) / 2, "MPI_Reduce_scatter");
    part = -1;
    check_rc(MPI_Reduce_scatter_block(vec.data(), &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Reduce_scatter_block");
    check(part == n * r + n * (n - 1) / 2, "MPI_Reduce_scatter_block");
    int scan = -1, exscan = -1;
    check_rc(MPI_Scan(&mine, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan");
    check(scan == (r + 1) * (r + 2) / 2, "MPI_Scan");
    check_rc(MPI_Exscan(&mine, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Exscan");
    if (r > 0) check(exscan == r * (r + 1) / 2, "MPI_Exscan");
    // Neighbourhood collectives on the ring: neighbours are (left, right), in that order.
    int nb[2] = {-1, -1};
    check_rc(MPI_Neighbor_allgather(&r, 1, MPI_INT, nb, 1, MPI_INT, g_ring), "MPI_Neighbor_allgather");
    check(nb[0] == from(g_nb_left, g_nb_left) && nb[1] == from(g_nb_right, g_nb_right), "MPI_Neighbor_allgather");
    int two[2] = {1, 1}, dsp[2] = {0, 1};
    nb[0] = nb[1] = -1;
    check_rc(MPI_Neighbor_allgatherv(&r, 1, MPI_INT, nb, two, dsp, MPI_INT, g_ring), "MPI_Neighbor_allgatherv");
    check(nb[0] == from(g_nb_left, g_nb_left) && nb[1] == from(g_nb_right, g_nb_right), "MPI_Neighbor_allgatherv");
    // To the left neighbour 10 r, to the right 10 r + 1: from the left comes 10 left + 1.
    int sendnb[2] = {10 * r, 10 * r + 1};
    nb[0] = nb[1] = -1;
    check_rc(MPI_Neighbor_alltoall(sendnb, 1, MPI_INT, nb, 1, MPI_INT, g_ring), "MPI_Neighbor_alltoall");
    check(nb[0] == from(g_nb_left, 10 * g_nb_left + 1) && nb[1] == from(g_nb_right, 10 * g_nb_right), "MPI_Neighbor_alltoall");
    nb[0] = nb[1] = -1;
    check_rc(MPI_Neighbor_alltoallv(sendnb, two, dsp, MPI_INT, nb, two, dsp, MPI_INT, g_ring), "MPI_Neighbor_alltoallv");
    check(nb[0] == from(g_nb_left, 10 * g_nb_left + 1) && nb[1] == from(g_nb_right, 10 * g_nb_right), "MPI_Neighbor_alltoallv");
    nb[0] = nb[1] = -1;
    MPI_Aint adsp[2] = {0, static_cast<MPI_Aint>(sizeof(int))};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    check_rc(MPI_Neighbor_alltoallw(sendnb, two, adsp, t2, nb, two, adsp, t2, g_ring), "MPI_Neighbor_alltoallw");
    check(nb[0] == from(g_nb_left, 10 * g_nb_left + 1) && nb[1] == from(g_nb_right, 10 * g_nb_right), "MPI_Neighbor_alltoallw");
  });
}

// ---- errors ---------------------------------------------------------------------------

// Runs f in a task and returns the hytask::mpi::error that wait_all rethrew (fails when none).
mpi::error task_error(const char* what, const std::function<void()>& f) {
  g_where = "inside a task";
  bool ran_past = false;
  hytask::spawn({.name = "failing"}, [&] {
    f();
    ran_past = true;
  });
  try {
    hytask::wait_all();
  } catch (const mpi::error& e) {
    check(!ran_past, std::string(what) + ": the call returned as well as throwing");
    return e;
  }
  fail(std::string(what) + ": no hytask::mpi::error reached wait_all");
}

void expect_error(const mpi::error& e, const char* call, int peer, const char* what) {
  const std::string text = e.what();
  check(e.call() == call, std::string(what) + ": the error's call is '" + e.call() + "', not " + call);
  check(e.peer() == peer, std::string(what) + ": the error's peer is " + std::to_string(e.peer()) + ", not " +
                              std::to_string(peer));
  check(text.find(call) != std::string::npos, std::string(what) + ": the message does not name " + call + ": " + text);
  if (peer >= 0)  // "rank 5" or "root 5"
    check(text.find(" " + std::to_string(peer)) != std::string::npos,
          std::string(what) + ": the message does not name the peer: " + text);
  if (g_rank == 0) std::printf("%s: %s\n", what, text.c_str());
}

int error_class(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  return c;
}

void errors() {
  const int nowhere = g_size + 3;  // no such rank
  int v = 1;
  std::vector<int> two{1, 2};
  int one = 0;

  // The default handler (MPI_ERRORS_ARE_FATAL): the task fails with the call and the peer.
  expect_error(task_error("MPI_Send to a rank that does not exist",
                          [&] { MPI_Send(&v, 1, MPI_INT, nowhere, 1, MPI_COMM_WORLD); }),
               "MPI_Send", nowhere, "MPI_Send to a rank that does not exist");
  if (!g_funneled)
    expect_error(task_error("MPI_Bsend to a rank that does not exist",
                            [&] { MPI_Bsend(&v, 1, MPI_INT, nowhere, 1, MPI_COMM_WORLD); }),
                 "MPI_Bsend", nowhere, "MPI_Bsend to a rank that does not exist");
  expect_error(task_error("MPI_Bcast from a root that does not exist",
                          [&] { MPI_Bcast(&v, 1, MPI_INT, nowhere, MPI_COMM_WORLD); }),
               "MPI_Bcast", nowhere, "MPI_Bcast from a root that does not exist");
  expect_error(task_error("MPI_Mprobe from a rank that does not exist",
                          [&] {
                            MPI_Message m;
                            MPI_Mprobe(nowhere, 1, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
                          }),
               "MPI_Mprobe", nowhere, "MPI_Mprobe from a rank that does not exist");
  // A truncated receive (two ints into one), found when it completes.
  hytask::spawn([&] { MPI_Send(two.data(), 2, MPI_INT, g_right, 60, MPI_COMM_WORLD); });
  expect_error(task_error("MPI_Recv truncated",
                          [&] { MPI_Recv(&one, 1, MPI_INT, g_left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }),
               "MPI_Recv", g_left, "MPI_Recv truncated");
  if (!g_funneled) {
    hytask::spawn([&] { MPI_Send(two.data(), 2, MPI_INT, g_right, 61, MPI_COMM_WORLD); });
    expect_error(task_error("MPI_Wait on a truncated receive",
                            [&] {
                              MPI_Request r;
                              MPI_Irecv(&one, 1, MPI_INT, g_left, 61, MPI_COMM_WORLD, &r);
                              MPI_Status st;
                              MPI_Wait(&r, &st);
                            }),
                 "MPI_Wait", g_left, "MPI_Wait on a truncated receive");
    hytask::spawn([&] { MPI_Send(two.data(), 2, MPI_INT, g_right, 62, MPI_COMM_WORLD); });
    int fine = 0;
    hytask::spawn([&] { MPI_Send(&v, 1, MPI_INT, g_right, 63, MPI_COMM_WORLD); });
    const mpi::error e = task_error("MPI_Waitall with a truncated receive", [&] {
      MPI_Request r[2];
      MPI_Irecv(&fine, 1, MPI_INT, g_left, 63, MPI_COMM_WORLD, &r[0]);
      MPI_Irecv(&one, 1, MPI_INT, g_left, 62, MPI_COMM_WORLD, &r[1]);
      MPI_Status st[2];
      MPI_Waitall(2, r, st);
    });
    expect_error(e, "MPI_Waitall", g_left, "MPI_Waitall with a truncated receive");
    check(std::string(e.what()).find("request 1 of 2") != std::string::npos,
          "MPI_Waitall's error does not say which request failed: " + std::string(e.what()));
    check(error_class(e.code()) == MPI_ERR_TRUNCATE, "MPI_Waitall's error code is not the request's");
  }

  // MPI_ERRORS_RETURN: the same calls return MPI's code, inside and outside tasks. On
  // MPI_COMM_WORLD too: MPICH raises errors it finds while completing a request on
  // MPI_COMM_WORLD, whichever communicator the request belongs to, in a plain MPI_Wait too.
  MPI_Comm returns;
  MPI_Comm_dup(MPI_COMM_WORLD, &returns);
  MPI_Comm_set_errhandler(returns, MPI_ERRORS_RETURN);
  MPI_Errhandler world_handler;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  both([&] {
    int rc = MPI_Send(&v, 1, MPI_INT, nowhere, 1, returns);
    check(error_class(rc) == MPI_ERR_RANK, "MPI_Send to a rank that does not exist returned " + std::to_string(rc));
    if (!g_funneled) {
      rc = MPI_Bsend(&v, 1, MPI_INT, nowhere, 1, returns);
      check(error_class(rc) == MPI_ERR_RANK, "MPI_Bsend to a rank that does not exist returned " + std::to_string(rc));
    }
    rc = MPI_Bcast(&v, 1, MPI_INT, nowhere, returns);
    check(rc != MPI_SUCCESS, "MPI_Bcast from a root that does not exist returned success");
    MPI_Message m;
    rc = MPI_Mprobe(nowhere, 1, returns, &m, MPI_STATUS_IGNORE);
    check(error_class(rc) == MPI_ERR_RANK, "MPI_Mprobe from a rank that does not exist returned " + std::to_string(rc));
    rc = MPI_Scan(&v, &one, 1, MPI_INT, MPI_OP_NULL, returns);
    check(rc != MPI_SUCCESS, "MPI_Scan with MPI_OP_NULL returned success");
    check_rc(MPI_Send(two.data(), 2, MPI_INT, g_right, 64, returns), "MPI_Send");
    rc = MPI_Recv(&one, 1, MPI_INT, g_left, 64, returns, MPI_STATUS_IGNORE);
    check(error_class(rc) == MPI_ERR_TRUNCATE, "a truncated MPI_Recv returned " + std::to_string(rc));
    // Open MPI 4.1's own MPI_Waitall spins forever on a failed request under
    // MPI_THREAD_MULTIPLE (reproduced with plain MPI, no hytask): inside a task only, where
    // the library tests the requests with MPI_Testall.
    if (!g_funneled && g_in_task) {
      MPI_Request r[2];
      int fine = 0;
      check_rc(MPI_Send(&v, 1, MPI_INT, g_right, 65, returns), "MPI_Send");
      check_rc(MPI_Send(two.data(), 2, MPI_INT, g_right, 66, returns), "MPI_Send");
      MPI_Irecv(&fine, 1, MPI_INT, g_left, 65, returns, &r[0]);
      MPI_Irecv(&one, 1, MPI_INT, g_left, 66, returns, &r[1]);
      MPI_Status st[2];
      rc = MPI_Waitall(2, r, st);
      check(rc == MPI_ERR_IN_STATUS, "MPI_Waitall with a truncated receive returned " + std::to_string(rc));
      check(st[0].MPI_ERROR == MPI_SUCCESS && error_class(st[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
            "MPI_Waitall's statuses: " + std::to_string(st[0].MPI_ERROR) + ", " + std::to_string(st[1].MPI_ERROR));
    }
    if (!g_funneled) {
      check_rc(MPI_Send(two.data(), 2, MPI_INT, g_right, 67, returns), "MPI_Send");
      MPI_Request q;
      MPI_Irecv(&one, 1, MPI_INT, g_left, 67, returns, &q);
      rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
      check(error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait on a truncated receive returned " + std::to_string(rc));
    }
  });
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler);
  MPI_Errhandler_free(&world_handler);
  MPI_Comm_free(&returns);
}

// ---- suspension -----------------------------------------------------------------------

// Ranks 0 and 1, one worker each (HYTASK_THREADS=1). For each kind of call, rank 0's first
// task blocks in it until rank 1 acts, and rank 1 acts only once rank 0's second task has
// sent it "go": with the worker held by the first task, the second could not run.
MPI_Comm g_pair = MPI_COMM_NULL;
// sendrecv_replace's strided type: g_replace_n doubles, every other one (made by main).
constexpr int g_replace_n = 2000;
MPI_Datatype g_every_other = MPI_DATATYPE_NULL;

struct blocking_kind {
  const char* name;
  bool program_requests;  // the program posts its own requests (not in funneled mode)
  std::function<void(int tag)> blocked;  // rank 0
  std::function<void(int tag)> matched;  // rank 1, after "go"
};

void suspends() {
  if (g_size < 2) return;
  int payload = 0;
  int sink = 0;
  std::vector<blocking_kind> kinds = {
      {"MPI_Recv", false,
       [&](int t) { MPI_Recv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Ssend", false, [&](int t) { MPI_Ssend(&payload, 1, MPI_INT, 1, t, MPI_COMM_WORLD); },
       [&](int t) { MPI_Recv(&sink, 1, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }},
      {"MPI_Probe", false,
       [&](int t) {
         MPI_Status st;
         MPI_Probe(1, t, MPI_COMM_WORLD, &st);
         MPI_Recv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
       },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Sendrecv", false,
       [&](int t) { MPI_Sendrecv(&payload, 1, MPI_INT, 1, t, &sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); },
       [&](int t) { MPI_Sendrecv(&payload, 1, MPI_INT, 0, t, &sink, 1, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }},
      {"MPI_Wait", true,
       [&](int t) {
         MPI_Request r;
         MPI_Irecv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, &r);
         MPI_Wait(&r, MPI_STATUS_IGNORE);
       },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Waitall", true,
       [&](int t) {
         MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
         MPI_Irecv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, &r[1]);
         MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
       },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Waitany", true,
       [&](int t) {
         MPI_Request r;
         int index = 0;
         MPI_Irecv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, &r);
         MPI_Waitany(1, &r, &index, MPI_STATUS_IGNORE);
       },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Waitsome", true,
       [&](int t) {
         MPI_Request r;
         int outcount = 0, index = 0;
         MPI_Irecv(&sink, 1, MPI_INT, 1, t, MPI_COMM_WORLD, &r);
         MPI_Waitsome(1, &r, &outcount, &index, MPI_STATUSES_IGNORE);
       },
       [&](int t) { MPI_Send(&payload, 1, MPI_INT, 0, t, MPI_COMM_WORLD); }},
      {"MPI_Bcast", false, [&](int) { MPI_Bcast(&sink, 1, MPI_INT, 1, g_pair); },
       [&](int) { MPI_Bcast(&payload, 1, MPI_INT, 1, g_pair); }},
      // One that hytask::mpi has no call for, posted through the engine (needs rank 1's part).
      {"MPI_Reduce_scatter_block", false,
       [&](int) {
         int both_parts[2] = {1, 1};
         MPI_Reduce_scatter_block(both_parts, &sink, 1, MPI_INT, MPI_SUM, g_pair);
       },
       [&](int) {
         int both_parts[2] = {1, 1};
         MPI_Reduce_scatter_block(both_parts, &sink, 1, MPI_INT, MPI_SUM, g_pair);
       }},
  };
  int tag = 100;
  for (const blocking_kind& k : kinds) {
    ++tag;
    if (k.program_requests && g_funneled) continue;
    g_where = k.name;
    if (g_rank == 0) {
      std::atomic<bool> second_ran{false};
      bool second_first = false;
      hytask::spawn({.name = "blocked"}, [&] {
        k.blocked(tag);
        second_first = second_ran.load();
      });
      hytask::spawn({.name = "go"}, [&] {
        second_ran = true;
        int go = 1;
        MPI_Send(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
      });
      hytask::wait_all();
      check(second_first, std::string(k.name) + " in a task did not let the next task run");
    } else if (g_rank == 1) {
      hytask::spawn({.name = "matching"}, [&] {
        int go = 0;
        MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        k.matched(tag);
      });
      hytask::wait_all();
    }
  }
}

// Seed 004's deadlock (scenarios.cpp, deadlock_p2p), written with plain MPI: blocking calls
// in tasks on one worker per rank would hold it; suspended tasks do not.
void deadlock() {
  g_where = "inside tasks";
  if (g_size < 2 || g_rank > 1) return;
  const int n = 64;
  std::vector<int> got(n, -1);
  if (g_rank == 0) {
    for (int k = n - 1; k >= 0; --k)
      hytask::spawn({.name = "recv"}, [&got, k] {
        MPI_Recv(&got[static_cast<std::size_t>(k)], 1, MPI_INT, 1, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      });
  } else {
    for (int k = 0; k < n; ++k)
      hytask::spawn({.name = "ssend"}, [k] {
        int v = 1000 + k;
        MPI_Ssend(&v, 1, MPI_INT, 0, 100 + k, MPI_COMM_WORLD);
      });
  }
  hytask::wait_all();
  if (g_rank == 0)
    for (int k = 0; k < n; ++k)
      check(got[static_cast<std::size_t>(k)] == 1000 + k, "tag " + std::to_string(100 + k));
}


// ---- cancellation of waits ------------------------------------------------------------

// Tasks of a task_group suspended in the four waits on receives nobody matches; in
// MPI_Waitall also two sends (an eager one, a rendezvous one) that the right neighbour
// receives only after the cancellation; a task that calls MPI_Wait once it is already
// cancelled; and tasks suspended in MPI_Mprobe and in MPI_Sendrecv_replace (whose send the
// neighbour receives later too). Cancelling the group must cancel the receives (MPI_Cancel)
// and drain the sends — not cancel them: MPICH may really cancel an eager send, and the
// neighbour would never get it — and every call must throw task_cancelled with its requests
// completed (null), so that wait_all returns and nothing is pending at MPI_Finalize. In
// funneled mode (the program may not post its own requests) only the last two.
void cancel_waits() {
  g_where = "tasks of a cancelled task_group in MPI_Wait*, MPI_Mprobe, MPI_Sendrecv_replace";
  g_hang_means = "a call of a cancelled task was not interrupted (its receives were not cancelled, "
                 "or a send it drained was lost)";
  const bool own_requests = !g_funneled;
  const int nobody = 300, small_tag = 301, big_tag = 302, replace_tag = 303;  // nobody sends 300
  constexpr int big_n = 1 << 18;      // 1 MiB: a rendezvous send, pending until received
  constexpr int replace_n = 1 << 14;  // 64 KiB: rendezvous too
  auto value = [](int rank, int i) { return rank * 1000003 + i; };
  std::vector<int> small_out(4), big_out(big_n), small_in(4, -1), big_in(big_n, -1);
  std::vector<int> replaced(replace_n), replace_in(replace_n, -1);
  for (int i = 0; i < 4; ++i) small_out[static_cast<std::size_t>(i)] = value(g_rank, 7 * i);
  for (int i = 0; i < big_n; ++i) big_out[static_cast<std::size_t>(i)] = value(g_rank, i);
  for (int i = 0; i < replace_n; ++i) replaced[static_cast<std::size_t>(i)] = value(g_rank, 3 * i);
  int sink[8] = {};
  std::atomic<int> started{0}, interrupted{0};
  int tasks = 0;
  std::mutex bad_mutex;
  std::vector<std::string> bad;  // what went wrong inside the tasks, reported by main
  auto wrong = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(bad_mutex);
    bad.push_back(what);
  };
  auto irecv_nobody = [&](int i, MPI_Request* r) {
    check_rc(MPI_Irecv(&sink[i], 1, MPI_INT, g_left, nobody, MPI_COMM_WORLD, r), "MPI_Irecv");
  };
  // Runs the task's call, whose n requests are reqs: it must throw task_cancelled naming
  // `named`, with every request completed; the exception then leaves the task (counted
  // cancelled, not failed).
  auto interrupted_call = [&](const std::string& named, MPI_Request* reqs, int n, const std::function<int()>& call) {
    try {
      const int rc = call();
      wrong("the call of " + named + " returned " + std::to_string(rc) + " instead of throwing hytask::task_cancelled");
    } catch (const hytask::task_cancelled& e) {
      const std::string text = e.what();
      if (text.find(named) == std::string::npos) wrong("a task_cancelled does not name " + named + ": " + text);
      for (int i = 0; i < n; ++i)
        if (reqs[i] != MPI_REQUEST_NULL)
          wrong(named + " was interrupted with request " + std::to_string(i) + " still pending");
      if (g_rank == 0 && (named == "MPI_Waitall" || named == "MPI_Mprobe")) std::printf("interrupted: %s\n", text.c_str());
      ++interrupted;
      throw;
    }
  };

  hytask::task_group group;
  hytask::event cancelled;  // set once the group is
  auto in_group = [&](const char* name, std::function<void()> body) {
    ++tasks;
    hytask::spawn({.name = name, .group = &group}, std::move(body));
  };
  if (own_requests) {
    in_group("wait", [&] {
      MPI_Request r;
      irecv_nobody(0, &r);
      ++started;
      interrupted_call("MPI_Wait", &r, 1, [&] { return MPI_Wait(&r, MPI_STATUS_IGNORE); });
    });
    in_group("waitall", [&] {
      MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      irecv_nobody(1, &r[0]);
      check_rc(MPI_Isend(small_out.data(), 4, MPI_INT, g_right, small_tag, MPI_COMM_WORLD, &r[1]), "MPI_Isend");
      check_rc(MPI_Isend(big_out.data(), big_n, MPI_INT, g_right, big_tag, MPI_COMM_WORLD, &r[2]), "MPI_Isend");
      MPI_Status st[4];
      ++started;
      interrupted_call("MPI_Waitall", r, 4, [&] { return MPI_Waitall(4, r, st); });
    });
    in_group("waitany", [&] {
      MPI_Request r[2];
      irecv_nobody(2, &r[0]);
      irecv_nobody(3, &r[1]);
      int index = -5;
      ++started;
      interrupted_call("MPI_Waitany", r, 2, [&] { return MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE); });
    });
    in_group("waitsome", [&] {
      MPI_Request r[2];
      irecv_nobody(4, &r[0]);
      irecv_nobody(5, &r[1]);
      int outcount = -5, indices[2];
      MPI_Status st[2];
      ++started;
      interrupted_call("MPI_Waitsome", r, 2, [&] { return MPI_Waitsome(2, r, &outcount, indices, st); });
    });
    in_group("wait after cancel", [&] {
      ++started;
      cancelled.wait();
      if (!hytask::this_task::cancelled()) wrong("a task of the group is not cancelled after cancel()");
      MPI_Request r;
      irecv_nobody(6, &r);
      interrupted_call("MPI_Wait", &r, 1, [&] { return MPI_Wait(&r, MPI_STATUS_IGNORE); });
    });
  }
  in_group("mprobe", [&] {
    MPI_Message m = MPI_MESSAGE_NULL;
    ++started;
    interrupted_call("MPI_Mprobe", nullptr, 0, [&] { return MPI_Mprobe(g_left, nobody, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE); });
  });
  // Its receive (hytask's) is cancelled and its packed send drained: hytask's message names
  // the receive.
  in_group("sendrecv_replace", [&] {
    ++started;
    interrupted_call("MPI_Irecv", nullptr, 0, [&] {
      return MPI_Sendrecv_replace(replaced.data(), replace_n, MPI_INT, g_right, replace_tag, g_left, nobody,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
  });
  // Main runs tasks (one worker) or lets the other worker run them until all have started,
  // and gives them time to suspend in their calls (or for the event).
  while (started.load() < tasks) hytask::this_task::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  group.cancel();
  cancelled.set();
  // The left neighbour's drained sends, received after the cancellation.
  hytask::spawn({.name = "late receiver"}, [&] {
    if (own_requests) {
      check_rc(MPI_Recv(small_in.data(), 4, MPI_INT, g_left, small_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      check_rc(MPI_Recv(big_in.data(), big_n, MPI_INT, g_left, big_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    }
    check_rc(MPI_Recv(replace_in.data(), replace_n, MPI_INT, g_left, replace_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             "MPI_Recv");
  });
  try {
    hytask::wait_all();
  } catch (const std::exception& e) {
    fail(std::string("wait_all threw after the cancellation: ") + e.what());
  }
  for (const std::string& b : bad) fail(b);
  check(interrupted.load() == tasks,
        std::to_string(interrupted.load()) + " of the " + std::to_string(tasks) + " calls were interrupted");
  if (own_requests) {
    for (int i = 0; i < 4; ++i)
      check(small_in[static_cast<std::size_t>(i)] == value(g_left, 7 * i), "the eager send drained from MPI_Waitall lost its data");
    for (int i = 0; i < big_n; ++i)
      if (big_in[static_cast<std::size_t>(i)] != value(g_left, i))
        fail("the rendezvous send drained from MPI_Waitall: element " + std::to_string(i) + " is wrong");
  }
  for (int i = 0; i < replace_n; ++i) {
    if (replace_in[static_cast<std::size_t>(i)] != value(g_left, 3 * i))
      fail("the send drained from MPI_Sendrecv_replace: element " + std::to_string(i) + " is wrong");
    if (replaced[static_cast<std::size_t>(i)] != value(g_rank, 3 * i))
      fail("MPI_Sendrecv_replace's cancelled receive wrote element " + std::to_string(i));
  }
}

// ---- matched probes -------------------------------------------------------------------

// More tasks than workers probe for messages of one (source, tag) with MPI_Mprobe and
// receive them with MPI_Mrecv; the messages are sent by a later task, once the probes are
// suspended (a plain MPI_Mprobe would hold every worker, and nothing would be sent). Each
// message has its own size and says which it is: every task must receive whole the one it
// probed (with MPI_Probe + MPI_Recv, another task's receive could take it).
void mprobe() {
  g_where = "tasks in MPI_Mprobe + MPI_Mrecv";
  constexpr int n = 6;
  const int tag = 310;
  auto size_of = [](int k) { return 1 + 3001 * k; };  // up to 60 KB: eager and rendezvous
  auto value = [](int k, int i) { return k * 1000000 + i; };
  std::vector<std::vector<int>> got(n);
  std::vector<int> probed(n, -1);
  for (int k = 0; k < n; ++k)
    hytask::spawn({.name = "mprobe"}, [&, k] {
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status st;
      check_rc(MPI_Mprobe(g_left, tag, MPI_COMM_WORLD, &message, &st), "MPI_Mprobe");
      check(message != MPI_MESSAGE_NULL && st.MPI_SOURCE == g_left && st.MPI_TAG == tag, "MPI_Mprobe's message or status");
      const int count = count_of(st);
      probed[static_cast<std::size_t>(k)] = count;
      std::vector<int>& in = got[static_cast<std::size_t>(k)];
      in.assign(static_cast<std::size_t>(count), -1);
      check_rc(MPI_Mrecv(in.data(), count, MPI_INT, &message, &st), "MPI_Mrecv");
      check(message == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle");
      check(st.MPI_SOURCE == g_left && st.MPI_TAG == tag && count_of(st) == count,
            "MPI_Mrecv's status: count " + std::to_string(count_of(st)) + " after a probe of " + std::to_string(count));
    });
  hytask::spawn({.name = "send"}, [&] {
    for (int k = 0; k < n; ++k) {
      std::vector<int> out(static_cast<std::size_t>(size_of(k)));
      for (int i = 0; i < size_of(k); ++i) out[static_cast<std::size_t>(i)] = value(k, i);
      check_rc(MPI_Send(out.data(), size_of(k), MPI_INT, g_right, tag, MPI_COMM_WORLD), "MPI_Send");
    }
  });
  hytask::wait_all();
  std::vector<int> seen(n, 0);
  for (int k = 0; k < n; ++k) {
    const std::vector<int>& in = got[static_cast<std::size_t>(k)];
    check(!in.empty(), "task " + std::to_string(k) + " received nothing");
    const int which = in[0] / 1000000;
    check(which >= 0 && which < n && !seen[static_cast<std::size_t>(which)],
          "task " + std::to_string(k) + " received message " + std::to_string(which) + " (twice, or unknown)");
    seen[static_cast<std::size_t>(which)] = 1;
    check(static_cast<int>(in.size()) == size_of(which),
          "task " + std::to_string(k) + " probed " + std::to_string(in.size()) + " ints but message " +
              std::to_string(which) + " has " + std::to_string(size_of(which)));
    for (int i = 0; i < size_of(which); ++i)
      if (in[static_cast<std::size_t>(i)] != value(which, i))
        fail("task " + std::to_string(k) + ": element " + std::to_string(i) + " of message " + std::to_string(which));
  }
}

// ---- MPI_Sendrecv_replace -------------------------------------------------------------

// Around the ring, two tasks per rank: A replaces contiguous doubles, sending them right (tag
// 320) and receiving from the left what the left neighbour's B sends (tag 321); B replaces
// every other double of its buffer (a strided type, the others must stay), sending tag 321
// and receiving A's tag 320. Packed data and both layouts meet in each exchange. With one
// worker a plain call in A holds it on every rank, and no B ever sends.
void sendrecv_replace() {
  g_where = "tasks in MPI_Sendrecv_replace";
  const int n = g_replace_n;
  auto a_value = [](int rank, int i) { return rank * 1e6 + i; };
  auto b_value = [](int rank, int i) { return rank * 1e6 + i + 0.5; };
  std::vector<double> a(static_cast<std::size_t>(n)), b(2 * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    a[static_cast<std::size_t>(i)] = a_value(g_rank, i);
    b[2 * static_cast<std::size_t>(i)] = b_value(g_rank, i);
    b[2 * static_cast<std::size_t>(i) + 1] = -7;
  }
  MPI_Status sa, sb;
  hytask::spawn({.name = "A"}, [&] {
    check_rc(MPI_Sendrecv_replace(a.data(), n, MPI_DOUBLE, g_right, 320, g_left, 321, MPI_COMM_WORLD, &sa),
             "MPI_Sendrecv_replace");
  });
  hytask::spawn({.name = "B"}, [&] {
    check_rc(MPI_Sendrecv_replace(b.data(), 1, g_every_other, g_right, 321, g_left, 320, MPI_COMM_WORLD, &sb),
             "MPI_Sendrecv_replace");
  });
  hytask::wait_all();
  check(sa.MPI_SOURCE == g_left && sa.MPI_TAG == 321 && count_of(sa, MPI_DOUBLE) == n,
        "A's status: source " + std::to_string(sa.MPI_SOURCE) + ", tag " + std::to_string(sa.MPI_TAG) +
            ", count " + std::to_string(count_of(sa, MPI_DOUBLE)));
  check(sb.MPI_SOURCE == g_left && sb.MPI_TAG == 320 && count_of(sb, MPI_DOUBLE) == n,
        "B's status: source " + std::to_string(sb.MPI_SOURCE) + ", tag " + std::to_string(sb.MPI_TAG) +
            ", count " + std::to_string(count_of(sb, MPI_DOUBLE)));
  for (int i = 0; i < n; ++i) {
    check(a[static_cast<std::size_t>(i)] == b_value(g_left, i), "A's element " + std::to_string(i));
    check(b[2 * static_cast<std::size_t>(i)] == a_value(g_left, i), "B's element " + std::to_string(i));
    check(b[2 * static_cast<std::size_t>(i) + 1] == -7, "B's gap " + std::to_string(i) + " was written");
  }
}
}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, void (*)()> all = {
      {"p2p", p2p},           {"proc_null", proc_null}, {"zero", zero},
      {"probe", probe},       {"bsend_rsend", bsend_rsend}, {"sendrecv", sendrecv},
      {"waits", waits},       {"persistent", persistent}, {"adopt", adopt},
      {"collectives", collectives}, {"errors", errors},  {"suspends", suspends},
      {"deadlock", deadlock}, {"cancel_waits", cancel_waits}, {"mprobe", mprobe},
      {"sendrecv_replace", sendrecv_replace},
  };
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& [name, f] : all) std::printf("%s\n", name.c_str());
    return 0;
  }
  hytask::runtime rt(argc, argv);
  g_funneled = rt.settings().mpi_mode == hytask::mpi_mode::funneled;
  g_intercept = rt.settings().intercept;
  g_rank = mpi::rank();
  g_size = mpi::size();
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  // Communicators the cases need (plain calls from main, as hytask::mpi::rank() makes in
  // every mode, before anything is pending).
  const int dims = g_size, periodic = g_size > 2 ? 1 : 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periodic, 0, &g_ring);
  MPI_Cart_shift(g_ring, 0, 1, &g_nb_left, &g_nb_right);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < 2 ? 0 : MPI_UNDEFINED, g_rank, &g_pair);
  MPI_Type_vector(g_replace_n, 1, 2, MPI_DOUBLE, &g_every_other);
  MPI_Type_commit(&g_every_other);
  const char* guard_env = std::getenv("INTERCEPT_GUARD_S");
  const int guard_s = guard_env ? std::atoi(guard_env) : 60;
  std::vector<std::string> chosen(argv + 1, argv + argc);
  if (chosen.empty())
    for (const auto& [name, f] : all) chosen.push_back(name);
  for (const std::string& name : chosen) {
    auto it = all.find(name);
    if (it == all.end()) {
      if (g_rank == 0) std::fprintf(stderr, "intercept_calls: unknown case '%s'\n", name.c_str());
      return 2;
    }
    g_case = it->first.c_str();
    {
      hang_guard guard(guard_s, [guard_s] {
        std::fprintf(stderr,
                     "FAILED: rank %d, intercept_calls %s (%s): hung for %d s with interception %s "
                     "(HYTASK_INTERCEPT=%d): %s\n",
                     g_rank, g_case, g_where.load(), guard_s, g_intercept ? "on" : "off", g_intercept ? 1 : 0,
                     g_hang_means.load());
        std::fflush(stderr);
        std::_Exit(3);
      });
      g_hang_means = "a blocking MPI call held the worker";
      it->second();
      mpi::barrier();
    }
    if (g_rank == 0) std::printf("intercept_calls %s: ok\n", g_case);
    std::fflush(stdout);
  }
  MPI_Comm_free(&g_ring);
  if (g_pair != MPI_COMM_NULL) MPI_Comm_free(&g_pair);
  MPI_Type_free(&g_every_other);
  return 0;
}
