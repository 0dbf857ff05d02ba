// Channels: the queues in which MPI matches operations — sends to a (communicator, peer,
// tag) among themselves, receives from one among themselves, collectives on a communicator
// — as the tasks that post on them see them.
//
// Declarations (send_channel, recv_channel, channel, collective) give tasks a token to
// declare inout on: tasks that declare the same direction post in spawn order. Tokens are
// addresses in a reserved range that nothing else uses and that are never handed out twice,
// so a token cannot alias the program's memory, or another channel's, however long a
// channel_access object is kept.
//
// The order check compares every post by a task with the earlier posts of its siblings (the
// tasks spawned by the same task) on the same channel and direction: a post by a task
// spawned before the one that posted last means the tasks posted in an order other than
// their spawn order, so MPI matched their messages to other tasks than the program's order
// says. HYTASK_ORDER_CHECK: warn (once per channel), error (the posting call throws), off.
// Reordered collectives fail unless off: the other ranks post theirs in spawn order, and
// the job would hang or mix up data.
//
// The state lives with the spawning task (core/scope_ext.hpp): one entry per channel its
// children used, freed when they are all done (its wait_all, its completion; main's at its
// wait_all). Posts from main, and from tasks of different parents, are not compared:
// different parents' tasks are ordered by their parents' dependencies, not by spawn order.
#pragma once

#include <mpi.h>

#include "comm/operation.hpp"
#include "hytask/config.hpp"

namespace hytask::mpi::detail {

// Registers the release of channel state with the core; once per process.
void install_channel_state_release();

// The token for a declaration by the task that is spawning (or main): token + 0 for sends
// (and collectives), token + 1 for receives and probes.
const char* declare_channel(MPI_Comm comm, int peer, int tag, bool collective);

// Checks op, about to be posted by the running task, against its siblings' earlier posts.
// Throws hytask::usage_error when the post must fail; prints a warning in warn mode.
void check_post_order(const operation* op, hytask::order_check mode, int rank);

}  // namespace hytask::mpi::detail
