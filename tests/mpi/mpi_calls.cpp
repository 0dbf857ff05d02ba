// hytask::mpi's calls beyond the basic ones, on 2-4 ranks: reduce_scatter(_block), scan and
// exscan; the neighbourhood collectives; mprobe/improbe/mrecv; persistent requests;
// wait_any, wait_some, test_any, test_some. Each result is checked against the mathematically
// known value and, where the mode lets main call MPI, against the plain MPI call's; errors
// must be hytask's exceptions naming the call; `suspends` proves that a task in each call
// lets the next task of its (only) worker run.
//   mpi_calls [case ...]     (default: all)
//   mpi_calls --list
// Prints "mpi_calls <case>: ok" once every rank passed the case.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../unit/test_util.hpp"
#include "hang_guard.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

namespace {

int g_rank = 0, g_size = 1, g_left = 0, g_right = 0;
bool g_plain_mpi = false;  // main may call MPI itself (the reference results)
MPI_Comm g_ring = MPI_COMM_NULL;   // a periodic 1-D grid of all ranks (hytask's world)
MPI_Comm g_pair = MPI_COMM_NULL;   // ranks 0 and 1
MPI_Comm g_pair_ring = MPI_COMM_NULL;  // a periodic 1-D grid of ranks 0 and 1
const char* g_case = "";
std::atomic<const char*> g_where{""};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: rank %d, mpi_calls %s (%s): %s\n", g_rank, g_case, g_where.load(),
               what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

std::string str(long v) { return std::to_string(v); }

// ---- reduce_scatter, reduce_scatter_block, scan, exscan ------------------------------

void scans() {
  const int P = g_size, r = g_rank;
  g_where = "scan and exscan in a task";
  long inclusive = -1, exclusive = -1, in_place = r + 1, ex_in_place = r + 1, nb = -1, nbx = -1;
  std::vector<long> raw(3, -1);
  hytask::spawn({.name = "scans"}, [&] {
    const long mine = r + 1;
    mpi::scan(std::span(&mine, 1), std::span(&inclusive, 1), MPI_SUM);
    mpi::exscan(std::span(&mine, 1), std::span(&exclusive, 1), MPI_SUM);
    mpi::scan(std::span(&in_place, 1), MPI_SUM);
    mpi::exscan(std::span(&ex_in_place, 1), MPI_SUM);
    const long three[3] = {mine, 2 * mine, -mine};
    mpi::scan(three, raw.data(), 3, MPI_LONG, MPI_SUM);
    mpi::request a = mpi::iscan(std::span(&mine, 1), std::span(&nb, 1), MPI_SUM);
    mpi::request b = mpi::iexscan(std::span(&mine, 1), std::span(&nbx, 1), MPI_SUM);
    a.wait();
    b.wait();
  }, mpi::collective());
  hytask::wait_all();
  const long want = static_cast<long>(r + 1) * (r + 2) / 2, want_ex = static_cast<long>(r) * (r + 1) / 2;
  check(inclusive == want, "scan of rank+1: " + str(inclusive) + ", want " + str(want));
  check(in_place == want, "scan in place: " + str(in_place));
  check(nb == want, "iscan: " + str(nb));
  check(raw[0] == want && raw[1] == 2 * want && raw[2] == -want, "raw scan of 3 longs");
  if (r > 0) {
    check(exclusive == want_ex, "exscan of rank+1: " + str(exclusive) + ", want " + str(want_ex));
    check(ex_in_place == want_ex, "exscan in place: " + str(ex_in_place));
    check(nbx == want_ex, "iexscan: " + str(nbx));
  } else {
    check(exclusive == -1, "exscan changed rank 0's result");
  }
  if (g_plain_mpi) {
    long mine = r + 1, plain = 0, plain_ex = 0;
    MPI_Scan(&mine, &plain, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&mine, &plain_ex, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    check(plain == inclusive, "scan differs from MPI_Scan's " + str(plain));
    if (r > 0) check(plain_ex == exclusive, "exscan differs from MPI_Exscan's " + str(plain_ex));
  }
  (void)P;
}

void reduce_scatters() {
  const int P = g_size, r = g_rank, k = 3;
  g_where = "reduce_scatter(_block) in a task";
  // Block: rank q contributes q*100 + i at index i; rank r gets sum over q of q*100 + r*k + j.
  std::vector<int> send(static_cast<std::size_t>(P * k));
  for (int i = 0; i < P * k; ++i) send[static_cast<std::size_t>(i)] = r * 100 + i;
  std::vector<int> block(k, -1), block_nb(k, -1), block_raw(k, -1);
  // Uneven: rank i gets i+1 elements; send holds their sum.
  std::vector<int> counts(static_cast<std::size_t>(P));
  std::iota(counts.begin(), counts.end(), 1);
  const int total = P * (P + 1) / 2;
  std::vector<int> vsend(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) vsend[static_cast<std::size_t>(i)] = r + 10 * i;
  std::vector<int> vrecv(static_cast<std::size_t>(r + 1), -1), vrecv_nb(static_cast<std::size_t>(r + 1), -1);
  std::vector<int> vrecv_typed_nb(static_cast<std::size_t>(r + 1), -1);
  hytask::spawn({.name = "reduce_scatter"}, [&] {
    mpi::reduce_scatter_block(send, block, MPI_SUM);
    mpi::reduce_scatter_block(send.data(), block_raw.data(), k, MPI_INT, MPI_SUM);
    mpi::ireduce_scatter_block(send, block_nb, MPI_SUM).wait();
    mpi::reduce_scatter(vsend, vrecv, counts, MPI_SUM);
    mpi::ireduce_scatter(vsend.data(), vrecv_nb.data(), counts.data(), MPI_INT, MPI_SUM).wait();
    mpi::ireduce_scatter(vsend, vrecv_typed_nb, counts, MPI_SUM).wait();
  }, mpi::collective());
  hytask::wait_all();
  for (int j = 0; j < k; ++j) {
    const int want = 100 * P * (P - 1) / 2 + P * (r * k + j);
    for (auto* v : {&block, &block_raw, &block_nb})
      check((*v)[static_cast<std::size_t>(j)] == want,
            "reduce_scatter_block element " + str(j) + ": " + str((*v)[static_cast<std::size_t>(j)]) +
                ", want " + str(want));
  }
  const int first = r * (r + 1) / 2;  // this rank's part starts after ranks 0..r-1's
  for (int j = 0; j <= r; ++j) {
    const int want = P * (P - 1) / 2 + P * 10 * (first + j);
    check(vrecv[static_cast<std::size_t>(j)] == want && vrecv_nb[static_cast<std::size_t>(j)] == want &&
              vrecv_typed_nb[static_cast<std::size_t>(j)] == want,
          "reduce_scatter element " + str(j) + ": " + str(vrecv[static_cast<std::size_t>(j)]) + ", want " +
              str(want));
  }
  if (g_plain_mpi) {
    std::vector<int> plain(k), vplain(static_cast<std::size_t>(r + 1));
    MPI_Reduce_scatter_block(send.data(), plain.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter(vsend.data(), vplain.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(plain == block, "reduce_scatter_block differs from MPI_Reduce_scatter_block");
    check(vplain == vrecv, "reduce_scatter differs from MPI_Reduce_scatter");
  }
  // Typed sizes that do not fit: usage_error naming the call, before anything is posted.
  g_where = "reduce_scatter(_block) with ranges of the wrong size";
  std::vector<int> short_send(static_cast<std::size_t>(P * k - 1));
  try {
    mpi::reduce_scatter_block(short_send, block, MPI_SUM);
    fail("no usage_error for a reduce_scatter_block send range of the wrong size");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("reduce_scatter_block") != std::string::npos, e.what());
  }
  try {
    std::vector<int> two_counts{1, 1, 1, 1, 1};
    two_counts.resize(static_cast<std::size_t>(P + 1));
    mpi::reduce_scatter(vsend, vrecv, two_counts, MPI_SUM);
    fail("no usage_error for recvcounts with more entries than ranks");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("recvcounts") != std::string::npos, e.what());
  }
}

// ---- neighbourhood collectives --------------------------------------------------------

void neighborhood() {
  g_where = "neighbourhood collectives on a periodic ring";
  const mpi::neighbor_counts n = mpi::neighbors(g_ring);
  check(n.sources == 2 && n.destinations == 2, "a 1-D grid has 2 neighbours each way, not " +
                                                   str(n.sources) + "/" + str(n.destinations));
  // Cartesian order of neighbours: the lower (left) one, then the upper (right) one.
  int mine[2] = {g_rank, 10 * g_rank};
  std::vector<int> gathered(4, -1), gathered_nb(4, -1), exchanged(4, -1), exchanged_nb(4, -1);
  std::vector<int> gathered_v(4, -1), exchanged_v(4, -1);
  // To the left neighbour: 1000 + rank, 1; to the right one: 2000 + rank, 2.
  int out[4] = {1000 + g_rank, 1, 2000 + g_rank, 2};
  hytask::spawn({.name = "neighbours"}, [&] {
    mpi::neighbor_allgather(std::span(mine), gathered, g_ring);
    mpi::ineighbor_allgather(std::span(mine), gathered_nb, g_ring).wait();
    mpi::neighbor_alltoall(std::span(out), exchanged, g_ring);
    mpi::ineighbor_alltoall(std::span(out), exchanged_nb, g_ring).wait();
    const int counts[2] = {2, 2}, displs[2] = {2, 0};  // the v-forms: blocks swapped in recv
    mpi::neighbor_allgatherv(mine, 2, MPI_INT, gathered_v.data(), counts, displs, MPI_INT, g_ring);
    const int sdispls[2] = {0, 2};
    mpi::neighbor_alltoallv(out, counts, sdispls, MPI_INT, exchanged_v.data(), counts, displs,
                            MPI_INT, g_ring);
  }, mpi::collective(g_ring));
  hytask::wait_all();
  const std::vector<int> want_gather{g_left, 10 * g_left, g_right, 10 * g_right};
  check(gathered == want_gather && gathered_nb == want_gather,
        "neighbor_allgather: got " + str(gathered[0]) + "," + str(gathered[2]));
  // From the left neighbour its "to the right" block, from the right one its "to the left".
  // On 2 ranks both neighbours are the same rank, whose two blocks MPI may match either way
  // round (Open MPI's blocking and non-blocking calls differ): either order is accepted.
  const std::vector<int> want_a2a{2000 + g_left, 2, 1000 + g_right, 1};
  const std::vector<int> swapped{1000 + g_right, 1, 2000 + g_left, 2};
  const bool same_neighbour = g_size == 2;
  check(exchanged == want_a2a || (same_neighbour && exchanged == swapped),
        "neighbor_alltoall: got " + str(exchanged[0]) + "," + str(exchanged[2]));
  check(exchanged_nb == exchanged, "ineighbor_alltoall differs from neighbor_alltoall");
  check(gathered_v == std::vector<int>{g_right, 10 * g_right, g_left, 10 * g_left}, "neighbor_allgatherv");
  check(exchanged_v == swapped || (same_neighbour && exchanged_v == want_a2a), "neighbor_alltoallv");
  if (g_plain_mpi) {
    std::vector<int> plain(4), plain_a2a(4);
    MPI_Neighbor_allgather(mine, 2, MPI_INT, plain.data(), 2, MPI_INT, g_ring);
    MPI_Neighbor_alltoall(out, 2, MPI_INT, plain_a2a.data(), 2, MPI_INT, g_ring);
    check(plain == gathered, "neighbor_allgather differs from MPI_Neighbor_allgather");
    if (!same_neighbour)
      check(plain_a2a == exchanged, "neighbor_alltoall differs from MPI_Neighbor_alltoall");
  }
  g_where = "neighbourhood collectives misused";
  try {
    std::vector<int> three(3);
    mpi::neighbor_alltoall(three, exchanged, g_ring);
    fail("no usage_error for a send range that does not split among the neighbours");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("neighbor_alltoall") != std::string::npos, e.what());
  }
  try {
    mpi::neighbor_allgather(std::span(mine), gathered, mpi::comm_world());
    fail("no usage_error for a communicator without a topology");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("topology") != std::string::npos, e.what());
  }
}

