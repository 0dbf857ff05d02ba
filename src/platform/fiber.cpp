#include "platform/fiber.hpp"

#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>

#include "platform/cpu.hpp"
#include "platform/messages.hpp"

#ifdef HYTASK_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef HYTASK_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace bctx = boost::context::detail;

namespace hytask::core {
namespace {

constexpr std::size_t guard_bytes = 64 * 1024;  // large frames must not jump over the guard

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

fiber_main_fn g_fiber_main = nullptr;
thread_local fiber* t_running = nullptr;

// Accessors are out of line on purpose: a fiber may resume on another thread, and the
// compiler must not reuse a thread-local address computed before the switch.
[[gnu::noinline]] void set_running(fiber* f) noexcept {
  t_running = f;
  asm volatile("" ::: "memory");
}

struct handoff {
  fiber* from;
  after_switch_fn after;
  void* arg;
};

inline void san_before_jump([[maybe_unused]] fiber* from, [[maybe_unused]] fiber* to) {
#ifdef HYTASK_ASAN
  __sanitizer_start_switch_fiber(&from->san_fake_stack, to->stack_bottom, to->stack_size);
#endif
#ifdef HYTASK_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
}

inline void san_after_jump([[maybe_unused]] fiber* self, [[maybe_unused]] fiber* from) {
#ifdef HYTASK_ASAN
  const void* old_bottom = nullptr;
  std::size_t old_size = 0;
  __sanitizer_finish_switch_fiber(self ? self->san_fake_stack : nullptr, &old_bottom, &old_size);
  if (from && from->stack_bottom == nullptr) {  // a thread's home stack, learnt on first switch
    from->stack_bottom = old_bottom;
    from->stack_size = old_size;
  }
#endif
}

// Runs on the destination side of every switch.
inline void complete_switch(bctx::transfer_t t) {
  auto* h = static_cast<handoff*>(t.data);
  // Copy out of the source's stack before publishing it: once published, it may resume.
  fiber* from = h->from;
  after_switch_fn after = h->after;
  void* arg = h->arg;
  from->ctx = t.fctx;
#if defined(HYTASK_ASSERTIONS)
  __atomic_store_n(&from->running, 0, __ATOMIC_SEQ_CST);
#endif
  if (after) after(from, arg);
}

void fiber_entry(bctx::transfer_t t) {
  san_after_jump(nullptr, static_cast<handoff*>(t.data)->from);
  complete_switch(t);
  g_fiber_main();
  std::abort();  // fiber mains never return
}

// ---- stack overflow reporting -------------------------------------------------------

overflow_describe_fn g_describe = nullptr;
std::size_t g_stack_size_for_msg = 0;
struct sigaction g_previous_segv {};
std::atomic<bool> g_handler_installed{false};
thread_local void* t_altstack = nullptr;

void write_all(const char* s, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

std::size_t append(char* buf, std::size_t pos, std::size_t cap, const char* s) {
  while (*s && pos + 1 < cap) buf[pos++] = *s++;
  return pos;
}

std::size_t append_num(char* buf, std::size_t pos, std::size_t cap, std::size_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n > 0 && pos + 1 < cap) buf[pos++] = tmp[--n];
  return pos;
}

void segv_handler(int sig, siginfo_t* info, void* uctx) {
  fiber* f = t_running;
  if (f && info && f->in_guard(info->si_addr)) {
    char msg[512];
    std::size_t p = 0;
    // The format of messages.hpp, built without allocating (a signal handler).
    const int rank = message_rank();
    if (rank >= 0) {
      p = append(msg, p, sizeof msg, "hytask[rank ");
      p = append_num(msg, p, sizeof msg, static_cast<std::size_t>(rank));
      p = append(msg, p, sizeof msg, "]: ");
    } else {
      p = append(msg, p, sizeof msg, "hytask: ");
    }
    p = append(msg, p, sizeof msg, "error: stack overflow in ");
    if (g_describe) p += g_describe(msg + p, sizeof msg - p);
    p = append(msg, p, sizeof msg, " (task stacks are ");
    p = append_num(msg, p, sizeof msg, g_stack_size_for_msg / 1024);
    p = append(msg, p, sizeof msg,
               " KiB). Raise HYTASK_STACK_SIZE (for example HYTASK_STACK_SIZE=4M) or move large "
               "arrays off the stack.\n");
    write_all(msg, p);
    ::signal(SIGSEGV, SIG_DFL);  // returning re-faults with the default action
    return;
  }
  // Not a task stack overflow: hand over to whoever was there before us.
  if (g_previous_segv.sa_flags & SA_SIGINFO) {
    if (g_previous_segv.sa_sigaction) {
      g_previous_segv.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (g_previous_segv.sa_handler != SIG_DFL && g_previous_segv.sa_handler != SIG_IGN) {
    g_previous_segv.sa_handler(sig);
    return;
  }
  ::signal(SIGSEGV, SIG_DFL);
}

}  // namespace

bool fiber::in_guard(const void* addr) const {
  auto a = reinterpret_cast<const unsigned char*>(addr);
  return map != nullptr && a >= map && a < map + guard_bytes;
}

void set_fiber_main(fiber_main_fn fn) { g_fiber_main = fn; }

namespace {
std::atomic<std::size_t> g_live_fibers{0};
}  // namespace

std::size_t live_fibers() noexcept { return g_live_fibers.load(std::memory_order_relaxed); }

std::size_t fiber_limit() noexcept {
  static const std::size_t limit = [] {
    unsigned long maps = 65530;  // Linux's default, when /proc does not say
    if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
      unsigned long v = 0;
      if (std::fscanf(f, "%lu", &v) == 1 && v > 0) maps = v;
      std::fclose(f);
    }
    return static_cast<std::size_t>(maps / 4);
  }();
  return limit;
}

fiber* create_fiber(std::size_t stack_size) {
  const std::size_t ps = page_size();
  // The fiber record sits at the top of its own mapping, above the stack: records of
  // fibers running on different workers never share a cache line.
  constexpr std::size_t record_bytes = 128;
  std::size_t usable = (stack_size + ps - 1) / ps * ps;
  std::size_t total = usable + guard_bytes + ps;
  void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (m == MAP_FAILED)
    throw std::system_error(errno, std::generic_category(),
                            "hytask: cannot map a task stack (lower HYTASK_STACK_SIZE or "
                            "HYTASK_MAX_TASKS)");
  if (::mprotect(m, guard_bytes, PROT_NONE) != 0) {
    int e = errno;
    ::munmap(m, total);
    throw std::system_error(e, std::generic_category(), "hytask: cannot protect a stack guard page");
  }
  auto* base = static_cast<unsigned char*>(m);
  unsigned char* record = base + total - record_bytes;
  static_assert(sizeof(fiber) <= record_bytes);
  auto* f = ::new (record) fiber;
  f->map = base;
  f->map_size = total;
  f->stack_bottom = base + guard_bytes;
  f->stack_size = total - guard_bytes - record_bytes;
#ifdef HYTASK_ASAN
  // Frames of fibers that never return leave poisoned redzones behind; a new stack mapped at
  // the same address must not inherit them.
  ASAN_UNPOISON_MEMORY_REGION(base + guard_bytes, total - guard_bytes);
#endif
  f->ctx = bctx::make_fcontext(record, f->stack_size, &fiber_entry);
#ifdef HYTASK_TSAN
  f->tsan_fiber = __tsan_create_fiber(0);
#endif
  g_live_fibers.fetch_add(1, std::memory_order_relaxed);
  return f;
}

void destroy_fiber(fiber* f) {
  if (!f) return;
  g_live_fibers.fetch_sub(1, std::memory_order_relaxed);
#ifdef HYTASK_TSAN
  if (f->tsan_fiber) __tsan_destroy_fiber(f->tsan_fiber);
#endif
  unsigned char* map = f->map;
  std::size_t size = f->map_size;
  f->~fiber();
#ifdef HYTASK_ASAN
  ASAN_UNPOISON_MEMORY_REGION(map + guard_bytes, size - guard_bytes);
#endif
  ::munmap(map, size);
}

void init_home_fiber(fiber* home) {
  *home = fiber{};
#ifdef HYTASK_TSAN
  home->tsan_fiber = __tsan_get_current_fiber();
#endif
  set_running(home);
  home->running = 1;
}

void destroy_home_fiber(fiber* home) {
  if (t_running == home) set_running(nullptr);
}

void switch_to(fiber* from, fiber* to, after_switch_fn after, void* arg) {
  handoff h{from, after, arg};
#if defined(HYTASK_ASSERTIONS)
  if (__atomic_exchange_n(&to->running, 1, __ATOMIC_SEQ_CST) != 0) {
    write_all("hytask: internal error: switch to a fiber that is running\n", 57);
    std::abort();
  }
#endif
  san_before_jump(from, to);
  set_running(to);
  bctx::transfer_t t = bctx::jump_fcontext(to->ctx, &h);
  san_after_jump(from, static_cast<handoff*>(t.data)->from);
  complete_switch(t);
}

fiber* running_fiber() noexcept { return t_running; }

void install_overflow_handler(overflow_describe_fn describe, std::size_t stack_size_for_msg) {
  g_describe = describe;
  g_stack_size_for_msg = stack_size_for_msg;
  bool expected = false;
  if (g_handler_installed.compare_exchange_strong(expected, true)) {
    struct sigaction sa {};
    sa.sa_sigaction = &segv_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigaction(SIGSEGV, &sa, &g_previous_segv);
  }
  install_signal_stack_for_thread();
}

void install_signal_stack_for_thread() {
  if (t_altstack) return;
  stack_t old{};
  if (::sigaltstack(nullptr, &old) == 0 && !(old.ss_flags & SS_DISABLE)) return;  // user's own
  const std::size_t size = 64 * 1024;
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;  // overflow still faults; only the message is lost
  stack_t ss{};
  ss.ss_sp = m;
  ss.ss_size = size;
  if (::sigaltstack(&ss, nullptr) != 0) {
    ::munmap(m, size);
    return;
  }
  t_altstack = m;
}

void remove_signal_stack_for_thread() {
  if (!t_altstack) return;
  stack_t ss{};
  ss.ss_flags = SS_DISABLE;
  ::sigaltstack(&ss, nullptr);
  ::munmap(t_altstack, 64 * 1024);
  t_altstack = nullptr;
}

}  // namespace hytask::core
