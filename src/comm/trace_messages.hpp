// How a point-to-point message is named in the trace, so that the merge can pair its send
// with its receive across ranks (trace::message): the communicator by an id every rank
// computes alike (a hash of its members' ranks in MPI_COMM_WORLD), both ends by their world
// ranks, the tag, and the message's place in its stream, counted on each side. MPI matches
// the messages of one (communicator, source, destination, tag) stream in order, so the
// n-th send of a stream meets the n-th receive that names its source and tag: a receive that
// names both takes its number when it is posted, a wildcard one when it completes (with the
// status's source and tag; a stream that mixes both kinds may be paired wrongly). Two
// communicators of the same members share their streams. Only when tracing.
#pragma once

#include <mpi.h>

#include "trace/trace.hpp"

namespace hytask::mpi::detail {

struct operation;

// The send op is posting (kind::send, ssend); false for MPI_PROC_NULL or an
// inter-communicator.
bool trace_send(const operation* op, trace::message& m);
// A receive being posted: numbered now when it names its source and tag.
void trace_receive_posted(operation* op);
// A receive completed with `status`; false when it carries no message.
bool trace_receive_completed(const operation* op, const MPI_Status& status, trace::message& m);

}  // namespace hytask::mpi::detail
