// Persistent point-to-point requests: a send or receive whose arguments MPI binds once
// (MPI_Send_init, MPI_Recv_init) and that is started again and again, as in an iterative
// halo exchange.
//
// ```cpp context=mpi
// hytask::mpi::persistent_recv from_left(halo, left, 7);
// hytask::mpi::persistent_send to_right(edge, right, 7);
// for (int step = 0; step < 10; ++step) {
//   hytask::mpi::request r = from_left.start(), s = to_right.start();
//   hytask::spawn([&] { use(halo); }, hytask::after(r));
//   hytask::wait_all();
//   s.wait();  // a task suspends here; main runs other tasks
// }
// ```
//
// start() posts MPI_Start through hytask's progress engine and returns a request, which is
// waited for, depended on (hytask::after) or bound (hytask::mpi::bind) like any other; a task
// that waits for it suspends. A start while the previous one is pending throws
// hytask::usage_error (MPI forbids starting an active request). The buffer must stay valid
// while the object lives. The destructor waits for a pending start, then frees the MPI
// request (MPI_Request_free): destroy the object before the hytask::runtime ends. A
// cancellation of the task waiting for a started receive cancels it (MPI_Cancel).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "hytask/comm/point_to_point.hpp"

namespace hytask::mpi {

class persistent_request {
 public:
  persistent_request(persistent_request&& o) noexcept;
  persistent_request& operator=(persistent_request&& o) noexcept;
  persistent_request(const persistent_request&) = delete;
  persistent_request& operator=(const persistent_request&) = delete;
  ~persistent_request();

  // MPI_Start; the request completes when this round's send or receive does.
  request start();
  // Whether the last start is still pending.
  bool active() const noexcept;
  // The MPI request (MPI_REQUEST_NULL after a move).
  MPI_Request native() const noexcept { return req_; }

 protected:
  persistent_request(bool receive, const void* buf, MPI_Count count, MPI_Datatype type, int peer,
                     int tag, MPI_Comm comm);

 private:
  void reset() noexcept;

  MPI_Request req_ = MPI_REQUEST_NULL;
  detail::operation* last_ = nullptr;  // the last start (a reference), or null
  MPI_Comm comm_ = MPI_COMM_NULL;
  int peer_ = -1;
  int tag_ = -1;
  std::size_t bytes_ = 0;
  bool receive_ = false;
};

class persistent_send : public persistent_request {
 public:
  persistent_send(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm = comm_world())
      : persistent_request(false, buf, count, type, dest, tag, comm) {}
  template <mpi_range R>
  persistent_send(const R& data, int dest, int tag, MPI_Comm comm = comm_world())
      : persistent_send(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), dest,
                        tag, comm) {}
};

class persistent_recv : public persistent_request {
 public:
  persistent_recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                  MPI_Comm comm = comm_world())
      : persistent_request(true, buf, count, type, source, tag, comm) {}
  template <mutable_mpi_range R>
  persistent_recv(R&& data, int source, int tag, MPI_Comm comm = comm_world())
      : persistent_recv(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(),
                        source, tag, comm) {}
};

}  // namespace hytask::mpi
