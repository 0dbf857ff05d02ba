#include "global/am_rma.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "global/am_rounds.hpp"
#include "global/messages.hpp"
#include "platform/clock.hpp"
#include "global/mpi_call.hpp"
#include "hytask/comm/error.hpp"

namespace hytask::global::detail {

using mpi::detail::kind;
using mpi::detail::operation;

namespace {

// The window: writer counts of areas 0 and 1, their offsets (adjacent, read together), then
// the areas. Entries: {length, source} then the buffer, padded to 8 bytes.
constexpr MPI_Aint writers_disp[2] = {0, 8};
constexpr MPI_Aint offset_disp[2] = {16, 24};
constexpr MPI_Aint header_bytes = 64;
constexpr std::uint64_t closed_signal = std::uint64_t(1) << 40;  // added to a writer count
constexpr std::uint32_t end_mark = 0xffffffffu;
struct entry_head {
  std::uint32_t length, source;
};
static_assert(sizeof(entry_head) == 8);

constexpr std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t(7); }
std::size_t entry_bytes(std::size_t payload) { return sizeof(entry_head) + round8(payload); }

std::uint64_t clock_ns() { return static_cast<std::uint64_t>(core::now_ns()); }

constexpr std::uint64_t first_backoff_ns = 16'000, last_backoff_ns = 2'000'000;

}  // namespace

struct am_rma::pump_node : hytask::detail::event_waiter {
  am_rma* self = nullptr;
  operation* op = nullptr;
};

am_rma::am_rma(MPI_Comm parent, receiver on_receive, failure on_failure, std::size_t max_bytes,
               std::size_t area_bytes)
    : sys_(comm_or_throw("global dependencies")),
      on_receive_(std::move(on_receive)),
      on_failure_(std::move(on_failure)),
      max_bytes_(max_bytes),
      area_(round8(std::max(area_bytes, entry_bytes(max_bytes)))) {
  blocking_mpi("MPI_Comm_dup", -1, [&] {
    int rc = MPI_Comm_dup(parent, &comm_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm_, &rank_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm_, &size_);
    return rc;
  });
  blocking_mpi("MPI_Win_allocate", -1, [&] {
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc != MPI_SUCCESS) return rc;
    // The queue's words see one atomic operation each (SUM) besides reads (NO_OP).
    MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
    // Open MPI: a single network atomic per operation (the thesis's §4.3.1); others ignore it.
    MPI_Info_set(info, "acc_single_intrinsic", "true");
    // MPICH: which atomics the window sees, so that it may use the hardware's.
    MPI_Info_set(info, "which_accumulate_ops", "sum,no_op");
    MPI_Info_set(info, "accumulate_noncontig_dtype", "false");
    rc = MPI_Win_allocate(header_bytes + 2 * static_cast<MPI_Aint>(area_), 1, info, comm_,
                          &base_, &win_);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
      std::memset(base_, 0, static_cast<std::size_t>(header_bytes));
      rc = MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    }
    // Every rank's header is zero before any rank writes to it.
    if (rc == MPI_SUCCESS) rc = MPI_Barrier(comm_);
    if (rc == MPI_SUCCESS) rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    return rc;
  });
  rounds_ = std::make_unique<am_rounds>(sys_, comm_, size_, on_failure_, activity_);
  outbox_.resize(static_cast<std::size_t>(size_));
  targets_.resize(static_cast<std::size_t>(size_));
}

