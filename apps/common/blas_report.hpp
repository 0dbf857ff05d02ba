// Which BLAS the applications run and which kernels it chose for this CPU, printed once by
// rank 0 beside the DGEMM peak, with a warning when the kernels are narrower than the CPU:
// Debian's OpenBLAS 0.3.21 picks its kernels from the CPU model, may not know a recent one,
// and OPENBLAS_CORETYPE in the environment overrides the choice. A generic (SSE) kernel runs
// DGEMM at a quarter of what an AVX-512 core does (docs/benchmarks.md, "BLAS and the CPU").
//
// One place for every app (hpl, cholesky, qr) and hytask-sim; no MPI here, so that one copy
// serves the apps built against either MPI. The decision is a pure function (judge_blas),
// unit-tested in tests/apps/test_blas_report.cpp.
#pragma once

#include <string>
#include <string_view>

namespace hytask_apps {

// The widest vector instructions of a kernel set or of a CPU, in order.
enum class simd_level { unknown, sse, avx, avx2, avx512 };

// "SSE", "AVX", "AVX2", "AVX-512" or "unknown".
const char* simd_name(simd_level l);

// The vector level of an OpenBLAS core name (openblas_get_corename(), or OPENBLAS_CORETYPE),
// case-insensitive: "Prescott", "Core2", "Nehalem", ... or any name containing "generic" is
// sse; "Sandybridge" and the Bulldozer family avx; "Haswell", "Zen" avx2; "SkylakeX",
// "Cooperlake", "SapphireRapids" avx512; anything else (another architecture's names,
// "Unknown") unknown.
simd_level openblas_kernel_level(std::string_view corename);

// The level of a CPU from its flags (__builtin_cpu_supports): avx512 with AVX-512F, avx2 with
// AVX2, else unknown (nothing to advise).
simd_level cpu_level(bool avx2, bool avx512f);

struct blas_verdict {
  bool warn = false;
  std::string coretype;  // the OPENBLAS_CORETYPE to advise ("Haswell", "SkylakeX"), or empty
  std::string message;   // the warning, one line without the "hytask: warning: " prefix, or empty
};

// Warn when OpenBLAS runs kernels of a lower vector level than the CPU has (a generic SSE
// kernel on an AVX2 or AVX-512 CPU, or AVX2 kernels on an AVX-512 one), and advise
// OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2), or another BLAS (docs/install.md).
// `coretype_env`: OPENBLAS_CORETYPE as set in the environment (empty: unset), named in the
// message when it is the cause. An unknown core name or CPU level: no warning.
blas_verdict judge_blas(std::string_view corename, bool avx2, bool avx512f, std::string_view coretype_env = {});

// What this process runs: whether the BLAS linked is OpenBLAS (detected by the build), its
// core name and configuration string, the CPU's model name and flags, OPENBLAS_CORETYPE.
struct blas_facts {
  bool openblas = false;
  std::string corename, config, cpu_model, coretype_env;
  bool avx2 = false, avx512f = false;
};
blas_facts probe_blas();

// The line "BLAS: ..." the apps print in their header, e.g. "BLAS: OpenBLAS 0.3.21
// DYNAMIC_ARCH ..., kernels Cooperlake (avx512) on AMD EPYC (avx512)", or "BLAS: unknown (not
// OpenBLAS)".
std::string blas_line(const blas_facts& f);

// Makes the BLAS single-threaded (the ranks and the tasks are the apps' parallelism):
// openblas_set_num_threads(1) with OpenBLAS, nothing with another BLAS.
void blas_single_threaded();

// Prints blas_line() on stdout and, when judge_blas() says so, one line on stderr, "hytask:
// warning: ...". Only where `root` is true (rank 0), and once per process.
void report_blas(bool root);

}  // namespace hytask_apps
