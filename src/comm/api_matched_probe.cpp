// hytask::mpi's matched probe and receive (hytask/comm/matched_probe.hpp): mprobe waits as an
// operation the poller tests with MPI_Improbe, improbe is one MPI_Improbe made where MPI may be
// called, mrecv and imrecv post MPI_Imrecv.
#include <mpi.h>

#include <optional>
#include <string>

#include "comm/api_common.hpp"
#include "comm/error_handler.hpp"
#include "hytask/comm/matched_probe.hpp"
#include "hytask/comm/serialized.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi {

using detail::bytes_of;
using detail::kind;
using detail::make;
using detail::operation;
using detail::run_blocking;
using detail::run_nonblocking;

namespace {

struct owner {
  operation* op;
  ~owner() { detail::release(op); }
};

struct improbe_call {
  int source, tag;
  MPI_Comm comm;
  int flag = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status{};
};

// The receive of m, its handle taken from m (MPI consumes it when the receive is posted).
operation* op_mrecv(const char* what, void* buf, MPI_Count count, MPI_Datatype type,
                    matched_message& m) {
  if (m.handle == MPI_MESSAGE_NULL)
    throw usage_error(std::string("hytask::mpi::") + what +
                      ": the message was already received (or never matched): each message "
                      "that mprobe or improbe matched is received once");
  operation* op = make(kind::mrecv, m.comm);
  op->rbuf = buf;
  op->rcount = count;
  op->rtype = type;
  op->bytes = bytes_of(count, type);
  op->peer = m.status.MPI_SOURCE;
  op->tag = m.status.MPI_TAG;
  op->message = m.handle;
  return op;
}

}  // namespace

MPI_Count matched_message::count(MPI_Datatype type) const {
  MPI_Count bytes = 0, type_size = 0;
  int rc = MPI_SUCCESS;
  {
    serialized_section section;  // local queries, made like any call of the program's
    detail::calling_mpi guard;
    rc = MPI_Get_elements_x(&status, MPI_BYTE, &bytes);
    if (rc == MPI_SUCCESS) rc = MPI_Type_size_x(type, &type_size);
  }
  if (rc != MPI_SUCCESS)
    throw error("MPI_Get_count", rc, source(), tag(),
                "hytask::mpi::matched_message::count: " + detail::error_text(rc));
  if (type_size == 0) return 0;
  if (bytes % type_size != 0)
    throw error("MPI_Get_count", MPI_ERR_TYPE, source(), tag(),
                "hytask::mpi::matched_message::count: the message from rank " +
                    std::to_string(source()) + " (tag " + std::to_string(tag()) + ") holds " +
                    std::to_string(bytes) + " bytes, not a whole number of elements of " +
                    std::to_string(type_size) + " bytes: ask for the type it was sent with");
  return bytes / type_size;
}

matched_message mprobe(int source, int tag, MPI_Comm comm) {
  operation* op = make(kind::mprobe, comm);
  op->peer = source;
  op->tag = tag;
  detail::acquire(op);
  owner hold{op};
  run_blocking("mprobe", op);
  return matched_message{op->message, op->status, comm};
}

std::optional<matched_message> improbe(int source, int tag, MPI_Comm comm) {
  improbe_call args{source, tag, comm};
  operation* op = make(kind::call, comm);
  op->call_name = "MPI_Improbe";
  op->peer = source;
  op->tag = tag;
  op->call = [](void* arg) {
    auto* a = static_cast<improbe_call*>(arg);
    return MPI_Improbe(a->source, a->tag, a->comm, &a->flag, &a->message, &a->status);
  };
  op->call_arg = &args;
  run_blocking("improbe", op);  // run where MPI may be called; args outlive it
  if (!args.flag) return std::nullopt;
  return matched_message{args.message, args.status, comm};
}

MPI_Status mrecv(void* buf, MPI_Count count, MPI_Datatype type, matched_message& m) {
  operation* op = op_mrecv("mrecv", buf, count, type, m);
  detail::acquire(op);
  owner hold{op};
  detail::refuse_large_count(op);  // before the message is taken: it may still be received
  m.handle = MPI_MESSAGE_NULL;     // consumed by the receive, whatever its outcome
  run_blocking("mrecv", op);
  return op->status;
}

request imrecv(void* buf, MPI_Count count, MPI_Datatype type, matched_message& m) {
  operation* op = op_mrecv("imrecv", buf, count, type, m);
  detail::refuse_large_count(op);
  m.handle = MPI_MESSAGE_NULL;
  return run_nonblocking("imrecv", op);
}

}  // namespace hytask::mpi
