// The simulated network: LogGP (Alexandrov, Ionescu, Schauser, Scheiman, "LogGP:
// incorporating long messages into the LogP model", SPAA 1995) with one NIC per rank. A
// message of s bytes posted at t leaves after the sender's overhead o once the sender's NIC
// is free, occupies it for s·G, reaches the receiver's NIC after the latency L, occupies that
// for s·G (so that many senders to one rank share its link), and is in the receiver's hands
// o later. A matching round ends with a collective of constant-size contributions
// (round_cost).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace hytask::sim {

struct loggp {
  double latency = 40e-6;       // L, seconds
  double overhead = 3e-6;       // o, seconds per message on each side
  double gap_per_byte = 8e-9;   // G, seconds per byte (1 Gbit/s)
};

struct message_times {
  double sent;     // the sender's NIC is done with it (the send buffer is free)
  double arrived;  // the receiver has it
};

class network {
 public:
  network(int ranks, loggp p) : p_(p), egress_(static_cast<std::size_t>(ranks), 0.0), ingress_(egress_) {}

  message_times send(int from, int to, std::uint64_t bytes, double now) {
    const double wire = static_cast<double>(bytes) * p_.gap_per_byte;
    double& out = egress_[static_cast<std::size_t>(from)];
    const double start = std::max(now + p_.overhead, out);
    out = start + wire;
    double& in = ingress_[static_cast<std::size_t>(to)];
    const double reach = std::max(start + p_.latency, in);
    in = reach + wire;
    bytes_ += bytes;
    ++messages_;
    return {start + wire, in + p_.overhead};
  }

  // A round's collective once its last rank joined: a reduction and broadcast of a
  // constant-size value, 2·⌈log2 P⌉ steps of one small message.
  double round_cost(int ranks) const {
    if (ranks <= 1) return 0;
    const double step = p_.latency + 2 * p_.overhead + 16 * p_.gap_per_byte;
    return 2 * std::ceil(std::log2(static_cast<double>(ranks))) * step;
  }

  const loggp& params() const { return p_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t messages() const { return messages_; }

 private:
  loggp p_;
  std::vector<double> egress_, ingress_;
  std::uint64_t bytes_ = 0, messages_ = 0;
};

}  // namespace hytask::sim
