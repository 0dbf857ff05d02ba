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
// phase is matched, skips both accesses and their successors, and the next wait_all throws
// hytask::usage_error on every rank (the location, the phase, both ranks); MPI and the
// runtime stay usable. The last write of a phase is the one later phases read. Ranks whose
// fences and wait_alls differ end the job with each rank's position.
//
// A dependency bound to no phase (DASH's DART_PHASE_ANY):
//
// ```cpp context=global
// hytask::global_array<int> a(8);                 // at least one element per rank
// const std::size_t mine = a.local_begin();       // this rank's first element
// hytask::spawn([&] { a.lbegin()[0] += 1; }, hytask::inout(a[mine], hytask::any_phase));
// ```
//
// in/out/inout(ref, hytask::any_phase) orders the task with this rank's own accesses to the
// location, in spawn order, as for local memory, and with no other rank's: nothing is sent
// to the owner and nothing waits for a phase to be matched, so the task may run at once and
// costs what a local dependency costs. It may be declared from any thread and in nested
// tasks (phase-bound dependencies only from main). Other ranks do not see the access: it is
// never a conflict, and another rank's access is ordered after it only through a later
// phase-bound access of this rank to the location (which waits for it, in spawn order).
// Use it for locations no other rank touches meanwhile: a rank's own block updated by
// several tasks between exchanges, a remote element this rank alone reads in the phase.
#pragma once

#include "hytask/global/memory.hpp"

namespace hytask {

// The tag of a dependency bound to no phase (above).
struct any_phase_t {
  explicit constexpr any_phase_t() = default;
};
inline constexpr any_phase_t any_phase{};

// in/out/inout on an element or tile reference, bound to no phase.
inline detail::unphased_access in(const detail::location_ref& ref, any_phase_t) {
  return ref.hytask_unphased_access(access_mode::in);
}
inline detail::unphased_access out(const detail::location_ref& ref, any_phase_t) {
  return ref.hytask_unphased_access(access_mode::out);
}
inline detail::unphased_access inout(const detail::location_ref& ref, any_phase_t) {
  return ref.hytask_unphased_access(access_mode::inout);
}

// Ends the current phase. Called from main, by every rank, equally often; no communication
// waits here. Waits (running tasks) while HYTASK_PHASE_WINDOW phases are still active.
// Before the first PGAS object it does nothing.
void fence();

}  // namespace hytask
