// Active messages between the ranks' global layers (seed 001 ch. 4): byte buffers sent to a
// rank and handed to its receiver, and rounds. Buffers start with messages.hpp's header;
// those of a round (in_a_round: the A buffers of a phase, the D buffers of a drain) belong
// to round round_key(round, epoch) of their header. complete_round(key) says this rank has
// sent all its buffers of the round; the round ends once every rank has said so and every
// buffer of the round has been handled by its receiver — so the ranks need not tell each
// other how many buffers they sent each other, and no rank pays for every other rank.
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
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "hytask/config.hpp"
#include "hytask/core/event.hpp"

namespace hytask::mpi::detail {
class comm_system;
struct operation;
}  // namespace hytask::mpi::detail

namespace hytask::global::detail {

class am_rounds;

class am_transport {
 public:
  using receiver = std::function<void(int source, std::span<const std::byte> buf)>;
  using round_done = std::function<void(std::uint64_t buffers_handled)>;
  using failure = std::function<void(std::exception_ptr)>;
  virtual ~am_transport() = default;
  // Any thread. The buffer is the transport's from here; it reaches dest's receiver once.
  virtual void send(int dest, std::vector<std::byte> buf) = 0;
  // Moves messages now if this thread may (the backend may rely on other pollers).
  virtual bool poll() = 0;
  // This rank has sent every buffer of round `key` (messages.hpp: round_key). done(n) runs
  // once every rank has done so and every buffer of the round has been handled (its
  // receiver returned), with n the buffers of the round this rank handled. label names the
  // round (the caller's: which fence or wait_all); every rank must start the same rounds in
  // the same order, so the ranks' labels of one round must be equal — when they are not,
  // mismatch(labels), with every rank's label, runs instead of done.
  using round_mismatch = std::function<void(const std::vector<std::uint64_t>& labels)>;
  virtual void complete_round(std::uint64_t key, std::uint64_t label, round_done done,
                              round_mismatch mismatch) = 0;
  // Receiving, between the first global access or fence of an epoch and the end of its
  // wait_all (main): while closed, nothing of the transport is pending, so that no idle
  // worker polls for it; buffers sent here meanwhile wait (in MPI, or in the queue) until
  // the next open. close() returns once nothing of the transport is pending; it is called
  // when no buffer can be on its way here.
  virtual void open() = 0;
  virtual void close() = 0;
  virtual bool is_open() const noexcept = 0;
  // What pending operations of the layer are named in the watchdog's report (interned):
  // the fence or wait_all main is in.
  virtual void set_activity(const char* what) noexcept = 0;
  // Acknowledgements this rank has sent (16 bytes each).
  virtual std::uint64_t acks_sent() const noexcept = 0;
};

// HYTASK_GLOBAL_AM: which transport the global layer uses; auto's choice depends on the MPI.
enum class am_kind { two_sided, rma };
am_kind am_kind_for(hytask::global_am setting);

// The transport of that kind, collective over parent (on main). max_bytes: the largest
// buffer sent. rma_queue_bytes: the RMA queue's two areas, each (0: the default).
std::unique_ptr<am_transport> make_am_transport(am_kind k, MPI_Comm parent,
                                                am_transport::receiver on_receive,
                                                am_transport::failure on_failure,
                                                std::size_t max_bytes,
                                                std::size_t rma_queue_bytes = 0);

// Two-sided MPI on a duplicate of the runtime's communicator, through hytask's own
// operations, so that every access mode and progress policy moves these messages as it
// moves the program's: `preposted` receives of max_bytes from any source, sends posted as
// they come.
//
// Rounds end as in NBX (Hoefler, Siebert, Lumsdaine, PPoPP 2010), with acknowledgements:
// a receiver that has handled a buffer of a round sends its sender a header alone (16
// bytes: round, epoch, 1 handled). A rank joins the round's collective, an MPI_Iallreduce
// (MIN) of (label, ~label) — 16 bytes whatever the number of ranks — once it has started
// the round and every buffer of the round it sent has been acknowledged. So when the
// collective completes, every rank has joined, every buffer of the round has been handled,
// those to this rank among them: the round has ended, and min = max says the labels agree.
// An MPI_Issend's completion would not do: it says the receive was matched, not that the
// receiver's handler ran (it runs on whichever thread tests the receive, later).
// Collectives are posted one at a time, each once the previous one completed: rounds end in
// order anyway, and threads cannot then post them in different orders on different ranks.
// When the labels differ, an MPI_Iallgather of them (the only step of size P, on the error
// path) gives every rank every label. A rank's cost per round: an acknowledgement per
// buffer of the round it received, and one allreduce; its memory: counters per round in
// flight, none per peer.
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
  void complete_round(std::uint64_t key, std::uint64_t label, round_done done,
                      round_mismatch mismatch) override;
  void set_activity(const char* what) noexcept override { activity_ = what; }
  std::uint64_t acks_sent() const noexcept override {
    return acks_sent_.load(std::memory_order_relaxed);
  }
  void open() override;   // main
  void close() override;  // main; returns once every receive is retired
  bool is_open() const noexcept override { return open_; }

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }

 private:
  struct receive;
  void post(receive* r);
  void received(receive* r);
  void handle(receive* r);
  void post_send(int dest, std::vector<std::byte> buf);

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

  std::unique_ptr<am_rounds> rounds_;
  std::atomic<std::uint64_t> acks_sent_{0};
};

}  // namespace hytask::global::detail