// ---- matched probe --------------------------------------------------------------------

void matched() {
  g_where = "mprobe and mrecv in tasks";
  constexpr int n = 5;
  const int tag = 70;
  auto length = [](int k) { return 1 + 4001 * k; };  // to 16000 ints: eager and rendezvous
  std::vector<std::vector<int>> got(n);
  // Before anything is sent, improbe finds nothing (the send waits for a token).
  std::optional<mpi::matched_message> early = mpi::improbe(g_left, tag);
  check(!early.has_value(), "improbe matched a message that was not sent yet");
  mpi::barrier();  // every rank looked before any sends
  for (int k = 0; k < n; ++k)
    hytask::spawn({.name = "mprobe"}, [&, k] {
      mpi::matched_message m = mpi::mprobe(g_left, tag);
      check(m.source() == g_left && m.tag() == tag, "mprobe's status");
      std::vector<int>& in = got[static_cast<std::size_t>(k)];
      in.assign(m.count<int>(), -1);
      const MPI_Status st = mpi::mrecv(in, m);
      check(m.handle == MPI_MESSAGE_NULL, "mrecv left the message's handle");
      check(st.MPI_SOURCE == g_left && st.MPI_TAG == tag, "mrecv's status");
    });
  hytask::spawn({.name = "send"}, [&] {
    for (int k = 0; k < n; ++k) {
      std::vector<int> out(static_cast<std::size_t>(length(k)));
      for (int i = 0; i < length(k); ++i) out[static_cast<std::size_t>(i)] = k * 1000000 + i;
      mpi::send(out, g_right, tag);
    }
  });
  hytask::wait_all();
  std::vector<int> seen(n, 0);
  for (int k = 0; k < n; ++k) {
    const std::vector<int>& in = got[static_cast<std::size_t>(k)];
    check(!in.empty(), "a task received nothing");
    const int which = in[0] / 1000000;
    check(which >= 0 && which < n && in.size() == static_cast<std::size_t>(length(which)),
          "a message of " + str(static_cast<long>(in.size())) + " ints: the probe's size was not its own");
    for (int i = 0; i < length(which); ++i)
      if (in[static_cast<std::size_t>(i)] != which * 1000000 + i) fail("message " + str(which) + " element " + str(i));
    ++seen[static_cast<std::size_t>(which)];
  }
  for (int k = 0; k < n; ++k) check(seen[static_cast<std::size_t>(k)] == 1, "message " + str(k) + " received " + str(seen[static_cast<std::size_t>(k)]) + " times");

  // improbe finds a message that is there, raw mrecv and imrecv receive it.
  g_where = "improbe, raw mrecv, imrecv";
  double value = 0.5 + g_rank;
  mpi::send(std::span(&value, 1), g_right, tag + 1);
  mpi::send(std::span(&value, 1), g_right, tag + 2);
  std::optional<mpi::matched_message> found;
  while (!(found = mpi::improbe(g_left, tag + 1))) {
  }
  check(found->count(MPI_DOUBLE) == 1 && found->count(MPI_BYTE) == 8, "improbe's message size");
  double in = -1;
  mpi::mrecv(&in, 1, MPI_DOUBLE, *found);
  check(in == 0.5 + g_left, "raw mrecv: " + std::to_string(in));
  try {
    mpi::mrecv(&in, 1, MPI_DOUBLE, *found);
    fail("no usage_error for a second mrecv of one message");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("already received") != std::string::npos, e.what());
  }
  mpi::matched_message second = mpi::mprobe(g_left, tag + 2);
  in = -1;
  mpi::request r = mpi::imrecv(std::span(&in, 1), second);
  r.wait();
  check(in == 0.5 + g_left && r.status().MPI_TAG == tag + 2, "imrecv");
}

