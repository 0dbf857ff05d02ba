// What the task examples (context=tasks) assume: they are code in main, with these in scope.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <hytask/hytask.hpp>

inline int argc = 1;  // main's arguments, for hytask::runtime rt(argc, argv)
inline char** argv = nullptr;

constexpr int n = 1000;
inline double a[n], b[n];               // arrays of n doubles
inline std::vector<double> v(n);        // a vector
inline double* ptr = a;                 // memory a task touches...
inline std::size_t count = n;           // ...and how many objects
inline double x = 0;                    // one object
inline auto f = [] {};                  // a task's body
inline std::vector<const double*> neighbours;  // blocks of n doubles around b

void produce(std::span<double> out);
void consume(std::span<const double> in, std::span<double> out);
void fill(std::vector<double>& v);
void stencil(double* block, const std::vector<const double*>& neighbours);
void use();
void next_step();
void after_it();
