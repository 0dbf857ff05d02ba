// The messages of seed 001's inter-scheduler protocol (§3.3, Fig. 3.5), as they travel:
// buffers of fixed-size records, coalesced per destination.
//
//   A  announce  accessor -> owner   a task of phase P declares in/out on the owner's location
//   B  release   owner -> accessor   the access's predecessors on other ranks have completed
//                                    (flagged when one of them was cancelled or failed)
//   C  complete  accessor -> owner   the accessing task has completed (flagged likewise)
//   D  drained   any -> any          at wait_all: the C buffers the sender sent the receiver
//
// An A record of a copyin carries flag_push: when the access is released, the owner sends
// the location's bytes to the accessor (a message of its own, on the data communicator,
// tagged by the access's id), which the accessor's transfer task receives.
//
// A buffer starts with a header naming its matching round and the sender's epoch (wait_all
// calls behind it): A records of phase P travel in buffers of round P only; B and C records
// travel in buffers of their own, which belong to no round. When wait_all drains the
// protocol, a rank sends each rank it sent C buffers to since the last drain one buffer of
// the drain round, a D record with their count. The transport acknowledges every buffer of
// a round once its receiver has handled it, and ends the round when every rank's buffers of
// it are acknowledged (am.hpp). Records carry the sender's sequence number, so the owner
// orders one rank's accesses as that rank discovered them whatever order the transport
// delivers its buffers in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace hytask::global::detail {

// inout is out (seed 001 L823): it orders exactly as a write does.
enum class dep_kind : std::uint8_t { in = 0, out = 1 };

// A location of the global address space: its owner, and a key unique on that owner.
struct location {
  int owner = 0;
  std::uint64_t key = 0;
  friend bool operator==(const location&, const location&) = default;
};

enum class msg_type : std::uint8_t { announce = 1, release = 2, complete = 3, drained = 4 };

// Rounds of buffers that carry no A records.
inline constexpr std::uint32_t drain_round = 0xfffffffdu;       // D: wait_all's last round
inline constexpr std::uint32_t release_round = 0xfffffffeu;     // B: each is awaited by a task
inline constexpr std::uint32_t completion_round = 0xffffffffu;  // C: counted by D records

// Whether buffers of this round belong to a matching round (acknowledged and counted by the
// transport): A and D buffers; B and C buffers do not.
constexpr bool in_a_round(std::uint32_t round) noexcept {
  return round != release_round && round != completion_round;
}
// What names a round across wait_alls: phases never repeat, the drain round does every epoch.
constexpr std::uint64_t round_key(std::uint32_t round, std::uint32_t epoch) noexcept {
  return std::uint64_t{epoch} << 32 | round;
}

struct buffer_header {
  std::uint32_t round;    // the phase whose A records this buffer carries, or one of those
  std::uint32_t records;  // records that follow
  // wait_all calls completed by the sender: a rank that finished one drains while another
  // is still draining, and its buffers wait for the receiver's next epoch.
  std::uint32_t epoch;
  // 0 in the engine's buffers. A header alone (records 0) is the transport's acknowledgement
  // (am.hpp): `handled` buffers of (round, epoch) that the sender of the header handled.
  std::uint32_t handled = 0;
};

// Flags of an A record.
inline constexpr std::uint16_t flag_push = 1;  // a copyin: the owner sends the data when released
// Flags of a C record (how the accessing task ended) and of a B record (how a predecessor on
// another rank ended: the released task is skipped, as a local successor would be).
inline constexpr std::uint16_t flag_cancelled = 2;
inline constexpr std::uint16_t flag_failed = 4;
// B only, with flag_failed: the access itself conflicts with another rank's in its phase.
inline constexpr std::uint16_t flag_conflict = 8;

struct record {
  msg_type type;
  dep_kind kind;       // A
  std::uint16_t flags = 0;  // A: flag_push; B, C: flag_cancelled, flag_failed
  std::uint32_t phase;  // A
  std::uint64_t key;    // A: the location on the owner
  std::uint64_t id;     // the access, as the accessor names it (A, B, C); D: C buffers
  std::uint64_t seq;    // A: the accessor's discovery order
};
static_assert(sizeof(record) == 32 && sizeof(buffer_header) == 16);

// Records for one destination, collected until flushed into a buffer.
class outbox {
 public:
  bool empty() const noexcept { return records_.empty(); }
  std::size_t size() const noexcept { return records_.size(); }
  void push(const record& r) { records_.push_back(r); }
  // Buffers of at most max_records records each, in order; leaves the box empty.
  template <class Emit>
  void flush(std::uint32_t round, std::uint32_t epoch, std::size_t max_records, Emit&& emit) {
    std::size_t at = 0;
    while (at < records_.size()) {
      const std::size_t n = std::min(max_records, records_.size() - at);
      std::vector<std::byte> buf(sizeof(buffer_header) + n * sizeof(record));
      const buffer_header h{round, static_cast<std::uint32_t>(n), epoch};
      std::memcpy(buf.data(), &h, sizeof h);
      std::memcpy(buf.data() + sizeof h, records_.data() + at, n * sizeof(record));
      emit(std::move(buf));
      at += n;
    }
    records_.clear();
  }

 private:
  std::vector<record> records_;
};

// A buffer's header alone (what the transport reads); false when the buffer is shorter.
inline bool read_header(std::span<const std::byte> buf, buffer_header& h) {
  if (buf.size() < sizeof h) return false;
  std::memcpy(&h, buf.data(), sizeof h);
  return true;
}

// A received buffer's header and records; false when the buffer is malformed.
inline bool parse(std::span<const std::byte> buf, buffer_header& h, std::vector<record>& out) {
  if (buf.size() < sizeof h) return false;
  std::memcpy(&h, buf.data(), sizeof h);
  if (buf.size() != sizeof h + std::size_t{h.records} * sizeof(record)) return false;
  out.resize(h.records);
  std::memcpy(out.data(), buf.data() + sizeof h, h.records * sizeof(record));
  return true;
}

}  // namespace hytask::global::detail