// ---- persistent requests ---------------------------------------------------------------

void persistent() {
  g_where = "persistent send and receive, restarted";
  const int rounds = 6;
  std::vector<long> out(64), in(64, -1);
  {
    mpi::persistent_recv from_left(in, g_left, 80);
    mpi::persistent_send to_right(out, g_right, 80);
    check(from_left.native() != MPI_REQUEST_NULL && !from_left.active(), "a new persistent request");
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = g_rank * 10000L + round * 100L + static_cast<long>(i);
      long sum = -1;
      mpi::request r = from_left.start();
      // A start while this one is pending (the left rank's send waits for this rank's
      // token below, so the receive cannot have completed yet): refused.
      if (round == 0) {
        try {
          (void)from_left.start();
          fail("no usage_error for a start of an active persistent request");
        } catch (const hytask::usage_error& e) {
          check(std::string(e.what()).find("still pending") != std::string::npos, e.what());
        }
      }
      int token = round;
      mpi::send(std::span(&token, 1), g_left, 81);
      mpi::recv(std::span(&token, 1), g_right, 81);
      mpi::request s = to_right.start();
      hytask::spawn({.name = "consumer"}, [&] { sum = std::accumulate(in.begin(), in.end(), 0L); },
                    hytask::after(r));
      hytask::spawn({.name = "sender"}, [&s] { s.wait(); });  // suspends in the task
      hytask::wait_all();
      const long want = 64L * (g_left * 10000L + round * 100L) + 63L * 64 / 2;
      check(sum == want, "round " + str(round) + ": sum " + str(sum) + ", want " + str(want));
      check(r.status().MPI_SOURCE == g_left && r.status().MPI_TAG == 80, "the start's status");
      check(!from_left.active() && !to_right.active(), "a completed start still active");
    }
    // Moved: the new owner starts it; the old one refuses.
    mpi::persistent_recv moved = std::move(from_left);
    try {
      (void)from_left.start();
      fail("no usage_error for a start of a moved-from persistent request");
    } catch (const hytask::usage_error&) {
    }
    mpi::request r = moved.start();
    mpi::send(std::span(out), g_right, 80);
    r.wait();
    check(in[0] == g_left * 10000L + (rounds - 1) * 100L, "a moved persistent receive");
  }  // freed here (MPI_Request_free)

  // Inside a task, the objects themselves in the task (created, started, freed there).
  g_where = "persistent requests in a task";
  std::vector<int> got(3, -1);
  hytask::spawn({.name = "persistent task"}, [&] {
    std::vector<int> mine{g_rank, g_rank + 1, g_rank + 2};
    mpi::persistent_send s(mine, g_right, 82);
    mpi::persistent_recv r(got, g_left, 82);
    for (int round = 0; round < 3; ++round) {
      mpi::request a = r.start(), b = s.start();
      a.wait();
      b.wait();
    }
  });
  hytask::wait_all();
  check(got == std::vector<int>{g_left, g_left + 1, g_left + 2}, "persistent requests in a task");
}

