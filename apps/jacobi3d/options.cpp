#include "app_support.hpp"
#include "options.hpp"

#include <charconv>
#include <cstring>
#include <sstream>

namespace jacobi {

namespace {

struct variant_name {
  variant v;
  const char* name;
};
constexpr variant_name variant_names[] = {
    {variant::mpi_blocking, "mpi-blocking"},
    {variant::mpi_nonblocking, "mpi-nonblocking"},
    {variant::hybrid_blocking, "hybrid-blocking"},
    {variant::hybrid_nonblocking, "hybrid-nonblocking"},
    {variant::hybrid_reserve, "hybrid-reserve"},
    {variant::omp_detach, "omp-detach"},
    {variant::masteronly, "masteronly"},
    {variant::commtask, "commtask"},
    {variant::dataflow, "dataflow"},
    {variant::intercepted, "intercepted"},
    {variant::sequential, "sequential"},
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

long parse_int(const std::string& opt, const std::string& text, long lo, long hi) {
  return hytask_apps::parse_int<usage_error>(opt, text, lo, hi);
}

// N (a cube) or AxBxC, z x y.
std::array<int, 3> parse_extent(const std::string& opt, const std::string& text, long lo) {
  auto parts = split(text, 'x');
  if (parts.size() == 1) {
    int n = static_cast<int>(parse_int(opt, parts[0], lo, 1 << 20));
    return {n, n, n};
  }
  if (parts.size() != 3) throw usage_error(opt + ": '" + text + "' is neither N nor ZxXxY");
  std::array<int, 3> e{};
  for (int d = 0; d < 3; ++d) e[d] = static_cast<int>(parse_int(opt, parts[d], lo, 1 << 20));
  return e;
}

}  // namespace

const char* name(variant v) {
  for (const auto& n : variant_names)
    if (n.v == v) return n.name;
  return "?";
}

bool uses_hytask(variant v) {
  return v == variant::masteronly || v == variant::commtask || v == variant::dataflow || v == variant::intercepted;
}
bool takes_tests(variant v) { return v == variant::mpi_nonblocking || v == variant::hybrid_nonblocking; }
bool uses_omp_session(variant v) { return v == variant::omp_detach; }
bool one_thread_only(variant v) {
  return v == variant::mpi_blocking || v == variant::mpi_nonblocking || v == variant::sequential;
}

const char* usage_text() {
  return R"(usage: jacobi3d [options]        (launch with mpiexec; docs/jacobi3d.md)

Jacobi iterations on a 3-D domain (Buettner's proof of concept), in several hybrid MPI + threads variants
that must all give bit-identical results.

  --variant LIST         comma-separated, or 'all' (every variant but sequential, then
                         sequential), default dataflow:
                           mpi-blocking        MPI only, exchange then compute
                           mpi-nonblocking     MPI only, post / compute inner / wait / boundary
                           hybrid-blocking     fork-join threads, master exchanges (masteronly)
                           hybrid-nonblocking  fork-join threads, master posts, tests, waits
                           hybrid-reserve      thread 0 communicates, the others compute inner
                           omp-detach          OpenMP tasks per block with depend clauses; halos
                                               as detached tasks that hytask::omp completes
                           masteronly          hytask: main exchanges, then tasks compute (inner
                                               tasks named overlap:inner); the run to trace
                                               for hytask-model
                           commtask            hytask: inner blocks as tasks, boundary released
                                               by the halo requests at high priority
                           dataflow            hytask: block tasks with dependencies across
                                               iterations, no barrier per iteration
                           intercepted         mpi-nonblocking's plain MPI exchange inside a
                                               hytask task, in dataflow's graph; its
                                               MPI_Waitall suspends only that task
                                               (hytask::mpi_intercept)
                           sequential          reference: rank 0 computes the whole domain
  --tests LIST           MPI_Testall calls per iteration inside the inner compute of
                         mpi-nonblocking and hybrid-nonblocking (e.g. 0,2,8,32), default 0
  --size N|ZxXxY         global interior points (y is unit stride), default 256
  --iters N              iterations, default 100
  --stencil 6|24         6-point first order or 24-point fourth order, default 6
  --decomposition 1d|3d  z slabs, or a Cartesian grid (MPI_Dims_create), default 1d
  --halo datatype|packed halos as MPI subarray types, or packed into buffers, default datatype
  --block ZxXxY          task / cache block (0 = whole extent), default 8x64x0
  --window W             dataflow, intercepted, omp-detach: iterations in flight at most
                         (run-ahead), default 3; omp-detach under GCC's libgomp, and under
                         libomp before LLVM 19, waits for each batch of W iterations,
                         default 1
  --threads T            threads per rank for the hybrid and hytask variants, default the
                         cores available to the rank divided by the ranks on its node
  --no-breakdown         skip timing compute alone and communication alone
  --csv FILE             also write the results as CSV ('-' for stdout)
  --help
)";
}

options parse(int argc, char** argv) {
  options o;
  bool variants_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    auto next = [&]() -> const std::string& {
      if (auto eq = a.find('='); eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        return value;
      }
      if (i + 1 >= argc) throw usage_error(a + " needs a value");
      value = argv[++i];
      return value;
    };
    std::string key = a.substr(0, a.find('='));
    if (key == "--help" || key == "-h") {
      o.help = true;
    } else if (key == "--variant") {
      const std::string& v = next();
      o.variants.clear();
      variants_given = true;
      for (const std::string& item : split(v, ',')) {
        if (item == "all") {
          for (const auto& n : variant_names)
            if (n.v != variant::sequential) o.variants.push_back(n.v);
          o.variants.push_back(variant::sequential);
          continue;
        }
        bool found = false;
        for (const auto& n : variant_names)
          if (item == n.name) {
            o.variants.push_back(n.v);
            found = true;
          }
        if (!found) {
          std::string known;
          for (const auto& n : variant_names) known += std::string(known.empty() ? "" : ", ") + n.name;
          throw usage_error("--variant: unknown variant '" + item + "'; known: " + known + ", all");
        }
      }
    } else if (key == "--tests") {
      o.tests.clear();
      for (const std::string& item : split(next(), ','))
        o.tests.push_back(static_cast<unsigned>(parse_int("--tests", item, 0, 1 << 20)));
    } else if (key == "--size") {
      o.size = parse_extent("--size", next(), 1);
    } else if (key == "--block") {
      o.block = parse_extent("--block", next(), 0);
    } else if (key == "--iters") {
      o.iters = static_cast<int>(parse_int("--iters", next(), 1, 1 << 30));
    } else if (key == "--stencil") {
      const std::string& v = next();
      if (v == "6") o.radius = 1;
      else if (v == "24") o.radius = 4;
      else throw usage_error("--stencil: '" + v + "' is not 6 (first order) or 24 (fourth order)");
    } else if (key == "--decomposition") {
      const std::string& v = next();
      if (v == "1d") o.decomp = decomposition::d1;
      else if (v == "3d") o.decomp = decomposition::d3;
      else throw usage_error("--decomposition: '" + v + "' is not 1d or 3d");
    } else if (key == "--halo") {
      const std::string& v = next();
      if (v == "datatype") o.halo = halo_mode::datatype;
      else if (v == "packed") o.halo = halo_mode::packed;
      else throw usage_error("--halo: '" + v + "' is not datatype or packed");
    } else if (key == "--window") {
      o.window = static_cast<int>(parse_int("--window", next(), 1, 1 << 20));
    } else if (key == "--threads") {
      o.threads = static_cast<int>(parse_int("--threads", next(), 1, 4096));
    } else if (key == "--no-breakdown") {
      o.breakdown = false;
    } else if (key == "--csv") {
      o.csv = next();
    } else {
      throw usage_error("unknown option '" + a + "'");
    }
  }
  if (!variants_given) o.variants = {variant::dataflow};
  if (o.tests.empty()) throw usage_error("--tests: give at least one count");
  return o;
}

}  // namespace jacobi
