// MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Waitsome on the program's own requests. Inside
// a task the request array stays the program's: comm's `polled` operation tests it in place
// with PMPI_Test, PMPI_Testall, PMPI_Testany or PMPI_Testsome while the task is suspended
// (its stack, where the arguments live, stays put), so MPI's own semantics hold — finished
// requests become MPI_REQUEST_NULL, persistent ones inactive, MPI_UNDEFINED when nothing is
// active, statuses written as the Test call writes them. Handing the requests to hytask
// for good (hytask::mpi::adopt) would be wrong here: a persistent request is started
// again, and a Waitany leaves the other requests to the program.
//
// Errors: the requests' communicators are not known here, so whether MPI raised the error
// on a handler that aborts is learnt from hytask's forwarding handler (it counts the errors
// it returned on the polling thread); if it did, the call throws hytask::mpi::error,
// otherwise the code is returned, as MPI_Wait* would return it.
#include <mpi.h>

#include <string>
#include <type_traits>

#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "intercept/errors.hpp"
#include "intercept/gate.hpp"
#include "intercept/posted.hpp"
#include "intercept/status.hpp"

namespace {

namespace hi = hytask::intercept::detail;

// Runs test (int* flag -> MPI code) through run_polled; `raised` tells whether a failure
// went through a handler that aborts.
template <class F>
int wait_in_task(const char* call, int requests, F& test, bool& raised) {
  struct context {
    F* test;
    bool* raised;
  } c{&test, &raised};
  auto trampoline = [](void* arg, int* flag, MPI_Status*) -> int {
    auto* ctx = static_cast<context*>(arg);
    const unsigned long before = hytask::mpi::detail::forwarded_errors();
    const int rc = (*ctx->test)(flag);
    if (rc != MPI_SUCCESS) *ctx->raised = hytask::mpi::detail::forwarded_errors() != before;
    return rc;
  };
  return hi::run_polled(call, requests, +trampoline, &c);
}

// A status that says "nobody" until MPI writes it, so that a failure's peer is not read from
// an uninitialised status.
void blank(MPI_Status& st) {
  st.MPI_SOURCE = MPI_ANY_SOURCE;
  st.MPI_TAG = MPI_ANY_TAG;
  st.MPI_ERROR = MPI_SUCCESS;
}

// "request 2 of 5 (rank 1, tag 9) in task 'x': MPI_ERR_TRUNCATE: message truncated"
std::string request_words(int index, int count, const MPI_Status* st, int code) {
  std::string s = count == 1 ? "the request" : "request " + std::to_string(index) + " of " + std::to_string(count);
  if (index < 0) s = "one of " + std::to_string(count) + " requests";
  if (st != nullptr && st->MPI_SOURCE != MPI_ANY_SOURCE) {
    s += " (rank " + std::to_string(st->MPI_SOURCE);
    if (st->MPI_TAG != MPI_ANY_TAG) s += ", tag " + std::to_string(st->MPI_TAG);
    s += ")";
  }
  return s + " " + hi::task_words() + ": " + hytask::mpi::detail::error_text(code);
}

int peer_of(const MPI_Status* st) { return st != nullptr && st->MPI_SOURCE != MPI_ANY_SOURCE ? st->MPI_SOURCE : -1; }
int tag_of(const MPI_Status* st) { return st != nullptr && st->MPI_TAG != MPI_ANY_TAG ? st->MPI_TAG : -1; }

// A failed multi-request wait whose statuses carry the errors (MPI_ERR_IN_STATUS): the
// first request that failed, rather than the one that was only pending.
int first_failed(int n, const MPI_Status* statuses) {
  for (int i = 0; i < n; ++i)
    if (statuses[i].MPI_ERROR != MPI_SUCCESS && statuses[i].MPI_ERROR != MPI_ERR_PENDING) return i;
  return -1;
}

// After a failed MPI_Waitall (indices null: status i is request i) or MPI_Waitsome (status
// k is request indices[k]): the code for the program, or the exception.
int give_error(const char* call, int rc, bool raised, int requests, int statuses_n,
               const int* indices, const MPI_Status* statuses) {
  if (!raised) return rc;
  int index = -1, code = rc;
  const MPI_Status* st = nullptr;
  if (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE) {
    const int k = first_failed(statuses_n, statuses);
    if (k >= 0) {
      st = &statuses[k];
      code = st->MPI_ERROR;
      index = indices != nullptr ? indices[k] : k;
    }
  }
  hi::raise(call, code, peer_of(st), tag_of(st), request_words(index, requests, st, code));
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Wait(request, status);
  MPI_Status st;
  blank(st);
  bool raised = false;
  auto test = [&](int* flag) { return PMPI_Test(request, flag, &st); };
  const int rc = wait_in_task("MPI_Wait", 1, test, raised);
  hi::give_status(status, st);
  if (rc == MPI_SUCCESS || !raised) return rc;
  hi::raise("MPI_Wait", rc, peer_of(&st), tag_of(&st), request_words(0, 1, &st, rc));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Waitall(count, requests, statuses);
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) blank(statuses[i]);
  bool raised = false;
  auto test = [&](int* flag) { return PMPI_Testall(count, requests, flag, statuses); };
  const int rc = wait_in_task("MPI_Waitall", count, test, raised);
  if (rc == MPI_SUCCESS) return rc;
  return give_error("MPI_Waitall", rc, raised, count, count, nullptr, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Waitany(count, requests, index, status);
  MPI_Status st;
  blank(st);
  bool raised = false;
  auto test = [&](int* flag) { return PMPI_Testany(count, requests, index, flag, &st); };
  const int rc = wait_in_task("MPI_Waitany", count, test, raised);
  hi::give_status(status, st);
  if (rc == MPI_SUCCESS || !raised) return rc;
  const int i = *index >= 0 && *index != MPI_UNDEFINED ? *index : -1;
  hi::raise("MPI_Waitany", rc, peer_of(&st), tag_of(&st), request_words(i, count, &st, rc));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < incount; ++i) blank(statuses[i]);
  bool raised = false;
  auto test = [&](int* flag) {
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *flag = *outcount != 0;  // some completed, or MPI_UNDEFINED: none is active
    return rc;
  };
  const int rc = wait_in_task("MPI_Waitsome", incount, test, raised);
  if (rc == MPI_SUCCESS) return rc;
  const int done = *outcount > 0 && *outcount != MPI_UNDEFINED ? *outcount : 0;
  return give_error("MPI_Waitsome", rc, raised, incount, done, indices, statuses);
}

}  // extern "C"
