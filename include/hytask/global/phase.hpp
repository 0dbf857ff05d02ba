// Phases of global dependencies (as in Schuchart's design): tasks of different ranks are ordered by
// their phase, and hytask::fence() starts the next one.
//
// ```cpp context=global
// hytask::global_array<int> a(8);
// hytask::spawn([&] { a[0].put(1); }, hytask::out(a[0]));  // phase 0, on whichever rank
// hytask::fence();                                          // every rank, as often
// hytask::spawn([&] { use(a[0].get()); }, hytask::in(a[0]));  // phase 1: after the write
// hytask::wait_all();                                       // collective with PGAS objects
// ```
//
// Within a rank, tasks are ordered as for local memory (in spawn order). Across ranks, a task
// of phase P runs after the accesses of earlier phases to the same locations, and accesses
// of different ranks in one phase are unordered — so a write and another access to one
// location by two ranks in one phase is an error: the location's owner finds it when the
// phase is matched, on its polling thread, prints it (the location, the phase, both ranks)
// and ends the job; it cannot be caught. The last write of a phase is the one later phases
// read. Ranks whose fences and wait_alls differ end the job with each rank's position.
#pragma once

namespace hytask {

// Ends the current phase. Called from main, by every rank, equally often; no communication
// waits here. Waits (running tasks) while HYTASK_PHASE_WINDOW phases are still active.
// Before the first PGAS object it does nothing.
void fence();

}  // namespace hytask
