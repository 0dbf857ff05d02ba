// An MPI operation posted through hytask: what it is (for posting it, for errors and for the
// watchdog), its MPI request and status, and an event set when it completes.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hytask/core/event.hpp"

namespace hytask::detail {
struct task;
}

namespace hytask::mpi::detail {

enum class kind : std::uint8_t {
  send, ssend, recv, probe,
  barrier, bcast, reduce, allreduce, gather, gatherv, scatter, scatterv,
  allgather, allgatherv, alltoall, alltoallv,
  reduce_scatter, reduce_scatter_block, scan, exscan,
  // Neighbourhood collectives on a topology communicator.
  neighbor_allgather, neighbor_allgatherv, neighbor_alltoall, neighbor_alltoallv,
  // A matched probe: tested with MPI_Improbe by the poller (as probes are with MPI_Iprobe);
  // the message it matched is `message`. A matched receive: MPI_Imrecv of `message`.
  mprobe, mrecv,
  // MPI_Start of a persistent send or receive (hytask::mpi::persistent_send / _recv): req
  // holds the inactive persistent request when submitted; posting starts it, and MPI leaves
  // it inactive, not freed, when it completes.
  start_send, start_recv,
  // One-sided (the global layer's PGAS objects): MPI_Rget / MPI_Rput on a window under a
  // passive epoch; an rput completes locally (its buffer may be reused), not at the target.
  rget, rput,
  // A blocking MPI call that must run on a thread allowed to call MPI (window creation and
  // flushes, in funneled mode on the MPI thread): `call(call_arg)` returns MPI's error code,
  // and the operation completes as it returns. Named by call_name.
  call,
  // A request the program posted itself and handed over (hytask::mpi::adopt): req is set
  // before it is submitted, posting it calls nothing. Named by call_name.
  adopted,
  // A non-blocking MPI call the layer has no kind of its own for (MPI_Ibsend, MPI_Iscan,
  // ...): posting calls post(call_arg, &req) where MPI may be called (the MPI thread in
  // funneled mode), and the request completes like any other. Named by call_name.
  custom,
  // No request of hytask's: a completion test the program's state needs, e.g. its own
  // request array tested in place with MPI_Testall. test(call_arg, &flag, &status) is called
  // where MPI may be called, once at post and then by the poller each round (as probes are
  // with MPI_Iprobe), until it sets flag or returns an error; what it points at must stay
  // valid until then (the waiting task's stack does). Named by call_name.
  polled,
};

const char* mpi_call_name(kind k);  // "MPI_Isend", ...
struct operation;
const char* op_name(const operation* op);  // the call's name; call_name for call, adopted,
                                           // custom and polled
bool is_collective(kind k);

enum op_state : int { op_created = 0, op_posted = 1, op_complete = 2 };

struct operation {
  std::atomic<int> refs{1};
  kind what = kind::send;
  std::atomic<int> state{op_created};
  int error = MPI_SUCCESS;          // written before state becomes op_complete
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status status{};
  hytask::event done;               // set once state is op_complete
  // The one wait_any / wait_some (api_completion.cpp) watching it, at most: a later wait
  // replaces the watch of an earlier one, so a loop of waits over n requests holds n
  // watches, not one per wait and request. Whoever exchanges a watch out owns it: the
  // completion fires it; a replacing wait, or the operation's end, discards it.
  struct any_watch {
    void (*fire)(any_watch*);
    void (*discard)(any_watch*);
  };
  std::atomic<any_watch*> any{nullptr};

  // Cancellation (comm/cancel.hpp). The task suspended in it or holding it (bind), alive while
  // the operation is pending; set before it waits.
  std::atomic<hytask::detail::task*> waiter{nullptr};
  std::atomic<bool> cancel_requested{false};  // cancel it (MPI_Cancel) if MPI still can
  bool cancel_issued = false;       // the poller called MPI_Cancel, or a polled operation's
                                    // cancel hook (the poller's only; its poster's before)
  bool cancelled = false;           // it completed cancelled: written before op_complete
  bool internal = false;            // the runtime's own (submit's internal): never cancelled
  // Tested when the engine polls, but not counted as pending (nobody stays awake for it):
  // the receive of job-cancellation notices (comm/job_cancel.hpp).
  bool passive = false;

