// The apps' BLAS report (apps/common/blas_report.hpp): the decision whether OpenBLAS's kernels
// are narrower than the CPU, and which OPENBLAS_CORETYPE to advise. Pure functions of the core
// name, the CPU's flags and the environment's value given as arguments: nothing here changes
// the BLAS's settings.
#include <gtest/gtest.h>

#include <string>

#include "blas_report.hpp"

using hytask_apps::blas_facts;
using hytask_apps::blas_line;
using hytask_apps::judge_blas;
using hytask_apps::openblas_kernel_level;
using hytask_apps::simd_level;

namespace {

constexpr bool avx2 = true, no_avx2 = false, avx512 = true, no_avx512 = false;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(BlasReport, CoreNamesHaveTheirVectorLevel) {
  for (const char* c : {"Prescott", "Core2", "Katmai", "Northwood", "Banias", "Atom", "Nehalem", "Barcelona"})
    EXPECT_EQ(openblas_kernel_level(c), simd_level::sse) << c;
  EXPECT_EQ(openblas_kernel_level("generic"), simd_level::sse);
  EXPECT_EQ(openblas_kernel_level("GENERIC_x86_64"), simd_level::sse);
  EXPECT_EQ(openblas_kernel_level("prescott"), simd_level::sse);  // case-insensitive
  EXPECT_EQ(openblas_kernel_level("Sandybridge"), simd_level::avx);
  EXPECT_EQ(openblas_kernel_level("Haswell"), simd_level::avx2);
  EXPECT_EQ(openblas_kernel_level("ZEN"), simd_level::avx2);
  EXPECT_EQ(openblas_kernel_level("SkylakeX"), simd_level::avx512);
  EXPECT_EQ(openblas_kernel_level("Cooperlake"), simd_level::avx512);
  EXPECT_EQ(openblas_kernel_level("SapphireRapids"), simd_level::avx512);
  EXPECT_EQ(openblas_kernel_level("NeoverseN1"), simd_level::unknown);
  EXPECT_EQ(openblas_kernel_level("Unknown"), simd_level::unknown);
  EXPECT_EQ(openblas_kernel_level(""), simd_level::unknown);
}

TEST(BlasReport, GenericKernelsOnAnAvx512CpuAdviseSkylakeX) {
  for (const char* c : {"Prescott", "Core2", "Katmai", "Northwood", "Banias", "Atom", "generic", "x86_64 Generic"}) {
    const auto v = judge_blas(c, avx2, avx512);
    EXPECT_TRUE(v.warn) << c;
    EXPECT_EQ(v.coretype, "SkylakeX") << c;
    EXPECT_TRUE(contains(v.message, "generic")) << v.message;
    EXPECT_TRUE(contains(v.message, "OPENBLAS_CORETYPE=SkylakeX")) << v.message;
    EXPECT_TRUE(contains(v.message, "docs/install.md")) << v.message;
    EXPECT_FALSE(contains(v.message, "\n")) << "one line: " << v.message;
  }
}

TEST(BlasReport, GenericKernelsOnAnAvx2CpuAdviseHaswell) {
  const auto v = judge_blas("Prescott", avx2, no_avx512);
  EXPECT_TRUE(v.warn);
  EXPECT_EQ(v.coretype, "Haswell");
  EXPECT_TRUE(contains(v.message, "Prescott kernels (SSE)")) << v.message;
  EXPECT_TRUE(contains(v.message, "a CPU with AVX2")) << v.message;
  EXPECT_TRUE(contains(v.message, "set OPENBLAS_CORETYPE=Haswell")) << v.message;
  EXPECT_TRUE(judge_blas("Sandybridge", avx2, no_avx512).warn);  // AVX kernels, AVX2 CPU
}

TEST(BlasReport, Avx2KernelsOnAnAvx512CpuAdviseSkylakeX) {
  // The Zen 5 guest: Haswell's DGEMM at 60 % of SkylakeX's (docs/benchmarks.md).
  for (const char* c : {"Haswell", "Zen"}) {
    const auto v = judge_blas(c, avx2, avx512);
    EXPECT_TRUE(v.warn) << c;
    EXPECT_EQ(v.coretype, "SkylakeX") << c;
    EXPECT_FALSE(contains(v.message, "generic")) << v.message;
  }
}

TEST(BlasReport, KernelsThatMatchTheCpuOrAnUnknownSideDoNotWarn) {
  EXPECT_FALSE(judge_blas("SkylakeX", avx2, avx512).warn);
  EXPECT_FALSE(judge_blas("Cooperlake", avx2, avx512).warn);
  EXPECT_FALSE(judge_blas("Haswell", avx2, no_avx512).warn);
  EXPECT_FALSE(judge_blas("Zen", avx2, no_avx512).warn);
  // A CPU without AVX2: nothing better to advise.
  EXPECT_FALSE(judge_blas("Prescott", no_avx2, no_avx512).warn);
  EXPECT_FALSE(judge_blas("Sandybridge", no_avx2, no_avx512).warn);
  // Names this report does not know (another architecture, or a newer OpenBLAS's).
  EXPECT_FALSE(judge_blas("NeoverseV1", avx2, avx512).warn);
  EXPECT_FALSE(judge_blas("", avx2, avx512).warn);
  const auto quiet = judge_blas("SkylakeX", avx2, avx512);
  EXPECT_TRUE(quiet.coretype.empty());
  EXPECT_TRUE(quiet.message.empty());
}

TEST(BlasReport, TheEnvironmentIsNamedWhenItChoseTheKernels) {
  // OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU: the message says who asked for them.
  const auto v = judge_blas("Haswell", avx2, avx512, "Haswell");
  EXPECT_TRUE(v.warn);
  EXPECT_TRUE(contains(v.message, "as OPENBLAS_CORETYPE=Haswell asks")) << v.message;
  EXPECT_TRUE(contains(v.message, "set OPENBLAS_CORETYPE=SkylakeX")) << v.message;
  // A value OpenBLAS did not take (it chose by itself): not named as the cause.
  const auto other = judge_blas("Prescott", avx2, avx512, "Zen5");
  EXPECT_FALSE(contains(other.message, "asks")) << other.message;
  // The advised core is already asked for, and this OpenBLAS does not run it: another BLAS.
  const auto stuck = judge_blas("Prescott", avx2, avx512, "skylakex");
  EXPECT_TRUE(stuck.warn);
  EXPECT_TRUE(contains(stuck.message, "does not run it")) << stuck.message;
  EXPECT_TRUE(contains(stuck.message, "a BLAS built for this CPU")) << stuck.message;
}

TEST(BlasReport, TheLineNamesTheBlasTheKernelsAndTheCpu) {
  blas_facts f;
  f.openblas = true;
  f.corename = "Cooperlake";
  f.config = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64";
  f.cpu_model = "AMD EPYC";
  f.avx2 = f.avx512f = true;
  EXPECT_EQ(blas_line(f), "BLAS: OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64; "
                          "kernels Cooperlake (AVX-512); CPU AMD EPYC (AVX-512)");
  f.coretype_env = "Haswell";
  EXPECT_TRUE(contains(blas_line(f), "; OPENBLAS_CORETYPE=Haswell")) << blas_line(f);
  blas_facts other;
  other.avx2 = true;
  EXPECT_EQ(blas_line(other), "BLAS: unknown (not OpenBLAS); CPU (AVX2)");
}
