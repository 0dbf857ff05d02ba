// CPU-level helpers: which sanitizer is on, fences that sanitizers can see, prefetching,
// and the spin-wait hint.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HYTASK_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define HYTASK_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(HYTASK_ASAN)
#define HYTASK_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(HYTASK_TSAN)
#define HYTASK_TSAN 1
#endif

#include <atomic>

namespace hytask::core {

// ThreadSanitizer does not model std::atomic_thread_fence. Code that publishes data through
// a fence uses these orderings on the atomic operations themselves instead: identical in
// effect, slightly stronger, and visible to TSan. Normal builds keep the cheaper fences.
#ifdef HYTASK_TSAN
inline constexpr bool fences_visible = false;
#else
inline constexpr bool fences_visible = true;
#endif

// A full barrier (Dekker-style hand-offs: publish, then look for sleepers).
inline void full_fence() noexcept {
#ifdef HYTASK_TSAN
  static std::atomic<int> fence_word{0};
  fence_word.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}



// The spin-wait hint: lets the sibling hardware thread run and saves power in spin loops.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Fetches a cache line for reading, ahead of its use; any address (a prefetch never
// faults). In asm on x86: GCC 12 finds a function whose only statement is
// __builtin_prefetch free of side effects, and drops calls to it (or to a helper that
// calls it) that are not inlined before that analysis.
inline void prefetch(const void* p) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetcht0 (%0)" ::"r"(p));
#else
  __builtin_prefetch(p, 0);
#endif
}

// Fetches a cache line in the exclusive state, ahead of an atomic read-modify-write or a
// store to it. __builtin_prefetch(p, 1) is a plain read prefetch unless the whole build
// targets PREFETCHW, which leaves the RMW a second round trip for ownership; the
// instruction is a no-op on x86 processors that lack it.
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

}  // namespace hytask::core
