// Each kind of global dependency across ranks, and copyin (issue 17), one scenario per run:
//   raw        a write of phase 0 (slow, remote put) is seen by the readers of phase 1
//   war        readers of phase 0 (slow) see the old value; the writer of phase 1 waits
//   waw        the writer of phase 1 runs after the (slow) writer of phase 0
//   dominant   two writes by one rank in phase 0: phase 1 reads the last one, after it
//   in_in      readers of one phase on every rank run at the same time (a ring of messages
//              among them, with a deadline, fails if any waits for another)
//   copyin     many tasks of one phase copy one tile into one buffer: one transfer; the next
//              phase's writer of the tile waits for the transfer, not for the readers (they
//              wait for a message that writer sends); the readers still see the old data
//   copyin_r   copyin_r of a local tile copies nothing and reads in place; of a remote one,
//              one transfer; copyin of a local tile copies (a memcpy)
//   remote_first  a task with a remote access starts before ordinary tasks spawned before it
//              (one worker), and a task type that had a successor on another rank is
//              learned: in the next epoch its task starts first too
//   any_phase  dependencies bound to no phase (hytask::any_phase): rank 0's task runs
//              before phase 1 is matched (rank 1 waits for its message before fencing,
//              which a phase-bound task would deadlock on); a phase-bound access spawned
//              after an unphased one of the same rank waits for it, and another rank's read
//              of the next phase sees both; tasks in a task declare them on a remote element
//              and are ordered among themselves
//   buffer     a copyin buffer too small for the tile: usage_error on every rank (rank 0
//              prints "caught: <message>" once every rank caught it)
// Each prints "global_kinds <scenario>: ok" on rank 0 when every rank checked its part; a
// failed check prints FAILED and the reason on its rank.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int g_rank = 0, g_size = 1;
std::atomic<int> g_bad{0};

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_bad;
  std::fprintf(stderr, "global_kinds: rank %d: FAILED: %s\n", g_rank, what.c_str());
}

// Waits for r inside a task, yielding, for at most `seconds`: a dependency that should not
// exist would keep the message from ever being sent, and this ends the job with the reason
// instead of hanging.
void wait_or_fail(hytask::mpi::request& r, const char* what, int seconds = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!r.test()) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "global_kinds: rank %d: FAILED: %s did not arrive within %d s: a task "
                   "waited for one it must not wait for\n", g_rank, what, seconds);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    hytask::this_task::yield();
  }
}

// Element x of a global_array<long> of 4 elements per rank, owned by `owner`.
std::size_t elem_of(int owner, std::size_t k = 0) { return static_cast<std::size_t>(owner) * 4 + k; }

void raw() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  const int owner = g_size - 1;
  auto x = a[elem_of(owner)];
  if (g_rank == 0)
    hytask::spawn([x] { sleep_ms(60); x.put(42); }, hytask::out(x));
  hytask::fence();
  long seen = -1;
  if (g_rank != 0 || g_size == 1) hytask::spawn([x, &seen] { seen = x.get(); }, hytask::in(x));
  hytask::wait_all();
  if (g_rank != 0 || g_size == 1) check(seen == 42, "raw: the reader saw " + std::to_string(seen));
}

void war() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  auto x = a[elem_of(g_size > 1 ? 1 : 0)];
  long seen = -1;
  if (g_rank != 0 || g_size == 1)
    hytask::spawn([x, &seen] { sleep_ms(60); seen = x.get(); }, hytask::in(x));
  hytask::fence();
  if (g_rank == 0) hytask::spawn([x] { x.put(99); }, hytask::out(x));
  hytask::wait_all();
  if (g_rank != 0 || g_size == 1) check(seen == 7, "war: the reader saw " + std::to_string(seen));
  if (x.is_local()) check(x.get() == 99, "war: the final value is " + std::to_string(x.get()));
}

void waw() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  auto x = a[elem_of(0)];
  if (g_rank == 0) hytask::spawn([x] { sleep_ms(60); x.put(1); }, hytask::out(x));
  hytask::fence();
  if (g_rank == g_size - 1) hytask::spawn([x] { x.put(2); }, hytask::out(x));
  hytask::wait_all();
  if (x.is_local()) check(x.get() == 2, "waw: the final value is " + std::to_string(x.get()));
}

void dominant() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  auto x = a[elem_of(g_size - 1, 1)];
  if (g_rank == 0) {
    hytask::spawn([x] { sleep_ms(30); x.put(1); }, hytask::out(x));
    hytask::spawn([x] { sleep_ms(30); x.put(x.get() * 10 + 2); }, hytask::inout(x));
  }
  hytask::fence();
  long seen = -1;
  if (g_rank != 0 || g_size == 1) hytask::spawn([x, &seen] { seen = x.get(); }, hytask::in(x));
  hytask::wait_all();
  if (g_rank != 0 || g_size == 1)
    check(seen == 12, "dominant: the reader saw " + std::to_string(seen) + ", not the last write");
}

