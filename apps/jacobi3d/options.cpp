#include "app_support.hpp"
#include "options.hpp"


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

// N (a cube) or AxBxC, z x y.
std::array<int, 3> parse_extent(const std::string& opt, const std::string& text, long lo) {
  auto parts = hytask_cli::split(text, 'x');
  if (parts.size() == 1) {
    int n = static_cast<int>(hytask_cli::parse_integer(opt, parts[0], lo, 1 << 20));
    return {n, n, n};
  }
  if (parts.size() != 3) throw usage_error(opt + ": '" + text + "' is neither N nor ZxXxY");
  std::array<int, 3> e{};
  for (int d = 0; d < 3; ++d) e[d] = static_cast<int>(hytask_cli::parse_integer(opt, parts[d], lo, 1 << 20));
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

std::optional<options> parse(int argc, char** argv) {
  using hytask_cli::split;
  options o;
  o.variants = {variant::dataflow};
  hytask_cli::command_line cli("jacobi3d", "[options]        (launch with mpiexec; docs/jacobi3d.md)",
                               "Jacobi iterations on a 3-D domain (Buettner's proof of concept), in several hybrid\n"
                               "MPI + threads variants that must all give bit-identical results.");
  cli.custom("--variant", "LIST", [&](const std::string& v) {
    o.variants.clear();
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
  }, "comma-separated, or 'all' (every variant but sequential, then\n"
     "sequential), default dataflow:\n"
     "  mpi-blocking        MPI only, exchange then compute\n"
     "  mpi-nonblocking     MPI only, post / compute inner / wait / boundary\n"
     "  hybrid-blocking     fork-join threads, master exchanges (masteronly)\n"
     "  hybrid-nonblocking  fork-join threads, master posts, tests, waits\n"
     "  hybrid-reserve      thread 0 communicates, the others compute inner\n"
     "  omp-detach          OpenMP tasks per block with depend clauses; halos\n"
     "                      as detached tasks that hytask::omp completes\n"
     "  masteronly          hytask: main exchanges, then tasks compute (inner\n"
     "                      tasks named overlap:inner); the run to trace\n"
     "                      for hytask-model\n"
     "  commtask            hytask: inner blocks as tasks, boundary released\n"
     "                      by the halo requests at high priority\n"
     "  dataflow            hytask: block tasks with dependencies across\n"
     "                      iterations, no barrier per iteration\n"
     "  intercepted         mpi-nonblocking's plain MPI exchange inside a\n"
     "                      hytask task, in dataflow's graph; its\n"
     "                      MPI_Waitall suspends only that task\n"
     "                      (hytask::mpi_intercept)\n"
     "  sequential          reference: rank 0 computes the whole domain");
  cli.custom("--tests", "LIST", [&](const std::string& v) {
    o.tests.clear();
    for (const std::string& item : split(v, ','))
      o.tests.push_back(static_cast<unsigned>(hytask_cli::parse_integer("--tests", item, 0, 1 << 20)));
  }, "MPI_Testall calls per iteration inside the inner compute of\n"
     "mpi-nonblocking and hybrid-nonblocking (e.g. 0,2,8,32), default 0");
  cli.custom("--size", "N|ZxXxY", [&](const std::string& v) { o.size = parse_extent("--size", v, 1); },
             "global interior points (y is unit stride), default 256");
  cli.integer("--iters", o.iters, 1, 1 << 30, "iterations, default 100");
  cli.custom("--stencil", "6|24", [&](const std::string& v) {
    if (v == "6") o.radius = 1;
    else if (v == "24") o.radius = 4;
    else throw usage_error("--stencil: '" + v + "' is not 6 (first order) or 24 (fourth order)");
  }, "6-point first order or 24-point fourth order, default 6");
  cli.custom("--decomposition", "1d|3d", [&](const std::string& v) {
    if (v == "1d") o.decomp = decomposition::d1;
    else if (v == "3d") o.decomp = decomposition::d3;
    else throw usage_error("--decomposition: '" + v + "' is not 1d or 3d");
  }, "z slabs, or a Cartesian grid (MPI_Dims_create), default 1d");
  cli.custom("--halo", "datatype|packed", [&](const std::string& v) {
    if (v == "datatype") o.halo = halo_mode::datatype;
    else if (v == "packed") o.halo = halo_mode::packed;
    else throw usage_error("--halo: '" + v + "' is not datatype or packed");
  }, "halos as MPI subarray types, or packed into buffers, default datatype");
  cli.custom("--block", "ZxXxY", [&](const std::string& v) { o.block = parse_extent("--block", v, 0); },
             "task / cache block (0 = whole extent), default 8x64x0");
  cli.integer("--window", o.window, 1, 1 << 20,
              "dataflow, intercepted, omp-detach: iterations in flight at most\n"
              "(run-ahead), default 3; omp-detach under GCC's libgomp, and under\n"
              "libomp before LLVM 19, waits for each batch of W iterations,\n"
              "default 1");
  cli.integer("--threads", o.threads, 1, 4096,
              "threads per rank for the hybrid and hytask variants, default the\n"
              "cores available to the rank divided by the ranks on its node");
  cli.flag("--no-breakdown", o.breakdown, "skip timing compute alone and communication alone", false);
  cli.text("--csv", o.csv, "also write the results as CSV ('-' for stdout)", "FILE");
  if (!cli.parse(argc, argv)) return std::nullopt;
  if (o.tests.empty()) throw usage_error("--tests: give at least one count");
  return o;
}

}  // namespace jacobi
