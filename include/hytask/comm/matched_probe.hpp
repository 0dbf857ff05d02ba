// Matched probe and receive: mprobe waits until a message matches and takes it out of MPI's
// matching, so that no other receive (another task's, with a wildcard) can take it before
// this task receives it with mrecv. The result carries the message's status, so the task can
// size its buffer first:
//
// ```cpp context=mpi
// hytask::spawn([] {
//   hytask::mpi::matched_message m = hytask::mpi::mprobe(MPI_ANY_SOURCE, 5);  // suspends
//   std::vector<double> data(m.count(MPI_DOUBLE));
//   hytask::mpi::mrecv(data, m);
// });
// ```
//
// mprobe suspends only the calling task (the progress engine tests it with MPI_Improbe
// while it waits); improbe looks once and returns std::nullopt when nothing matches. A
// cancellation of the task stops mprobe (no message is taken; it throws
// hytask::task_cancelled). mrecv consumes the message: receiving it twice throws
// hytask::usage_error. A matched message must be received (MPI holds it until then).
#pragma once

#include <mpi.h>

#include <optional>

#include "hytask/comm/point_to_point.hpp"

namespace hytask::mpi {

struct matched_message {
  MPI_Message handle = MPI_MESSAGE_NULL;  // MPI_MESSAGE_NULL once received
  MPI_Status status{};                    // the probe's: source, tag, size
  MPI_Comm comm = MPI_COMM_NULL;          // where it was probed (for errors)

  int source() const noexcept { return status.MPI_SOURCE; }
  int tag() const noexcept { return status.MPI_TAG; }
  // How many elements of type the message holds; throws hytask::mpi::error when its size is
  // not a whole number of them.
  MPI_Count count(MPI_Datatype type) const;
  template <mpi_type T>
  std::size_t count() const {
    return static_cast<std::size_t>(count(datatype_of<T>()));
  }
};

matched_message mprobe(int source, int tag, MPI_Comm comm = comm_world());
std::optional<matched_message> improbe(int source, int tag, MPI_Comm comm = comm_world());

// Receives the matched message into buf (count elements of type at most: a longer message
// is a truncation error, MPI_ERR_TRUNCATE); returns its status.
MPI_Status mrecv(void* buf, MPI_Count count, MPI_Datatype type, matched_message& m);
request imrecv(void* buf, MPI_Count count, MPI_Datatype type, matched_message& m);

template <mutable_mpi_range R>
MPI_Status mrecv(R&& data, matched_message& m) {
  return mrecv(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), m);
}
template <mutable_mpi_range R>
request imrecv(R&& data, matched_message& m) {
  return imrecv(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), m);
}

}  // namespace hytask::mpi
