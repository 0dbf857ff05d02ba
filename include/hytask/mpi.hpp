// Task-aware MPI: communication inside tasks that never blocks a worker.
//
// ```cpp context=mpi
// hytask::runtime rt(argc, argv);  // also initialises MPI
// std::vector<double> halo(n);
// hytask::spawn([&] {
//   hytask::mpi::recv(halo, left, 0);  // suspends this task only
//   compute(halo);
// }, hytask::out(halo));               // halo's elements
// hytask::spawn([&] { use(halo); }, hytask::in(halo.data(), n));  // after the task above
// ```
//
// See docs/mpi.md. Requests (isend, irecv, i<collective>) can gate tasks with
// hytask::after(req) or hold a task's completion with hytask::mpi::bind(req).
#pragma once

#include "hytask/comm/cancel.hpp"
#include "hytask/comm/collectives.hpp"
#include "hytask/comm/datatype.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/comm/matched_probe.hpp"
#include "hytask/comm/neighborhood.hpp"
#include "hytask/comm/ordering.hpp"
#include "hytask/comm/persistent.hpp"
#include "hytask/comm/point_to_point.hpp"
#include "hytask/comm/progress_stats.hpp"
#include "hytask/comm/request.hpp"
#include "hytask/comm/serialized.hpp"