void in_in() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  auto x = a[elem_of(0)];
  if (g_rank == 0) hytask::spawn([x] { x.put(5); }, hytask::out(x));
  hytask::fence();
  // Every rank reads x; each reader passes a token to the next rank's reader and waits for
  // the previous one's: only readers running at the same time can complete the ring.
  long seen = -1;
  hytask::spawn(
      [x, &seen] {
        seen = x.get();
        long token = 0, mine = g_rank;
        auto r = hytask::mpi::irecv(&token, 1, MPI_LONG, (g_rank + g_size - 1) % g_size, 71);
        auto s = hytask::mpi::isend(&mine, 1, MPI_LONG, (g_rank + 1) % g_size, 71);
        wait_or_fail(r, "in_in: the previous rank's reader's token");
        s.wait();
        check(token == (g_rank + g_size - 1) % g_size, "in_in: a wrong token");
      },
      hytask::in(x));
  hytask::wait_all();
  check(seen == 5, "in_in: the reader saw " + std::to_string(seen));
}

void any_phase() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  hytask::fence();  // phase 1: its phase-bound tasks wait until every rank has fenced it
  // 1. Not gated by the phase: rank 1's main waits for the message before its fence.
  if (g_rank == 0)
    hytask::spawn([&a] { long v = a.lbegin()[0]; hytask::mpi::send(&v, 1, MPI_LONG, 1, 72); },
                  hytask::in(a[elem_of(0)], hytask::any_phase));
  if (g_rank == 1) {
    long token = 0;
    auto r = hytask::mpi::irecv(&token, 1, MPI_LONG, 0, 72);
    wait_or_fail(r, "any_phase: the message of rank 0's unphased task (sent before rank 1's fence)");
    check(token == 7, "any_phase: rank 0's unphased reader sent " + std::to_string(token));
  }
  // 2. Spawn order with this rank's phase-bound accesses, and through them other ranks'.
  const std::size_t y = elem_of(0, 1);
  if (g_rank == 0) {
    hytask::spawn([&a] { sleep_ms(50); a.lbegin()[1] = 5; }, hytask::inout(a[y], hytask::any_phase));
    hytask::spawn([&a] { a.lbegin()[1] += 1; }, hytask::inout(a[y]));
  }
  hytask::fence();
  long seen = -1;
  if (g_rank == 1) hytask::spawn([&a, &seen, y] { seen = a[y].get(); }, hytask::in(a[y]));
  // 3. In a task: its children order their accesses to another rank's element (which only
  // this rank touches in this phase).
  const std::size_t z = elem_of((g_rank + 1) % g_size, 2);
  long nested = -1;
  hytask::spawn([&a, &nested, z] {
    hytask::spawn([&a, z] { sleep_ms(30); a[z].put(100 + g_rank); }, hytask::out(a[z], hytask::any_phase));
    hytask::spawn([&a, &nested, z] { nested = a[z].get(); }, hytask::in(a[z], hytask::any_phase));
    hytask::wait_all();
  });
  hytask::wait_all();
  if (g_rank == 1) check(seen == 6, "any_phase: rank 1 read " + std::to_string(seen) + " of rank 0's element, not 6");
  check(nested == 100 + g_rank, "any_phase: the nested reader saw " + std::to_string(nested) +
                                    ", not its sibling's " + std::to_string(100 + g_rank));
  check(a.local()[2] == 100 + (g_rank + g_size - 1) % g_size,
        "any_phase: element 2 of this rank holds " + std::to_string(a.local()[2]));
}

constexpr std::size_t tmb = 4, tnb = 3;

void fill_tile(hytask::tiled_matrix<long>& m, std::size_t i, std::size_t j, long v) {
  if (long* d = m.tile(i, j).local_data())
    for (std::size_t k = 0; k < tmb * tnb; ++k) d[k] = v + static_cast<long>(k);
}
bool tile_is(const long* d, long v) {
  for (std::size_t k = 0; k < tmb * tnb; ++k)
    if (d[k] != v + static_cast<long>(k)) return false;
  return true;
}

