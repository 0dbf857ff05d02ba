// parallel_for: one participant per worker, each a runtime-owned task posted to that
// worker's mailbox, so participant p always runs on worker p (first-touch locality).
//
// The caller waits until every participant that started has finished (with the tasks its
// chunks spawned). Participants that have not started when the last iteration is done are
// cancelled, so a worker busy in a long task never delays the loop.
#include <algorithm>
#include <exception>
#include <memory>
#include <string>

#include "core/sched/scheduler.hpp"
#include "hytask/core/parallel_for.hpp"
#include "hytask/errors.hpp"

namespace hytask::detail {
namespace {

constexpr std::int64_t max_chunks_per_block = (std::int64_t{1} << 31) - 1;

enum ticket_state : int { ticket_pending = 0, ticket_started = 1, ticket_cancelled = 2 };

struct loop_state;

struct alignas(64) participant {
  loop_state* owner = nullptr;
  std::int64_t lo = 0, hi = 0;                 // the block static_ would give this participant
  std::atomic<int> claimed{0};                 // static_: the block was taken (by anyone)
  std::atomic<std::uint64_t> span{0};          // static_ws: (front << 32) | back, in chunks
  std::atomic<int> ticket{ticket_pending};
};

struct loop_state {
  std::atomic<int> refs;
  std::int64_t n = 0;
  std::int64_t chunk = 1;
  schedule sched = schedule::static_;
  unsigned parts_count = 1;
  loop_body_fn body = nullptr;
  void* ctx = nullptr;
  std::unique_ptr<participant[]> parts;

