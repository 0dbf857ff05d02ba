// qr's command line.

#include "app_support.hpp"
#include "qr.hpp"

namespace qr {

namespace {

struct variant_name {
  variant v;
  const char* name;
};
constexpr variant_name variant_names[] = {
    {variant::hytask, "hytask"},
    {variant::scalapack, "scalapack"},
    {variant::starpu, "starpu"},
};

std::vector<variant> parse_variants(const std::string& text) {
  return hytask_apps::parse_peer_variants(text, variant_names, built);
}

}  // namespace

const char* name(variant v) {
  for (const auto& vn : variant_names)
    if (vn.v == v) return vn.name;
  return "?";
}

bool built(variant v) {
  switch (v) {
    case variant::hytask: return true;
    case variant::scalapack: return HYTASK_HAVE_SCALAPACK != 0;
    case variant::starpu: return HYTASK_HAVE_STARPU != 0;
  }
  return false;
}

std::optional<options> parse(int argc, char** argv) {
  options o;
  o.variants = parse_variants("all");
  hytask_cli::command_line cli("qr", "[options]   (run under mpiexec; docs/qr.md)",
                               "The tiled Householder QR factorisation on global dependencies, beside\n"
                               "ScaLAPACK's pdgeqrf and StarPU-MPI on the same matrix, tiles and owners.");
  cli.custom("--variant", "LIST", [&](const std::string& v) { o.variants = parse_variants(v); },
             "hytask, scalapack, starpu, comma-separated, or all: those built (default)");
  cli.integer("-M,--m", o.m, 1, 1L << 22, "rows of the matrix, M >= N (default: N, square)");
  hytask_apps::add_dense_options(cli, o, 8192, "tile size, also ScaLAPACK's block size", "MPI_Dims_create's, P <= Q",
                                 "hytask and StarPU", "runs of each variant, interleaved");
  cli.integer("--ib", o.ib, 1, 8192, "inner block of the tile kernels, IB <= NB (default 32)");
  cli.flag("--no-check", o.check,
           "skip the checks ||A - QR||_F / (||A||_F N eps) and ||I - Q^T Q||_F / (N eps)\n"
           "(they gather on rank 0: about 4 M N + 2 N^2 doubles there)", false);
  cli.flag("--sequential", o.sequential,
           "hytask, starpu: also compare the factor and T with a sequential run of\n"
           "the same kernels in the same order, bit for bit (the whole matrix per rank)");
  cli.footer("Kernels are LAPACKE's over OpenBLAS, single-threaded (qr sets this itself).");
  if (!cli.parse(argc, argv)) return std::nullopt;
  if (o.m == 0) o.m = o.n;
  if (o.m < o.n)
    throw usage_error("-M " + std::to_string(o.m) + " is below -N " + std::to_string(o.n) +
                      ": qr factors matrices with at least as many rows as columns");
  if (o.ib > o.nb)
    throw usage_error("--ib " + std::to_string(o.ib) + " is above --nb " + std::to_string(o.nb) +
                      ": the inner block must fit in a tile");
  if (o.variants.empty()) throw usage_error("no variant to run");
  return o;
}

}  // namespace qr
