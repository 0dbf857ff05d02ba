// What the MPI examples (context=mpi) assume: they are code in main, with these in scope.
#pragma once

#include <cstdio>
#include <span>
#include <vector>

#include <hytask/hytask.hpp>
#include <hytask/mpi.hpp>

inline int argc = 1;  // main's arguments, for hytask::runtime rt(argc, argv)
inline char** argv = nullptr;

constexpr int n = 1000;
inline int left = 0, right = 0;  // neighbour ranks
inline int dest = 0, tag = 0, count = n;
inline std::vector<double> halo(n), edge(n), vec(n);  // n doubles from left, to right
inline double* buf = halo.data();
inline std::vector<std::vector<double>> interior;  // blocks that need no halo
inline std::vector<std::vector<double>> bufs(n, std::vector<double>(n));

void compute(std::vector<double>& block);
void use(const std::vector<double>& data);
void produce(std::vector<double>& data);
bool found_it();  // a search found what it looked for
