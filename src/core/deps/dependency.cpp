#include "core/deps/dependency.hpp"

#include "core/deps/successors.hpp"

#include <algorithm>
#include <iterator>

#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "platform/assert.hpp"

namespace hytask::detail {
namespace {

// The first fragment of a domain's map that ends after lo (it may start before), or end().
template <class Map>
auto first_reaching(Map& map, std::uintptr_t lo) {
  auto it = map.upper_bound(lo);
  if (it != map.begin() && std::prev(it)->second.hi > lo) --it;
  return it;
}

#if defined(HYTASK_ASSERTIONS)
// Whether the fragments of the map tile [lo, hi) exactly: each one non-empty, starting where
// the one before it ended, the first at lo and the last ending at hi.
template <class Map>
bool tiles(const Map& map, std::uintptr_t lo, std::uintptr_t hi) {
  std::uintptr_t cursor = lo;
  for (auto it = map.find(lo); it != map.end() && cursor < hi; ++it) {
    if (it->first != cursor || it->second.lo != cursor || it->second.hi <= cursor) return false;
    cursor = it->second.hi;
  }
  return cursor == hi;
}
#endif

}  // namespace

dep_domain::~dep_domain() { clear(); }

namespace {
struct domain_cache {
  static constexpr int cap = 4;
  dep_domain* kept[cap] = {};
  int n = 0;
  ~domain_cache() {
    while (n > 0) delete kept[--n];
  }
};
thread_local domain_cache t_domains;
}  // namespace

dep_domain* dep_domain::acquire() {
  domain_cache& c = t_domains;
  return c.n > 0 ? c.kept[--c.n] : new dep_domain;
}

void dep_domain::recycle(dep_domain* d) {
  d->clear();
  domain_cache& c = t_domains;
  // A domain that grew large is not kept: memory stays proportional to what is in use.
  if (c.n < domain_cache::cap && d->keys_.size() <= 4096) c.kept[c.n++] = d;
  else delete d;
}

void dep_domain::release(task* t) {
  HYTASK_ASSERT(t->tracker_refs > 0,
                "the tracker lets go only of references it took: one per fragment naming the "
                "task as writer or reader");
  if (--t->tracker_refs == 0 && t != spawning_) core::scheduler::instance()->drop_ref(t);
}

void dep_domain::clear() {
  HYTASK_ASSERT(spawning_ == nullptr,
                "a domain is cleared between spawns: the task being registered settles its "
                "references at submit, which would drop them a second time");
  for (auto& [lo, f] : map_) {
    if (f.writer) release(f.writer);
    for (task* r : f.readers) release(r);
  }
  map_.clear();
  std::fill(keys_.begin(), keys_.end(), 0);
  index_used_ = 0;
  sweep_at_ = 1024;
}

// ---- index ---------------------------------------------------------------------------

void dep_domain::index_grow() {
  std::vector<std::uintptr_t> old_keys(std::max<std::size_t>(64, keys_.size() * 2), 0);
  std::vector<fragment*> old_values(old_keys.size(), nullptr);
  old_keys.swap(keys_);
  old_values.swap(values_);
  index_used_ = 0;
  for (std::size_t i = 0; i < old_keys.size(); ++i)
    if (old_keys[i]) index_put(old_keys[i], old_values[i]);
}

void dep_domain::index_put(std::uintptr_t key, fragment* f) {
  if ((index_used_ + 1) * 2 > keys_.size()) index_grow();
  std::size_t mask = keys_.size() - 1;
  for (std::size_t i = hash_of(key, mask);; i = (i + 1) & mask) {
    if (keys_[i] == key || keys_[i] == 0) {
      if (keys_[i] == 0) ++index_used_;
      keys_[i] = key;
      values_[i] = f;
      return;
    }
  }
}

void dep_domain::index_erase(std::uintptr_t key) {
  if (keys_.empty()) return;
  std::size_t mask = keys_.size() - 1;
  std::size_t i = hash_of(key, mask);
  while (keys_[i] != key) {
    if (keys_[i] == 0) return;
    i = (i + 1) & mask;
  }
  // Backward-shift deletion keeps probe sequences intact without tombstones.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask; keys_[j] != 0; j = (j + 1) & mask) {
    std::size_t home = hash_of(keys_[j], mask);
    bool movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
    if (movable) {
      keys_[hole] = keys_[j];
      values_[hole] = values_[j];
      hole = j;
    }
  }
  keys_[hole] = 0;
  values_[hole] = nullptr;
  --index_used_;
}

// ---- fragments -----------------------------------------------------------------------

dep_domain::fragment* dep_domain::make_fragment(std::uintptr_t lo, std::uintptr_t hi) {
  HYTASK_ASSERT(lo < hi, "a fragment is a non-empty range [lo, hi)");
  const auto made = map_.try_emplace(lo, lo, hi);
  HYTASK_ASSERT(made.second, "a fragment is made only for a gap: none starts at its start");
  HYTASK_ASSERT(made.first == map_.begin() || std::prev(made.first)->second.hi <= lo,
                "fragments do not overlap: a new one starts where the one before it ended, or after");
  HYTASK_ASSERT(std::next(made.first) == map_.end() || std::next(made.first)->second.lo >= hi,
                "fragments do not overlap: a new one ends where the next one starts, or before");
  fragment* f = &made.first->second;
  index_put(lo, f);
  return f;
}

