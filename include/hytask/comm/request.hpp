// hytask::mpi::request: a handle to a non-blocking MPI operation posted through hytask.
//
// ```cpp context=mpi
// auto r = hytask::mpi::irecv(halo, left, tag);
// hytask::spawn([&] { use(halo); }, hytask::after(r));  // ready once the message is in
//
// hytask::spawn([&] {
//   produce(edge);
//   hytask::mpi::bind(hytask::mpi::isend(edge, right, tag));  // return at once; successors
// }, hytask::inout(edge));                                    // wait for the send
// ```
//
// A request is moved, not copied. Dropping a pending request is allowed: the operation still
// completes (the runtime waits for every operation before MPI_Finalize), but its buffer must
// stay valid until then. Waiting inside a task suspends only that task.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "hytask/core/access.hpp"

namespace hytask::mpi {

namespace detail {
struct operation;
void acquire(operation* op) noexcept;
void release(operation* op) noexcept;
}  // namespace detail

class request {
 public:
  request() noexcept = default;
  explicit request(detail::operation* op) noexcept : op_(op) {}
  request(request&& o) noexcept : op_(o.op_) { o.op_ = nullptr; }
  request& operator=(request&& o) noexcept {
    if (this != &o) {
      if (op_) detail::release(op_);
      op_ = o.op_;
      o.op_ = nullptr;
    }
    return *this;
  }
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  ~request() {
    if (op_) detail::release(op_);
  }

  bool valid() const noexcept { return op_ != nullptr; }
  // True once the operation has completed; throws hytask::mpi::error if it failed.
  bool test();
  // Returns once the operation has completed (a task suspends); throws if it failed.
  void wait();
  // The completion status (source, tag, count); valid after completion.
  MPI_Status status() const;
  // The MPI request while the operation is posted and pending, else MPI_REQUEST_NULL.
  MPI_Request native() const noexcept;

  detail::operation* get() const noexcept { return op_; }

 private:
  detail::operation* op_ = nullptr;
};

// Hands hytask a request the program posted itself with MPI (MPI_Isend, MPI_Irecv, an
// MPI_I<collective>, MPI_Start on a persistent request, ...). The returned request completes
// when the MPI request does, so that it can gate tasks (hytask::after), hold a task
// (hytask::mpi::bind) or be waited for (a task suspends), like one hytask posted:
//
// ```cpp context=mpi
// MPI_Request native;
// MPI_Irecv(halo.data(), n, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &native);  // existing code
// hytask::spawn([&] { use(halo); }, hytask::after(hytask::mpi::adopt(native)));
// ```
//
// From then on hytask tests and completes it: the program must not test, wait for or free
// `native` itself. A non-persistent request is freed by MPI when it completes; a persistent
// one becomes inactive and stays the program's, to start again or free. `call`, `peer`, `tag`
// and `comm` only describe it in errors and in the watchdog's report ("MPI_Irecv from rank
// 3 (tag 7)"); errors are reported through comm's error handler, which hytask makes return
// during its own calls when comm is given. MPI_REQUEST_NULL gives a request that is complete.
request adopt(MPI_Request native, const char* call = "MPI request", int peer = -1, int tag = -1,
              MPI_Comm comm = MPI_COMM_NULL);

void wait(request& r);
void waitall(std::span<request> requests);
inline void waitall(std::vector<request>& requests) { waitall(std::span<request>(requests)); }
// True once r has completed (an invalid request counts as complete); throws
// hytask::mpi::error if it failed. Never suspends: it polls MPI once.
bool test(request& r);

// Which request of a set completed, and its status. Like MPI_Waitany and MPI_Waitsome, the
// calls below release the requests they report (they become invalid, as MPI sets a handle
// to MPI_REQUEST_NULL), so that a loop finds each completion once, and skip invalid ones.
struct completion {
  std::size_t index;
  MPI_Status status;
};

// Waits until one valid request has completed (a task suspends; main runs other tasks) and
// returns it; std::nullopt when none is valid (MPI_UNDEFINED). Throws hytask::mpi::error if
// that request failed (it is released too).
//
// ```cpp context=mpi
// std::vector<hytask::mpi::request> rs;
// for (auto& b : bufs) rs.push_back(hytask::mpi::irecv(b, MPI_ANY_SOURCE, 3));
// while (auto done = hytask::mpi::wait_any(rs)) use(bufs[done->index]);  // in arrival order
// ```
std::optional<completion> wait_any(std::span<request> requests);
// Waits until at least one valid request has completed and returns every one that has, in
// index order; empty when none is valid. If some failed, all the completed ones are released
// and the first failure is thrown.
std::vector<completion> wait_some(std::span<request> requests);
// The same without waiting: std::nullopt / empty when none has completed yet.
std::optional<completion> test_any(std::span<request> requests);
std::vector<completion> test_some(std::span<request> requests);
inline std::optional<completion> wait_any(std::vector<request>& requests) {
  return wait_any(std::span<request>(requests));
}
inline std::vector<completion> wait_some(std::vector<request>& requests) {
  return wait_some(std::span<request>(requests));
}
inline std::optional<completion> test_any(std::vector<request>& requests) {
  return test_any(std::span<request>(requests));
}
inline std::vector<completion> test_some(std::vector<request>& requests) {
  return test_some(std::span<request>(requests));
}

// Called inside a task: the task may return at once, but it completes — and releases its
// successors — only when these operations have completed. If one fails, the task fails with
// that error. Outside a task, bind waits for them.
void bind(request& r);
void bind(request&& r);
void bind(std::span<request> requests);

namespace detail {
void attach_after(hytask::detail::spawn_context& ctx, operation* const* ops, std::size_t n);
}

// An access: the task is not started before every request has completed.
template <std::size_t N>
struct requests_access {
  std::array<detail::operation*, N> ops;
  void apply(hytask::detail::spawn_context& ctx) const { detail::attach_after(ctx, ops.data(), N); }
};

struct request_span_access {
  std::vector<detail::operation*> ops;
  void apply(hytask::detail::spawn_context& ctx) const {
    detail::attach_after(ctx, ops.data(), ops.size());
  }
};

}  // namespace hytask::mpi

namespace hytask {

// The task becomes ready when all these requests have completed (the finalize of
// Büttner's commtask). The requests stay valid; a request that already completed adds nothing.
template <class... R>
  requires(std::is_same_v<R, mpi::request> && ...)
mpi::requests_access<sizeof...(R) + 1> after(const mpi::request& first, const R&... rest) {
  return {{{first.get(), rest.get()...}}};
}

inline mpi::request_span_access after(std::span<const mpi::request> requests) {
  mpi::request_span_access a;
  for (const auto& r : requests) a.ops.push_back(r.get());
  return a;
}
inline mpi::request_span_access after(const std::vector<mpi::request>& requests) {
  return after(std::span<const mpi::request>(requests));
}

}  // namespace hytask
