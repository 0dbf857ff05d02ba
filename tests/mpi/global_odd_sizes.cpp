// PGAS objects whose ranks' parts are not a multiple of any alignment: global_array of 1-,
// 2-, 3- and 4-byte elements over sizes 1-17 and random ones, tiled_matrix with odd tile
// shapes and odd matrix sizes, and random ones. For each object: every rank writes its part
// through local(); every rank reads every location with get() in tasks; then every location
// is written by a rank that does not own it (put() in a task with out), and the owners
// check their parts and every rank reads everything again. Any location read or written at
// the wrong place is reported with its object, index, value and expected value. Every
// rank's block and every local tile must start on a 64-byte boundary (Open MPI's windows
// alone give 8 bytes past one).
//
//   global_odd_sizes [seed] [random objects]
//
// Prints "global_odd_sizes: ok (<objects> objects, <checks> checks)" on rank 0 when no
// rank found a wrong value; "FAILED" lines otherwise, and exits 1.
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int g_rank = 0, g_size = 1;
std::atomic<long> g_bad{0}, g_checks{0};

// The value of byte k of location `loc` in round `round` of object `obj`: distinct across
// neighbouring locations and rounds, never 0 (a fresh window reads 0).
unsigned char value(int obj, std::uint64_t loc, std::size_t k, int round) {
  const std::uint64_t h = (std::uint64_t(obj) * 1000003u + loc * 7919u + k * 131u + round * 17u) % 251u;
  return static_cast<unsigned char>(h + 1);
}

template <class T>
T element(int obj, std::uint64_t loc, int round) {
  T v{};
  auto* b = reinterpret_cast<unsigned char*>(&v);
  for (std::size_t k = 0; k < sizeof(T); ++k) b[k] = value(obj, loc, k, round);
  return v;
}

void expect(const void* got, int obj, std::uint64_t loc, std::size_t bytes, int round,
            const std::string& what) {
  ++g_checks;
  const auto* b = static_cast<const unsigned char*>(got);
  for (std::size_t k = 0; k < bytes; ++k)
    if (b[k] != value(obj, loc, k, round)) {
      if (g_bad++ < 20)
        std::fprintf(stderr, "global_odd_sizes: rank %d: FAILED: %s, object %d, location %llu, "
                     "byte %zu: %u, expected %u\n", g_rank, what.c_str(), obj,
                     static_cast<unsigned long long>(loc), k, b[k], value(obj, loc, k, round));
      return;
    }
}

using char3 = std::array<unsigned char, 3>;

void expect_aligned(const void* p, const std::string& what) {
  ++g_checks;
  const auto at = reinterpret_cast<std::uintptr_t>(p) % 64;
  if (at != 0 && g_bad++ < 20)
    std::fprintf(stderr, "global_odd_sizes: rank %d: FAILED: %s starts %zu bytes past a 64-byte boundary\n",
                 g_rank, what.c_str(), static_cast<std::size_t>(at));
}

template <class T>
void check_array(int obj, std::size_t n) {
  hytask::global_array<T> a(n);
  const std::string name = "global_array<" + std::to_string(sizeof(T)) + " bytes>(" +
                           std::to_string(n) + ")";
  auto mine = a.local();
  if (!mine.empty()) expect_aligned(mine.data(), name + ": this rank's block");
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = element<T>(obj, a.local_begin() + k, 0);
  hytask::wait_all();  // collective: every rank's part is written
  std::vector<T> got(n);
  for (std::size_t i = 0; i < n; ++i)
    hytask::spawn([&a, &got, i] { got[i] = a[i].get(); }, hytask::in(a[i]));
  hytask::wait_all();
  for (std::size_t i = 0; i < n; ++i) expect(&got[i], obj, i, sizeof(T), 0, name + ": get");
  // Round 1: location i is written by rank (owner + 1) mod P.
  for (std::size_t i = 0; i < n; ++i)
    if ((a.owner(i) + 1) % g_size == g_rank)
      hytask::spawn([&a, i, obj] { a[i].put(element<T>(obj, i, 1)); }, hytask::out(a[i]));
  hytask::wait_all();
  for (std::size_t k = 0; k < mine.size(); ++k)
    expect(&mine[k], obj, a.local_begin() + k, sizeof(T), 1, name + ": put, at the owner");
  for (std::size_t i = 0; i < n; ++i)
    hytask::spawn([&a, &got, i] { got[i] = a[i].get(); }, hytask::in(a[i]));
  hytask::wait_all();
  for (std::size_t i = 0; i < n; ++i) expect(&got[i], obj, i, sizeof(T), 1, name + ": get after put");
}

