// Cancellation across ranks (an error one rank found, a search one rank finished): the job's
// tasks on every rank.
//
// hytask::task_group cancels tasks of one rank (hytask/core/task_group.hpp). To stop the
// whole job's task graph — an error one rank found, or a search that one rank finished —
// cancel it on every rank:
//
// ```cpp context=mpi
// hytask::spawn([] {
//   if (found_it()) hytask::mpi::cancel_broadcast();  // one rank: every rank's tasks stop
// });
// hytask::wait_all();  // returns when this rank's tasks are done or cancelled
// if (hytask::mpi::settle_cancellation()) std::puts("stopped early");  // every rank, always
// ```
//
// - settle_cancellation(): every rank, from main, whether or not it saw a cancellation (a
//   rank whose tasks had all finished may not have: the notice travels while it waits).
//   The ranks agree whether any of them cancelled the job since the last settlement; if one
//   did, it is settled as cancel_collective does. Returns whether one did, on every rank
//   alike. Costs one small allreduce when nobody cancelled.
// - cancel_broadcast(): any rank, from main or a task. Cancels every task of this rank and
//   tells the others, which cancel theirs when they next poll MPI (a rank with nothing
//   pending learns it at its next communication, or at cancel_collective). Returns at once.
// - cancel_collective(): every rank, from main. Cancels every task of the job (if nobody
//   did), interrupts their MPI waits, drains the messages cancelled tasks left unmatched
//   (receives of the program's communicators are discarded until no rank has a send
//   pending), waits for the tasks — collectively with global dependencies, whose protocol
//   goes on for cancelled tasks — and ends with a barrier. Afterwards the job is not
//   cancelled any more: new tasks run.
// - While the job is cancelled, every task of the rank is (this_task::cancelled() is true,
//   in main too), tasks spawned meanwhile are skipped, and the MPI calls of tasks and
//   main throw hytask::task_cancelled; receives pending are cancelled, sends drained.
// - If the job is cancelled and nobody settles it, the runtime's end does (every rank ends
//   the runtime); otherwise its end costs one small allreduce. A rank that settles while
//   another has gone on to its end is met there again: the end never waits for a settlement
//   that will not come.
//
// Limits: a task suspended in a collective that the cancelled tasks of other ranks never
// posted cannot be interrupted (MPI cannot cancel collectives): the watchdog reports it.
// Messages sent eagerly before the cancellation and arriving after the drain could match a
// later receive with the same source and tag: use new tags, or a new communicator, after a
// cancellation. Communicators the cancelled tasks used must still exist at
// cancel_collective.
#pragma once

namespace hytask::mpi {

void cancel_broadcast();
void cancel_collective();
bool settle_cancellation();
// Whether the job is cancelled on this rank (by cancel_broadcast here or elsewhere, until
// cancel_collective settles it).
bool job_cancelled() noexcept;

}  // namespace hytask::mpi
