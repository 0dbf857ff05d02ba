// Global task dependencies on real ranks (issue 17): random task graphs over a global_array
// and a tiled_matrix — random owners (the distribution), random in/out/inout, fences and
// wait_alls at random points, half of the reads as copyin into one buffer per location and
// rank (shared by a phase's readers, reused across phases) — run on every rank and checked against a sequential run of
// the same program: every task must read what the sequential order gives it (each rank
// checks its own tasks), and the final memory must be identical.
//
//   global_random [seed] [phases] [tasks per rank and phase]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <variant>
#include <vector>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

constexpr std::size_t elements = 23;      // global_array<long> locations
constexpr std::size_t tile_grid = 3;      // 3x3 tiles of a tiled_matrix<long>
constexpr std::size_t mb = 2, nb = 3;     // 7x8 matrix: edge tiles are partial
constexpr std::size_t locations = elements + tile_grid * tile_grid;

struct dep {
  std::size_t loc;
  hytask::access_mode mode;
  bool copy = false;  // an in as copyin into this rank's buffer of the location
};
struct task_spec {
  std::uint64_t uid;
  int rank;
  std::vector<dep> acc;
};
struct program {
  std::vector<std::vector<task_spec>> phases;  // every rank's tasks, in discovery order
  std::vector<bool> wait_after;                // wait_all (instead of a fence) after phase p
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// Conflict-free by construction: per phase, each location is either read by any rank or
// accessed (any mode) by one rank.
program generate(std::uint64_t seed, int ranks, int phases, int per_rank) {
  std::mt19937_64 g(seed);
  program p;
  std::uint64_t uid = 1;
  for (int ph = 0; ph < phases; ++ph) {
    std::vector<int> holder(locations);  // -1: read-only this phase
    for (auto& h : holder) h = g() % 3 == 0 ? -1 : static_cast<int>(g() % static_cast<std::uint64_t>(ranks));
    std::vector<task_spec> tasks;
    for (int r = 0; r < ranks; ++r)
      for (int k = 0; k < per_rank; ++k) {
        task_spec t{uid++, r, {}};
        const int n = 1 + static_cast<int>(g() % 3);
        for (int a = 0; a < n; ++a) {
          const std::size_t loc = g() % locations;
          bool dup = false;
          for (const dep& x : t.acc) dup |= x.loc == loc;
          if (dup) continue;
          hytask::access_mode m = hytask::access_mode::in;
          if (holder[loc] == r) m = static_cast<hytask::access_mode>(g() % 3);
          else if (holder[loc] != -1) continue;  // another rank's location this phase
          t.acc.push_back({loc, m, m == hytask::access_mode::in && g() % 2 == 0});
        }
        tasks.push_back(std::move(t));
      }
    p.phases.push_back(std::move(tasks));
    p.wait_after.push_back(g() % 7 == 0);
  }
  return p;
}

// What a task does: read its in/inout locations (the first element of a tile stands for
// it; a copyin reads its buffer), write mix(uid, reads) + loc to its out/inout locations.
// Returns the signature.
template <class Read, class Write>
std::uint64_t execute(const task_spec& t, Read&& read, Write&& write) {
  std::uint64_t h = t.uid;
  for (const dep& a : t.acc)
    if (a.mode != hytask::access_mode::out)
      h = mix(h, static_cast<std::uint64_t>(read(a.loc, a.copy)));
  for (const dep& a : t.acc)
    if (a.mode != hytask::access_mode::in) write(a.loc, static_cast<long>(h + a.loc));
  return h;
}

// A global access or a copyin, chosen at run time.
struct any_dep {
  std::variant<hytask::detail::global_access, hytask::detail::copyin_access> v;
  void hytask_prepare() const {
    if (auto* c = std::get_if<hytask::detail::copyin_access>(&v)) c->hytask_prepare();
  }
  void apply(hytask::detail::spawn_context& ctx) const {
    std::visit([&](const auto& d) { d.apply(ctx); }, v);
  }
};

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 7;
  const int phases = argc > 2 ? std::atoi(argv[2]) : 30;
  const int per_rank = argc > 3 ? std::atoi(argv[3]) : 6;
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const program prog = generate(seed, size, phases, per_rank);

  // The sequential run: phase by phase, rank by rank (ranks' tasks of one phase commute).
  std::vector<long> oracle(locations, 0);
  std::vector<std::uint64_t> want_sig;
  for (const auto& ph : prog.phases)
    for (const task_spec& t : ph) {
      const std::uint64_t s = execute(t, [&](std::size_t l, bool) { return oracle[l]; },
                                      [&](std::size_t l, long v) { oracle[l] = v; });
      if (want_sig.size() <= t.uid) want_sig.resize(t.uid + 1);
      want_sig[t.uid] = s;
    }

