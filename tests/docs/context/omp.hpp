// What the OpenMP examples (context=omp) assume: code in a function of a program that has a
// hytask::omp::session, with these in scope.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <vector>

#include <hytask/omp.hpp>

constexpr int n = 1000;
inline int left = 0, right = 0, tag = 0, blocks = 8;
inline std::vector<double> halo(n), edge(n);  // n doubles from left, to right

void compute(int block);
void use(const std::vector<double>& data);
