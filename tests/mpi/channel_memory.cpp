// Memory stays bounded when tasks use ever new channels: 200,000 distinct tags, each used by
// one send task on rank 0 and one receive task on rank 1 (half of them declared with
// send_channel / recv_channel).
//   channel_memory rounds   a wait_all every 2,000 tags (a time-stepping program)
//   channel_memory graph    one wait_all at the end (tasks throttled by HYTASK_MAX_TASKS)
// Fails when the resident set grows by more than the limit after the first 10,000 tags. Both
// measures follow malloc_trim: memory the program freed and the allocator merely keeps (its
// per-thread arenas, fragmented by tasks that end on other workers than the one that spawned
// them) is not memory hytask holds, and how much of it there is depends on the machine's load.
// In graph mode rank 1's main acknowledges every 2,000th spawn and rank 0's main waits for
// the acknowledgement two rounds back: without it the sender's eager messages run ahead
// unboundedly and pile up in MPI's unexpected-message queue, MPI's memory and not hytask's
// (it made the measure depend on the machine's load).
//   channel_memory MODE [TAGS]   more tags than the default 200,000 for a longer look
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <span>
#include <string>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "../unit/test_util.hpp"

namespace mpi = hytask::mpi;

namespace {

void exchange(int tag, int rank) {
  const bool declared = tag % 2 == 0;
  if (rank == 0) {
    auto body = [tag] {
      int v = tag;
      mpi::send(std::span(&v, 1), 1, tag);
    };
    if (declared) hytask::spawn(body, mpi::send_channel(1, tag));
    else hytask::spawn(body);
  } else {
    auto body = [tag] {
      int v = -1;
      mpi::recv(std::span(&v, 1), 0, tag);
      if (v != tag) {
        std::fprintf(stderr, "channel_memory: tag %d carried %d\n", tag, v);
        std::abort();
      }
    };
    if (declared) hytask::spawn(body, mpi::recv_channel(0, tag));
    else hytask::spawn(body);
  }
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string how = argc > 1 ? argv[1] : "rounds";
  const int rank = mpi::rank();
  const int tags = argc > 2 ? std::atoi(argv[2]) : 200000, warmup = 10000, round = 2000;
  const long limit_kib = 16 * 1024;
  long base = 0;
  if (rank <= 1) {
    for (int tag = 1; tag <= tags; ++tag) {
      exchange(tag, rank);
      if (how == "rounds" && tag % round == 0) hytask::wait_all();
      if (how == "graph" && tag % round == 0) {
        int ack = tag;
        if (rank == 1) mpi::send(std::span(&ack, 1), 0, 0);
        else if (tag > 2 * round) mpi::recv(std::span(&ack, 1), 1, 0);
      }
      if (tag == warmup) {
        if (how == "graph") hytask::wait_all();
        malloc_trim(0);
        base = hytask_test::current_rss_kib();
      }
    }
  }
  if (how == "graph" && rank == 0)  // the last two rounds' acknowledgements
    for (int r = std::max(tags / round - 2, 0); r < tags / round; ++r) {
      int ack = 0;
      mpi::recv(std::span(&ack, 1), 1, 0);
    }
  hytask::wait_all();
  mpi::barrier();
  malloc_trim(0);
  const long grown = hytask_test::current_rss_kib() - base;
  const bool ok = rank > 1 || grown <= limit_kib;
  std::printf("channel_memory %s: rank %d: the resident set grew by %ld KiB over %d tags "
              "(limit %ld KiB): %s\n",
              how.c_str(), rank, grown, tags - warmup, limit_kib, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