  hytask::global_array<long> a(elements);
  hytask::tiled_matrix<long> m(7, 8, mb, nb);
  for (long& x : a.local()) x = 0;
  for (std::size_t i = 0; i < tile_grid; ++i)
    for (std::size_t j = 0; j < tile_grid; ++j)
      if (long* d = m.tile(i, j).local_data())
        for (std::size_t k = 0; k < mb * nb; ++k) d[k] = 0;
  hytask::wait_all();  // everyone's memory is initialised before any task touches it

  std::vector<std::uint64_t> got_sig(want_sig.size(), 0);
  // copyin buffers: one per location on each rank, shared by that phase's readers.
  std::vector<std::vector<long>> copies(locations);
  for (std::size_t l = 0; l < locations; ++l) copies[l].assign(l < elements ? 1 : mb * nb, -1);
  auto read = [&](std::size_t l, bool copy) -> long {
    if (copy) return copies[l][0];
    if (l < elements) return a[l].get();
    std::vector<long> tile(mb * nb);
    m.tile((l - elements) / tile_grid, (l - elements) % tile_grid).get(tile.data());
    return tile[0];
  };
  auto write = [&](std::size_t l, long v) {
    if (l < elements) {
      a[l].put(v);
      return;
    }
    std::vector<long> tile(mb * nb, v);
    m.tile((l - elements) / tile_grid, (l - elements) % tile_grid).put(tile.data());
  };
  for (std::size_t p = 0; p < prog.phases.size(); ++p) {
    for (const task_spec& t : prog.phases[p]) {
      if (t.rank != rank) continue;
      std::vector<any_dep> deps;
      for (const dep& x : t.acc) {
        if (x.loc < elements) {
          if (x.copy) deps.push_back({hytask::copyin(a[x.loc], copies[x.loc])});
          else deps.push_back({a[x.loc].hytask_access(x.mode)});
        } else {
          auto tile = m.tile((x.loc - elements) / tile_grid, (x.loc - elements) % tile_grid);
          if (x.copy) deps.push_back({hytask::copyin(tile, copies[x.loc])});
          else deps.push_back({tile.hytask_access(x.mode)});
        }
      }
      const task_spec* tp = &t;
      auto body = [&, tp] { got_sig[tp->uid] = execute(*tp, read, write); };
      switch (deps.size()) {
        case 0: hytask::spawn(body); break;
        case 1: hytask::spawn(body, deps[0]); break;
        case 2: hytask::spawn(body, deps[0], deps[1]); break;
        default: hytask::spawn(body, deps[0], deps[1], deps[2]); break;
      }
    }
    if (prog.wait_after[p]) hytask::wait_all();
    else hytask::fence();
  }
  hytask::wait_all();

  int bad = 0;
  for (const auto& ph : prog.phases)
    for (const task_spec& t : ph)
      if (t.rank == rank && got_sig[t.uid] != want_sig[t.uid]) {
        if (bad++ < 5)
          std::fprintf(stderr, "global_random: rank %d: task %llu read other values than in the "
                       "sequential run\n", rank, static_cast<unsigned long long>(t.uid));
      }
  const std::size_t first = a.local_begin();
  for (std::size_t k = 0; k < a.local().size(); ++k)
    if (a.local()[k] != oracle[first + k]) {
      if (bad++ < 10)
        std::fprintf(stderr, "global_random: rank %d: element %zu is %ld, sequentially %ld\n", rank,
                     first + k, a.local()[k], oracle[first + k]);
    }
  for (std::size_t i = 0; i < tile_grid; ++i)
    for (std::size_t j = 0; j < tile_grid; ++j)
      if (const long* d = m.tile(i, j).local_data())
        for (std::size_t k = 0; k < mb * nb; ++k)
          if (d[k] != oracle[elements + i * tile_grid + j]) {
            if (bad++ < 10)
              std::fprintf(stderr, "global_random: rank %d: tile (%zu, %zu) holds %ld, sequentially %ld\n",
                           rank, i, j, d[k], oracle[elements + i * tile_grid + j]);
            break;
          }
  int all = 0;
  hytask::mpi::allreduce(&bad, &all, 1, MPI_INT, MPI_SUM);
  if (all != 0) {
    if (rank == 0) std::fprintf(stderr, "global_random: FAIL (%d mismatches)\n", all);
    return 1;
  }
  if (rank == 0)
    std::printf("global_random: %d ranks, %d phases, %d tasks per rank and phase: identical to the "
                "sequential run\n", size, phases, per_rank);
  return 0;
}
