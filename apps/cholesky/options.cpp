// cholesky's command line.

#include "app_support.hpp"
#include "cholesky.hpp"

namespace chol {

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

std::optional<options> parse(int argc, char** argv) {
  options o;
  o.variants = parse_variants("all");
  hytask_cli::command_line cli("cholesky", "[options]   (run under mpiexec; docs/cholesky.md)",
                               "The tiled Cholesky factorisation A = L L^T on global dependencies, beside\n"
                               "ScaLAPACK's pdpotrf and StarPU-MPI on the same matrix, tiles and owners.");
  cli.custom("--variant", "LIST", [&](const std::string& v) { o.variants = parse_variants(v); },
             "hytask, scalapack, starpu, comma-separated, or all: those built (default)");
  hytask_apps::add_dense_options(cli, o, 8192, "tile size, also ScaLAPACK's block size", "MPI_Dims_create's, P <= Q",
                                 "hytask and StarPU", "runs of each variant, interleaved");
  cli.flag("--no-check", o.check, "skip the residual check ||A - L L^T||_F / (||A||_F N eps)", false);
  cli.flag("--sequential", o.sequential,
           "hytask: also compare the factor with a sequential run of the same\n"
           "kernels in the same order, bit for bit (needs the whole matrix per rank)");
  cli.integer("--not-spd", o.not_spd, 0, 1L << 22, "make the matrix indefinite at column C: every variant must report it");
  cli.footer("Kernels are OpenBLAS's, single-threaded (cholesky sets this itself).");
  if (!cli.parse(argc, argv)) return std::nullopt;
  if (o.not_spd >= o.n)
    throw usage_error("--not-spd " + std::to_string(o.not_spd) + ": the column must be below N (" +
                      std::to_string(o.n) + ")");
  if (o.variants.empty()) throw usage_error("no variant to run");
  return o;
}

}  // namespace chol

namespace chol {

bool built(variant v) {
  switch (v) {
    case variant::hytask: return true;
    case variant::scalapack: return HYTASK_HAVE_SCALAPACK != 0;
    case variant::starpu: return HYTASK_HAVE_STARPU != 0;
  }
  return false;
}

}  // namespace chol
