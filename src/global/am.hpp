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
#include <mutex>
#include <span>
#include <unordered_map>
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
  using round_done = std::function<void(std::uint64_t buffers_handled)>;
  using failure = std::function<void(std::exception_ptr)>;
  virtual ~am_transport() = default;
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
};

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
  // What pending operations of the layer (rounds' collectives, receives posted from now on)
  // are named in the watchdog's report (interned): the fence or wait_all main is in.
  void set_activity(const char* what) noexcept { activity_ = what; }
  // Acknowledgements this rank has sent (16 bytes each).
  std::uint64_t acks_sent() const noexcept { return acks_sent_.load(std::memory_order_relaxed); }
  void open();   // main
  void close();  // main; returns once every receive is retired
  bool is_open() const noexcept { return open_; }

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }

 private:
  struct receive;
  struct round_node;
  void post(receive* r);
  void received(receive* r);
  void handle(receive* r);
  void post_send(int dest, std::vector<std::byte> buf);
  void acknowledged(std::uint64_t key, std::uint64_t n);
  void try_join();  // posts the oldest started round's collective if it may join
  void round_ended(round_node* n);
  void gather_labels(round_node* n);

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

  // Rounds: buffers of each round this rank sent, had acknowledged, and handled; kept from
  // the first such buffer until the round ends (at most the window of phases in flight).
  struct round_count {
    std::uint64_t sent = 0, acked = 0, handled = 0;
  };
  std::mutex rounds_mu_;
  std::unordered_map<std::uint64_t, round_count> counts_;
  std::deque<round_node*> started_;  // started and not ended, in order; the first may be joined
  bool joined_ = false;   // the first one's collective is posted
  bool stopped_ = false;  // the labels differed or a collective failed: no more rounds
  std::atomic<std::uint64_t> acks_sent_{0};
};

}  // namespace hytask::global::detail
