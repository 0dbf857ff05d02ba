// What the loop examples (context=loops) assume: they are code in main, with these in scope.
#pragma once

#include <vector>

#include <hytask/hytask.hpp>

constexpr int n = 1000;
inline double a = 2;
inline std::vector<double> x(n), y(n);

void kernel(int lo, int hi);  // iterations [lo, hi)