// ---- wait_any, wait_some, test_any, test_some -----------------------------------------

// A loop of wait_any over many receives, each wait finding one completion: the runtime keeps
// one watch per request, not one per request and wait (which would be n²/2 of them: 8
// million, some 200 MB, for these 4000).
void many_waits() {
  g_where = "a loop of wait_any over 4000 receives";
  constexpr int n = 4000;
  std::vector<int> in(n, -1);
  std::vector<mpi::request> rs;
  for (int k = 0; k < n; ++k) rs.push_back(mpi::irecv(std::span(&in[static_cast<std::size_t>(k)], 1), g_left, 1000 + k));
  const long before = hytask_test::peak_rss_kib();
  hytask::spawn({.name = "sender"}, [] {
    for (int k = n - 1; k >= 0; --k) {  // one message per token, newest tag first
      int token = 0;
      mpi::recv(std::span(&token, 1), g_right, 999);
      int v = 100 * g_rank + k % 100;
      mpi::send(std::span(&v, 1), g_right, 1000 + k);
    }
  });
  hytask::spawn({.name = "waiter"}, [&] {
    int token = 1;
    for (int round = 0; round < n; ++round) {
      mpi::send(std::span(&token, 1), g_left, 999);
      std::optional<mpi::completion> c = mpi::wait_any(rs);
      check(c.has_value() && c->index == static_cast<std::size_t>(n - 1 - round),
            "wait_any reported request " + str(c ? static_cast<long>(c->index) : -1L) + " in round " + str(round));
    }
  });
  hytask::wait_all();
  for (int k = 0; k < n; ++k) check(in[static_cast<std::size_t>(k)] == 100 * g_left + k % 100, "message " + str(k));
  const long grown = hytask_test::peak_rss_kib() - before;
  // A sanitizer's shadow memory and bookkeeping grow with the program's (ThreadSanitizer:
  // 33-35 MiB here); the n²/2 watches would still take several hundred.
  const long bound_mib = hytask_test::sanitized() ? 128 : 32;
  check(before > 0 && grown < bound_mib * 1024,
        "the peak resident size grew by " + str(grown) + " KiB over the waits (bound: " + str(bound_mib) +
            " MiB)");
}

