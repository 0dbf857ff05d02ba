// Tasks spawned by one task that post on the same channel in an order other than their spawn
// order (HYTASK_ORDER_CHECK):
//   order_check p2p          eight undeclared receives, messages already there, posted in
//                            reverse spawn order: with =error every one of them but the first
//                            fails; with =warn one warning, and the slots come out reversed;
//                            with =off nothing. Posting in spawn order is never reported.
//   order_check collective   undeclared barriers posted in reverse spawn order: an error
//                            unless =off, whatever the mode.
// Each task waits for its turn on an event the previous one sets (even when it fails), so
// the posting order does not depend on the scheduler. Rank 0 prints "order_check <what>
// <mode>: ok" when every rank's checks passed; a failing rank prints FAILED and the reason.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

namespace {

constexpr int n = 8;

struct set_on_exit {
  hytask::event* e;
  ~set_on_exit() {
    if (e) e->set();
  }
};

// Runs op(i) in task i, in reverse spawn order (reverse) or in spawn order. Returns the
// message of the exception wait_all rethrew, or "".
template <class Op>
std::string run_in_order(bool reverse, Op op) {
  std::array<hytask::event, n + 1> turn;
  for (int i = 0; i < n; ++i) {
    // Task i waits for turn[i] and passes turn[i + 1] on; in reverse, turn[i + 1] and turn[i].
    hytask::event* mine = &turn[static_cast<std::size_t>(reverse ? i + 1 : i)];
    hytask::event* next = &turn[static_cast<std::size_t>(reverse ? i : i + 1)];
    hytask::spawn({.name = "poster"}, [=] {
      mine->wait();
      set_on_exit pass{next};
      op(i);
    });
  }
  turn[reverse ? n : 0].set();
  try {
    hytask::wait_all();
  } catch (const hytask::usage_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string what = argc > 1 ? argv[1] : "p2p";
  const char* env = std::getenv("HYTASK_ORDER_CHECK");
  const std::string mode = env ? env : "warn";
  const int r = mpi::rank();
  bool ok = true;
  auto expect = [&](bool cond, const std::string& msg) {
    if (!cond) {
      ok = false;
      std::fprintf(stderr, "order_check %s %s: rank %d: FAILED: %s\n", what.c_str(), mode.c_str(), r,
                   msg.c_str());
    }
  };
  if (what == "p2p") {
    for (bool reverse : {false, true}) {
      // The messages are there before any receive is posted: each receive completes at once.
      if (r == 1)
        for (int i = 0; i < n; ++i) mpi::send(std::span(&i, 1), 0, 5);
      mpi::barrier();
      if (r == 0) {
        std::array<int, n> slot;
        slot.fill(-1);
        const std::string err =
            run_in_order(reverse, [&slot](int i) { mpi::recv(std::span(&slot[static_cast<std::size_t>(i)], 1), 1, 5); });
        if (!reverse) {
          expect(err.empty(), "posting in spawn order was reported: " + err);
          for (int i = 0; i < n; ++i) expect(slot[static_cast<std::size_t>(i)] == i, "slot " + std::to_string(i));
        } else if (mode == "error") {
          expect(err.find("recv_channel(peer, tag)") != std::string::npos &&
                     err.find("receives from rank 1 (tag 5)") != std::string::npos,
                 "no clear error: '" + err + "'");
          int left = 0;  // the receives that failed did not post: take their messages
          for (int k = 0; k < n - 1; ++k) mpi::recv(std::span(&left, 1), 1, 5);
        } else {
          expect(err.empty(), "mode " + mode + " failed a task: " + err);
          expect(slot[0] == n - 1, "the slots did not come out reversed");
        }
      }
      mpi::barrier();
    }
  } else if (what == "collective") {
    for (bool reverse : {false, true}) {
      const std::string err = run_in_order(reverse, [](int) { mpi::barrier(); });
      if (!reverse || mode == "off") {
        expect(err.empty(), "reported: " + err);
      } else {
        expect(err.find("collective(comm)") != std::string::npos, "no clear error: '" + err + "'");
        // This rank posted one barrier; the others were refused: post them from main.
        for (int k = 0; k < n - 1; ++k) mpi::barrier();
      }
    }
  } else {
    if (r == 0) std::fprintf(stderr, "usage: order_check p2p|collective\n");
    return 2;
  }
  // "ok" only when every rank's checks passed (the test looks for rank 0's line).
  int failed = ok ? 0 : 1;
  mpi::allreduce(std::span(&failed, 1), MPI_SUM);
  if (r == 0) {
    if (failed == 0) std::printf("order_check %s %s: ok\n", what.c_str(), mode.c_str());
    else std::printf("order_check %s %s: FAILED on %d rank(s)\n", what.c_str(), mode.c_str(), failed);
  }
  return ok ? 0 : 1;
}