template <class T>
void check_matrix(int obj, std::size_t m, std::size_t n, std::size_t mb, std::size_t nb) {
  hytask::tiled_matrix<T> A(m, n, mb, nb);
  const std::string name = "tiled_matrix<" + std::to_string(sizeof(T)) + " bytes>(" +
                           std::to_string(m) + "x" + std::to_string(n) + ", tiles " +
                           std::to_string(mb) + "x" + std::to_string(nb) + ")";
  const std::size_t mt = A.tile_rows(), nt = A.tile_cols(), tile = mb * nb * sizeof(T);
  auto fill = [&](T* p, std::uint64_t loc, int round) {
    auto* b = reinterpret_cast<unsigned char*>(p);
    for (std::size_t k = 0; k < tile; ++k) b[k] = value(obj, loc, k, round);
  };
  for (std::size_t i = 0; i < mt; ++i)
    for (std::size_t j = 0; j < nt; ++j)
      if (T* p = A.tile(i, j).local_data()) {
        expect_aligned(p, name + ": tile (" + std::to_string(i) + ", " + std::to_string(j) + ")");
        fill(p, i * nt + j, 0);
      }
  hytask::wait_all();
  std::vector<std::vector<T>> got(mt * nt, std::vector<T>(mb * nb));
  auto read_all = [&] {
    for (std::size_t i = 0; i < mt; ++i)
      for (std::size_t j = 0; j < nt; ++j)
        hytask::spawn([&A, &got, i, j, nt] { A.tile(i, j).get(got[i * nt + j].data()); },
                      hytask::in(A.tile(i, j)));
    hytask::wait_all();
  };
  read_all();
  for (std::uint64_t t = 0; t < mt * nt; ++t) expect(got[t].data(), obj, t, tile, 0, name + ": get");
  std::vector<std::vector<T>> out(mt * nt, std::vector<T>(mb * nb));
  for (std::size_t i = 0; i < mt; ++i)
    for (std::size_t j = 0; j < nt; ++j)
      if ((A.tile(i, j).owner() + 1) % g_size == g_rank) {
        fill(out[i * nt + j].data(), i * nt + j, 1);
        hytask::spawn([&A, &out, i, j, nt] { A.tile(i, j).put(out[i * nt + j].data()); },
                      hytask::out(A.tile(i, j)));
      }
  hytask::wait_all();
  for (std::size_t i = 0; i < mt; ++i)
    for (std::size_t j = 0; j < nt; ++j)
      if (const T* p = A.tile(i, j).local_data()) expect(p, obj, i * nt + j, tile, 1, name + ": put, at the owner");
  read_all();
  for (std::uint64_t t = 0; t < mt * nt; ++t) expect(got[t].data(), obj, t, tile, 1, name + ": get after put");
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned seed = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 1;
  const int randoms = argc > 2 ? std::atoi(argv[2]) : 6;
  hytask::runtime rt;
  g_rank = hytask::mpi::rank();
  g_size = hytask::mpi::size();
  int obj = 0;
  for (std::size_t n : {1, 2, 3, 4, 5, 7, 13, 17}) {
    check_array<unsigned char>(++obj, n);
    check_array<std::uint16_t>(++obj, n);
    check_array<char3>(++obj, n);
    check_array<std::int32_t>(++obj, n);
  }
  check_matrix<std::int32_t>(++obj, 7, 5, 3, 1);
  check_matrix<unsigned char>(++obj, 5, 9, 1, 3);
  check_matrix<std::uint16_t>(++obj, 10, 10, 3, 3);
  check_matrix<char3>(++obj, 6, 7, 2, 5);
  // The same seed on every rank: the objects are collective.
  std::mt19937 g(seed);
  for (int k = 0; k < randoms; ++k) {
    check_array<char3>(++obj, 1 + g() % 50);
    check_array<std::int32_t>(++obj, 1 + g() % 50);
    const std::size_t mb = 1 + g() % 5, nb = 1 + g() % 5;
    check_matrix<unsigned char>(++obj, 1 + g() % 20, 1 + g() % 20, mb, nb);
    check_matrix<std::int32_t>(++obj, 1 + g() % 20, 1 + g() % 20, nb, mb);
  }
  long bad = g_bad.load(), checks = g_checks.load();
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, hytask::mpi::comm_world());
  MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_LONG, MPI_SUM, hytask::mpi::comm_world());
  if (g_rank == 0) {
    if (bad == 0) std::printf("global_odd_sizes: ok (%d objects, %ld checks)\n", obj, checks);
    else std::printf("global_odd_sizes: FAILED (%ld wrong of %ld checks)\n", bad, checks);
  }
  return bad == 0 ? 0 : 1;
}
