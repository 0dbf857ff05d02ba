// MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Waitsome on the program's own requests. Inside
// a task the request array stays the program's: comm's `polled` operation tests it in place
// with PMPI_Test, PMPI_Testall, PMPI_Testany or PMPI_Testsome while the task is suspended
// (its stack, where the arguments live, stays put), so MPI's own semantics hold — finished
// requests become MPI_REQUEST_NULL, persistent ones inactive, MPI_UNDEFINED when nothing is
// active, statuses written as the Test call writes them. Handing the requests to hytask
// for good (hytask::mpi::adopt) would be wrong here: a persistent request is started
// again, and a Waitany leaves the other requests to the program.
//
// Cancellation: when the waiting task is cancelled (its task_group, or the job), the wait's
// hook cancels the receives among its requests that the task posted (receives.hpp) and the
// wait drains: it tests every request (PMPI_Testall) until all have completed — sends are
// not cancelled, MPI cannot do it reliably — and then throws hytask::task_cancelled, so
// that nothing of the task's is left pending, nor a buffer written after it is gone.
//
// Errors: the requests' communicators are not known here, so whether MPI raised the error
// on a handler that aborts is learnt from hytask's forwarding handler (it counts the errors
// it returned on the polling thread); if it did, the call throws hytask::mpi::error,
// otherwise the code is returned, as MPI_Wait* would return it.
//
// MPI_Test, MPI_Testall, MPI_Testany, MPI_Testsome and MPI_Request_free pass through, and
// inside a task drop the registry's entries of the requests they free.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "hytask/core/this_task.hpp"
#include "intercept/errors.hpp"
#include "intercept/gate.hpp"
#include "intercept/posted.hpp"
#include "intercept/receives.hpp"
#include "intercept/status.hpp"

namespace {

namespace hi = hytask::intercept::detail;
namespace receives = hytask::intercept::detail::receives;

// One intercepted wait: the program's requests, and what a cancellation of the waiting task
// did to them. Written by the cancel hook where MPI is called (the task is suspended, and
// its stack, where this lives, stays put); the task reads it once it has resumed.
struct wait_state {
  MPI_Request* requests;
  int count;
  std::uint64_t task;     // the waiting task
  bool draining = false;  // the hook ran: the wait ends once every request has completed
  int cancelled = 0;      // receives the hook cancelled
};

// The cancel hook: MPI_Cancel on the task's own pending receives; the other requests
// (sends, and requests the registry does not know) are left to complete.
void interrupt(wait_state& w) {
  for (int i = 0; i < w.count; ++i)
    if (w.requests[i] != MPI_REQUEST_NULL && receives::posted_by(w.requests[i], w.task) &&
        PMPI_Cancel(&w.requests[i]) == MPI_SUCCESS)
      ++w.cancelled;
  w.draining = true;
}

// Runs test (int* flag -> MPI code) through run_polled; `raised` tells whether a failure
// went through a handler that aborts.
template <class F>
hi::polled_result wait_in_task(const char* call, wait_state& w, F& test, bool& raised) {
  struct context {
    F* test;
    bool* raised;
    wait_state* w;
  } c{&test, &raised, &w};
  auto trampoline = [](void* arg, int* flag, MPI_Status*) -> int {
    auto* ctx = static_cast<context*>(arg);
    const unsigned long before = hytask::mpi::detail::forwarded_errors();
    const int rc = (*ctx->test)(flag);
    if (rc != MPI_SUCCESS) *ctx->raised = hytask::mpi::detail::forwarded_errors() != before;
    return rc;
  };
  auto cancel = [](void* arg) { interrupt(*static_cast<context*>(arg)->w); };
  return hi::run_polled({.call = call, .requests = w.count, .cancel = +cancel}, +trampoline, &c);
}

// An interrupted wait whose requests have all completed: "hytask: MPI_Waitall on 2 requests
// in task 'x': cancelled with its task (hytask::task_group); 1 receive cancelled
// (MPI_Cancel), every request completed".
[[noreturn]] void cancelled(const char* call, const wait_state& w) {
  std::string what = "on " + std::to_string(w.count) + (w.count == 1 ? " request" : " requests");
  std::string then = "; ";
  if (w.cancelled > 0)
    then += std::to_string(w.cancelled) + (w.cancelled == 1 ? " receive" : " receives") + " cancelled (MPI_Cancel), ";
  then += w.count == 1 ? "the request completed" : "every request completed";
  hi::interrupted(call, what, then);
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
  wait_state w{request, 1, hytask::this_task::id()};
  const receives::freed_on_exit forget(request, 1);
  MPI_Status st;
  blank(st);
  bool raised = false;
  auto test = [&](int* flag) { return PMPI_Test(request, flag, &st); };  // drains as it is
  const hi::polled_result r = wait_in_task("MPI_Wait", w, test, raised);
  if (r.error == MPI_SUCCESS && r.interrupted) cancelled("MPI_Wait", w);
  hi::give_status(status, st);
  if (r.error == MPI_SUCCESS || !raised) return r.error;
  hi::raise("MPI_Wait", r.error, peer_of(&st), tag_of(&st), request_words(0, 1, &st, r.error));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Waitall(count, requests, statuses);
  wait_state w{requests, count, hytask::this_task::id()};
  const receives::freed_on_exit forget(requests, count);
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) blank(statuses[i]);
  bool raised = false;
  auto test = [&](int* flag) { return PMPI_Testall(count, requests, flag, statuses); };  // drains as it is
  const hi::polled_result r = wait_in_task("MPI_Waitall", w, test, raised);
  if (r.error == MPI_SUCCESS) {
    if (r.interrupted) cancelled("MPI_Waitall", w);
    return MPI_SUCCESS;
  }
  return give_error("MPI_Waitall", r.error, raised, count, count, nullptr, statuses);
}