void completions() {
  g_where = "wait_any and wait_some";
  constexpr int n = 6;
  std::vector<int> in(n, -1);
  std::vector<mpi::request> rs;
  for (int k = 0; k < n; ++k) rs.push_back(mpi::irecv(std::span(&in[static_cast<std::size_t>(k)], 1), g_left, 90 + k));
  check(!mpi::test_any(rs).has_value() && mpi::test_some(rs).empty(),
        "test_any / test_some found a receive complete before anything was sent");
  check(!mpi::test(rs[0]), "test() of a pending receive");
  // The left rank sends in reverse order, one message per token from this rank.
  std::vector<int> order;
  hytask::spawn({.name = "sender"}, [] {
    for (int k = n - 1; k >= 0; --k) {
      int token = 0;
      mpi::recv(std::span(&token, 1), g_right, 99);
      int v = 100 * g_rank + k;
      mpi::send(std::span(&v, 1), g_right, 90 + k);
    }
  });
  hytask::spawn({.name = "waiter"}, [&] {
    int token = 1;
    for (int round = 0; round < n / 2; ++round) {  // wait_any, one message at a time
      mpi::send(std::span(&token, 1), g_left, 99);
      std::optional<mpi::completion> c = mpi::wait_any(rs);
      check(c.has_value(), "wait_any found no valid request");
      order.push_back(static_cast<int>(c->index));
      check(!rs[c->index].valid(), "wait_any did not release the request it reported");
      check(c->status.MPI_SOURCE == g_left && c->status.MPI_TAG == 90 + static_cast<int>(c->index),
            "wait_any's status");
    }
    for (int round = 0; round < n / 2; ++round) mpi::send(std::span(&token, 1), g_left, 99);
    std::size_t done = 0;
    while (done < n / 2) {
      std::vector<mpi::completion> cs = mpi::wait_some(rs);
      check(!cs.empty(), "wait_some returned nothing while requests were valid");
      for (const mpi::completion& c : cs) {
        check(!rs[c.index].valid(), "wait_some did not release a request it reported");
        order.push_back(static_cast<int>(c.index));
      }
      done += cs.size();
    }
    check(!mpi::wait_any(rs).has_value() && mpi::wait_some(rs).empty(),
          "wait_any / wait_some with no valid request left");
  });
  hytask::wait_all();
  for (int k = 0; k < n; ++k) check(in[static_cast<std::size_t>(k)] == 100 * g_left + k, "message " + str(k));
  // The first three came one at a time, newest tag first.
  check(order.size() == n && order[0] == n - 1 && order[1] == n - 2 && order[2] == n - 3,
        "wait_any's order: " + str(order.size() > 0 ? order[0] : -1));

  // test_any / test_some from main, polling until both messages are in.
  g_where = "test_any and test_some";
  std::vector<int> two(2, -1);
  std::vector<mpi::request> pair;
  pair.push_back(mpi::irecv(std::span(&two[0], 1), g_left, 97));
  pair.push_back(mpi::irecv(std::span(&two[1], 1), g_left, 98));
  const int a = g_rank, b = g_rank + 1;
  mpi::send(std::span(&a, 1), g_right, 97);
  mpi::send(std::span(&b, 1), g_right, 98);
  std::size_t got = 0;
  std::optional<mpi::completion> one;
  while (!(one = mpi::test_any(pair))) {
  }
  ++got;
  while (got < 2) got += mpi::test_some(pair).size();
  check(two[0] == g_left && two[1] == g_left + 1, "test_any / test_some data");
}

