// Misuses of hytask::in/out/inout(x) that must not compile (see CMakeLists.txt here): one
// case per CASE_* macro; with FIXED, what the error message suggests instead.
#include <list>
#include <string>
#include <vector>

#include "hytask/core/access.hpp"

namespace {

struct grid {  // owns its cells elsewhere: its own bytes are not the data
  std::vector<double> cells = std::vector<double>(16);
  int nx = 4;
};

[[maybe_unused]] void declare() {
  std::vector<hytask::region_access> deps;
#if defined(CASE_access_not_trivially_copyable)
  grid g;
#ifndef FIXED
  deps.push_back(hytask::out(g));
#else
  deps.push_back(hytask::out(g.cells.data(), g.cells.size()));
#endif

#elif defined(CASE_access_not_contiguous)
  std::list<double> values(8);
#ifndef FIXED
  deps.push_back(hytask::in(values));
#else
  for (const double& x : values) deps.push_back(hytask::in(&x, 1));
  [[maybe_unused]] auto all = hytask::regions(deps);
#endif

#elif defined(CASE_access_elements_not_trivially_copyable)
  std::vector<std::string> names(3);
#ifndef FIXED
  deps.push_back(hytask::inout(names));
#else
  deps.push_back(hytask::inout(names.data(), names.size()));
#endif

#elif defined(CASE_access_temporary)
#ifndef FIXED
  deps.push_back(hytask::in(std::vector<double>(8)));
#else
  std::vector<double> v(8);
  deps.push_back(hytask::in(v));
#endif

#elif defined(CASE_access_const_elements)
  const std::vector<double> v(8);
#ifndef FIXED
  deps.push_back(hytask::out(v));
#else
  deps.push_back(hytask::in(v));
#endif

#else
#error "define one CASE_*"
#endif
}

}  // namespace
