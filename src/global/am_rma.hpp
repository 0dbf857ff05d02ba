// Active messages through MPI one-sided communication: each rank exposes a queue of fixed
// size in an MPI window, other ranks deposit buffers into it with atomic operations and puts,
// and the rank reads them from its own memory. After the AMO-only ("sopnop") queue of
// Schuchart's thesis, "Global Task Data Dependencies in the Partitioned Global Address
// Space" (§4.2.2.2): two areas, each with a writer count and an offset, so that the reader
// drains one while writers fill the other; no window locks (one passive epoch, lock_all,
// for the window's life), which the window's accumulate_ops=same_op_no_op allows.
//
// A writer registers on an area (fetch-and-add on its writer count), reserves room
// (fetch-and-add on its offset), puts its entries, flushes, and deregisters. The reader
// closes an area by adding a signal to its writer count (writers that see it go to the other
// area), waits, over several polls, until the writers inside have left, reads the entries up
// to the offset, then resets offset and signal. Areas are never rolled back: a writer whose
// reservation overflows marks the end there (the reservations after it overflow too) and
// tries the other area; when both are full it backs off and retries later (back-pressure),
// keeping its buffers, so the window's memory is fixed: 2 × area_bytes per rank.
//
// No thread of its own: one `polled` comm operation of hytask (the pump) is pending while
// the queue is open or buffers wait to leave, and whichever thread polls (a worker, the
// progress thread, the MPI thread in funneled mode) reads and writes the queue, one at a
// time. Writes to one rank are batched: every buffer waiting for it that fits goes in one
// reservation and one put. Rounds end as with the two-sided transport (am_rounds.hpp): an
// acknowledgement (a 16-byte buffer) per handled buffer of a round, then an allreduce.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "global/am.hpp"

namespace hytask::global::detail {

class am_rma final : public am_transport {
 public:
  // Collective over parent (duplicates it; creates the window); on main. area_bytes: each of
  // the two areas of this rank's queue (rounded up to 8; at least one entry of max_bytes).
  am_rma(MPI_Comm parent, receiver on_receive, failure on_failure, std::size_t max_bytes,
         std::size_t area_bytes);
  ~am_rma() override;  // collective; closed first
  am_rma(const am_rma&) = delete;
  am_rma& operator=(const am_rma&) = delete;

  void send(int dest, std::vector<std::byte> buf) override;
  bool poll() override { return false; }  // hytask's pollers run the pump
  void complete_round(std::uint64_t key, std::uint64_t label, round_done done,
                      round_mismatch mismatch) override;
  void set_activity(const char* what) noexcept override { activity_ = what; }
  std::uint64_t acks_sent() const noexcept override {
    return acks_sent_.load(std::memory_order_relaxed);
  }
  void open() override;
  void close() override;  // returns once every buffer has left and the pump has stopped
  bool is_open() const noexcept override { return open_.load(std::memory_order_acquire); }

  // Deposits refused because both areas of the target were full (or closing) (tests).
  std::uint64_t full_retries() const noexcept {
    return full_retries_.load(std::memory_order_relaxed);
  }
  std::size_t area_bytes() const noexcept { return area_; }

 private:
  struct pump_node;
  void start_pump();                   // outside out_mu_
  int pump(int* flag);                 // the polled operation's test
  int read();                          // drains an area of this rank's queue, over polls
  int write();                         // deposits what waits, per target
  int deposit(int dest, bool& done);   // staging_ into dest's queue; done: it is in
  void take_entries(int dest);         // outbox -> batches_[dest]
  void handle_entries(const std::byte* p, std::size_t bytes);
  void enqueue(int dest, std::vector<std::byte> buf);
  int fail(const char* call, int peer, int rc);  // records the failed call, returns rc
  void pump_ended(int error);

  mpi::detail::comm_system& sys_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;  // this rank's window
  int rank_ = 0, size_ = 1;
  receiver on_receive_;
  failure on_failure_;
  std::size_t max_bytes_, area_;
  std::atomic<const char*> activity_{"hytask global dependencies"};
  std::unique_ptr<am_rounds> rounds_;
  std::atomic<std::uint64_t> acks_sent_{0}, full_retries_{0};
  std::atomic<bool> open_{false};

  // Buffers waiting to leave, per target (any thread), and the pump's life.
  std::mutex out_mu_;
  std::vector<std::deque<std::vector<std::byte>>> outbox_;
  std::size_t queued_ = 0;       // buffers in outbox_
  bool running_ = false;         // a pump operation exists
  bool finishing_ = false;       // it said it is done; its completion has not run yet
  bool restart_ = false;         // something came while it was finishing
  hytask::event* stopped_ = nullptr;  // close() waits for the pump's end

  // The pump's own (one thread at a time).
  struct target {
    std::vector<std::vector<std::byte>> batch;  // taken from the outbox, not deposited yet
    unsigned area = 0;                          // the area last written
    std::uint64_t next_try_ns = 0, backoff_ns = 0;
  };
  std::vector<target> targets_;
  std::vector<std::byte> staging_;
  int draining_ = -1;  // the area of this rank's queue being drained
  const char* failed_call_ = nullptr;
  int failed_peer_ = -1;
};

}  // namespace hytask::global::detail
