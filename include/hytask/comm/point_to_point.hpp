// Point-to-point communication through hytask.
//
// Blocking calls (send, ssend, recv, sendrecv, sendrecv_replace, probe) made inside a task suspend only that task until
// the operation completes; its worker runs other tasks meanwhile. From main they run other
// tasks while they wait; from any other thread they behave like the MPI call. Underneath,
// every call is MPI's non-blocking variant, completed by hytask's progress engine.
//
// Two forms of each call: raw, with MPI's own arguments, and typed, with a contiguous range
// of an arithmetic type (its size is the count):
//
// ```cpp context=mpi
// hytask::mpi::send(buf, count, MPI_DOUBLE, dest, tag);  // raw
// hytask::mpi::send(std::span(buf, count), dest, tag);   // typed: a span,
// hytask::mpi::send(vec, dest, tag);                     // a std::vector...
// ```
//
// The communicator defaults to hytask::mpi::comm_world(), a duplicate of MPI_COMM_WORLD whose
// errors come back as hytask::mpi::error exceptions.
//
// Counts are MPI_Count: a count above INT_MAX is sent whole with MPI 4's large-count calls
// (MPI_Isend_c, ...: MPICH 4) and refused, before anything is posted, with a
// hytask::mpi::error naming the call and the count where the MPI has none (Open MPI 4).
#pragma once

#include <mpi.h>

#include <ranges>
#include <span>

#include "hytask/comm/datatype.hpp"
#include "hytask/comm/request.hpp"

namespace hytask::mpi {

// hytask's duplicate of MPI_COMM_WORLD (errors return, and are thrown as hytask::mpi::error).
MPI_Comm comm_world();
int rank(MPI_Comm comm = comm_world());
int size(MPI_Comm comm = comm_world());

// ---- raw forms ------------------------------------------------------------------------
void send(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
          MPI_Comm comm = comm_world());
void ssend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
           MPI_Comm comm = comm_world());
MPI_Status recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                MPI_Comm comm = comm_world());
MPI_Status probe(int source, int tag, MPI_Comm comm = comm_world());
// MPI_Sendrecv: the receive and the send in flight together (a halo exchange that cannot
// deadlock); returns the receive's status once both have completed. The receive is posted
// first. A half refused before posting (a count too large, a cancelled task) is thrown after
// the other half, if posted, has completed.
MPI_Status sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm = comm_world());
// MPI_Sendrecv_replace: as sendrecv, the message received overwriting the one sent (which is
// sent from a copy, so the two may be in flight together).
MPI_Status sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                            int source, int recvtag, MPI_Comm comm = comm_world());

request isend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm = comm_world());
request issend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm = comm_world());
request irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm = comm_world());

// ---- typed forms ----------------------------------------------------------------------
template <class R>
concept mpi_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                    mpi_type<std::ranges::range_value_t<R>>;

template <class R>
concept mutable_mpi_range =
    mpi_range<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

namespace detail {
// A range's element count, whole: counts above INT_MAX use MPI 4's large-count calls, or
// are refused with hytask::mpi::error naming the call and the count (docs/mpi.md).
template <class R>
MPI_Count count_of(const R& r) {
  return static_cast<MPI_Count>(std::ranges::size(r));
}
template <class R>
MPI_Datatype type_of() {
  return datatype_of<std::ranges::range_value_t<R>>();
}
}  // namespace detail

template <mpi_range R>
void send(const R& data, int dest, int tag, MPI_Comm comm = comm_world()) {
  send(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), dest, tag, comm);
}
template <mpi_range R>
void ssend(const R& data, int dest, int tag, MPI_Comm comm = comm_world()) {
  ssend(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), dest, tag, comm);
}
template <mutable_mpi_range R>
MPI_Status recv(R&& data, int source, int tag, MPI_Comm comm = comm_world()) {
  return recv(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), source, tag,
              comm);
}
template <mpi_range S, mutable_mpi_range R>
MPI_Status sendrecv(const S& send, int dest, int sendtag, R&& recv, int source, int recvtag,
                    MPI_Comm comm = comm_world()) {
  return sendrecv(std::ranges::data(send), detail::count_of(send), detail::type_of<S>(), dest,
                  sendtag, std::ranges::data(recv), detail::count_of(recv), detail::type_of<R>(),
                  source, recvtag, comm);
}
template <mutable_mpi_range R>
MPI_Status sendrecv_replace(R&& data, int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm = comm_world()) {
  return sendrecv_replace(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(),
                          dest, sendtag, source, recvtag, comm);
}
template <mpi_range R>
request isend(const R& data, int dest, int tag, MPI_Comm comm = comm_world()) {
  return isend(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), dest, tag,
               comm);
}
template <mpi_range R>
request issend(const R& data, int dest, int tag, MPI_Comm comm = comm_world()) {
  return issend(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), dest, tag,
                comm);
}
template <mutable_mpi_range R>
request irecv(R&& data, int source, int tag, MPI_Comm comm = comm_world()) {
  return irecv(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), source, tag,
               comm);
}

}  // namespace hytask::mpi
