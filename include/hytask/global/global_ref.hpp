// global_ref<T>: one element of a hytask::global_array<T>, wherever it lives.
//
// ```cpp context=global
// hytask::global_array<double> a(1000);
// hytask::global_ref<double> r = a[999];
// if (r.is_local()) { /* r.owner() is this rank */ }
// hytask::spawn([r] { r.put(r.get() + 1); }, hytask::inout(r));
// ```
//
// A reference is a small value (copy it into tasks). in/out/inout on it declare a global
// dependency (see phase.hpp). get() and put() are blocking MPI-3 RMA transfers (a task
// suspends, nothing else waits); get_async / put_async return a hytask::mpi::request. The
// reference converts to T (a get), so that `*it` reads through a global_ptr or iterator.
#pragma once

#include <cstdint>

#include "hytask/global/memory.hpp"

namespace hytask {

template <class T>
class global_ref : public detail::location_ref {
 public:
  using location_ref::location_ref;

  T get() const {
    T v;
    mem_->get(index_, &v);
    return v;
  }
  void put(const T& v) const { mem_->put(index_, &v); }
  // Reading through a global_ptr or iterator (`T v = *it;`): get().
  operator T() const { return get(); }
  // The element where it is local, else null.
  T* local_data() const { return static_cast<T*>(local_address()); }
  // Where a task reads what copyin_r(*this, buf) brought: the element in place where it is
  // local, else buf.
  const T* local_or(const T* buf) const {
    const T* p = local_data();
    return p ? p : buf;
  }
  mpi::request get_async(T* buf) const { return mem_->get_async(index_, buf); }
  mpi::request put_async(const T* buf) const { return mem_->put_async(index_, buf); }
};

}  // namespace hytask