// ---- errors ----------------------------------------------------------------------------

void errors() {
  // A bad rank: errors name the call and the peer.
  g_where = "a bad rank";
  const int bad = g_size + 5;
  std::vector<int> buf(4);
  auto expect = [](const char* what, const char* call, int peer, const std::function<void()>& f) {
    try {
      f();
      fail(std::string("no mpi::error for ") + what);
    } catch (const mpi::error& e) {
      check(e.call() == call, std::string(what) + ": call " + e.call() + ", want " + call);
      check(peer < 0 || e.peer() == peer, std::string(what) + ": peer " + str(e.peer()));
      check(std::string(e.what()).find(call) != std::string::npos, std::string(what) + ": " + e.what());
    }
  };
  expect("persistent_send to a bad rank", "MPI_Send_init", bad, [&] { mpi::persistent_send s(buf, bad, 1); });
  expect("mprobe from a bad rank", "MPI_Improbe", bad, [&] { (void)mpi::mprobe(bad, 1); });
  expect("improbe from a bad rank", "MPI_Improbe", bad, [&] { (void)mpi::improbe(bad, 1); });
  // In a task: the exception reaches wait_all with the task's name.
  hytask::spawn({.name = "bad mprobe"}, [bad] { (void)mpi::mprobe(bad, 2); });
  try {
    hytask::wait_all();
    fail("no exception from a task's mprobe from a bad rank");
  } catch (const mpi::error& e) {
    check(e.call() == "MPI_Improbe" && std::string(e.what()).find("bad mprobe") != std::string::npos, e.what());
  }

  // Truncation, found at completion: mrecv, a persistent receive's start, wait_any.
  g_where = "truncation";
  std::vector<int> four{1, 2, 3, 4}, two(2);
  mpi::send(four, g_right, 3);
  mpi::matched_message m = mpi::mprobe(g_left, 3);
  expect("mrecv of 4 ints into 2", "MPI_Imrecv", g_left, [&] { mpi::mrecv(two, m); });
  {
    mpi::persistent_recv short_recv(two, g_left, 4);
    mpi::send(four, g_right, 4);
    expect("a persistent receive of 4 ints into 2", "MPI_Start", g_left, [&] { short_recv.start().wait(); });
  }
  mpi::send(four, g_right, 5);
  std::vector<mpi::request> rs;
  rs.push_back(mpi::irecv(two, g_left, 5));
  expect("wait_any on a truncated receive", "MPI_Irecv", g_left, [&] { (void)mpi::wait_any(rs); });
  check(!rs[0].valid(), "wait_any kept a failed request");
  // A scan with an operation MPI refuses for the type (MPI_LAND on a derived type? use a
  // null op): an error naming the collective.
  g_where = "a collective with MPI_OP_NULL";
  long v = 1, out = 0;
  expect("scan with MPI_OP_NULL", "MPI_Iscan", -1, [&] { mpi::scan(std::span(&v, 1), std::span(&out, 1), MPI_OP_NULL); });
  mpi::barrier();
}

// ---- cancellation ----------------------------------------------------------------------