void copyin() {
  // Tile (0, 0) on rank 0; tasks on the other ranks copy it.
  hytask::tiled_matrix<long> m(tmb * 2, tnb * 2, tmb, tnb, 1, g_size);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) fill_tile(m, i, j, 0);
  hytask::wait_all();
  auto t = m.tile(0, 0);
  const bool reader = g_rank != 0 || g_size == 1;
  const hytask::global_counters before = hytask::global_stats();
  if (t.is_local()) hytask::spawn([&m] { fill_tile(m, 0, 0, 500); }, hytask::out(t));
  hytask::fence();
  // Phase 1: ten readers share buf. The first waits for the message that the phase-2 writer
  // sends once it has overwritten the tile: if that writer waited for the readers (and not
  // only for the transfer), the message would never come.
  std::vector<long> buf(tmb * tnb, -1);
  constexpr int readers = 10;
  std::atomic<int> good{0};
  if (reader) {
    for (int k = 0; k < readers; ++k)
      hytask::spawn(
          [&buf, &good, k] {
            if (k == 0 && g_size > 1) {
              long note = 0;
              auto r = hytask::mpi::irecv(&note, 1, MPI_LONG, 0, 72);
              wait_or_fail(r, "copyin: the note of the next phase's writer");
            }
            if (tile_is(buf.data(), 500)) ++good;
          },
          hytask::copyin(t, buf));
  }
  hytask::fence();
  // Phase 2: the owner overwrites the tile and tells the readers.
  if (t.is_local())
    hytask::spawn(
        [&m] {
          fill_tile(m, 0, 0, 600);
          long note = 1;
          for (int r = 1; r < g_size; ++r) hytask::mpi::send(&note, 1, MPI_LONG, r, 72);
        },
        hytask::out(t));
  hytask::fence();
  // Phase 3: a copyin into the same buffer brings the new tile, after the readers above.
  long after_write = 0;
  if (reader)
    hytask::spawn([&buf, &after_write] { after_write = tile_is(buf.data(), 600) ? 1 : 0; },
                  hytask::copyin(t, buf.data()));
  hytask::wait_all();
  const hytask::global_counters c = hytask::global_stats();
  if (reader) {
    check(good == readers, "copyin: " + std::to_string(good.load()) + " of " +
                               std::to_string(readers) + " readers saw the tile of phase 0");
    check(after_write == 1, "copyin: phase 3 did not see the tile of phase 2");
    check(c.transfers - before.transfers == 2,
          "copyin: " + std::to_string(c.transfers - before.transfers) +
              " transfers for two phases of readers (want 2: one per phase)");
    check(c.copyins_shared - before.copyins_shared == readers - 1,
          "copyin: " + std::to_string(c.copyins_shared - before.copyins_shared) +
              " copyins shared a transfer (want " + std::to_string(readers - 1) + ")");
  } else {
    check(c.transfers == before.transfers, "copyin: the owner transferred");
  }
}

void copyin_r() {
  hytask::tiled_matrix<long> m(tmb * 2, tnb * 2, tmb, tnb, 1, g_size);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) fill_tile(m, i, j, 100 * static_cast<long>(1 + i * 2 + j));
  hytask::wait_all();
  const hytask::global_counters before = hytask::global_stats();
  auto mine = m.tile(0, static_cast<std::size_t>(g_rank % 2));  // local where g_size <= 2
  auto other = m.tile(0, static_cast<std::size_t>((g_rank + 1) % 2));
  std::vector<long> b_local(tmb * tnb, -1), b_other(tmb * tnb, -1), b_copy(tmb * tnb, -1);
  int ok_local = 0, ok_other = 0, ok_copy = 0;
  const long v_mine = 100 * static_cast<long>(1 + g_rank % 2);
  const long v_other = 100 * static_cast<long>(1 + (g_rank + 1) % 2);
  hytask::spawn([&] { ok_local = tile_is(mine.local_or(b_local.data()), v_mine); },
                hytask::copyin_r(mine, b_local));
  hytask::spawn([&] { ok_other = tile_is(other.local_or(b_other.data()), v_other); },
                hytask::copyin_r(other, b_other));
  hytask::spawn([&] { ok_copy = tile_is(b_copy.data(), v_mine); }, hytask::copyin(mine, b_copy));
  hytask::wait_all();
  const hytask::global_counters c = hytask::global_stats();
  check(ok_local == 1 && ok_other == 1 && ok_copy == 1, "copyin_r: a task read wrong data");
  if (mine.is_local()) check(b_local[0] == -1, "copyin_r: a local tile was copied");
  // copyin's own, and each copyin_r of a remote tile
  const std::uint64_t want = 1 + (mine.is_local() ? 0 : 1) + (other.is_local() ? 0 : 1);
  check(c.transfers - before.transfers == want,
        "copyin_r: " + std::to_string(c.transfers - before.transfers) + " transfers (want " +
            std::to_string(want) + ")");
}

