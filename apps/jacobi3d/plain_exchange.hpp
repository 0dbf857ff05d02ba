// The halo exchange with plain MPI from one thread: the MPI-only and fork-join variants'
// exchange (mpi-nonblocking's MPI_Irecv / MPI_Isend / MPI_Testall / MPI_Waitall), and the
// intercepted variant's, which makes the same calls inside a hytask task.
#pragma once

#include <mpi.h>

#include <vector>

#include "domain.hpp"

namespace jacobi {

// The halo exchange with plain MPI, from one thread.
class plain_exchange {
 public:
  explicit plain_exchange(const domain& g) : g_(g) {
    if (g.opts.halo == halo_mode::packed)
      for (const face& f : g.faces) {
        send_.emplace_back(static_cast<std::size_t>(f.count));
        recv_.emplace_back(static_cast<std::size_t>(f.count));
      }
  }

  // Receives first, then sends (packing each face just before its send).
  void post(double* a) {
    reqs_.clear();
    const bool packed = g_.opts.halo == halo_mode::packed;
    for (std::size_t i = 0; i < g_.faces.size(); ++i) {
      const face& f = g_.faces[i];
      MPI_Request r;
      if (packed) check(MPI_Irecv(recv_[i].data(), static_cast<int>(f.count), MPI_DOUBLE, f.peer, f.recv_tag, g_.comm, &r), "MPI_Irecv", f.peer);
      else check(MPI_Irecv(a, 1, f.recv_type, f.peer, f.recv_tag, g_.comm, &r), "MPI_Irecv", f.peer);
      reqs_.push_back(r);
    }
    for (std::size_t i = 0; i < g_.faces.size(); ++i) {
      const face& f = g_.faces[i];
      MPI_Request r;
      if (packed) {
        g_.pack(a, f, send_[i].data());
        check(MPI_Isend(send_[i].data(), static_cast<int>(f.count), MPI_DOUBLE, f.peer, f.send_tag, g_.comm, &r), "MPI_Isend", f.peer);
      } else {
        check(MPI_Isend(a, 1, f.send_type, f.peer, f.send_tag, g_.comm, &r), "MPI_Isend", f.peer);
      }
      reqs_.push_back(r);
    }
  }

  void test() {
    int flag = 0;
    check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall", MPI_PROC_NULL);
  }

  void wait(double* a) {
    check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall", MPI_PROC_NULL);
    if (g_.opts.halo == halo_mode::packed)
      for (std::size_t i = 0; i < g_.faces.size(); ++i) g_.unpack(a, g_.faces[i], recv_[i].data());
  }

  // Seed 000's MPI-Only: two MPI_Sendrecv along z for the 1-D decomposition (send up and
  // receive from below, then the reverse); otherwise all receives, all sends, Waitall.
  void blocking(double* a) {
    if (g_.opts.decomp != decomposition::d1) {
      post(a);
      wait(a);
      return;
    }
    const bool packed = g_.opts.halo == halo_mode::packed;
    int lo = -1, hi = -1;
    for (std::size_t i = 0; i < g_.faces.size(); ++i) (g_.faces[i].side == 0 ? lo : hi) = static_cast<int>(i);
    for (int phase = 0; phase < 2; ++phase) {
      const int to = phase == 0 ? hi : lo, from = phase == 0 ? lo : hi;
      const face* ft = to >= 0 ? &g_.faces[static_cast<std::size_t>(to)] : nullptr;
      const face* ff = from >= 0 ? &g_.faces[static_cast<std::size_t>(from)] : nullptr;
      if (ft && packed) g_.pack(a, *ft, send_[static_cast<std::size_t>(to)].data());
      const void* sbuf = ft ? (packed ? static_cast<const void*>(send_[static_cast<std::size_t>(to)].data()) : a) : nullptr;
      void* rbuf = ff ? (packed ? static_cast<void*>(recv_[static_cast<std::size_t>(from)].data()) : a) : nullptr;
      const int scount = ft ? (packed ? static_cast<int>(ft->count) : 1) : 0;
      const int rcount = ff ? (packed ? static_cast<int>(ff->count) : 1) : 0;
      MPI_Datatype stype = ft && !packed ? ft->send_type : MPI_DOUBLE;
      MPI_Datatype rtype = ff && !packed ? ff->recv_type : MPI_DOUBLE;
      check(MPI_Sendrecv(sbuf, scount, stype, ft ? ft->peer : MPI_PROC_NULL, ft ? ft->send_tag : 0, rbuf, rcount, rtype,
                         ff ? ff->peer : MPI_PROC_NULL, ff ? ff->recv_tag : MPI_ANY_TAG, g_.comm, MPI_STATUS_IGNORE),
            "MPI_Sendrecv", ft ? ft->peer : ff ? ff->peer : MPI_PROC_NULL);
      if (ff && packed) g_.unpack(a, *ff, recv_[static_cast<std::size_t>(from)].data());
    }
  }

 private:
  const domain& g_;
  std::vector<MPI_Request> reqs_;
  std::vector<std::vector<double>> send_, recv_;
};

}  // namespace jacobi
