// The local dependency tracker of one parent task (a "domain": dependencies order siblings).
//
// Memory is tracked as disjoint fragments [lo, hi), each with the last task that wrote it
// and the tasks that read it since. An access to a region visits the fragments it covers,
// splitting those it covers partly and creating empty ones for gaps, so partly overlapping
// regions are ordered exactly, byte for byte. A hash index from a fragment's start address
// finds the common case — the same region again — without walking the ordered map.
//
// Only the owner task touches its domain (spawns are sequential within a task), so the
// domain needs no lock. It keeps references to the tasks it names, released when they are
// replaced, pruned or swept; fragments whose tasks have all completed are swept so memory
// stays proportional to the tasks in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::detail {

struct dep_domain {
  dep_domain() = default;
  dep_domain(const dep_domain&) = delete;
  dep_domain& operator=(const dep_domain&) = delete;
  ~dep_domain();

  // Registers `t`'s access to [lo, hi); returns how many predecessors it must wait for.
  int access(task* t, std::uintptr_t lo, std::uintptr_t hi, access_mode mode);
  // Ends the registration of the task passed to access(): from now on its references are
  // counted like any other task's.
  void finish_spawn() { spawning_ = nullptr; }
  // Forgets everything (all tasks named here have completed, e.g. after wait_all).
  void clear();
  std::size_t fragment_count() const { return map_.size(); }

 private:
  struct fragment {
    std::uintptr_t lo, hi;
    task* writer = nullptr;
    std::vector<task*> readers;  // readers since writer
  };

  int apply(fragment& f, task* t, access_mode mode);
  fragment* make_fragment(std::uintptr_t lo, std::uintptr_t hi);
  fragment* split(fragment* f, std::uintptr_t at);  // returns the upper part
  void erase(fragment* f);
  void release(task* t);
  void sweep();

  // Open-addressing index: fragment start -> fragment.
  fragment* index_find(std::uintptr_t key) const;
  void index_put(std::uintptr_t key, fragment* f);
  void index_erase(std::uintptr_t key);
  void index_grow();

  std::map<std::uintptr_t, fragment*> map_;
  std::vector<std::uintptr_t> keys_;
  std::vector<fragment*> values_;
  std::size_t index_used_ = 0;
  std::size_t sweep_at_ = 1024;
  task* spawning_ = nullptr;  // the task being registered: its references are settled at submit
};

// Adds the edge pred -> succ unless pred has completed; returns 1 if added.
int add_edge(task* pred, task* succ);
// Frees the heap edges of a task that is being recycled.
void free_extra_edges(task* t);

}  // namespace hytask::detail
