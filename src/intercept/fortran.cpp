// The Fortran bindings that do not reach the C MPI_* symbols, routed into the library.
//
// Where a Fortran call ends up depends on the MPI (checked on Debian 12; docs/intercept.md,
// "Fortran"):
// - Open MPI 4.1: every binding calls PMPI_* directly — mpif.h and `use mpi` through
//   mpi_send_ (libmpi_mpifh), `use mpi_f08` through mpi_send_f08_ (libmpi_usempif08) — so
//   the library's MPI_Send never sees them. Both symbols are defined here for the calls
//   below.
// - MPICH 4.0: mpif.h and `use mpi` call the C MPI_* symbols (already intercepted), and so
//   do the `use mpi_f08` calls that take a buffer (through MPIR_*_cdesc); the f08 calls
//   without one (waits, barrier) call PMPI_* directly: mpi_wait_f08_, mpi_waitall_f08_ and
//   mpi_barrier_f08_ are defined here.
//
// Each definition converts the Fortran arguments (handles with MPI_*_f2c, the special
// buffers and MPI_STATUS(ES)_IGNORE, statuses with MPI_Status_c2f) and calls the library's
// own C entry point, which takes the call over inside a task and passes it to PMPI_*
// elsewhere: a Fortran call behaves exactly as the same C call. The Fortran arguments are
// all passed by reference; `use mpi_f08`'s handle types hold one integer (MPI_VAL) and so
// arrive as its address, and its optional ierror arrives as a null pointer when absent.
#include <mpi.h>

#if defined(OPEN_MPI) || defined(MPICH)

#include <atomic>
#include <vector>

#include "hytask/core/this_task.hpp"
#include "intercept/counters.hpp"

namespace {

namespace hi = hytask::intercept::detail;

// Counts a Fortran call, and whether a task made it (the C entry point then decides whether
// it is taken over, and counts it in in_tasks).
void count_fortran() {
  hi::g_fortran_calls.fetch_add(1, std::memory_order_relaxed);
  if (hytask::this_task::inside_task())
    hi::g_fortran_in_tasks.fetch_add(1, std::memory_order_relaxed);
}

void give_ierr(MPI_Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);  // mpi_f08's ierror is optional
}

#if defined(OPEN_MPI)
// Open MPI's Fortran MPI_STATUS(ES)_IGNORE are MPI_F_STATUS(ES)_IGNORE for both mpif.h and
// mpi_f08 (checked: the same addresses); its MPI_IN_PLACE and MPI_BOTTOM are these common
// blocks, also shared by both.
extern "C" int mpi_fortran_in_place_;
extern "C" int mpi_fortran_bottom_;