// Tasks of a group suspended in mprobe, wait_any, wait_some and a persistent receive's start,
// none of which any rank matches: cancelling the group resumes each with task_cancelled.
void cancel() {
  g_where = "tasks in the new calls, cancelled with their group";
  const int peer = g_right;
  constexpr int tag = 300;  // nobody sends on 300-303 before the cancellation
  hytask::task_group g;
  std::atomic<int> posted{0}, cancelled{0}, completed{0};
  std::atomic<const char*> returned{""};
  int a = 0, b = 0, c = 0;
  auto run = [&](const char* name, std::function<void()> call) {
    hytask::spawn({.name = name, .group = &g}, [&, call] {
      posted++;
      try {
        call();
        completed++;
        returned = name;
      } catch (const hytask::task_cancelled&) {
        cancelled++;
        throw;
      }
    });
  };
  run("mprobe", [&] { (void)mpi::mprobe(peer, tag); });
  run("wait_any", [&] {
    std::vector<mpi::request> rs;
    rs.push_back(mpi::irecv(std::span(&a, 1), peer, tag + 1));
    (void)mpi::wait_any(rs);
  });
  run("wait_some", [&] {
    std::vector<mpi::request> rs;
    rs.push_back(mpi::irecv(std::span(&b, 1), peer, tag + 2));
    (void)mpi::wait_some(rs);
  });
  run("persistent_recv", [&] {
    mpi::persistent_recv r(std::span(&c, 1), peer, tag + 3);
    r.start().wait();
  });
  while (posted.load() < 4) hytask::this_task::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // suspended by now
  g.cancel();
  hytask::wait_all();
  check(cancelled.load() == 4, "of 4 tasks suspended in unmatched calls, " + str(cancelled.load()) +
                                   " threw task_cancelled (" + str(completed.load()) + " returned, " + returned.load() + ")");
  // The rank goes on: messages still flow (on a tag of their own: a neighbour may get here
  // before this rank's cancellation, and its message must not match the probe).
  int token = g_rank, got = -1;
  mpi::request r = mpi::irecv(std::span(&got, 1), g_left, tag + 10);
  mpi::send(std::span(&token, 1), g_right, tag + 10);
  r.wait();
  check(got == g_left, "a message after the cancellation");
}

// ---- suspension -------------------------------------------------------------------------

// On rank 0, a task blocks in each call; the call can complete only after rank 1 did its
// part, which rank 1 does only once the next task of rank 0 (spawned after the blocked one,
// on the same and only worker) sent it a go-ahead. A call that held the worker would hang
// (the guard reports it); one that suspends lets that task run first.
struct blocking_case {
  const char* name;
  std::function<void(int)> blocked;  // rank 0
  std::function<void(int)> matched;  // rank 1
};