  // Description (errors, the watchdog, the trace).
  int peer = -1;                    // destination, source or root
  int tag = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t bytes = 0;
  const char* task_name = nullptr;  // the task that posted it (interned), or null
  std::uint64_t task_id = 0;
  std::uint64_t posted_ns = 0;      // trace clock, when tracing
  std::uint64_t trace_seq = 0;      // a receive's place in its stream + 1, when tracing
                                    // (comm/trace_messages.hpp)

  // Arguments of the MPI call.
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  MPI_Count scount = 0, rcount = 0;  // above INT_MAX only with large-count calls
  MPI_Datatype stype = MPI_DATATYPE_NULL, rtype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  const int* scounts = nullptr;
  const int* sdispls = nullptr;
  const int* rcounts = nullptr;
  const int* rdispls = nullptr;
  MPI_Win win = MPI_WIN_NULL;        // rget, rput: the window, and the target displacement
  MPI_Aint disp = 0;                 // (in the window's displacement units)
  MPI_Message message = MPI_MESSAGE_NULL;  // mprobe: the message matched; mrecv: to receive
  int (*call)(void*) = nullptr;      // call
  void* call_arg = nullptr;
  const char* call_name = nullptr;   // "MPI_Win_allocate", ... (call, adopted, custom, polled)
  int (*post)(void*, MPI_Request*) = nullptr;        // custom
  int (*test)(void*, int*, MPI_Status*) = nullptr;   // polled
  // polled, optional: interrupts the wait when its task is cancelled. Called once (by
  // interrupt_polled), where MPI may be called, while the operation is pending; it must make
  // `test` set its flag soon (a wait cancels its receives and drains the rest of the
  // program's requests, a probe stops probing), and the operation then completes as usual,
  // not as cancelled: what it waits for is the program's and must complete.
  void (*cancel)(void*) = nullptr;

  operation* next = nullptr;        // queues of the executors
};

void acquire(operation* op) noexcept;  // reference counting (declared in hytask/comm/request.hpp)
void release(operation* op) noexcept;

// The hytask::mpi::error of a failed operation (api_requests.cpp).
}  // namespace hytask::mpi::detail
namespace hytask::mpi { class error; error make_error(const detail::operation* op); }
namespace hytask::mpi::detail {

// Calls the operation's non-blocking MPI function; returns MPI's error code.
int post_now(operation* op);

// Whether a cancellation of its task interrupts op: a receive (MPI_Cancel; a started
// persistent receive too), a probe or matched probe (ours to drop), a polled operation that has a cancel hook. Sends are drained (MPI may not cancel
// them), collectives and one-sided operations cannot be cancelled at all.
inline bool cancellable(const operation* op) {
  return op->what == kind::recv || op->what == kind::probe || op->what == kind::mprobe ||
         op->what == kind::start_recv || (op->what == kind::polled && op->cancel != nullptr);
}

// Calls a polled operation's cancel hook, once (cancel_issued); the operation stays pending.
// On the thread that may call MPI, where the operation is tested (the poller, or its poster).
void interrupt_polled(operation* op);

// Whether this MPI has a large-count call (MPI 4's MPI_Isend_c, ...) for this kind: counts
// above INT_MAX are refused otherwise.
bool large_count_call(kind k);

// Marks op complete with this status / error and sets its event (runs its waiters). On a
// thread that may call MPI (it asks MPI whether an operation asked to cancel was).
void complete(operation* op, const MPI_Status* status, int error);
// Completes an operation that was never posted, or a probe, as cancelled.
void complete_cancelled(operation* op);

// "MPI_Isend to rank 3 (tag 7, 64 bytes) in task 'halo': MPI_ERR_RANK: invalid rank"
std::string describe_failure(const operation* op, int code);
// MPI's text for an error code, with its class: "MPI_ERR_RANK: invalid rank".
std::string error_text(int code);
std::string describe(const operation* op);  // for the watchdog

}  // namespace hytask::mpi::detail