dep_domain::fragment* dep_domain::split(fragment* f, std::uintptr_t at) {
  HYTASK_ASSERT(f->lo < at && at < f->hi, "a fragment is split strictly inside: both parts non-empty");
  HYTASK_ASSERT(map_.find(at) == map_.end(),
                "a split point is inside one fragment, so no other starts there");
  fragment* upper = &map_.try_emplace(at, at, f->hi, *f).first->second;
  if (upper->writer) ++upper->writer->tracker_refs;
  for (task* r : upper->readers) ++r->tracker_refs;
  f->hi = at;
  index_put(at, upper);
  return upper;
}

void dep_domain::erase(fragment* f) {
  if (f->writer) release(f->writer);
  for (task* r : f->readers) release(r);
  const std::uintptr_t lo = f->lo;
  HYTASK_ASSERT(index_find(lo) == f, "every fragment is in the index under its start");
  index_erase(lo);
  map_.erase(lo);
}

// A failed task stays: tasks spawned after it on this region are skipped too (until the
// wait_all that reports it clears the domain).
bool dep_domain::live(const fragment& f) {
  bool l = f.writer && !succeeded(f.writer);
  for (task* r : f.readers) l = l || !succeeded(r);
  return l;
}

void dep_domain::sweep() {
  dead_.clear();
  for (auto& [lo, f] : map_)
    if (!live(f)) dead_.push_back(lo);
  for (std::uintptr_t lo : dead_) erase(&map_.find(lo)->second);
}

std::vector<std::pair<std::uintptr_t, std::uintptr_t>> dep_domain::regions() const {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
  for (const auto& [lo, f] : map_) {
    if (!out.empty() && out.back().second == f.lo) out.back().second = f.hi;
    else out.emplace_back(f.lo, f.hi);
  }
  return out;
}

bool dep_domain::busy(std::uintptr_t lo, std::uintptr_t hi) const {
  if (const fragment* f = index_find(lo); f != nullptr && f->hi == hi) return live(*f);
  for (auto it = first_reaching(map_, lo); it != map_.end() && it->second.lo < hi; ++it)
    if (live(it->second)) return true;
  return false;
}

int dep_domain::apply(fragment& f, task* t, access_mode mode) {
  HYTASK_ASSERT(f.writer == nullptr ||
                    std::find(f.readers.begin(), f.readers.end(), f.writer) == f.readers.end(),
                "a fragment's readers are those since its writer: the writer is not one of them");
  int edges = 0;
  if (mode == access_mode::in) {
    if (f.writer == t) return 0;  // already writes it: the stronger access wins
    if (f.writer) edges += link(f.writer, t);
    if (!f.readers.empty() && f.readers.back() == t) return edges;
    std::uint32_t n = f.readers.size();
    if (n >= 8 && (n & (n - 1)) == 0) {  // amortised pruning of completed readers
      std::uint32_t kept = 0;
      for (task* r : f.readers) {
        if (succeeded(r)) release(r);
        else f.readers.begin()[kept++] = r;
      }
      f.readers.truncate(kept);
    }
    f.readers.push_back(t);
    ++t->tracker_refs;
    return edges;
  }
  // out / inout: after every reader since the last writer, or after that writer.
  if (!f.readers.empty()) {
    for (task* r : f.readers) {
      edges += link(r, t);
      release(r);
    }
    f.readers.clear();
  } else if (f.writer && f.writer != t) {
    edges += link(f.writer, t);
  }
  if (f.writer != t) {
    if (f.writer) release(f.writer);
    f.writer = t;
    ++t->tracker_refs;
  }
  return edges;
}

int dep_domain::access_slow(task* t, std::uintptr_t lo, std::uintptr_t hi, access_mode mode) {
  if (map_.size() >= sweep_at_) {
    sweep();
    sweep_at_ = std::max<std::size_t>(1024, 2 * map_.size());
  }
  int edges = 0;
  std::uintptr_t cursor = lo;
  auto it = first_reaching(map_, lo);
  while (cursor < hi) {
    if (it == map_.end() || it->second.lo >= hi) {
      edges += apply(*make_fragment(cursor, hi), t, mode);
      break;
    }
    fragment* f = &it->second;
    if (f->lo > cursor) {  // a gap before the next fragment
      edges += apply(*make_fragment(cursor, f->lo), t, mode);
      cursor = f->lo;
      it = map_.find(f->lo);
      continue;
    }
    if (f->lo < cursor) f = split(f, cursor);
    if (f->hi > hi) split(f, hi);
    edges += apply(*f, t, mode);
    cursor = f->hi;
    it = map_.upper_bound(f->lo);
  }
  HYTASK_ASSERT(tiles(map_, lo, hi),
                "after an access, fragments tile its region exactly: ordered, non-overlapping, "
                "non-empty, with no gap");
  return edges;
}

}  // namespace hytask::detail
