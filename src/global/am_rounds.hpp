// The rounds of the active messages (am.hpp's complete_round), shared by both transports:
// per round in flight, the buffers this rank sent, had acknowledged and handled, and the
// round's collective — an MPI_Iallreduce (MIN) of (label, ~label) that a rank joins once it
// has started the round and every buffer of the round it sent has been acknowledged (NBX's
// end, Hoefler, Siebert and Lumsdaine, with acknowledgements); an MPI_Iallgather of the
// labels when they differ. The transport delivers the acknowledgements (16-byte headers) and
// reports what it sent and handled; the collectives are hytask comm operations on the
// transport's communicator, posted one at a time, in the rounds' order.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include "global/am.hpp"

namespace hytask::global::detail {

class am_rounds {
 public:
  // on_failure and activity belong to the transport, which outlives this.
  am_rounds(mpi::detail::comm_system& sys, MPI_Comm comm, int size,
            const am_transport::failure& on_failure, const std::atomic<const char*>& activity)
      : sys_(sys), comm_(comm), size_(size), on_failure_(on_failure), activity_(activity) {}
  am_rounds(const am_rounds&) = delete;
  am_rounds& operator=(const am_rounds&) = delete;

  // A buffer of round `key` is being sent (before it can be acknowledged).
  void sent(std::uint64_t key);
  // This rank's receiver has handled a buffer of round `key` (before it acknowledges it).
  void handled(std::uint64_t key);
  // n buffers of round `key` this rank sent were handled by their receivers.
  void acknowledged(std::uint64_t key, std::uint64_t n);
  // A buffer a transport received from `source` (not one of its own tokens): an
  // acknowledgement is counted; any other goes to `receive` (an exception to the failure
  // handler) and, in a round, counts as handled — after the receiver, so that the round cannot
  // end while a buffer of it is still being taken. Returns the acknowledgement the transport
  // sends back to `source`, if one is due.
  std::optional<std::vector<std::byte>> take(int source, std::span<const std::byte> buf,
                                             const am_transport::receiver& receive);
  void start(std::uint64_t key, std::uint64_t label, am_transport::round_done done,
             am_transport::round_mismatch mismatch);

 private:
  struct round_node;
  void try_join();
  void ended(round_node* n);
  void gather_labels(round_node* n);

  mpi::detail::comm_system& sys_;
  MPI_Comm comm_;
  int size_;
  const am_transport::failure& on_failure_;
  const std::atomic<const char*>& activity_;

  struct round_count {
    std::uint64_t sent = 0, acked = 0, handled = 0;
  };
  std::mutex mu_;
  std::unordered_map<std::uint64_t, round_count> counts_;
  std::deque<round_node*> started_;  // started and not ended, in order; the first may be joined
  bool joined_ = false;   // the first one's collective is posted
  bool stopped_ = false;  // the labels differed or a collective failed: no more rounds
};

}  // namespace hytask::global::detail