void suspends() {
  if (g_rank > 1) return;
  int payload = 7, sink = 0;
  long one = 1, acc = 0;
  std::vector<blocking_case> cases = {
      {"scan", [&](int) { mpi::scan(std::span(&one, 1), std::span(&acc, 1), MPI_SUM, g_pair); },
       [&](int) { mpi::scan(std::span(&one, 1), std::span(&acc, 1), MPI_SUM, g_pair); }},
      {"exscan", [&](int) { mpi::exscan(std::span(&one, 1), std::span(&acc, 1), MPI_SUM, g_pair); },
       [&](int) { mpi::exscan(std::span(&one, 1), std::span(&acc, 1), MPI_SUM, g_pair); }},
      {"reduce_scatter_block",
       [&](int) {
         const int both[2] = {1, 1};
         mpi::reduce_scatter_block(std::span(both), std::span(&sink, 1), MPI_SUM, g_pair);
       },
       [&](int) {
         const int both[2] = {1, 1};
         mpi::reduce_scatter_block(std::span(both), std::span(&sink, 1), MPI_SUM, g_pair);
       }},
      {"neighbor_alltoall",
       [&](int) {
         const int out[2] = {1, 2};
         int in[2];
         mpi::neighbor_alltoall(std::span(out), std::span(in), g_pair_ring);
       },
       [&](int) {
         const int out[2] = {1, 2};
         int in[2];
         mpi::neighbor_alltoall(std::span(out), std::span(in), g_pair_ring);
       }},
      {"mprobe",
       [&](int t) {
         mpi::matched_message m = mpi::mprobe(1, t);
         mpi::mrecv(std::span(&sink, 1), m);
       },
       [&](int t) { mpi::send(std::span(&payload, 1), 0, t); }},
      {"mrecv (rendezvous)",
       [&](int t) {
         mpi::send(std::span(&payload, 1), 1, t);  // tells rank 1 to send after the go-ahead
         mpi::matched_message m = mpi::mprobe(1, t + 1000);
         std::vector<double> big(m.count<double>());
         mpi::mrecv(big, m);
       },
       [&](int t) {
         mpi::recv(std::span(&sink, 1), 0, t);
         std::vector<double> big(1 << 18, 1.0);
         mpi::send(big, 0, t + 1000);
       }},
      {"persistent_recv",
       [&](int t) {
         mpi::persistent_recv r(std::span(&sink, 1), 1, t);
         r.start().wait();
       },
       [&](int t) { mpi::send(std::span(&payload, 1), 0, t); }},
      {"persistent_send (synchronous-sized)",
       [&](int t) {
         std::vector<double> big(1 << 18, 2.0);  // 2 MiB: completes only once received
         mpi::persistent_send s(big, 1, t);
         s.start().wait();
       },
       [&](int t) {
         std::vector<double> big(1 << 18);
         mpi::recv(big, 0, t);
       }},
      {"wait_any",
       [&](int t) {
         std::vector<mpi::request> rs;
         rs.push_back(mpi::irecv(std::span(&sink, 1), 1, t));
         (void)mpi::wait_any(rs);
       },
       [&](int t) { mpi::send(std::span(&payload, 1), 0, t); }},
      {"wait_some",
       [&](int t) {
         std::vector<mpi::request> rs;
         rs.push_back(mpi::irecv(std::span(&sink, 1), 1, t));
         (void)mpi::wait_some(rs);
       },
       [&](int t) { mpi::send(std::span(&payload, 1), 0, t); }},
  };
  int tag = 200;
  for (const blocking_case& k : cases) {
    tag += 2;
    g_where = k.name;
    if (g_rank == 0) {
      std::atomic<bool> second_ran{false};
      bool second_first = false;
      hytask::spawn({.name = "blocked"}, [&, tag] {
        k.blocked(tag);
        second_first = second_ran.load();
      });
      hytask::spawn({.name = "go"}, [&] {
        second_ran = true;
        int go = 1;
        mpi::send(std::span(&go, 1), 1, 99);
      });
      hytask::wait_all();
      check(second_first, std::string(k.name) + " in a task did not let the next task run");
    } else {
      int go = 0;
      mpi::recv(std::span(&go, 1), 0, 99);
      k.matched(tag);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, void (*)()> all = {
      {"scans", scans},         {"reduce_scatters", reduce_scatters}, {"neighborhood", neighborhood},
      {"matched", matched},     {"persistent", persistent},           {"completions", completions},
      {"errors", errors},       {"suspends", suspends},               {"cancel", cancel},
      {"many_waits", many_waits},
  };
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& [name, f] : all) std::printf("%s\n", name.c_str());
    return 0;
  }
  hytask::runtime rt(argc, argv);
  g_rank = mpi::rank();
  g_size = mpi::size();
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  int provided = 0, is_main = 0;
  MPI_Query_thread(&provided);
  MPI_Is_thread_main(&is_main);
  g_plain_mpi = provided == MPI_THREAD_MULTIPLE || is_main;
  // Communicators the cases need (plain calls from main, before anything is pending, as
  // hytask::mpi::rank() makes in every mode).
  const int dims = g_size, periodic = 1;
  MPI_Cart_create(mpi::comm_world(), 1, &dims, &periodic, 0, &g_ring);
  // Ranks 0 and 1 in reverse order: world rank 0, blocked in `suspends`, is the pair's rank 1,
  // whose scan needs the other's contribution.
  MPI_Comm_split(mpi::comm_world(), g_rank < 2 ? 0 : MPI_UNDEFINED, -g_rank, &g_pair);
  if (g_pair != MPI_COMM_NULL) {
    const int two = 2;
    MPI_Cart_create(g_pair, 1, &two, &periodic, 0, &g_pair_ring);
  }
  std::vector<std::string> chosen(argv + 1, argv + argc);
  if (chosen.empty())
    for (const auto& [name, f] : all) chosen.push_back(name);
  if (g_size < 2) {
    std::fprintf(stderr, "mpi_calls: run on 2 or more ranks\n");
    return 2;
  }
  for (const std::string& name : chosen) {
    auto it = all.find(name);
    if (it == all.end()) {
      if (g_rank == 0) std::fprintf(stderr, "mpi_calls: unknown case '%s'\n", name.c_str());
      return 2;
    }
    g_case = it->first.c_str();
    {
      hang_guard guard(40, [] {
        std::fprintf(stderr, "FAILED: rank %d, mpi_calls %s (%s): hung for 40 s (a call held the worker?)\n",
                     g_rank, g_case, g_where.load());
        std::fflush(stderr);
        std::_Exit(3);
      });
      it->second();
      hytask::wait_all();
      int ok = 1, all_ok = 0;
      mpi::allreduce(std::span(&ok, 1), std::span(&all_ok, 1), MPI_MIN);
      if (g_rank == 0 && all_ok == 1) std::printf("mpi_calls %s: ok\n", g_case);
      std::fflush(stdout);
    }
  }
  return 0;
}
