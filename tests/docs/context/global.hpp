// What the global-dependency examples (context=global) assume: code in main, with a
// runtime alive and these in scope.
#pragma once

#include <cstddef>

#include <hytask/global.hpp>
#include <hytask/hytask.hpp>
#include <hytask/mpi.hpp>

void use(int value);
void use(double value);
void fill(double* tile, std::size_t ld);
void scale(const double* by, double* tile);
