// commtask: the requests are hytask requests (adopted); done() reads their state, test()
// polls once through the comm layer, finalize() waits for each as hytask::mpi::waitall does.
#include "hytask/omp/commtask.hpp"

#include <chrono>
#include <thread>

#include "comm/operation.hpp"
#include "omp/layer.hpp"

namespace hytask::omp {

namespace {

bool complete(const mpi::request& r) noexcept {
  return !r.valid() ||
         r.get()->state.load(std::memory_order_acquire) == mpi::detail::op_complete;
}

}  // namespace

commtask::commtask() { detail::need_session("commtask"); }

commtask::~commtask() {
  // The buffers of requests still in flight must not be freed under MPI: wait, but report
  // nothing (finalize() is where errors are seen).
  try {
    for (mpi::request& r : requests_) r.wait();
  } catch (...) {
  }
}

commtask& commtask::operator=(commtask&& o) noexcept {
  if (this != &o) {
    try {
      for (mpi::request& r : requests_) r.wait();
    } catch (...) {
    }
    requests_ = std::move(o.requests_);
  }
  return *this;
}

void commtask::add(MPI_Request request) { add(std::span<const MPI_Request>(&request, 1)); }

void commtask::add(std::span<const MPI_Request> requests) {
  detail::need_session("commtask::add");
  for (MPI_Request r : requests) {
    requests_.push_back(mpi::adopt(r, "MPI request (hytask::omp::commtask)"));
    detail::hand_over(requests_.back().get());
  }
}

void commtask::add(mpi::request&& request) {
  detail::need_session("commtask::add");
  if (!request.valid()) return;
  requests_.push_back(std::move(request));
  detail::hand_over(requests_.back().get());
}

bool commtask::done() const noexcept {
  for (const mpi::request& r : requests_)
    if (!complete(r)) return false;
  return true;
}

bool commtask::test() {
  for (mpi::request& r : requests_)
    if (!complete(r)) {
      if (!r.test()) return false;  // polls once (all pending requests), throws on failure
      break;
    }
  for (mpi::request& r : requests_) {
    if (!complete(r)) return false;
    r.test();  // complete: throws if it failed
  }
  return true;
}

void commtask::finalize() {
  std::vector<mpi::request> mine;
  mine.swap(requests_);
  mpi::waitall(mine);  // waits for all, then throws the first failure
}

void finalize_each(std::span<commtask* const> commtasks,
                   const std::function<void(std::size_t)>& post_work) {
  std::vector<bool> finished(commtasks.size(), false);
  std::size_t left = commtasks.size();
  std::int64_t backoff_ns = 0;
  while (left != 0) {
    bool any = false;
    for (std::size_t i = 0; i < commtasks.size(); ++i) {
      if (finished[i] || !commtasks[i]->test()) continue;
      commtasks[i]->finalize();  // complete: returns at once (or throws its failure)
      finished[i] = true;
      --left;
      any = true;
      post_work(i);
    }
    // MPI_Waitany polls back to back; so does this, briefly, then yields the core between
    // polls (the session's progress thread and OMPT callbacks poll too).
    backoff_ns = any ? 0 : std::min<std::int64_t>(backoff_ns + 1000, 50000);
    if (left != 0 && backoff_ns > 20000) std::this_thread::yield();
  }
}

}  // namespace hytask::omp