  alignas(64) std::atomic<std::int64_t> next{0};  // dynamic, guided
  alignas(64) std::atomic<std::int64_t> done{0};  // iterations finished (or skipped)
  alignas(64) std::atomic<int> outstanding{0};    // participants not yet finished
  std::atomic<std::uint32_t> waiting{0};
  task* waiter = nullptr;
  std::atomic<bool> failed{false};
  std::exception_ptr error;

  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

void finish_participants(loop_state* ls, int count) {
  if (count == 0) return;
  if (ls->outstanding.fetch_sub(count, std::memory_order_seq_cst) == count &&
      ls->waiting.load(std::memory_order_seq_cst) == 1 && ls->waiting.exchange(0) == 1)
    core::scheduler::instance()->resume(ls->waiter);
}

// The last iteration is done: participants that never started will not be needed.
void cancel_unstarted(loop_state* ls) {
  int cancelled = 0;
  for (unsigned q = 0; q < ls->parts_count; ++q) {
    int expected = ticket_pending;
    if (ls->parts[q].ticket.compare_exchange_strong(expected, ticket_cancelled)) ++cancelled;
  }
  finish_participants(ls, cancelled);
}

// Runs one chunk; the caller adds the iterations to its local count, published once when
// it runs out of work (a shared counter per chunk would bounce between cores).
void run_range(loop_state* ls, std::int64_t lo, std::int64_t hi) {
  if (lo >= hi || ls->failed.load(std::memory_order_relaxed)) return;
  try {
    ls->body(ls->ctx, lo, hi);
  } catch (...) {
    if (!ls->failed.exchange(true)) ls->error = std::current_exception();
  }
}

void publish_done(loop_state* ls, std::int64_t count) {
  if (count != 0 && ls->done.fetch_add(count, std::memory_order_acq_rel) + count == ls->n)
    cancel_unstarted(ls);
}

// static_ with a chunk: chunks q, q + P, q + 2P, ...  Returns the iterations covered.
std::int64_t run_static_part(loop_state* ls, unsigned q) {
  participant& p = ls->parts[q];
  if (ls->chunk <= 0) {
    run_range(ls, p.lo, p.hi);
    return p.hi - p.lo;
  }
  std::int64_t covered = 0;
  const std::int64_t stride = ls->chunk * ls->parts_count;
  for (std::int64_t lo = static_cast<std::int64_t>(q) * ls->chunk; lo < ls->n; lo += stride) {
    std::int64_t hi = std::min(lo + ls->chunk, ls->n);
    run_range(ls, lo, hi);
    covered += hi - lo;
  }
  return covered;
}

bool claim(participant& p) {
  int expected = 0;
  return p.claimed.load(std::memory_order_relaxed) == 0 &&
         p.claimed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel);
}

// static_ws: take the next chunk from the front of a block (owner) or its back (thief).
bool take_chunk(loop_state* ls, participant& p, bool from_front, std::int64_t& lo,
                std::int64_t& hi) {
  std::uint64_t s = p.span.load(std::memory_order_acquire);
  for (;;) {
    std::uint64_t front = s >> 32, back = s & 0xffffffffu;
    if (front >= back) return false;
    std::uint64_t taken = from_front ? front : back - 1;
    std::uint64_t next = from_front ? ((front + 1) << 32) | back : (front << 32) | (back - 1);
    if (p.span.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      lo = p.lo + static_cast<std::int64_t>(taken) * ls->chunk;
      hi = std::min(lo + ls->chunk, p.hi);
      return true;
    }
  }
}

// Returns the iterations this participant ran.
std::int64_t participate(loop_state* ls, unsigned q) {
  const std::vector<unsigned>& victims = core::scheduler::instance()->at(q).victims;
  std::int64_t covered = 0;
  switch (ls->sched) {
    case schedule::static_: {
      if (claim(ls->parts[q])) covered += run_static_part(ls, q);
      // Take over the blocks of participants that have not started (busy elsewhere).
      for (unsigned v : victims)
        if (v < ls->parts_count && claim(ls->parts[v])) covered += run_static_part(ls, v);
      break;
    }
    case schedule::dynamic: {
      for (;;) {
        std::int64_t lo = ls->next.fetch_add(ls->chunk, std::memory_order_relaxed);
        if (lo >= ls->n) break;
        std::int64_t hi = std::min(lo + ls->chunk, ls->n);
        run_range(ls, lo, hi);
        covered += hi - lo;
      }
      break;
    }
    case schedule::guided: {
      std::int64_t cur = ls->next.load(std::memory_order_relaxed);
      for (;;) {
        std::int64_t remaining = ls->n - cur;
        if (remaining <= 0) break;
        std::int64_t size = std::max<std::int64_t>(
            ls->chunk, (remaining + ls->parts_count - 1) / ls->parts_count);
        size = std::min(size, remaining);
        if (ls->next.compare_exchange_weak(cur, cur + size, std::memory_order_relaxed)) {
          run_range(ls, cur, cur + size);
          covered += size;
          cur = ls->next.load(std::memory_order_relaxed);
        }
      }
      break;
    }
    case schedule::static_ws: {
      std::int64_t lo, hi;
      while (take_chunk(ls, ls->parts[q], true, lo, hi)) {
        run_range(ls, lo, hi);
        covered += hi - lo;
      }
      for (unsigned v : victims) {
        if (v >= ls->parts_count) continue;
        while (take_chunk(ls, ls->parts[v], false, lo, hi)) {
          run_range(ls, lo, hi);
          covered += hi - lo;
        }
      }
      break;
    }
  }
  publish_done(ls, covered);
  return covered;
}

struct ticket {
  loop_state* ls;
  unsigned q;
  void operator()() const {
    int expected = ticket_pending;
    const bool started = ls->parts[q].ticket.compare_exchange_strong(expected, ticket_started);
    // A participant that ran no iteration (cancelled, or every block already taken) leaves
    // no trace slice: tools reading the trace (hytask-model's iteration split) would take
    // it for compute.
    if (!started || participate(ls, q) == 0) {
      core::worker* w = core::current_worker();
      if (w && w->current_task) w->current_task->flags |= flag_untraced;
    }
  }
};

void ticket_complete(task* t) {
  auto* p = static_cast<participant*>(t->hook_arg);
  loop_state* ls = p->owner;
  // A started participant finishes now (its spawned tasks included); a cancelled one was
  // already accounted for by cancel_unstarted.
  if (p->ticket.load(std::memory_order_acquire) == ticket_started) finish_participants(ls, 1);
  ls->release();
}

}  // namespace

void run_loop(std::int64_t n, loop_body_fn body, void* ctx, schedule s, std::size_t chunk) {
  if (n < 0)
    throw usage_error("hytask::parallel_for: the range has more than 2^63 iterations; split it");
  if (n == 0) return;
  core::worker* w = core::require_worker("parallel_for");
  core::scheduler* sched = core::scheduler::instance();
  if (static_cast<int>(s) < 0 || static_cast<int>(s) > static_cast<int>(schedule::static_ws))
    throw usage_error("hytask::parallel_for: unknown schedule value " +
                      std::to_string(static_cast<int>(s)));

  const unsigned P = sched->size();
  auto* ls = new loop_state;
  ls->refs.store(static_cast<int>(P) + 1, std::memory_order_relaxed);
  ls->n = n;
  ls->sched = s;
  ls->parts_count = P;
  ls->body = body;
  ls->ctx = ctx;
  ls->parts.reset(new participant[P]);
  ls->outstanding.store(static_cast<int>(P), std::memory_order_relaxed);

  // Upper level: OpenMP's static partition (the first n % P blocks get one more iteration).
  const std::int64_t base = n / P, extra = n % P;
  std::int64_t lo = 0;
  for (unsigned q = 0; q < P; ++q) {
    std::int64_t len = base + (static_cast<std::int64_t>(q) < extra ? 1 : 0);
    ls->parts[q].owner = ls;
    ls->parts[q].lo = lo;
    ls->parts[q].hi = lo + len;
    lo += len;
  }
  const auto c = static_cast<std::int64_t>(chunk);
  switch (s) {
    case schedule::static_:
      ls->chunk = c;  // 0 = one block per participant
      break;
    case schedule::dynamic:
      ls->chunk = c > 0 ? c : std::max<std::int64_t>(1, n / (8 * static_cast<std::int64_t>(P)));
      break;
    case schedule::guided:
      ls->chunk = c > 0 ? c : 1;
      break;
    case schedule::static_ws: {
      ls->chunk = c > 0 ? c : std::max<std::int64_t>(1, n / (16 * static_cast<std::int64_t>(P)));
      const std::int64_t longest = base + (extra ? 1 : 0);
      if ((longest + ls->chunk - 1) / ls->chunk > max_chunks_per_block)
        ls->chunk = (longest + max_chunks_per_block - 1) / max_chunks_per_block;
      for (unsigned q = 0; q < P; ++q) {
        std::int64_t chunks = (ls->parts[q].hi - ls->parts[q].lo + ls->chunk - 1) / ls->chunk;
        ls->parts[q].span.store(static_cast<std::uint64_t>(chunks), std::memory_order_relaxed);
      }
      break;
    }
  }

  static const char* const name = core::intern_name("parallel_for");
  for (unsigned q = 0; q < P; ++q) {
    task* t = sched->allocate(w);
    t->flags |= flag_internal;
    // Tasks the body spawns are one level below the caller, as its own children would be.
    t->depth = w->current_task ? w->current_task->depth : 0;
    t->name = name;
    t->on_complete = &ticket_complete;
    t->hook_arg = &ls->parts[q];
    emplace_callable(t, ticket{ls, q});
    sched->post_to_mailbox(q, t);
  }

  // Wait for the participants; this worker runs its own one from its mailbox meanwhile.
  sched->suspend(
      [](task* t, void* arg) {
        auto* state = static_cast<loop_state*>(arg);
        state->waiter = t;
        state->waiting.store(1, std::memory_order_seq_cst);
        if (state->outstanding.load(std::memory_order_seq_cst) == 0 &&
            state->waiting.exchange(0) == 1)
          core::scheduler::instance()->resume(t);
      },
      ls);

  std::exception_ptr error = ls->failed.load(std::memory_order_acquire) ? ls->error : nullptr;
  ls->release();
  if (error) std::rethrow_exception(error);
}

}  // namespace hytask::detail
