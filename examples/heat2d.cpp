// A 2-D heat stencil on global dependencies (seed 001 ch. 2, issue 17): the grid is a
// tiled_matrix distributed 2-D block-cyclic; every time step is a phase; a tile's task reads
// its neighbours' edges with copyin_r — the runtime moves the halos, nobody writes a
// message — and steps pipeline across phases: a tile starts step t + 1 as soon as it and its
// neighbours have finished step t, not when the whole grid has.
//
//   mpiexec -n 4 heat2d [--n 512] [--tile 64] [--steps 50] [-P p -Q q] [--no-check]
//
// Each tile keeps, beside its points (grid U), its four edges in a tile of its own (grid E:
// top row, bottom row, left column, right column), so that a halo transfer moves 4·tile
// values, not tile². U and E are double-buffered by step parity. The result is compared
// with a sequential run of the same arithmetic, point by point: bit-identical.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

constexpr double k_diffusion = 0.2;

// The one expression every run uses for a point.
inline double update(double u, double n, double s, double w, double e) {
  return u + k_diffusion * ((n + s) + (w + e) - 4.0 * u);
}

double initial(std::size_t r, std::size_t c, std::size_t n) {
  const double x = static_cast<double>(r) / static_cast<double>(n);
  const double y = static_cast<double>(c) / static_cast<double>(n);
  return std::sin(7.0 * x) * std::cos(5.0 * y) + ((r * 31 + c * 17) % 11) * 0.01;
}

struct options {
  std::size_t n = 512, tile = 64, steps = 50;
  int p = 0, q = 0;
  bool check = true;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "heat2d: %s\nusage: heat2d [--n N] [--tile T] [--steps S] [-P p -Q q] [--no-check]\n",
               why.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  auto number = [&](int& i) { return example::option_value("heat2d", argc, argv, i, 0, 1L << 40); };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n") o.n = static_cast<std::size_t>(number(i));
    else if (a == "--tile") o.tile = static_cast<std::size_t>(number(i));
    else if (a == "--steps") o.steps = static_cast<std::size_t>(number(i));
    else if (a == "-P") o.p = static_cast<int>(number(i));
    else if (a == "-Q") o.q = static_cast<int>(number(i));
    else if (a == "--no-check") o.check = false;
    else usage("unknown option '" + a + "'");
  }
  if (o.n == 0 || o.tile == 0) usage("--n and --tile must be at least 1");
  return o;
}

// Edges of a tile inside its E tile of 4·T values.
enum edge { top = 0, bottom = 1, left = 2, right = 3 };

class heat {
 public:
  explicit heat(const options& o)
      : o_(o),
        nt_((o.n + o.tile - 1) / o.tile),
        u_{hytask::tiled_matrix<double>(o.n, o.n, o.tile, o.tile, o.p, o.q),
           hytask::tiled_matrix<double>(o.n, o.n, o.tile, o.tile, o.p, o.q)},
        e_{edges_matrix(), edges_matrix()} {}

  void initialise() {
    for (std::size_t i = 0; i < nt_; ++i)
      for (std::size_t j = 0; j < nt_; ++j)
        if (double* d = u_[0].tile(i, j).local_data()) {
          for (std::size_t c = 0; c < u_[0].tile_width(j); ++c)
            for (std::size_t r = 0; r < u_[0].tile_height(i); ++r)
              d[r + c * o_.tile] = initial(i * o_.tile + r, j * o_.tile + c, o_.n);
          write_edges(i, j, d, e_[0].tile(i, j).local_data());
          halos_.emplace_back(i, j, o_.tile);
        }
  }

  // Step t reads parity t % 2 and writes the other one; one phase per step.
  void run() {
    for (std::size_t t = 0; t < o_.steps; ++t) {
      const std::size_t cur = t % 2, nxt = 1 - cur;
      for (tile_halos& h : halos_) spawn_tile(h, cur, nxt);
      hytask::fence();
    }
    hytask::wait_all();
  }

