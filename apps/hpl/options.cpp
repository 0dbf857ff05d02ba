// hpl's command line.
#include "app_support.hpp"
#include "hpl.hpp"

namespace hpl {

namespace {

struct variant_name {
  variant v;
  const char* name;
};
constexpr variant_name variant_names[] = {
    {variant::simple, "simple"},
    {variant::lookahead, "lookahead"},
    {variant::tasks, "tasks"},
};

std::vector<variant> parse_variants(const std::string& text) {
  if (text == "all") return {variant::simple, variant::lookahead, variant::tasks};
  return hytask_apps::parse_variant_list(text, variant_names,
                                                     "simple, lookahead, tasks, all",
                                                     [](const variant_name&) {});
}

}  // namespace

const char* name(variant v) {
  for (const auto& vn : variant_names)
    if (vn.v == v) return vn.name;
  return "?";
}

std::optional<options> parse(int argc, char** argv) {
  options o;
  o.variants = {variant::simple, variant::lookahead, variant::tasks};
  hytask_cli::command_line cli("hpl", "[options]   (run under mpiexec; docs/hpl.md)",
                               "LU factorisation with partial pivoting, HPL's algorithm: simple, look-ahead\n"
                               "and tasks variants, on the same matrix and kernels.");
  cli.custom("--variant", "LIST", [&](const std::string& v) { o.variants = parse_variants(v); },
             "simple, lookahead, tasks, comma-separated, or all (default: all)");
  hytask_apps::add_dense_options(cli, o, 4096, "block size", "1 x ranks", "tasks", "run each variant R times");
  cli.integer("--window", o.window, 1, 1024, "tasks: panels in flight at most, one panel buffer each (default 4)");
  cli.integer("--update-blocks", o.update_blocks, 1, 1 << 20,
              "tasks: column blocks per update task (default: chosen from the\n"
              "DGEMM's measured cost of packing the panel, docs/hpl.md)");
  cli.number("--dilation", o.dilation, 0, 64, "after each message of S bytes send another of F*S bytes (default 0)");
  cli.custom("--noise", "B,P", [&](const std::string& v) {
    const auto comma = v.find(',');
    if (comma == std::string::npos)
      throw usage_error("--noise: '" + v + "' is not BURST_MS,PERIOD_MS (e.g. 100,1000)");
    o.noise_burst_ms = hytask_cli::parse_number("--noise burst", v.substr(0, comma), 0.001, 1e6);
    o.noise_period_ms = hytask_cli::parse_number("--noise period", v.substr(comma + 1), 0.001, 1e7);
    if (o.noise_burst_ms >= o.noise_period_ms)
      throw usage_error("--noise: the burst (" + v.substr(0, comma) + " ms) must be shorter than the period (" +
                        v.substr(comma + 1) + " ms)");
  }, "an extra thread per rank computes B ms every P ms (default off)");
  cli.flag("--singular", o.singular, "zero one column of A; the run must report the matrix singular");
  cli.footer("Kernels are OpenBLAS's, single-threaded (hpl sets OPENBLAS_NUM_THREADS=1 itself).");
  if (!cli.parse(argc, argv)) return std::nullopt;
  return o;
}

}  // namespace hpl
