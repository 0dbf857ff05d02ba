// Active messages between the ranks' global layers (seed 001 ch. 4): byte buffers sent to a
// rank and handed to its receiver, and rounds — a non-blocking collective in which every
// rank says how many buffers of the round it sent to each other rank, so that each learns
// how many it must receive, and which round it is (a label every rank must agree on).
//
// send() and complete_round() may be called by any thread; the receiver and the round's
// `done` run on whichever thread completes the MPI operation (a polling worker, the
// progress thread, the MPI thread). Rounds complete in the order they were started, and
// every rank starts the same rounds in the same order.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "hytask/core/event.hpp"

namespace hytask::mpi::detail {
class comm_system;
struct operation;
}  // namespace hytask::mpi::detail

namespace hytask::global::detail {

class am_transport {
 public:
  using receiver = std::function<void(int source, std::span<const std::byte> buf)>;
  using round_done = std::function<void(std::uint64_t buffers_to_receive)>;
  using failure = std::function<void(std::exception_ptr)>;
  virtual ~am_transport() = default;
  virtual void send(int dest, std::vector<std::byte> buf) = 0;
  // Moves messages now if this thread may (the backend may rely on other pollers).
  virtual bool poll() = 0;
  // Starts a round: counts[r] buffers of it were sent to rank r. done(n) runs once every
  // rank has started it, with n the buffers of the round every rank sent to this one.
  // label names the round (the caller's: which fence or wait_all); every rank must start
  // the same rounds in the same order, so the ranks' labels of one round must be equal —
  // when they are not, mismatch(labels), with every rank's label, runs instead of done.
  using round_mismatch = std::function<void(const std::vector<std::uint64_t>& labels)>;
  virtual void complete_round(std::vector<std::uint64_t> counts, std::uint64_t label,
                              round_done done, round_mismatch mismatch) = 0;
};

// Two-sided MPI on a duplicate of the runtime's communicator, through hytask's own
// operations, so that every access mode and progress policy moves these messages as it
// moves the program's: `preposted` receives of max_bytes from any source, sends posted as
// they come, rounds by MPI_Ialltoall of (count, label) pairs.
//
// Receives are posted only while the layer is open (open(): a phase has begun), so that a
// rank without global work in flight has nothing pending — no idle worker polls for it.
// close() (main, once no message can be on its way here: after wait_all's drain) sends one
// empty message per posted receive to this rank itself, each retiring one receive.
class am_two_sided final : public am_transport {
 public:
  // Collective over parent (duplicates it); on main.
  am_two_sided(MPI_Comm parent, receiver on_receive, failure on_failure, std::size_t max_bytes,
               int preposted = 8);
  ~am_two_sided() override;  // collective; closed first
  am_two_sided(const am_two_sided&) = delete;
  am_two_sided& operator=(const am_two_sided&) = delete;

  void send(int dest, std::vector<std::byte> buf) override;
  bool poll() override;
  void complete_round(std::vector<std::uint64_t> counts, std::uint64_t label, round_done done,
                      round_mismatch mismatch) override;
  // What pending operations of the layer are named in the watchdog's report (interned):
  // the fence or wait_all main is in.
  void set_activity(const char* what) noexcept { activity_ = what; }
  void open();   // main
  void close();  // main; returns once every receive is retired
  bool is_open() const noexcept { return open_; }
  // A blocking collective over the messages' communicator (wait_all's last step).
  void barrier();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }

 private:
  struct receive;
  void post(receive* r);
  void received(receive* r);
  void handle(receive* r);

  mpi::detail::comm_system& sys_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  receiver on_receive_;
  failure on_failure_;
  std::size_t max_bytes_;
  int preposted_;
  bool open_ = false;
  std::atomic<bool> closing_{false};
  std::atomic<int> live_{0};     // receives posted and not retired
  hytask::event* retired_ = nullptr;  // set when live_ reaches 0 while closing
  std::atomic<const char*> activity_{"hytask global dependencies"};
};

}  // namespace hytask::global::detail
