// parallel_for: a fork-join loop over an integer range, run by all workers.
//
// ```cpp context=loops
// hytask::parallel_for(0, n, [&](int i) { y[i] += a * x[i]; });
// hytask::parallel_for(0, n, [&](int lo, int hi) { kernel(lo, hi); },
//                      hytask::schedule::static_ws, 256);
// ```
//
// The body is called per index, f(i), or — when it accepts two indices — per chunk,
// f(lo, hi) for [lo, hi). The call returns when every iteration, and every task the body
// spawned, has completed; the first exception a body threw is rethrown.
//
// Schedules (chunk 0 picks a default):
//   static_    the range is cut into one block per worker, like OpenMP schedule(static):
//              worker p gets block p, so two loops over the same range touch the same data
//              from the same worker (first-touch locality). With a chunk, chunks are dealt
//              round-robin as in schedule(static, chunk). A worker that is late (busy in a
//              long task) has its block taken over by one that finished.
//   dynamic    chunks are handed out from a shared counter, first come first served
//              (default chunk: about n / (8 * workers)).
//   guided     shrinking chunks, proportional to the remaining iterations / workers, never
//              below chunk.
//   static_ws  Büttner's static work stealing: each worker first runs the chunks of the
//              block static_ would give it, in order, then steals chunks from the end of
//              other workers' blocks — workers on the same socket first.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace hytask {

enum class schedule { static_, dynamic, guided, static_ws };

namespace detail {
using loop_body_fn = void (*)(void* ctx, std::int64_t lo, std::int64_t hi);
void run_loop(std::int64_t n, loop_body_fn body, void* ctx, schedule s, std::size_t chunk);
}  // namespace detail

template <std::integral I, class F>
void parallel_for(I begin, I end, F&& f, schedule s = schedule::static_, std::size_t chunk = 0) {
  static_assert(std::is_invocable_v<F&, I> || std::is_invocable_v<F&, I, I>,
                "hytask::parallel_for: the body must be callable as f(i) or f(lo, hi)");
  if (!(begin < end)) return;
  const auto n = static_cast<std::int64_t>(static_cast<std::uint64_t>(end) -
                                           static_cast<std::uint64_t>(begin));
  struct ctx_t {
    I begin;
    std::remove_reference_t<F>* f;
  } ctx{begin, &f};
  detail::loop_body_fn body = [](void* c, std::int64_t lo, std::int64_t hi) {
    auto* x = static_cast<ctx_t*>(c);
    if constexpr (std::is_invocable_v<F&, I, I>) {
      (*x->f)(static_cast<I>(x->begin + static_cast<I>(lo)),
              static_cast<I>(x->begin + static_cast<I>(hi)));
    } else {
      for (std::int64_t i = lo; i < hi; ++i) (*x->f)(static_cast<I>(x->begin + static_cast<I>(i)));
    }
  };
  detail::run_loop(n, body, &ctx, s, chunk);
}

}  // namespace hytask