am_rma::~am_rma() {
  try {
    if (open_.load() || running_) close();
    blocking_mpi("MPI_Win_free", -1, [&] {
      int rc = MPI_Win_unlock_all(win_);
      if (rc == MPI_SUCCESS) rc = MPI_Win_free(&win_);
      return rc;
    });
    blocking_mpi("MPI_Comm_free", -1, [&] { return MPI_Comm_free(&comm_); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hytask: closing the global layer's RMA queue: %s\n", e.what());
  }
}

void am_rma::send(int dest, std::vector<std::byte> buf) {
  if (buf.size() > max_bytes_)
    throw std::logic_error("hytask: internal error: a global-dependency message of " +
                           std::to_string(buf.size()) + " bytes exceeds the receivers' " +
                           std::to_string(max_bytes_));
  if (dest < 0 || dest >= size_)
    throw std::logic_error("hytask: internal error: a global-dependency message to rank " +
                           std::to_string(dest) + " of " + std::to_string(size_));
  buffer_header h{};
  if (read_header(buf, h)) {
    if (h.records == 0 && buf.size() == sizeof h)
      throw std::logic_error("hytask: internal error: a global-dependency buffer without records");
    if (in_a_round(h.round)) rounds_->sent(round_key(h.round, h.epoch));  // before its ack
  }
  enqueue(dest, std::move(buf));
}

void am_rma::enqueue(int dest, std::vector<std::byte> buf) {
  bool start = false;
  {
    std::lock_guard lk(out_mu_);
    outbox_[static_cast<std::size_t>(dest)].push_back(std::move(buf));
    ++queued_;
    if (!running_) {
      running_ = true;
      start = true;
    } else if (finishing_) {
      restart_ = true;
    }
  }
  if (start) start_pump();
}

void am_rma::open() {
  if (open_.exchange(true)) return;
  bool start = false;
  {
    std::lock_guard lk(out_mu_);
    if (!running_) {
      running_ = true;
      start = true;
    } else if (finishing_) {
      restart_ = true;
    }
  }
  if (start) start_pump();
}

void am_rma::close() {
  open_.store(false, std::memory_order_release);
  hytask::event stopped;
  {
    std::lock_guard lk(out_mu_);
    if (!running_) return;
    stopped_ = &stopped;
  }
  stopped.wait();
}

void am_rma::complete_round(std::uint64_t key, std::uint64_t label, round_done done,
                            round_mismatch mismatch) {
  rounds_->start(key, label, std::move(done), std::move(mismatch));
}

// The pump: a polled operation, tested by whichever thread polls (one at a time), pending
// while the queue is open or buffers wait to leave.
void am_rma::start_pump() {
  auto* n = new pump_node;
  n->self = this;
  operation* op = layer_op(kind::polled, comm_);
  op->task_name = activity_.load(std::memory_order_relaxed);
  op->call_name = "MPI RMA queue (global dependencies)";
  op->call = nullptr;
  op->call_arg = this;
  op->test = [](void* arg, int* flag, MPI_Status*) {
    return static_cast<am_rma*>(arg)->pump(flag);
  };
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<pump_node*>(e);
    const int error = self->op->error;
    mpi::detail::release(self->op);
    am_rma* am = self->self;
    delete self;
    am->pump_ended(error);
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}

void am_rma::pump_ended(int error) {
  if (error != MPI_SUCCESS) {
    const std::string call = failed_call_ ? failed_call_ : "MPI RMA queue";
    on_failure_(std::make_exception_ptr(mpi::error(
        call, error, failed_peer_, -1,
        "hytask: global dependencies' RMA queue: " + call +
            (failed_peer_ >= 0 ? " at rank " + std::to_string(failed_peer_) : std::string()) +
            " failed: " + mpi::detail::error_text(error))));
  }
  bool again = false;
  hytask::event* stopped = nullptr;
  {
    std::lock_guard lk(out_mu_);
    finishing_ = false;
    if (error == MPI_SUCCESS && (restart_ || queued_ > 0 || open_.load())) {
      again = true;  // still running_
    } else {
      running_ = false;
      stopped = stopped_;
      stopped_ = nullptr;
    }
    restart_ = false;
  }
  if (again) start_pump();
  if (stopped) stopped->set();
}

int am_rma::fail(const char* call, int peer, int rc) {
  failed_call_ = call;
  failed_peer_ = peer;
  return rc;
}

int am_rma::pump(int* flag) {
  int rc = MPI_SUCCESS;
  if (open_.load(std::memory_order_acquire) || draining_ >= 0) rc = read();
  if (rc == MPI_SUCCESS) rc = write();
  if (rc != MPI_SUCCESS) return rc;
  std::lock_guard lk(out_mu_);
  bool idle = queued_ == 0 && draining_ < 0;
  for (std::size_t d = 0; idle && d < targets_.size(); ++d) idle = targets_[d].batch.empty();
  if (idle && !open_.load(std::memory_order_acquire)) {
    finishing_ = true;
    *flag = 1;
  }
  return MPI_SUCCESS;
}

// Drains one area of this rank's queue: close it to writers (the signal), wait — this poll
// or a later one — for the writers inside to leave, hand every entry to the receiver, then
// reopen the area empty.
int am_rma::read() {
  int rc;
  if (draining_ < 0) {
    std::uint64_t offsets[2] = {0, 0};
    rc = MPI_Get_accumulate(nullptr, 0, MPI_UINT64_T, offsets, 2, MPI_UINT64_T, rank_,
                            offset_disp[0], 2, MPI_UINT64_T, MPI_NO_OP, win_);
    if (rc != MPI_SUCCESS) return fail("MPI_Get_accumulate", rank_, rc);
    if ((rc = MPI_Win_flush(rank_, win_)) != MPI_SUCCESS) return fail("MPI_Win_flush", rank_, rc);
    if (offsets[0] == 0 && offsets[1] == 0) return MPI_SUCCESS;
    draining_ = offsets[0] >= offsets[1] ? 0 : 1;
    const std::uint64_t signal = closed_signal;
    std::uint64_t old = 0;
    rc = MPI_Fetch_and_op(&signal, &old, MPI_UINT64_T, rank_, writers_disp[draining_], MPI_SUM,
                          win_);
    if (rc != MPI_SUCCESS) return fail("MPI_Fetch_and_op", rank_, rc);
    if ((rc = MPI_Win_flush(rank_, win_)) != MPI_SUCCESS) return fail("MPI_Win_flush", rank_, rc);
    if (old != 0) return MPI_SUCCESS;  // writers inside: a later poll sees them gone
  }
  const auto q = static_cast<std::size_t>(draining_);
  std::uint64_t words[2] = {0, 0};  // writers, then offset (not adjacent: two reads)
  rc = MPI_Fetch_and_op(nullptr, &words[0], MPI_UINT64_T, rank_, writers_disp[q], MPI_NO_OP, win_);
  if (rc == MPI_SUCCESS)
    rc = MPI_Fetch_and_op(nullptr, &words[1], MPI_UINT64_T, rank_, offset_disp[q], MPI_NO_OP, win_);
  if (rc != MPI_SUCCESS) return fail("MPI_Fetch_and_op", rank_, rc);
  if ((rc = MPI_Win_flush(rank_, win_)) != MPI_SUCCESS) return fail("MPI_Win_flush", rank_, rc);
  if (words[0] != closed_signal) return MPI_SUCCESS;
  // No writer inside, none can enter: the entries up to the offset are complete (each
  // writer flushed its put before it left).
  if ((rc = MPI_Win_sync(win_)) != MPI_SUCCESS) return fail("MPI_Win_sync", rank_, rc);
  const std::uint64_t reserved = words[1];
  handle_entries(base_ + header_bytes + static_cast<std::ptrdiff_t>(q * area_),
                 static_cast<std::size_t>(std::min<std::uint64_t>(reserved, area_)));
  // Reopen it empty: the offset first, then the signal (flushed in between: accumulates to
  // different words are not ordered).
  const std::uint64_t minus_offset = 0 - reserved, minus_signal = 0 - closed_signal;
  rc = MPI_Accumulate(&minus_offset, 1, MPI_UINT64_T, rank_, offset_disp[q], 1, MPI_UINT64_T,
                      MPI_SUM, win_);
  if (rc != MPI_SUCCESS) return fail("MPI_Accumulate", rank_, rc);
  if ((rc = MPI_Win_flush(rank_, win_)) != MPI_SUCCESS) return fail("MPI_Win_flush", rank_, rc);
  rc = MPI_Accumulate(&minus_signal, 1, MPI_UINT64_T, rank_, writers_disp[q], 1, MPI_UINT64_T,
                      MPI_SUM, win_);
  if (rc != MPI_SUCCESS) return fail("MPI_Accumulate", rank_, rc);
  if ((rc = MPI_Win_flush(rank_, win_)) != MPI_SUCCESS) return fail("MPI_Win_flush", rank_, rc);
  draining_ = -1;
  return MPI_SUCCESS;
}

void am_rma::handle_entries(const std::byte* p, std::size_t bytes) {
  std::size_t at = 0;
  while (at + sizeof(entry_head) <= bytes) {
    entry_head e;
    std::memcpy(&e, p + at, sizeof e);
    if (e.length == end_mark) break;  // a writer's reservation overflowed here
    if (at + entry_bytes(e.length) > bytes || e.source >= static_cast<std::uint32_t>(size_)) {
      on_failure_(std::make_exception_ptr(std::logic_error(
          "hytask: internal error: a malformed entry in the global layer's RMA queue")));
      return;
    }
    const std::span<const std::byte> buf(p + at + sizeof e, e.length);
    const int source = static_cast<int>(e.source);
    at += entry_bytes(e.length);
    if (auto ack = rounds_->take(source, buf, on_receive_)) {
      acks_sent_.fetch_add(1, std::memory_order_relaxed);
      enqueue(source, std::move(*ack));
    }
  }
}

// Moves what waits for dest from the outbox into its batch, as much as one area holds.
void am_rma::take_entries(int dest) {
  target& t = targets_[static_cast<std::size_t>(dest)];
  std::size_t bytes = 0;
  for (const auto& b : t.batch) bytes += entry_bytes(b.size());
  std::lock_guard lk(out_mu_);
  auto& box = outbox_[static_cast<std::size_t>(dest)];
  while (!box.empty() && bytes + entry_bytes(box.front().size()) <= area_) {
    bytes += entry_bytes(box.front().size());
    t.batch.push_back(std::move(box.front()));
    box.pop_front();
    --queued_;
  }
}

int am_rma::write() {
  std::uint64_t now = 0;
  for (int d = 0; d < size_; ++d) {
    target& t = targets_[static_cast<std::size_t>(d)];
    take_entries(d);
    if (t.batch.empty()) continue;
    if (t.next_try_ns != 0) {
      if (now == 0) now = clock_ns();
      if (now < t.next_try_ns) continue;
    }
    staging_.clear();
    for (const auto& b : t.batch) {
      const std::size_t at = staging_.size();
      staging_.resize(at + entry_bytes(b.size()));
      const entry_head e{static_cast<std::uint32_t>(b.size()), static_cast<std::uint32_t>(rank_)};
      std::memcpy(staging_.data() + at, &e, sizeof e);
      if (!b.empty()) std::memcpy(staging_.data() + at + sizeof e, b.data(), b.size());
    }
    bool done = false;
    if (const int rc = deposit(d, done); rc != MPI_SUCCESS) return rc;
    if (done) {
      t.batch.clear();
      t.next_try_ns = t.backoff_ns = 0;
    } else {  // both areas full or closing: back off, keep the batch
      full_retries_.fetch_add(1, std::memory_order_relaxed);
      t.backoff_ns = t.backoff_ns == 0 ? first_backoff_ns : std::min(2 * t.backoff_ns, last_backoff_ns);
      if (now == 0) now = clock_ns();
      t.next_try_ns = now + t.backoff_ns;
    }
  }
  return MPI_SUCCESS;
}

// One reservation and one put for the whole staging buffer, into the area written last,
// else the other one.
int am_rma::deposit(int dest, bool& done) {
  target& t = targets_[static_cast<std::size_t>(dest)];
  const std::uint64_t n = staging_.size(), one = 1, minus_one = 0 - one;
  int rc;
  auto flush = [&] { return MPI_Win_flush(dest, win_); };
  for (int attempt = 0; attempt < 2; ++attempt, t.area ^= 1u) {
    const unsigned q = t.area;
    std::uint64_t writers = 0, offset = 0;
    rc = MPI_Fetch_and_op(&one, &writers, MPI_UINT64_T, dest, writers_disp[q], MPI_SUM, win_);
    if (rc != MPI_SUCCESS) return fail("MPI_Fetch_and_op", dest, rc);
    if ((rc = flush()) != MPI_SUCCESS) return fail("MPI_Win_flush", dest, rc);
    bool wrote = false;
    if (writers < closed_signal) {  // open
      rc = MPI_Fetch_and_op(&n, &offset, MPI_UINT64_T, dest, offset_disp[q], MPI_SUM, win_);
      if (rc != MPI_SUCCESS) return fail("MPI_Fetch_and_op", dest, rc);
      if ((rc = flush()) != MPI_SUCCESS) return fail("MPI_Win_flush", dest, rc);
      const MPI_Aint at = header_bytes + static_cast<MPI_Aint>(q * area_ + offset);
      if (offset + n <= area_) {
        rc = MPI_Put(staging_.data(), static_cast<int>(n), MPI_BYTE, dest, at,
                     static_cast<int>(n), MPI_BYTE, win_);
        if (rc != MPI_SUCCESS) return fail("MPI_Put", dest, rc);
        wrote = true;
      } else if (offset + sizeof(entry_head) <= area_) {
        // Overflowed: the reservations before it end here (the later ones overflow too).
        static const entry_head end{end_mark, 0};
        rc = MPI_Put(&end, sizeof end, MPI_BYTE, dest, at, sizeof end, MPI_BYTE, win_);
        if (rc != MPI_SUCCESS) return fail("MPI_Put", dest, rc);
      }
      // Complete at the target before leaving: the reader reads once the writers are gone.
      if ((rc = flush()) != MPI_SUCCESS) return fail("MPI_Win_flush", dest, rc);
    }
    rc = MPI_Accumulate(&minus_one, 1, MPI_UINT64_T, dest, writers_disp[q], 1, MPI_UINT64_T,
                        MPI_SUM, win_);
    if (rc != MPI_SUCCESS) return fail("MPI_Accumulate", dest, rc);
    if ((rc = flush()) != MPI_SUCCESS) return fail("MPI_Win_flush", dest, rc);
    if (wrote) {
      done = true;
      return MPI_SUCCESS;
    }
  }
  done = false;
  return MPI_SUCCESS;
}

}  // namespace hytask::global::detail
