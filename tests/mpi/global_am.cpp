// The global layer's two-sided active messages (src/global/am.hpp) on real ranks, moved by
// the runtime's own pollers: rounds of random buffers to random ranks (itself included), sent
// from main and from a thread that is not a worker, the next round's buffers sent before the
// last round has completed, and buffers of no round among them. Each buffer must arrive
// once, intact; a round must end only once every buffer of it has been handled — when it
// ends on a rank, that rank's handler has counted every buffer of it sent there, and the
// round says exactly how many; a round the ranks label differently must be reported, with
// every rank's label; closing must retire every receive (nothing stays pending: the
// runtime's drain would wait for it).
//
// Argument: the transport, `two-sided` (the default) or `rma` — the RMA queue with areas of
// room for four largest buffers each (a round sends up to 24), so that writers find it full
// and must back off and retry (back-pressure), which the test requires to have happened.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "global/am.hpp"
#include "global/am_rma.hpp"
#include "global/messages.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace gd = hytask::global::detail;

namespace {

struct header {
  std::uint32_t round, source;
  std::uint64_t seq;
};

std::byte pattern(std::uint32_t source, std::uint64_t seq, std::size_t i) {
  return static_cast<std::byte>((source * 131 + seq * 7 + i) & 0xff);
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string which = argc > 1 ? argv[1] : "two-sided";
  if (which != "two-sided" && which != "rma") {
    std::fprintf(stderr, "global_am: unknown transport '%s' (two-sided or rma)\n", which.c_str());
    return 2;
  }
  const bool rma = which == "rma";
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  constexpr int rounds = 60;
  constexpr std::size_t max_bytes = 2048, rma_area = 4 * max_bytes;
  std::vector<std::atomic<std::uint64_t>> got_round(rounds), want_round(rounds);
  std::vector<std::atomic<bool>> round_done(rounds);
  std::vector<std::atomic<std::uint64_t>> got_from(static_cast<std::size_t>(size));
  std::atomic<int> corrupt{0};

  {
    // The RMA queue's areas hold four largest buffers each.
    const std::unique_ptr<gd::am_transport> transport = gd::make_am_transport(
        rma ? gd::am_kind::rma : gd::am_kind::two_sided, hytask::mpi::comm_world(),
        [&](int source, std::span<const std::byte> buf) {
          gd::buffer_header bh;
          header h;
          if (buf.size() < sizeof bh + sizeof h) {
            ++corrupt;
            return;
          }
          std::memcpy(&bh, buf.data(), sizeof bh);
          std::memcpy(&h, buf.data() + sizeof bh, sizeof h);
          const bool in_round = bh.round != gd::release_round;
          bool ok = static_cast<int>(h.source) == source && h.round < rounds &&
                    (!in_round || bh.round == h.round) && bh.epoch == 0 && bh.records == 1;
          for (std::size_t i = sizeof bh + sizeof h; ok && i < buf.size(); ++i)
            ok = buf[i] == pattern(h.source, h.seq, i);
          if (!ok) {
            ++corrupt;
            return;
          }
          // What the handler does takes a moment: the round must wait for it.
          if (h.seq % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
          if (in_round) ++got_round[h.round];
          ++got_from[static_cast<std::size_t>(source)];
        },
        [&](std::exception_ptr) { ++corrupt; }, max_bytes, rma_area);
    gd::am_transport& am = *transport;
    am.open();

    std::vector<std::uint64_t> sent_to(static_cast<std::size_t>(size), 0);
    std::mt19937_64 rng(1234 + static_cast<unsigned>(rank));
    std::uint64_t seq = 0;
    // MPICH's one-sided atomics move only while the target polls: on 4 oversubscribed ranks
    // the RMA queue takes 15-35 s where Open MPI takes 1.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(rma ? 150 : 60);
    auto wait_round = [&](int r) {
      while (!(round_done[r] && got_round[r] == want_round[r])) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr,
                       "global_am: rank %d: round %d stuck: done %d, %llu of %llu buffers\n",
                       rank, r, static_cast<int>(round_done[r].load()),
                       static_cast<unsigned long long>(got_round[r].load()),
                       static_cast<unsigned long long>(want_round[r].load()));
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        hytask::this_task::poll();
        std::this_thread::yield();
      }
    };
    for (int r = 0; r < rounds; ++r) {
      const int n = static_cast<int>(rng() % 24);
      // Two threads send this round's buffers, each counting its own.
      std::vector<std::uint64_t> counts(static_cast<std::size_t>(size), 0), counts_b = counts;
      auto sender = [&](int first, std::vector<std::uint64_t>& mine) {
        std::mt19937_64 g(seq * 977 + 31 * static_cast<unsigned>(rank) + static_cast<unsigned>(first));
        for (int i = first; i < n; i += 2) {
          const int dest = static_cast<int>(g() % static_cast<std::uint64_t>(size));
          constexpr std::size_t head = sizeof(gd::buffer_header) + sizeof(header);
          const std::size_t bytes = head + g() % (max_bytes - head + 1);
          std::vector<std::byte> buf(bytes);
          // One in four belongs to no round (as the protocol's B and C buffers).
          const bool in_round = g() % 4 != 0;
          const gd::buffer_header bh{in_round ? static_cast<std::uint32_t>(r) : gd::release_round, 1, 0};
          const header h{static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(rank),
                         seq * 1000 + static_cast<std::uint64_t>(i)};
          std::memcpy(buf.data(), &bh, sizeof bh);
          std::memcpy(buf.data() + sizeof bh, &h, sizeof h);
          for (std::size_t k = head; k < bytes; ++k) buf[k] = pattern(h.source, h.seq, k);
          am.send(dest, std::move(buf));
          ++mine[static_cast<std::size_t>(dest)];
        }
      };
      std::thread second([&] { sender(1, counts_b); });
      sender(0, counts);
      second.join();
      ++seq;
      for (int d = 0; d < size; ++d) {
        counts[static_cast<std::size_t>(d)] += counts_b[static_cast<std::size_t>(d)];
        sent_to[static_cast<std::size_t>(d)] += counts[static_cast<std::size_t>(d)];
      }
      am.complete_round(
          gd::round_key(static_cast<std::uint32_t>(r), 0), static_cast<std::uint64_t>(r),
          [&, r](std::uint64_t want) {
            // Ended: every buffer of the round sent here has been handled already.
            if (got_round[r] != want) {
              std::fprintf(stderr, "global_am: rank %d: round %d ended with %llu of its %llu "
                           "buffers handled\n", rank, r,
                           static_cast<unsigned long long>(got_round[r].load()),
                           static_cast<unsigned long long>(want));
              ++corrupt;
            }
            want_round[r] = want;
            round_done[r] = true;
          },
          [&](const std::vector<std::uint64_t>&) { ++corrupt; });
      if (r >= 2) wait_round(r - 2);  // rounds overlap the next ones' sends
    }
    for (int r = 0; r < rounds; ++r) wait_round(r);
    // A round the ranks label differently (the last rank calls it another): every rank is
    // told, with each rank's label, and its done does not run.
    {
      std::atomic<int> outcome{0};  // 1 done, 2 mismatch as expected, 3 wrong labels
      const std::uint64_t label = rank == size - 1 ? 7 : 5;
      am.complete_round(
          gd::round_key(rounds, 0), label,
          [&](std::uint64_t) { outcome = 1; },
          [&](const std::vector<std::uint64_t>& labels) {
            bool right = labels.size() == static_cast<std::size_t>(size);
            for (int q = 0; right && q < size; ++q)
              right = labels[static_cast<std::size_t>(q)] == (q == size - 1 ? 7u : 5u);
            outcome = right ? 2 : 3;
          });
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (outcome == 0 && std::chrono::steady_clock::now() < deadline) {
        hytask::this_task::poll();
        std::this_thread::yield();
      }
      const bool expected = size == 1 ? outcome == 1 : outcome == 2;
      if (!expected) {
        std::fprintf(stderr, "global_am: rank %d: a round labelled differently by the last rank "
                     "gave outcome %d (1 done, 2 mismatch reported, 3 wrong labels, 0 nothing in 30 s)\n",
                     rank, outcome.load());
        ++corrupt;
      }
    }
    am.close();  // every buffer for this rank is in: nothing else can take a receive

    // Every buffer a rank sent here arrived, once.
    std::vector<std::uint64_t> sent_here(static_cast<std::size_t>(size), 0);
    hytask::mpi::alltoall(sent_to.data(), 1, MPI_UINT64_T, sent_here.data(), 1, MPI_UINT64_T);
    int bad = corrupt.load();
    if (rma) {
      // The window is what was asked for: bounded, however many buffers were sent.
      auto& q = static_cast<gd::am_rma&>(am);
      if (q.area_bytes() != rma_area) {
        std::fprintf(stderr, "global_am: rank %d: RMA areas of %zu bytes, %zu asked for\n", rank,
                     q.area_bytes(), rma_area);
        ++bad;
      }
      std::uint64_t retries = q.full_retries(), all_retries = 0;
      hytask::mpi::allreduce(&retries, &all_retries, 1, MPI_UINT64_T, MPI_SUM);
      if (size > 1 && all_retries == 0) {
        std::fprintf(stderr, "global_am: rank %d: no writer ever found a queue full\n", rank);
        ++bad;
      }
      if (rank == 0) std::printf("global_am: rma: %llu deposits refused by full queues\n",
                                 static_cast<unsigned long long>(all_retries));
    }
    for (int s = 0; s < size; ++s)
      if (sent_here[static_cast<std::size_t>(s)] != got_from[static_cast<std::size_t>(s)]) {
        std::fprintf(stderr, "global_am: rank %d: %llu buffers from rank %d, it sent %llu\n",
                     rank, static_cast<unsigned long long>(got_from[static_cast<std::size_t>(s)]),
                     s, static_cast<unsigned long long>(sent_here[static_cast<std::size_t>(s)]));
        ++bad;
      }
    if (corrupt) std::fprintf(stderr, "global_am: rank %d: %d corrupt buffers\n", rank, corrupt.load());
    int all_bad = 0;
    hytask::mpi::allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM);
    if (all_bad) {
      std::fprintf(stderr, "global_am: FAIL\n");
      return 1;
    }
  }
  if (rank == 0)
    std::printf("global_am: %s, %d ranks, %d rounds: every buffer arrived once\n", which.c_str(),
                size, rounds);
  return 0;
}
