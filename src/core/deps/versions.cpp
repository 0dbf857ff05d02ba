// Renaming: versions of hytask::versioned objects (core/versions.hpp).
#include "core/deps/versions.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/core/versioned.hpp"
#include "hytask/errors.hpp"
#include "platform/assert.hpp"

namespace hytask::detail {

struct version {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::size_t align = 0;
  version_object* owner = nullptr;
  // Tasks holding it, plus one while it is its object's current version, plus one for the
  // version made after it while that one keeps it (prev).
  std::atomic<std::int32_t> refs{0};
  std::atomic<bool> tainted{false};  // a task that held it failed (see release_buffer)
  // Its last writer failed or was cancelled: its contents are not the object's value.
  std::atomic<bool> writer_failed{false};
  // A fresh version keeps the one it replaced until its writer succeeds: if the writer fails
  // or is cancelled (it may never have run), copy-back takes the older value, as plain memory
  // would keep it. Written by the spawning thread, then by the writer's completion.
  version* prev = nullptr;
  bool home = false;
};

struct version_object {
  version home;                // the program's memory
  version* current = nullptr;  // the latest version: written by the spawning parent only
  task* scope = nullptr;       // the parent whose children use it
  std::atomic<std::int32_t> users{0};  // holds on any of its versions
  // In scope's list of renamed objects, to be copied back when scope's children are done.
  std::atomic<bool> listed{false};
};

// A task's versions state (task::versions).
struct task_versions {
  // As a task being spawned: where bind_version writes; then the versions it holds.
  version_slot* slots = nullptr;
  std::size_t nslots = 0, next = 0;
  std::vector<version*> held;
  std::vector<version*> written;  // the held versions it writes (out, inout)
  // As a parent: objects its children renamed.
  std::vector<version_object*> renamed;
};

}  // namespace hytask::detail

namespace hytask::core {

using detail::task;
using detail::task_versions;
using detail::version;
using detail::version_object;

namespace {

// ---- the pool -----------------------------------------------------------------------

struct pool_key {
  std::size_t bytes, align;
  bool operator<(const pool_key& o) const {
    return bytes != o.bytes ? bytes < o.bytes : align < o.align;
  }
};

struct version_pool {
  std::mutex mu;
  std::map<pool_key, std::vector<void*>> free;
  // Buffers of versions a failed task held: the tracker of that task's parent keeps the failed
  // task on their memory (its successors there are skipped until the parent's wait_all), so
  // reusing them for another object before every tracker let go could skip unrelated tasks.
  std::vector<std::pair<pool_key, void*>> quarantine;
  std::size_t held = 0, peak = 0, in_use = 0;
  std::uint64_t allocated = 0;

