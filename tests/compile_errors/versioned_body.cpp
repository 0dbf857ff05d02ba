// Misuses of hytask::versioned that must not compile (see CMakeLists.txt here): one case per
// CASE_* macro; with FIXED, what the error message suggests instead.
#include <vector>

#include "hytask/core/spawn.hpp"
#include "hytask/core/versioned.hpp"

namespace {

[[maybe_unused]] void declare() {
  std::vector<double> data(16);
  hytask::versioned<double> v(data);
#if defined(CASE_versioned_body_parameters)
#ifndef FIXED
  hytask::spawn([&] { data[0] = 1; }, hytask::out(v));  // the body must take the version
#else
  hytask::spawn([](double* p) { p[0] = 1; }, hytask::out(v));
#endif

#elif defined(CASE_versioned_const_for_in)
#ifndef FIXED
  hytask::spawn([](double* p) { p[0] = 1; }, hytask::in(v));  // a reader gets const T*
#else
  hytask::spawn([](const double* p) { (void)p[0]; }, hytask::in(v));
#endif
#endif
}

}  // namespace