// A task type of its own, so that the runtime can learn it.
struct tile_writer {
  std::vector<int>* order;
  std::mutex* mu;
  void operator()() const {
    std::lock_guard lk(*mu);
    order->push_back(-1);
  }
};

void remote_first() {
  hytask::global_array<long> a(static_cast<std::size_t>(g_size) * 4);
  for (long& v : a.local()) v = 7;
  hytask::wait_all();
  std::mutex mu;
  std::vector<int> order;
  auto compute = [&](int k) {
    return [&, k] {
      sleep_ms(1);
      std::lock_guard lk(mu);
      order.push_back(k);
    };
  };
  auto position_of_marker = [&] {
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i] == -1) return static_cast<int>(i);
    return -2;
  };
  auto remote = a[elem_of((g_rank + 1) % g_size)];
  auto own = a[elem_of(g_rank, 1)];  // not x below
  // 1. At spawn: a task that reads another rank's element joins the communication class.
  for (int k = 0; k < 10; ++k) hytask::spawn(compute(k));
  hytask::spawn([&] {
    std::lock_guard lk(mu);
    order.push_back(-1);
  }, hytask::in(remote));
  hytask::wait_all();
  if (g_size > 1)
    check(position_of_marker() == 0, "remote_first: the task with a remote access started at " +
                                         std::to_string(position_of_marker()) + ", not first");
  // 2. Matching: a tile_writer on rank 0 whose element the next rank reads in the next phase
  // has a successor elsewhere; it is held (by an event that a task of phase 2 sets) until
  // that phase is matched, so that the edge is made while it has not completed.
  hytask::event hold;
  auto x = a[elem_of(0)];
  if (g_rank == 0) hytask::spawn(tile_writer{&order, &mu}, hytask::after(hold), hytask::out(x));
  hytask::fence();
  if (g_rank == 1 % g_size && g_size > 1) hytask::spawn([x] { (void)x.get(); }, hytask::in(x));
  hytask::fence();
  if (g_rank == 0) hytask::spawn([&hold] { hold.set(); }, hytask::inout(own));
  hytask::wait_all();
  // 3. The next epoch: tile_writer tasks now start in the communication class.
  order.clear();
  if (g_rank == 0) {
    for (int k = 0; k < 10; ++k) hytask::spawn(compute(k));
    hytask::spawn(tile_writer{&order, &mu}, hytask::out(x));
  }
  hytask::wait_all();
  if (g_rank == 0 && g_size > 1)
    check(position_of_marker() == 0, "remote_first: a learned task type started at " +
                                         std::to_string(position_of_marker()) + ", not first");
}

std::string g_caught;  // buffer: the message of the usage_error, printed once every rank caught one

void buffer() {
  hytask::tiled_matrix<long> m(tmb * 2, tnb * 2, tmb, tnb, 1, g_size);
  std::vector<long> small(tmb * tnb - 1);
  try {
    hytask::spawn([] {}, hytask::copyin(m.tile(0, 0), small));
    check(false, "buffer: a small buffer was accepted");
  } catch (const hytask::usage_error& e) {
    g_caught = e.what();
    check(g_caught.find("hytask::copyin: a buffer of 11 elements for a location of 12") != std::string::npos,
          "buffer: the message does not name the sizes: " + g_caught);
  }
  hytask::wait_all();
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  g_rank = hytask::mpi::rank();
  g_size = hytask::mpi::size();
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "raw") raw();
  else if (what == "war") war();
  else if (what == "waw") waw();
  else if (what == "dominant") dominant();
  else if (what == "in_in") in_in();
  else if (what == "copyin") copyin();
  else if (what == "copyin_r") copyin_r();
  else if (what == "remote_first") remote_first();
  else if (what == "any_phase") any_phase();
  else if (what == "buffer") buffer();
  else {
    std::fprintf(stderr, "global_kinds: unknown scenario '%s'\n", what.c_str());
    return 2;
  }
  int bad = g_bad.load(), all = 0;
  hytask::mpi::allreduce(&bad, &all, 1, MPI_INT, MPI_SUM);
  if (all != 0) {
    if (g_rank == 0) std::fprintf(stderr, "global_kinds %s: FAILED (%d failed checks)\n", what.c_str(), all);
    return 1;
  }
  // The caught message only now: every rank caught its usage_error (the test looks for it).
  if (g_rank == 0 && what == "buffer") std::printf("caught: %s\n", g_caught.c_str());
  if (g_rank == 0) std::printf("global_kinds %s: ok\n", what.c_str());
  return 0;
}
