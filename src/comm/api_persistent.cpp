// hytask::mpi's persistent requests (hytask/comm/persistent.hpp): MPI_Send_init / MPI_Recv_init
// and MPI_Request_free run where MPI may be called (blocking calls of the engine, kind call);
// each start is an operation that posts MPI_Start on the persistent request, which MPI leaves
// inactive, not freed, when the engine's test completes it.
#include <mpi.h>

#include <climits>
#include <string>

#include "comm/api_common.hpp"
#include "hytask/comm/persistent.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi {

using detail::bytes_of;
using detail::kind;
using detail::make;
using detail::operation;
using detail::run_blocking;
using detail::run_nonblocking;
using detail::sys;

namespace {

struct init_call {
  bool receive;
  const void* buf;
  MPI_Count count;
  MPI_Datatype type;
  int peer, tag;
  MPI_Comm comm;
  MPI_Request* req;
};

int post_init(void* arg) {
  auto* a = static_cast<init_call*>(arg);
  void* buf = const_cast<void*>(a->buf);  // MPI_Send_init reads it only
#if MPI_VERSION >= 4
  if (a->count > INT_MAX)
    return a->receive ? MPI_Recv_init_c(buf, a->count, a->type, a->peer, a->tag, a->comm, a->req)
                      : MPI_Send_init_c(a->buf, a->count, a->type, a->peer, a->tag, a->comm, a->req);
#endif
  const int n = static_cast<int>(a->count);
  return a->receive ? MPI_Recv_init(buf, n, a->type, a->peer, a->tag, a->comm, a->req)
                    : MPI_Send_init(a->buf, n, a->type, a->peer, a->tag, a->comm, a->req);
}

// After a start completed: whether MPI freed the persistent request (Open MPI 4.1 does when
// the start failed; the engine leaves MPI's handle in the operation).
bool freed_by_mpi(const operation* last) {
  return last != nullptr && last->state.load(std::memory_order_acquire) == detail::op_complete &&
         last->req == MPI_REQUEST_NULL;
}

}  // namespace

persistent_request::persistent_request(bool receive, const void* buf, MPI_Count count,
                                       MPI_Datatype type, int peer, int tag, MPI_Comm comm)
    : comm_(comm), peer_(peer), tag_(tag), bytes_(bytes_of(count, type)), receive_(receive) {
  const char* call = receive ? "MPI_Recv_init" : "MPI_Send_init";
  if (count > INT_MAX && MPI_VERSION < 4)
    throw error(call, MPI_ERR_COUNT, peer, tag,
                std::string("hytask::mpi: ") + call + ": the count " + std::to_string(count) +
                    " is above INT_MAX, and this MPI library has no MPI 4.0 large-count calls (" +
                    call + "_c): split the data, or describe it with a derived datatype "
                    "(MPI_Type_contiguous) and a smaller count");
  init_call args{receive, buf, count, type, peer, tag, comm, &req_};
  operation* op = make(kind::call, comm);
  op->call_name = call;
  op->peer = peer;
  op->tag = tag;
  op->bytes = bytes_;
  op->call = &post_init;
  op->call_arg = &args;
  run_blocking(receive ? "persistent_recv" : "persistent_send", op);
}

persistent_request::persistent_request(persistent_request&& o) noexcept
    : req_(o.req_), last_(o.last_), comm_(o.comm_), peer_(o.peer_), tag_(o.tag_),
      bytes_(o.bytes_), receive_(o.receive_) {
  o.req_ = MPI_REQUEST_NULL;
  o.last_ = nullptr;
}

persistent_request& persistent_request::operator=(persistent_request&& o) noexcept {
  if (this != &o) {
    reset();
    req_ = o.req_;
    last_ = o.last_;
    comm_ = o.comm_;
    peer_ = o.peer_;
    tag_ = o.tag_;
    bytes_ = o.bytes_;
    receive_ = o.receive_;
    o.req_ = MPI_REQUEST_NULL;
    o.last_ = nullptr;
  }
  return *this;
}

persistent_request::~persistent_request() { reset(); }

bool persistent_request::active() const noexcept {
  return last_ != nullptr && last_->state.load(std::memory_order_acquire) != detail::op_complete;
}

request persistent_request::start() {
  const char* what = receive_ ? "persistent_recv::start" : "persistent_send::start";
  if (req_ != MPI_REQUEST_NULL && freed_by_mpi(last_)) req_ = MPI_REQUEST_NULL;
  if (req_ == MPI_REQUEST_NULL)
    throw usage_error(std::string("hytask::mpi::") + what +
                      (last_ != nullptr && last_->error != MPI_SUCCESS
                           ? ": the last start failed, and this MPI freed the persistent request "
                             "then (Open MPI does): create a new one"
                           : ": the object was moved from"));
  if (active())
    throw usage_error(std::string("hytask::mpi::") + what + ": the previous start (" +
                      (receive_ ? "from rank " : "to rank ") + std::to_string(peer_) + ", tag " +
                      std::to_string(tag_) +
                      ") is still pending, and MPI forbids starting an active request: wait "
                      "for the request the previous start() returned first");
  operation* op = make(receive_ ? kind::start_recv : kind::start_send, comm_);
  op->req = req_;  // posting starts it (MPI_Start)
  op->peer = peer_;
  op->tag = tag_;
  op->bytes = bytes_;
  detail::acquire(op);
  request r;
  try {
    r = run_nonblocking(what, op);
  } catch (...) {
    detail::release(op);
    throw;
  }
  if (last_ != nullptr) detail::release(last_);
  last_ = op;
  return r;
}

void persistent_request::reset() noexcept {
  operation* last = last_;
  last_ = nullptr;
  if (req_ == MPI_REQUEST_NULL) {
    if (last != nullptr) detail::release(last);
    return;
  }
  detail::comm_system* c = detail::comm_system::instance();
  if (c == nullptr) {  // the runtime ended first: MPI may be finalized, nothing to free
    if (last != nullptr) detail::release(last);
    req_ = MPI_REQUEST_NULL;
    return;
  }
  if (last != nullptr) {
    c->wait(last);  // MPI frees an active request only once it completes; its buffer is ours
    const bool freed = freed_by_mpi(last);
    detail::release(last);
    if (freed) {
      req_ = MPI_REQUEST_NULL;
      return;
    }
  }
  operation* op = make(kind::call, comm_);
  op->call_name = "MPI_Request_free";
  op->peer = peer_;
  op->tag = tag_;
  op->call = [](void* arg) { return MPI_Request_free(static_cast<MPI_Request*>(arg)); };
  op->call_arg = &req_;
  // The runtime's own: a destructor in a cancelled task still frees the request.
  try {
    c->submit(op, true);
    c->wait(op);
  } catch (...) {  // nothing a destructor could do about it
  }
  detail::release(op);
  req_ = MPI_REQUEST_NULL;
}

}  // namespace hytask::mpi