  // Frees pooled buffers other than `keep` until `need` more bytes fit under cap.
  bool make_room(std::size_t need, std::size_t cap, const pool_key& keep) {
    for (auto it = free.begin(); held + need > cap && it != free.end();) {
      if (!(it->first < keep) && !(keep < it->first)) {
        ++it;
        continue;
      }
      while (!it->second.empty() && held + need > cap) {
        ::operator delete(it->second.back(), std::align_val_t{it->first.align});
        it->second.pop_back();
        held -= it->first.bytes;
      }
      it = it->second.empty() ? free.erase(it) : std::next(it);
    }
    return held + need <= cap;
  }
};

version_pool& pool() {
  static version_pool* p = new version_pool;  // outlives static destructors of the program
  return *p;
}

std::atomic<bool> g_quarantined{false};

struct counters {
  std::atomic<std::uint64_t> renamed{0}, in_place{0}, refused{0}, copied_back{0};
};
counters g_count;

// Home ranges of live objects, to refuse overlapping ones and to check plain accesses.
struct object_range {
  std::uintptr_t hi;
  version_object* object;
};
std::mutex g_objects_mu;
std::map<std::uintptr_t, object_range> g_objects;  // lo -> (hi, object)
// Objects whose latest version is not the program's memory (a renamed writer's): only
// then can a plain access to their memory be wrong, so only then is it looked up.
std::atomic<std::size_t> g_renamed_objects{0};

std::size_t cap_bytes() {
  scheduler* s = scheduler::instance();
  return s ? s->config().rename_max_bytes : 0;
}

pool_key key_of(const version_object* o) {
  return pool_key{o->home.bytes, std::max<std::size_t>(64, o->home.align)};
}

// A fresh version of o's size, or null when the cap refuses it.
version* take_version(version_object* o) {
  const pool_key k = key_of(o);
  version_pool& p = pool();
  void* buf = nullptr;
  {
    std::lock_guard lk(p.mu);
    auto it = p.free.find(k);
    if (it != p.free.end() && !it->second.empty()) {
      buf = it->second.back();
      it->second.pop_back();
    } else {
      if (!p.make_room(k.bytes, cap_bytes(), k)) return nullptr;
      buf = ::operator new(k.bytes, std::align_val_t{k.align}, std::nothrow);
      if (buf == nullptr) return nullptr;
      p.held += k.bytes;
      p.peak = std::max(p.peak, p.held);
      ++p.allocated;
    }
    p.in_use += k.bytes;
  }
  auto* v = new version;
  v->ptr = buf;
  v->bytes = k.bytes;
  v->align = k.align;
  v->owner = o;
  return v;
}

void drop(version* v);

void release_buffer(version* v) {
  if (version* p = v->prev) drop(p);
  const pool_key k{v->bytes, v->align};
  version_pool& p = pool();
  {
    std::lock_guard lk(p.mu);
    HYTASK_ASSERT(p.in_use >= k.bytes, "a pooled buffer goes back once: the bytes in use cover it");
    p.in_use -= k.bytes;
    if (v->tainted.load(std::memory_order_relaxed)) {
      p.quarantine.emplace_back(k, v->ptr);
      g_quarantined.store(true, std::memory_order_relaxed);
    } else {
      p.free[k].push_back(v->ptr);
    }
  }
  delete v;
}

void drop(version* v) {
  const std::int32_t before = v->refs.fetch_sub(1, std::memory_order_acq_rel);
  HYTASK_ASSERT(before > 0,
                "a version is dropped once per reference taken (holders, current, a successor's "
                "prev): its count never goes below zero");
  if (before == 1 && !v->home) release_buffer(v);
}

task_versions* versions_of(task* t) {
  if (t->versions == nullptr) {
    t->versions = new task_versions;
    t->flags |= detail::flag_versions;
  }
  return static_cast<task_versions*>(t->versions);
}

void hold(task* t, version* v, bool writes = false) {
  [[maybe_unused]] const std::int32_t before = v->refs.fetch_add(1, std::memory_order_relaxed);
  HYTASK_ASSERT(before > 0 || v->home,
                "a pooled version is held only while something keeps it (it is current, or a "
                "newer version keeps it): at zero it went back to the pool");
  v->owner->users.fetch_add(1, std::memory_order_relaxed);
  task_versions* tv = versions_of(t);
  tv->held.push_back(v);
  if (writes) tv->written.push_back(v);
}

// The calling code spawns for `scope` now: the object must not be in use by another one.
void claim(version_object* o, task* scope, const char* what) {
  if (o->scope == scope) return;
  if (o->users.load(std::memory_order_acquire) != 0 || o->listed.load(std::memory_order_acquire))
    throw usage_error(
        std::string("hytask::") + what +
        ": a hytask::versioned object is used by the tasks of another parent task (or main) "
        "that have not all completed, or whose latest version that parent has not copied back "
        "yet: like other dependencies, versions order siblings; let that parent wait_all() "
        "before other tasks use the object");
  o->scope = scope;
}

void list_renamed(version_object* o, task* scope) {
  if (o->listed.load(std::memory_order_relaxed)) return;
  o->listed.store(true, std::memory_order_relaxed);
  versions_of(scope)->renamed.push_back(o);
}

// o's latest version into home; o's users have all completed. The latest version whose writer
// did not fail: a cancelled writer's fresh version holds nothing.
void copy_home(version_object* o) {
  version* cur = o->current;
  if (cur == &o->home) return;
  HYTASK_ASSERT(o->users.load(std::memory_order_acquire) == 0,
                "an object is copied home once the tasks that hold its versions have completed");
  version* src = cur;
  while (src != &o->home && src->prev != nullptr && src->writer_failed.load(std::memory_order_acquire))
    src = src->prev;
  if (src != &o->home) std::memcpy(o->home.ptr, src->ptr, o->home.bytes);
  o->home.refs.fetch_add(1, std::memory_order_relaxed);
  o->current = &o->home;
  g_renamed_objects.fetch_sub(1, std::memory_order_relaxed);
  drop(cur);
  g_count.copied_back.fetch_add(1, std::memory_order_relaxed);
}

void copy_back_renamed(task_versions* tv) {
  for (version_object* o : tv->renamed) {
    copy_home(o);
    o->listed.store(false, std::memory_order_release);
  }
  tv->renamed.clear();
}

}  // namespace

void settle_written_versions(task* t) noexcept {
  auto* tv = static_cast<task_versions*>(t->versions);
  if (tv == nullptr || tv->written.empty()) return;
  const bool failed = sched::has_failed(t);
  for (version* v : tv->written) {
    v->writer_failed.store(failed, std::memory_order_release);
    // Its value is good: the version it replaced is no longer needed for a copy-back.
    if (!failed && v->prev != nullptr) drop(std::exchange(v->prev, nullptr));
  }
  tv->written.clear();
}

void complete_versions(task* t) noexcept {
  auto* tv = static_cast<task_versions*>(t->versions);
  if (tv == nullptr) return;
  settle_written_versions(t);  // the root's, at the runtime's end
  const bool failed = sched::has_failed(t);
  if (!tv->renamed.empty()) copy_back_renamed(tv);  // its children are done
  for (version* v : tv->held) {
    version_object* o = v->owner;
    if (failed) v->tainted.store(true, std::memory_order_relaxed);
    drop(v);
    // Last: once users is zero the object may be destroyed.
    [[maybe_unused]] const std::int32_t users = o->users.fetch_sub(1, std::memory_order_release);
    HYTASK_ASSERT(users > 0, "an object's users are its versions' holds: released once each");
  }
  delete tv;
  t->versions = nullptr;
}

void wait_versions(task* t) noexcept {
  if (auto* tv = static_cast<task_versions*>(t->versions)) copy_back_renamed(tv);
  if (!(t->flags & detail::flag_root) || !g_quarantined.load(std::memory_order_relaxed)) return;
  // Every task has completed: no tracker names a failed task any more.
  version_pool& p = pool();
  std::lock_guard lk(p.mu);
  for (auto& [k, buf] : p.quarantine) p.free[k].push_back(buf);
  p.quarantine.clear();
  g_quarantined.store(false, std::memory_order_relaxed);
}

void start_versions(task* root) {
  versions_of(root);
  g_count.renamed.store(0, std::memory_order_relaxed);
  g_count.in_place.store(0, std::memory_order_relaxed);
  g_count.refused.store(0, std::memory_order_relaxed);
  g_count.copied_back.store(0, std::memory_order_relaxed);
  version_pool& p = pool();
  std::lock_guard lk(p.mu);
  p.allocated = 0;
  p.peak = p.held;
}

void end_versions(task* root) noexcept {
  wait_versions(root);
  complete_versions(root);
  // Versions of objects that outlive the runtime stay theirs; pooled buffers go.
  version_pool& p = pool();
  std::lock_guard lk(p.mu);
  for (auto& [k, list] : p.free)
    for (void* buf : list) {
      ::operator delete(buf, std::align_val_t{k.align});
      p.held -= k.bytes;
    }
  p.free.clear();
}


bool renamed_objects() noexcept { return g_renamed_objects.load(std::memory_order_relaxed) != 0; }

void check_plain_access(task* t, const void* addr, std::size_t bytes, access_mode mode) {
  const auto lo = reinterpret_cast<std::uintptr_t>(addr), hi = lo + bytes;
  std::lock_guard lk(g_objects_mu);
  // The objects starting before hi, from the last, while they reach past lo (they do not
  // overlap each other). Ordered by the tracker with the object's own accesses on its
  // memory while that memory is the latest version; not once a renamed writer has a newer one.
  const version_object* o = nullptr;
  std::uintptr_t olo = 0;
  for (auto it = g_objects.lower_bound(hi); it != g_objects.begin();) {
    --it;
    if (it->second.hi <= lo) return;
    if (it->second.object->current != &it->second.object->home) {
      o = it->second.object;
      olo = it->first;
      break;
    }
  }
  if (o == nullptr) return;
  char where[64];
  std::snprintf(where, sizeof where, "%p", reinterpret_cast<const void*>(olo));
  const std::string task_name =
      t->name ? "task '" + std::string(t->name) + "'" : std::string("an unnamed task");
  throw usage_error(
      "hytask::spawn: " + task_name + " declares a plain " +
      (mode == access_mode::in ? "in" : mode == access_mode::out ? "out" : "inout") +
      " on the memory of a hytask::versioned object (" + std::to_string(o->home.bytes) +
      " bytes at " + where + ") while a newer version of it is in flight: " +
      (mode == access_mode::in ? "that memory holds an older value"
                               : "the object's copy-back would overwrite what the task writes") +
      ". Declare the access on the object (hytask::in(obj) / out / inout), or let its tasks "
      "finish first (wait_all(), or obj.copy_back())");
}

}  // namespace hytask::core

