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

long parse_int(const std::string& opt, const std::string& text, long lo, long hi) {
  return hytask_apps::parse_int<usage_error>(opt, text, lo, hi);
}

std::vector<variant> parse_variants(const std::string& text) {
  if (text == "all") {
    std::vector<variant> out;
    for (const auto& vn : variant_names)
      if (built(vn.v)) out.push_back(vn.v);
    return out;
  }
  return hytask_apps::parse_variant_list<usage_error>(
      text, variant_names, "hytask, scalapack, starpu, all", [](const variant_name& vn) {
        if (!built(vn.v))
          throw usage_error("the variant '" + std::string(vn.name) + "' was not built here (" +
                            (vn.v == variant::starpu
                                 ? std::string("StarPU-MPI 1.3 is missing, or this build's MPI is not Open MPI, which Debian's StarPU-MPI uses: apt-get install libstarpu-dev")
                                 : std::string("ScaLAPACK for this MPI is missing: apt-get install libscalapack-openmpi-dev or libscalapack-mpich-dev")) +
                            ", then rebuild)");
      });
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

const char* usage_text() {
  return "usage: qr [options]   (run under mpiexec; docs/qr.md)\n"
         "  --variant LIST   hytask, scalapack, starpu, comma-separated, or all: those built (default)\n"
         "  -M M             rows of the matrix, M >= N (default: N, square)\n"
         "  -N N             columns of the matrix (default 4096)\n"
         "  --nb NB          tile size, also ScaLAPACK's block size (default 256)\n"
         "  --ib IB          inner block of the tile kernels, IB <= NB (default 32)\n"
         "  -P P, -Q Q       process grid, P x Q = ranks (default: MPI_Dims_create's, P <= Q)\n"
         "  --threads T      workers per rank, hytask and StarPU (default: cores / ranks on the node)\n"
         "  --repeat R       runs of each variant, interleaved (default 1)\n"
         "  --peak           also measure DGEMM on every rank at once (the machine's peak)\n"
         "  --no-check       skip the checks ||A - QR||_F / (||A||_F N eps) and ||I - Q^T Q||_F / (N eps)\n"
         "                   (they gather on rank 0: about 4 M N + 2 N^2 doubles there)\n"
         "  --sequential     hytask, starpu: also compare the factor and T with a sequential run of\n"
         "                   the same kernels in the same order, bit for bit (the whole matrix per rank)\n"
         "  --seed S         the matrix's seed (default 42)\n"
         "  --csv PATH       also write the results as CSV (- for stdout)\n"
         "Kernels are LAPACKE's over OpenBLAS, single-threaded (qr sets this itself).\n";
}

options parse(int argc, char** argv) {
  options o;
  o.variants = parse_variants("all");
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw usage_error(opt + " needs a value");
      return argv[++i];
    };
    if (opt == "--variant") o.variants = parse_variants(value());
    else if (opt == "-M" || opt == "--m") o.m = parse_int(opt, value(), 1, 1L << 22);
    else if (opt == "-N" || opt == "--n") o.n = parse_int(opt, value(), 1, 1L << 22);
    else if (opt == "--nb") o.nb = static_cast<int>(parse_int(opt, value(), 1, 8192));
    else if (opt == "--ib") o.ib = static_cast<int>(parse_int(opt, value(), 1, 8192));
    else if (opt == "-P") o.p = static_cast<int>(parse_int(opt, value(), 1, 1 << 20));
    else if (opt == "-Q") o.q = static_cast<int>(parse_int(opt, value(), 1, 1 << 20));
    else if (opt == "--threads") o.threads = static_cast<int>(parse_int(opt, value(), 1, 1024));
    else if (opt == "--repeat") o.repeat = static_cast<int>(parse_int(opt, value(), 1, 1000));
    else if (opt == "--peak") o.peak = true;
    else if (opt == "--no-check") o.check = false;
    else if (opt == "--sequential") o.sequential = true;
    else if (opt == "--seed") o.seed = static_cast<std::uint64_t>(parse_int(opt, value(), 0, 1L << 62));
    else if (opt == "--csv") o.csv = value();
    else if (opt == "-h" || opt == "--help") o.help = true;
    else throw usage_error("unknown option '" + opt + "'");
  }
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
