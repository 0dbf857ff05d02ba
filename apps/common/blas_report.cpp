// The BLAS report of the applications (blas_report.hpp).
#include "blas_report.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>

// Set by apps/common/CMakeLists.txt: 1 when the BLAS the apps link exports OpenBLAS's
// openblas_get_corename, openblas_get_config and openblas_set_num_threads.
#ifndef HYTASK_HAVE_OPENBLAS_CORENAME
#define HYTASK_HAVE_OPENBLAS_CORENAME 0
#endif

#if HYTASK_HAVE_OPENBLAS_CORENAME
extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);
extern "C" void openblas_set_num_threads(int);
#endif

namespace hytask_apps {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

const char* simd_name(simd_level l) {
  switch (l) {
    case simd_level::sse: return "SSE";
    case simd_level::avx: return "AVX";
    case simd_level::avx2: return "AVX2";
    case simd_level::avx512: return "AVX-512";
    case simd_level::unknown: break;
  }
  return "unknown";
}

simd_level openblas_kernel_level(std::string_view corename) {
  const std::string c = lower(corename);
  if (c.find("generic") != std::string::npos) return simd_level::sse;
  // OpenBLAS's x86 core names (driver/others/dynamic.c): the SSE-only ones first, which a
  // DYNAMIC_ARCH build falls back to on a CPU it cannot place.
  if (one_of(c, {"prescott", "core2", "katmai", "coppermine", "northwood", "banias", "atom", "penryn", "dunnington",
                 "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "bobcat", "nano"}))
    return simd_level::sse;
  if (one_of(c, {"sandybridge", "bulldozer", "piledriver", "steamroller", "excavator"})) return simd_level::avx;
  if (one_of(c, {"haswell", "zen"})) return simd_level::avx2;
  if (one_of(c, {"skylakex", "cooperlake", "sapphirerapids"})) return simd_level::avx512;
  return simd_level::unknown;
}

simd_level cpu_level(bool avx2, bool avx512f) {
  return avx512f ? simd_level::avx512 : avx2 ? simd_level::avx2 : simd_level::unknown;
}

blas_verdict judge_blas(std::string_view corename, bool avx2, bool avx512f, std::string_view coretype_env) {
  blas_verdict v;
  const simd_level kernel = openblas_kernel_level(corename);
  const simd_level cpu = cpu_level(avx2, avx512f);
  if (kernel == simd_level::unknown || cpu == simd_level::unknown || kernel >= cpu) return v;
  v.warn = true;
  // On AVX-512 CPUs SkylakeX's kernels (Cooperlake's DGEMM is the same): on a Zen 5 guest
  // 1.65x Haswell's DGEMM and 4-5x Prescott's (docs/benchmarks.md, "BLAS and the CPU").
  v.coretype = cpu == simd_level::avx512 ? "SkylakeX" : "Haswell";
  const std::string core(corename);
  const std::string env(coretype_env);
  std::string m = "OpenBLAS runs its ";
  m += kernel == simd_level::sse ? "generic " : "";
  m += core + " kernels (" + simd_name(kernel) + ")";
  if (!env.empty() && lower(env) == lower(core)) m += ", as OPENBLAS_CORETYPE=" + env + " asks,";
  m += " on a CPU with " + std::string(simd_name(cpu)) + ": DGEMM runs at a fraction of the core's rate; ";
  // Another BLAS may not know the CPU either: Debian 12's BLIS 0.9.0 runs its generic kernels on
  // Zen 5 unless told (BLIS_ARCH_TYPE); the page says how.
  if (!env.empty() && lower(env) == lower(v.coretype))
    m += "OPENBLAS_CORETYPE=" + env + " is set and this OpenBLAS does not run it: use a BLAS built for this CPU "
         "(docs/install.md, \"The BLAS and the CPU\")";
  else
    m += "set OPENBLAS_CORETYPE=" + v.coretype + " (or another BLAS: docs/install.md, \"The BLAS and the CPU\")";
  v.message = m;
  return v;
}

blas_facts probe_blas() {
  blas_facts f;
#if HYTASK_HAVE_OPENBLAS_CORENAME
  f.openblas = true;
  if (const char* c = openblas_get_corename()) f.corename = c;
  if (const char* c = openblas_get_config()) f.config = c;
  while (!f.config.empty() && std::isspace(static_cast<unsigned char>(f.config.back()))) f.config.pop_back();
#endif
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
#endif
  if (const char* e = std::getenv("OPENBLAS_CORETYPE")) f.coretype_env = e;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        const auto start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) f.cpu_model = line.substr(start);
      }
      break;
    }
  return f;
}

std::string blas_line(const blas_facts& f) {
  const std::string cpu = std::string("CPU ") + (f.cpu_model.empty() ? "" : f.cpu_model + " ") + "(" +
                          simd_name(cpu_level(f.avx2, f.avx512f)) + ")";
  if (!f.openblas) return "BLAS: unknown (not OpenBLAS); " + cpu;
  std::string s = "BLAS: " + (f.config.empty() ? std::string("OpenBLAS") : f.config) + "; kernels " +
                  (f.corename.empty() ? std::string("unknown") : f.corename) + " (" +
                  simd_name(openblas_kernel_level(f.corename)) + "); " + cpu;
  if (!f.coretype_env.empty()) s += "; OPENBLAS_CORETYPE=" + f.coretype_env;
  return s;
}

void blas_single_threaded() {
#if HYTASK_HAVE_OPENBLAS_CORENAME
  openblas_set_num_threads(1);
#endif
}

void report_blas(bool root) {
  static std::atomic<bool> done{false};
  if (!root || done.exchange(true)) return;
  const blas_facts f = probe_blas();
  std::printf("%s\n", blas_line(f).c_str());
  std::fflush(stdout);
  if (!f.openblas) return;
  const blas_verdict v = judge_blas(f.corename, f.avx2, f.avx512f, f.coretype_env);
  if (v.warn) {
    std::fprintf(stderr, "hytask: warning: %s\n", v.message.c_str());
    std::fflush(stderr);
  }
}

}  // namespace hytask_apps