namespace hytask::detail {

using core::g_count;

version_object* new_version_object(void* home, std::size_t bytes, std::size_t align) {
  if (home == nullptr && bytes != 0)
    throw usage_error("hytask::versioned: null memory with a count of " + std::to_string(bytes) +
                      " bytes; pass the program's memory that holds the object");
  const auto lo = reinterpret_cast<std::uintptr_t>(home);
  if (lo + bytes < lo)
    throw usage_error("hytask::versioned: the region wraps around the address space; check the count");
  auto* o = new version_object;
  o->home.ptr = home;
  o->home.bytes = bytes;
  o->home.align = align;
  o->home.owner = o;
  o->home.home = true;
  o->home.refs.store(1, std::memory_order_relaxed);
  o->current = &o->home;
  if (bytes != 0) {
    std::lock_guard lk(core::g_objects_mu);
    auto next = core::g_objects.lower_bound(lo);
    const bool overlaps = (next != core::g_objects.end() && next->first < lo + bytes) ||
                          (next != core::g_objects.begin() && std::prev(next)->second.hi > lo);
    if (overlaps) {
      delete o;
      throw usage_error(
          "hytask::versioned: the memory overlaps another hytask::versioned object's; an "
          "object's versions replace all of its memory, so objects must not share bytes");
    }
    core::g_objects.emplace(lo, core::object_range{lo + bytes, o});
  }
  return o;
}

void delete_version_object(version_object* o) noexcept {
  // The object must outlive its tasks: wait for them (main runs tasks meanwhile).
  for (int spins = 0; o->users.load(std::memory_order_acquire) != 0; ++spins) {
    // The scheduler's yield, not this_task's: no cancellation point in a noexcept wait.
    if (core::current_worker() != nullptr) core::scheduler::instance()->yield();
    if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (o->listed.load(std::memory_order_acquire) && o->scope != nullptr && o->scope->versions) {
    auto& list = static_cast<task_versions*>(o->scope->versions)->renamed;
    list.erase(std::remove(list.begin(), list.end(), o), list.end());
  }
  core::copy_home(o);
  if (o->home.bytes != 0) {
    std::lock_guard lk(core::g_objects_mu);
    core::g_objects.erase(reinterpret_cast<std::uintptr_t>(o->home.ptr));
  }
  delete o;
}

void begin_version_binding(task* t, version_slot* slots, std::size_t n) {
  task_versions* tv = core::versions_of(t);
  tv->slots = slots;
  tv->nslots = n;
  tv->next = 0;
}

void bind_version(spawn_context& ctx, version_object* o, access_mode mode) {
  task* t = ctx.target();
  task_versions* tv = core::versions_of(t);
  if (tv->next >= tv->nslots)
    throw std::logic_error("hytask: internal error: more versioned accesses than slots");
  version_slot& slot = tv->slots[tv->next++];
  slot = version_slot{};
  if (o->home.bytes == 0) {
    slot.ptr = o->home.ptr;
    return;
  }
  task* scope = t->parent;
  core::claim(o, scope, "spawn");
  version* cur = o->current;
  version* use = cur;
  access_mode declared = mode;
  if (mode != access_mode::in) {
    if (cur->refs.load(std::memory_order_acquire) == 1) {
      g_count.in_place.fetch_add(1, std::memory_order_relaxed);  // nobody else uses it
    } else if (version* fresh = core::take_version(o)) {
      fresh->refs.store(1, std::memory_order_relaxed);  // current
      if (cur == &o->home) core::g_renamed_objects.fetch_add(1, std::memory_order_relaxed);
      o->current = fresh;
      if (mode == access_mode::inout) {  // starts from the value it replaces
        core::hold(t, cur);
        ctx.region(cur->ptr, cur->bytes, access_mode::in);
        slot.copy_from = cur->ptr;
        slot.bytes = cur->bytes;
      }
      fresh->prev = cur;  // cur's reference as current becomes fresh's (see version::prev)
      core::list_renamed(o, scope);
      use = fresh;
      declared = access_mode::out;
      g_count.renamed.fetch_add(1, std::memory_order_relaxed);
    } else {
      g_count.refused.fetch_add(1, std::memory_order_relaxed);  // over the cap: in place
    }
  }
  core::hold(t, use, mode != access_mode::in);
  slot.ptr = use->ptr;
  ctx.region(use->ptr, use->bytes, declared);
}

void copy_back(version_object* o) {
  if (o->home.bytes == 0 || o->current == &o->home) return;
  task* t = core::sched::new_runtime_task(0, "versioned::copy_back");
  task* scope = t->parent;
  version* cur = o->current;
  struct copier {
    void* dst;
    const void* src;
    std::size_t bytes;
    void operator()() const { std::memcpy(dst, src, bytes); }
  };
  emplace_callable(t, copier{o->home.ptr, cur->ptr, o->home.bytes});
  spawn_context ctx(t);
  try {
    core::claim(o, scope, "versioned::copy_back");
    core::hold(t, cur);
    core::hold(t, &o->home, true);
    ctx.region(cur->ptr, cur->bytes, access_mode::in);
    ctx.region(o->home.ptr, o->home.bytes, access_mode::out);
  } catch (...) {
    abandon_spawn(ctx);
    throw;
  }
  o->home.refs.fetch_add(1, std::memory_order_relaxed);  // current again
  o->current = &o->home;
  core::g_renamed_objects.fetch_sub(1, std::memory_order_relaxed);
  core::drop(cur);
  g_count.copied_back.fetch_add(1, std::memory_order_relaxed);
  ctx.submit();
}

}  // namespace hytask::detail

namespace hytask {

rename_counters rename_stats() {
  rename_counters c;
  c.renamed = core::g_count.renamed.load(std::memory_order_relaxed);
  c.in_place = core::g_count.in_place.load(std::memory_order_relaxed);
  c.refused = core::g_count.refused.load(std::memory_order_relaxed);
  c.copied_back = core::g_count.copied_back.load(std::memory_order_relaxed);
  core::version_pool& p = core::pool();
  std::lock_guard lk(p.mu);
  c.allocated = p.allocated;
  c.bytes_held = p.held;
  c.bytes_peak = p.peak;
  c.bytes_in_use = p.in_use;
  c.cap = core::cap_bytes();
  return c;
}

}  // namespace hytask