  // Compares this rank's tiles with the sequential run; returns the mismatching points.
  long compare(const std::vector<double>& seq) const {
    const auto& u = u_[o_.steps % 2];
    long bad = 0;
    for (const tile_halos& h : halos_) {
      const double* d = u.tile(h.i, h.j).local_data();
      for (std::size_t c = 0; c < u.tile_width(h.j); ++c)
        for (std::size_t r = 0; r < u.tile_height(h.i); ++r) {
          const double want = seq[(h.i * o_.tile + r) * o_.n + h.j * o_.tile + c];
          if (std::memcmp(&d[r + c * o_.tile], &want, sizeof want) != 0) ++bad;
        }
    }
    return bad;
  }

  std::size_t local_tiles() const { return halos_.size(); }
  int grid_rows() const { return u_[0].grid_rows(); }
  int grid_cols() const { return u_[0].grid_cols(); }

 private:
  // copyin_r buffers of one local tile: per step parity, its four neighbours' edge tiles.
  struct tile_halos {
    tile_halos(std::size_t ii, std::size_t jj, std::size_t t) : i(ii), j(jj) {
      for (auto& parity : buf)
        for (auto& b : parity) b.assign(4 * t, 0.0);
    }
    std::size_t i, j;
    std::vector<double> buf[2][4];  // [parity][north, south, west, east]
  };

  hytask::tiled_matrix<double> edges_matrix() const {
    return hytask::tiled_matrix<double>(nt_ * 4 * o_.tile, nt_, 4 * o_.tile, 1, o_.p, o_.q);
  }

  void write_edges(std::size_t i, std::size_t j, const double* d, double* e) const {
    const std::size_t h = u_[0].tile_height(i), w = u_[0].tile_width(j), t = o_.tile;
    for (std::size_t c = 0; c < w; ++c) {
      e[top * t + c] = d[0 + c * t];
      e[bottom * t + c] = d[(h - 1) + c * t];
    }
    for (std::size_t r = 0; r < h; ++r) {
      e[left * t + r] = d[r];
      e[right * t + r] = d[r + (w - 1) * t];
    }
  }

  void spawn_tile(tile_halos& h, std::size_t cur, std::size_t nxt) {
    const std::size_t i = h.i, j = h.j;
    std::vector<hytask::detail::copyin_access> halo;
    // Neighbours outside the grid are the fixed boundary (0); a halo that is not there is
    // represented by a null pointer in the task.
    const bool has[4] = {i > 0, i + 1 < nt_, j > 0, j + 1 < nt_};
    const std::size_t ni[4] = {i - 1, i + 1, i, i};
    const std::size_t nj[4] = {j, j, j - 1, j + 1};
    const double* src[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int d = 0; d < 4; ++d)
      if (has[d]) {
        auto ref = e_[cur].tile(ni[d], nj[d]);
        halo.push_back(hytask::copyin_r(ref, h.buf[cur][d]));
        src[d] = ref.local_or(h.buf[cur][d].data());
      }
    hytask::tiled_matrix<double>* u = u_;
    hytask::tiled_matrix<double>* e = e_;
    auto body = [this, u, e, i, j, cur, nxt, n = src[0], s = src[1], w = src[2], ea = src[3]] {
      step_tile(u[cur].tile(i, j).local_data(), u[nxt].tile(i, j).local_data(), i, j, n, s, w, ea);
      write_edges(i, j, u[nxt].tile(i, j).local_data(), e[nxt].tile(i, j).local_data());
    };
    auto own = [&](auto&&... halos) {
      hytask::spawn(body, hytask::in(u_[cur].tile(i, j)), hytask::out(u_[nxt].tile(i, j)),
                    hytask::out(e_[nxt].tile(i, j)), halos...);
    };
    switch (halo.size()) {  // 0 to 4 neighbours
      case 0: own(); break;
      case 1: own(halo[0]); break;
      case 2: own(halo[0], halo[1]); break;
      case 3: own(halo[0], halo[1], halo[2]); break;
      default: own(halo[0], halo[1], halo[2], halo[3]); break;
    }
  }

