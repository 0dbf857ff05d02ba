// Active messages between the ranks' global layers (seed 001 ch. 4): byte buffers sent to a
// rank and handed to its receiver, and rounds — a non-blocking collective in which every
// rank says how many buffers of the round it sent to each other rank, so that each learns
// how many it must receive.
//
// send() may be called by any thread. Every MPI call happens in poll(), which only a thread
// allowed to call MPI may run (any thread under MPI_THREAD_MULTIPLE; hytask's MPI thread in
// funneled mode), one at a time: posting queued sends, testing them, handing completed
// receives to the receiver (which may send; the buffer it gets is valid during the call),
// advancing rounds. Rounds complete in the order
// they were started, and every rank starts the same rounds in the same order.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

namespace hytask::global::detail {

class am_transport {
 public:
  using receiver = std::function<void(int source, std::span<const std::byte> buf)>;
  using round_done = std::function<void(std::uint64_t buffers_to_receive)>;
  virtual ~am_transport() = default;
  virtual void send(int dest, std::vector<std::byte> buf) = 0;
  // Moves messages; true when anything was sent, received or completed.
  virtual bool poll() = 0;
  // Starts a round: counts[r] buffers of it were sent to rank r. done(n) runs in a later
  // poll, with n the buffers of the round every rank sent to this one.
  virtual void complete_round(std::vector<std::uint64_t> counts, round_done done) = 0;
};

// Two-sided MPI on a duplicate of a communicator: `preposted` receives of max_bytes from any
// source, sends posted as they come (MPI_Isend), rounds by MPI_Ialltoall of the counts.
// Construct and destroy it on a thread that may call MPI, collectively (it duplicates the
// communicator); destruction waits for the sends and cancels the receives.
class am_two_sided final : public am_transport {
 public:
  am_two_sided(MPI_Comm parent, receiver on_receive, std::size_t max_bytes, int preposted = 8);
  ~am_two_sided() override;
  am_two_sided(const am_two_sided&) = delete;
  am_two_sided& operator=(const am_two_sided&) = delete;

  void send(int dest, std::vector<std::byte> buf) override;
  bool poll() override;
  void complete_round(std::vector<std::uint64_t> counts, round_done done) override;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }

 private:
  struct outgoing {
    int dest;
    std::vector<std::byte> buf;
  };
  struct round {
    std::vector<std::uint64_t> counts, incoming;
    round_done done;
    MPI_Request req = MPI_REQUEST_NULL;
    bool posted = false;
  };
  void check(int rc, const char* call, int peer) const;
  void post_receive(std::size_t i);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  receiver on_receive_;
  std::size_t max_bytes_;

  std::mutex queue_mu_;  // guards queued_ and rounds_ (send and complete_round)
  std::vector<outgoing> queued_;
  std::deque<round> rounds_;

  std::mutex poll_mu_;  // one poller at a time; guards what follows
  std::vector<std::vector<std::byte>> recv_bufs_;
  std::vector<MPI_Request> recv_reqs_;
  std::vector<std::vector<std::byte>> send_bufs_;
  std::vector<MPI_Request> send_reqs_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace hytask::global::detail
