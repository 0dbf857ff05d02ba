// Counters of this rank's global layer (the dependency protocol and copyin), for tests, tuning
// and reports.
//
// ```cpp context=global
// hytask::global_counters c = hytask::global_stats();
// std::printf("%llu transfers, %llu copyins shared one\n",
//             static_cast<unsigned long long>(c.transfers),
//             static_cast<unsigned long long>(c.copyins_shared));
// ```
//
// Counts are since the runtime started (zero before the first PGAS object); the "alive"
// figures are what the layer holds now, which a wait_all brings back to zero.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hytask {

struct global_counters {
  std::uint64_t announces_sent = 0;    // A records: accesses to other ranks' locations
  std::uint64_t releases_sent = 0;     // B records: remote accesses released by this owner
  std::uint64_t completions_sent = 0;  // C records: remote accesses completed here
  std::uint64_t buffers_sent = 0, buffers_received = 0;  // coalesced messages
  std::uint64_t bytes_sent = 0;        // of those buffers
  // Rounds: one per fence, two per collective wait_all. A rank's part: a 16-byte
  // acknowledgement per announcement or drain-count buffer it received, at wait_all one
  // drain count (48 bytes) per rank it sent completions to, and one constant-size
  // non-blocking collective (an allreduce of 16 bytes, not counted here). round_messages and
  // round_bytes count the acknowledgements and drain counts this rank sent: they follow the
  // ranks it exchanges records with, not the number of ranks.
  std::uint64_t rounds = 0, round_messages = 0, round_bytes = 0;
  std::uint64_t transfers = 0;         // copyin transfers (MPI_Rget, or a memcpy on the owner)
  std::uint64_t copyins_shared = 0;    // copyins that used a transfer of the same phase
  std::size_t tasks_alive = 0;         // tasks with global accesses not completed
  std::size_t nodes_alive = 0;         // accesses to this rank's locations still ordered
  std::size_t chains_alive = 0;        // locations of this rank with such accesses
};

// This rank's counters. Any thread.
global_counters global_stats();

}  // namespace hytask
