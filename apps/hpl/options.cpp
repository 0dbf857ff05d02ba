// hpl's command line.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

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

long parse_int(const std::string& opt, const std::string& text, long lo, long hi) {
  return hytask_apps::parse_int<usage_error>(opt, text, lo, hi);
}

double parse_double(const std::string& opt, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream s;
    s << opt << ": '" << text << "' is not a number in " << lo << ".." << hi;
    throw usage_error(s.str());
  }
  return v;
}

std::vector<variant> parse_variants(const std::string& text) {
  if (text == "all") return {variant::simple, variant::lookahead, variant::tasks};
  return hytask_apps::parse_variant_list<usage_error>(text, variant_names,
                                                     "simple, lookahead, tasks, all",
                                                     [](const variant_name&) {});
}

}  // namespace

const char* name(variant v) {
  for (const auto& vn : variant_names)
    if (vn.v == v) return vn.name;
  return "?";
}

const char* usage_text() {
  return "usage: hpl [options]   (run under mpiexec; docs/hpl.md)\n"
         "  --variant LIST    simple, lookahead, tasks, comma-separated, or all (default: all)\n"
         "  -N N              order of the system (default 2000)\n"
         "  --nb NB           block size (default 128)\n"
         "  -P P, -Q Q        process grid, P x Q = ranks (default 1 x ranks)\n"
         "  --window W        tasks: panels in flight at most, one panel buffer each (default 4)\n"
         "  --update-blocks B tasks: column blocks per update task (default: chosen from the\n"
         "                    DGEMM's measured cost of packing the panel, docs/hpl.md)\n"
         "  --threads T       tasks: workers per rank (default: cores / ranks on the node)\n"
         "  --dilation F      after each message of S bytes send another of F*S bytes (default 0)\n"
         "  --noise B,P       an extra thread per rank computes B ms every P ms (default off)\n"
         "  --seed S          the matrix's seed (default 42)\n"
         "  --singular        zero one column of A; the run must report the matrix singular\n"
         "  --repeat R        run each variant R times (default 1)\n"
         "  --peak            also measure DGEMM on all ranks at once (the machine's peak)\n"
         "  --csv PATH        also write the results as CSV (- for stdout)\n"
         "Kernels are OpenBLAS's, single-threaded (hpl sets OPENBLAS_NUM_THREADS=1 itself).\n";
}

options parse(int argc, char** argv) {
  options o;
  o.variants = {variant::simple, variant::lookahead, variant::tasks};
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw usage_error(opt + " needs a value");
      return argv[++i];
    };
    if (opt == "--variant") o.variants = parse_variants(value());
    else if (opt == "-N" || opt == "--n") o.n = parse_int(opt, value(), 1, 1L << 22);
    else if (opt == "--nb") o.nb = static_cast<int>(parse_int(opt, value(), 1, 4096));
    else if (opt == "-P") o.p = static_cast<int>(parse_int(opt, value(), 1, 1 << 20));
    else if (opt == "-Q") o.q = static_cast<int>(parse_int(opt, value(), 1, 1 << 20));
    else if (opt == "--window") o.window = static_cast<int>(parse_int(opt, value(), 1, 1024));
    else if (opt == "--update-blocks") o.update_blocks = static_cast<int>(parse_int(opt, value(), 1, 1 << 20));
    else if (opt == "--threads") o.threads = static_cast<int>(parse_int(opt, value(), 1, 1024));
    else if (opt == "--dilation") o.dilation = parse_double(opt, value(), 0, 64);
    else if (opt == "--noise") {
      const std::string v = value();
      const auto comma = v.find(',');
      if (comma == std::string::npos)
        throw usage_error("--noise: '" + v + "' is not BURST_MS,PERIOD_MS (e.g. 100,1000)");
      o.noise_burst_ms = parse_double("--noise burst", v.substr(0, comma), 0.001, 1e6);
      o.noise_period_ms = parse_double("--noise period", v.substr(comma + 1), 0.001, 1e7);
      if (o.noise_burst_ms >= o.noise_period_ms)
        throw usage_error("--noise: the burst (" + v.substr(0, comma) + " ms) must be shorter than the period (" +
                          v.substr(comma + 1) + " ms)");
    } else if (opt == "--seed") o.seed = static_cast<std::uint64_t>(parse_int(opt, value(), 0, 1L << 62));
    else if (opt == "--singular") o.singular = true;
    else if (opt == "--repeat") o.repeat = static_cast<int>(parse_int(opt, value(), 1, 1000));
    else if (opt == "--peak") o.peak = true;
    else if (opt == "--csv") o.csv = value();
    else if (opt == "-h" || opt == "--help") o.help = true;
    else throw usage_error("unknown option '" + opt + "'");
  }
  return o;
}

}  // namespace hpl