  // One step of tile (i, j): d is the tile at step t, out at t + 1; n/s/w/e are the
  // neighbours' edge tiles at step t (null at the grid's boundary).
  void step_tile(const double* d, double* out, std::size_t i, std::size_t j, const double* n,
                 const double* s, const double* w, const double* e) const {
    const std::size_t h = u_[0].tile_height(i), wd = u_[0].tile_width(j), t = o_.tile;
    for (std::size_t c = 0; c < wd; ++c)
      for (std::size_t r = 0; r < h; ++r) {
        const double un = r > 0 ? d[r - 1 + c * t] : (n ? n[bottom * t + c] : 0.0);
        const double us = r + 1 < h ? d[r + 1 + c * t] : (s ? s[top * t + c] : 0.0);
        const double uw = c > 0 ? d[r + (c - 1) * t] : (w ? w[right * t + r] : 0.0);
        const double ue = c + 1 < wd ? d[r + (c + 1) * t] : (e ? e[left * t + r] : 0.0);
        out[r + c * t] = update(d[r + c * t], un, us, uw, ue);
      }
  }

  options o_;
  std::size_t nt_;
  hytask::tiled_matrix<double> u_[2];
  hytask::tiled_matrix<double> e_[2];
  std::vector<tile_halos> halos_;
};

// The same arithmetic on the whole grid, row-major, one thread.
std::vector<double> sequential(const options& o) {
  std::vector<double> a(o.n * o.n), b(o.n * o.n);
  for (std::size_t r = 0; r < o.n; ++r)
    for (std::size_t c = 0; c < o.n; ++c) a[r * o.n + c] = initial(r, c, o.n);
  for (std::size_t t = 0; t < o.steps; ++t) {
    for (std::size_t r = 0; r < o.n; ++r)
      for (std::size_t c = 0; c < o.n; ++c) {
        const double un = r > 0 ? a[(r - 1) * o.n + c] : 0.0;
        const double us = r + 1 < o.n ? a[(r + 1) * o.n + c] : 0.0;
        const double uw = c > 0 ? a[r * o.n + c - 1] : 0.0;
        const double ue = c + 1 < o.n ? a[r * o.n + c + 1] : 0.0;
        b[r * o.n + c] = update(a[r * o.n + c], un, us, uw, ue);
      }
    a.swap(b);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);  // before the runtime: a bad option ends every rank alike
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank();
  long bad = 0;
  double seconds = 0;
  std::size_t tiles = 0;
  int p = 0, q = 0;
  {
    heat h(o);
    h.initialise();
    hytask::wait_all();  // every rank's tiles are initialised before any task reads them
    const auto t0 = std::chrono::steady_clock::now();
    h.run();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.check) bad = h.compare(sequential(o));
    tiles = h.local_tiles();
    p = h.grid_rows();
    q = h.grid_cols();
    hytask::wait_all();
  }
  long all_bad = 0;
  hytask::mpi::allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM);
  const hytask::global_counters c = hytask::global_stats();
  if (rank == 0) {
    const double points = static_cast<double>(o.n * o.n * o.steps);
    std::printf("heat2d: %zux%zu points, tiles of %zu, %zu steps, %dx%d ranks (%zu tiles on rank 0): "
                "%.3f s, %.1f Mpoint/s; rank 0 moved %llu halos\n",
                o.n, o.n, o.tile, o.steps, p, q, tiles, seconds, points / seconds / 1e6,
                static_cast<unsigned long long>(c.transfers));
    if (o.check) {
      if (all_bad == 0) std::printf("heat2d: bit-identical to the sequential run, ok\n");
      else std::printf("heat2d: %ld points differ from the sequential run: FAIL\n", all_bad);
    }
  }
  return all_bad == 0 ? 0 : 1;
}
