// commtask: the `commtask init / finalize` of Büttner's thesis, "Improving Hybrid Codes
// Through MPI-Aware OpenMP", for fork-join OpenMP codes, as a class.
// `add` is the init region's hand-over: the requests are progressed by hytask while the
// program computes — by OpenMP threads at scheduling points (OMPT) and by the session's
// progress thread — and `finalize` is the finalize region: it returns once they have all
// completed, and may run the post-communication work.
//
// ```cpp context=omp
// hytask::omp::commtask ct;
// MPI_Request r, s;
// MPI_Irecv(halo.data(), n, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, &r);
// MPI_Isend(edge.data(), n, MPI_DOUBLE, right, tag, MPI_COMM_WORLD, &s);
// ct.add({r, s});                     // commtask init
// #pragma omp parallel for
// for (int b = 0; b < blocks; ++b)
//   compute(b);                       // communication-independent work; MPI progresses
// ct.finalize([&] { use(halo); });    // commtask finalize: wait, then post-work
// ```
//
// Several commtasks stand for the thesis's IDs: finalize_each runs each one's post-work as soon as
// its own requests complete, in completion order. A request that fails makes test() and
// finalize() throw hytask::mpi::error. The destructor waits for requests still pending (their
// buffers must outlive them) but reports no error: finalize. Needs a hytask::omp::session.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "hytask/comm/request.hpp"

namespace hytask::omp {

class commtask {
 public:
  commtask();  // throws hytask::usage_error without a session
  ~commtask();
  commtask(commtask&&) noexcept = default;
  commtask& operator=(commtask&&) noexcept;
  commtask(const commtask&) = delete;
  commtask& operator=(const commtask&) = delete;

  // Hands requests to hytask (hytask::mpi::adopt): the program must not test, wait for or
  // free them any more.
  void add(MPI_Request request);
  void add(std::span<const MPI_Request> requests);
  void add(std::initializer_list<MPI_Request> requests) {
    add(std::span<const MPI_Request>(requests.begin(), requests.size()));
  }
  void add(hytask::mpi::request&& request);

  // Whether every request added has completed, as far as hytask's progress has seen; polls
  // nothing (done() after compute says whether progress kept up).
  bool done() const noexcept;
  // The advance-check: polls once, then says whether every request has completed.
  bool test();
  // Returns once every request has completed (main waits in hytask, polling MPI; another
  // thread polls with a backoff), then forgets them: the commtask can be used again.
  void finalize();
  template <class F>
  void finalize(F&& post_work) {
    finalize();
    std::forward<F>(post_work)();
  }

  std::size_t size() const noexcept { return requests_.size(); }

 private:
  std::vector<hytask::mpi::request> requests_;
};

// Finalises each commtask and runs post_work(i) for commtasks[i] as soon as its requests
// have completed, in the order they complete (the thesis's finalize regions with IDs).
void finalize_each(std::span<commtask* const> commtasks,
                   const std::function<void(std::size_t)>& post_work);
inline void finalize_each(std::initializer_list<commtask*> commtasks,
                          const std::function<void(std::size_t)>& post_work) {
  finalize_each(std::span<commtask* const>(commtasks.begin(), commtasks.size()), post_work);
}

}  // namespace hytask::omp