const void* c_buffer(const void* b) {
  if (b == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (b == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return b;
}
void* c_buffer(void* b) { return const_cast<void*>(c_buffer(static_cast<const void*>(b))); }

using fstatus = MPI_Fint;  // a status is MPI_STATUS_SIZE integers
constexpr int status_stride = sizeof(MPI_Status) / sizeof(MPI_Fint);
bool status_ignored(const fstatus* s) { return s == MPI_F_STATUS_IGNORE; }
bool statuses_ignored(const fstatus* s) { return s == MPI_F_STATUSES_IGNORE; }
void give_status(const MPI_Status& c, fstatus* f) { MPI_Status_c2f(&c, f); }
#elif defined(MPICH)
// MPICH: only mpi_f08 calls come here; its statuses are MPI_F08_status.
using fstatus = MPI_F08_status;
constexpr int status_stride = 1;
bool status_ignored(const fstatus* s) { return s == MPI_F08_STATUS_IGNORE; }
bool statuses_ignored(const fstatus* s) { return s == MPI_F08_STATUSES_IGNORE; }
// MPI_Status_c2f08 is in libmpichfort, which a C++ program linked with this library does
// not link: the same copy, field by field (MPICH's MPI_F08_status mirrors its MPI_Status).
void give_status(const MPI_Status& c, fstatus* f) {
  f->count_lo = c.count_lo;
  f->count_hi_and_cancelled = c.count_hi_and_cancelled;
  f->MPI_SOURCE = c.MPI_SOURCE;
  f->MPI_TAG = c.MPI_TAG;
  f->MPI_ERROR = c.MPI_ERROR;
}
#endif

int f_wait(MPI_Fint* request, fstatus* status) {
  count_fortran();
  MPI_Request r = MPI_Request_f2c(*request);
  MPI_Status st;
  const bool ignore = status_ignored(status);
  const int rc = MPI_Wait(&r, ignore ? MPI_STATUS_IGNORE : &st);
  *request = MPI_Request_c2f(r);
  if (!ignore) give_status(st, status);
  return rc;
}

int f_waitall(const MPI_Fint* count, MPI_Fint* requests, fstatus* statuses) {
  count_fortran();
  const int n = *count;
  std::vector<MPI_Request> rs(static_cast<std::size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) rs[i] = MPI_Request_f2c(requests[i]);
  const bool ignore = statuses_ignored(statuses);
  std::vector<MPI_Status> st(ignore ? 0 : rs.size());
  const int rc = MPI_Waitall(n, rs.data(), ignore ? MPI_STATUSES_IGNORE : st.data());
  for (int i = 0; i < n; ++i) requests[i] = MPI_Request_c2f(rs[i]);
  if (!ignore)
    for (int i = 0; i < n; ++i) give_status(st[i], statuses + i * status_stride);
  return rc;
}

int f_barrier(const MPI_Fint* comm) {
  count_fortran();
  return MPI_Barrier(MPI_Comm_f2c(*comm));
}

#if defined(OPEN_MPI)
int f_send(int (*c)(const void*, int, MPI_Datatype, int, int, MPI_Comm), const void* buf,
         const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest, const MPI_Fint* tag,
         const MPI_Fint* comm) {
  count_fortran();
  return c(c_buffer(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

int f_recv(void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* source,
         const MPI_Fint* tag, const MPI_Fint* comm, fstatus* status) {
  count_fortran();
  MPI_Status st;
  const bool ignore = status_ignored(status);
  const int rc = MPI_Recv(c_buffer(buf), *count, MPI_Type_f2c(*type), *source, *tag,
                          MPI_Comm_f2c(*comm), ignore ? MPI_STATUS_IGNORE : &st);
  if (!ignore) give_status(st, status);
  return rc;
}

int f_sendrecv(const void* sbuf, const MPI_Fint* scount, const MPI_Fint* stype, const MPI_Fint* dest,
             const MPI_Fint* stag, void* rbuf, const MPI_Fint* rcount, const MPI_Fint* rtype,
             const MPI_Fint* source, const MPI_Fint* rtag, const MPI_Fint* comm, fstatus* status) {
  count_fortran();
  MPI_Status st;
  const bool ignore = status_ignored(status);
  const int rc = MPI_Sendrecv(c_buffer(sbuf), *scount, MPI_Type_f2c(*stype), *dest, *stag,
                              c_buffer(rbuf), *rcount, MPI_Type_f2c(*rtype), *source, *rtag,
                              MPI_Comm_f2c(*comm), ignore ? MPI_STATUS_IGNORE : &st);
  if (!ignore) give_status(st, status);
  return rc;
}

// MPI_Irecv and MPI_Isend: the C entry points note (or drop) the request in the registry
// of a task's receives, which a cancelled wait reads (receives.hpp).
int f_irecv(void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* source,
          const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* request) {
  count_fortran();
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Irecv(c_buffer(buf), *count, MPI_Type_f2c(*type), *source, *tag,
                           MPI_Comm_f2c(*comm), &r);
  *request = MPI_Request_c2f(r);
  return rc;
}

int f_isend(const void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest,
          const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* request) {
  count_fortran();
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Isend(c_buffer(buf), *count, MPI_Type_f2c(*type), *dest, *tag,
                           MPI_Comm_f2c(*comm), &r);
  *request = MPI_Request_c2f(r);
  return rc;
}

int f_bcast(void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* root,
          const MPI_Fint* comm) {
  count_fortran();
  return MPI_Bcast(c_buffer(buf), *count, MPI_Type_f2c(*type), *root, MPI_Comm_f2c(*comm));
}

int f_reduce(const void* sbuf, void* rbuf, const MPI_Fint* count, const MPI_Fint* type,
           const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm) {
  count_fortran();
  return MPI_Reduce(c_buffer(sbuf), c_buffer(rbuf), *count, MPI_Type_f2c(*type),
                    MPI_Op_f2c(*op), *root, MPI_Comm_f2c(*comm));
}

int f_allreduce(const void* sbuf, void* rbuf, const MPI_Fint* count, const MPI_Fint* type,
              const MPI_Fint* op, const MPI_Fint* comm) {
  count_fortran();
  return MPI_Allreduce(c_buffer(sbuf), c_buffer(rbuf), *count, MPI_Type_f2c(*type),
                       MPI_Op_f2c(*op), MPI_Comm_f2c(*comm));
}

#endif

}  // namespace

extern "C" {

#if defined(OPEN_MPI)

// mpif.h and `use mpi` (mpi_<call>_), and `use mpi_f08` (mpi_<call>_f08_): the same
// arguments, the f08 ierror optional.
#define HYTASK_FORTRAN_BOTH(name, params, call)            \
  void mpi_##name##_ params { give_ierr(ierr, call); }     \
  void mpi_##name##_f08_ params { give_ierr(ierr, call); }

HYTASK_FORTRAN_BOTH(send,
                    (const void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* dest, const MPI_Fint* tag, const MPI_Fint* comm,
                     MPI_Fint* ierr),
                    f_send(&MPI_Send, buf, count, type, dest, tag, comm))
HYTASK_FORTRAN_BOTH(ssend,
                    (const void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* dest, const MPI_Fint* tag, const MPI_Fint* comm,
                     MPI_Fint* ierr),
                    f_send(&MPI_Ssend, buf, count, type, dest, tag, comm))
HYTASK_FORTRAN_BOTH(recv,
                    (void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm,
                     fstatus* status, MPI_Fint* ierr),
                    f_recv(buf, count, type, source, tag, comm, status))
HYTASK_FORTRAN_BOTH(sendrecv,
                    (const void* sbuf, const MPI_Fint* scount, const MPI_Fint* stype,
                     const MPI_Fint* dest, const MPI_Fint* stag, void* rbuf,
                     const MPI_Fint* rcount, const MPI_Fint* rtype, const MPI_Fint* source,
                     const MPI_Fint* rtag, const MPI_Fint* comm, fstatus* status,
                     MPI_Fint* ierr),
                    f_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
                             rtag, comm, status))
HYTASK_FORTRAN_BOTH(irecv,
                    (void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm,
                     MPI_Fint* request, MPI_Fint* ierr),
                    f_irecv(buf, count, type, source, tag, comm, request))
HYTASK_FORTRAN_BOTH(isend,
                    (const void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* dest, const MPI_Fint* tag, const MPI_Fint* comm,
                     MPI_Fint* request, MPI_Fint* ierr),
                    f_isend(buf, count, type, dest, tag, comm, request))
HYTASK_FORTRAN_BOTH(wait, (MPI_Fint* request, fstatus* status, MPI_Fint* ierr),
                    f_wait(request, status))
HYTASK_FORTRAN_BOTH(waitall,
                    (const MPI_Fint* count, MPI_Fint* requests, fstatus* statuses,
                     MPI_Fint* ierr),
                    f_waitall(count, requests, statuses))
HYTASK_FORTRAN_BOTH(barrier, (const MPI_Fint* comm, MPI_Fint* ierr), f_barrier(comm))
HYTASK_FORTRAN_BOTH(bcast,
                    (void* buf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierr),
                    f_bcast(buf, count, type, root, comm))
HYTASK_FORTRAN_BOTH(reduce,
                    (const void* sbuf, void* rbuf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm,
                     MPI_Fint* ierr),
                    f_reduce(sbuf, rbuf, count, type, op, root, comm))
HYTASK_FORTRAN_BOTH(allreduce,
                    (const void* sbuf, void* rbuf, const MPI_Fint* count, const MPI_Fint* type,
                     const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr),
                    f_allreduce(sbuf, rbuf, count, type, op, comm))

#undef HYTASK_FORTRAN_BOTH

#elif defined(MPICH)  // the mpi_f08 calls without a buffer

void mpi_wait_f08_(MPI_Fint* request, fstatus* status, MPI_Fint* ierr) {
  give_ierr(ierr, f_wait(request, status));
}
void mpi_waitall_f08_(const MPI_Fint* count, MPI_Fint* requests, fstatus* statuses,
                      MPI_Fint* ierr) {
  give_ierr(ierr, f_waitall(count, requests, statuses));
}
void mpi_barrier_f08_(const MPI_Fint* comm, MPI_Fint* ierr) { give_ierr(ierr, f_barrier(comm)); }

#endif

}  // extern "C"

#endif  // Open MPI or MPICH