// Interrupted, MPI_Waitany and MPI_Waitsome drain with PMPI_Testall: an error is then given
// as MPI_Waitall would give it (Waitany: no index; Waitsome: every request, in order).
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Waitany(count, requests, index, status);
  wait_state w{requests, count, hytask::this_task::id()};
  const receives::freed_on_exit forget(requests, count);
  MPI_Status st;
  blank(st);
  bool raised = false;
  auto test = [&](int* flag) {
    if (w.draining) return PMPI_Testall(count, requests, flag, MPI_STATUSES_IGNORE);
    return PMPI_Testany(count, requests, index, flag, &st);
  };
  const hi::polled_result r = wait_in_task("MPI_Waitany", w, test, raised);
  if (r.interrupted) {
    if (r.error == MPI_SUCCESS) cancelled("MPI_Waitany", w);
    *index = MPI_UNDEFINED;
    if (!raised) return r.error;
    hi::raise("MPI_Waitany", r.error, -1, -1, request_words(-1, count, nullptr, r.error));
  }
  hi::give_status(status, st);
  if (r.error == MPI_SUCCESS || !raised) return r.error;
  const int i = *index >= 0 && *index != MPI_UNDEFINED ? *index : -1;
  hi::raise("MPI_Waitany", r.error, peer_of(&st), tag_of(&st), request_words(i, count, &st, r.error));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  wait_state w{requests, incount, hytask::this_task::id()};
  const receives::freed_on_exit forget(requests, incount);
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < incount; ++i) blank(statuses[i]);
  bool raised = false;
  auto test = [&](int* flag) {
    if (w.draining) return PMPI_Testall(incount, requests, flag, statuses);
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *flag = *outcount != 0;  // some completed, or MPI_UNDEFINED: none is active
    return rc;
  };
  const hi::polled_result r = wait_in_task("MPI_Waitsome", w, test, raised);
  if (r.interrupted) {
    if (r.error == MPI_SUCCESS) cancelled("MPI_Waitsome", w);
    *outcount = incount;
    for (int i = 0; i < incount; ++i) indices[i] = i;
    return give_error("MPI_Waitsome", r.error, raised, incount, incount, nullptr, statuses);
  }
  if (r.error == MPI_SUCCESS) return r.error;
  const int done = *outcount > 0 && *outcount != MPI_UNDEFINED ? *outcount : 0;
  return give_error("MPI_Waitsome", r.error, raised, incount, done, indices, statuses);
}

// Tests complete requests without blocking: nothing to take over, only the registry to keep.
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Test(request, flag, status);
  const receives::freed_on_exit forget(request, 1);
  return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Testall(count, requests, flag, statuses);
  const receives::freed_on_exit forget(requests, count);
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Testany(count, requests, index, flag, status);
  const receives::freed_on_exit forget(requests, count);
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!hi::intercepting()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const receives::freed_on_exit forget(requests, incount);
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_free(MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Request_free(request);
  receives::forget(*request);  // before: once freed, the handle may be another task's
  return PMPI_Request_free(request);
}

}  // extern "C"
