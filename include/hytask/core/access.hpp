// Accesses: what a task declares about the memory it touches, so hytask can order it.
//
//   hytask::spawn(f, hytask::in(a, n), hytask::inout(b, n));
//
// A region is (address, bytes). in(p, count) covers count objects of type T starting at p;
// in(x) covers the object x itself (for a pointer variable that is the pointer, not what it
// points to — pass (p, count) for the pointee). The ordering rules are OpenMP's and OmpSs's:
// a task that writes a region (out or inout) runs after every earlier task that read or
// wrote any part of it; a task that reads runs after the last earlier writer; readers of the
// same region run concurrently. Regions may overlap partially; ordering is then per byte.
// Dependencies order siblings: tasks spawned by the same task (or by main).
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <type_traits>

namespace hytask {

enum class access_mode : unsigned char { in, out, inout };

namespace detail {
class spawn_context;
[[noreturn]] void throw_null_region(const char* which, std::size_t bytes);
}  // namespace detail

// One region access; build it with in/out/inout.
struct region_access {
  const void* addr;
  std::size_t bytes;
  access_mode mode;
  inline void apply(detail::spawn_context& ctx) const;  // defined in spawn.hpp
};

// Anything that can be passed to spawn after the body: region accesses, after(event), and
// the dependencies of later layers (MPI requests).
template <class A>
concept access = requires(const A& a, detail::spawn_context& ctx) { a.apply(ctx); };

namespace detail {
inline region_access make_region(const char* which, const void* p, std::size_t bytes,
                                 access_mode m) {
  if (p == nullptr && bytes != 0) throw_null_region(which, bytes);
  return region_access{p, bytes, m};
}
}  // namespace detail

template <class T>
region_access in(const T* p, std::size_t count) {
  static_assert(!std::is_void_v<T>, "use in(ptr, bytes) with a non-void pointer type");
  return detail::make_region("in", p, count * sizeof(T), access_mode::in);
}
template <class T>
region_access out(T* p, std::size_t count) {
  static_assert(!std::is_const_v<T>, "hytask::out on a const pointer: the task writes it");
  return detail::make_region("out", p, count * sizeof(T), access_mode::out);
}
template <class T>
region_access inout(T* p, std::size_t count) {
  static_assert(!std::is_const_v<T>, "hytask::inout on a const pointer: the task writes it");
  return detail::make_region("inout", p, count * sizeof(T), access_mode::inout);
}

// Byte-sized forms for untyped memory.
inline region_access in(const void* p, std::size_t bytes) {
  return detail::make_region("in", p, bytes, access_mode::in);
}
inline region_access out(void* p, std::size_t bytes) {
  return detail::make_region("out", p, bytes, access_mode::out);
}
inline region_access inout(void* p, std::size_t bytes) {
  return detail::make_region("inout", p, bytes, access_mode::inout);
}

// One-object forms.
template <class T>
region_access in(const T& x) {
  return region_access{static_cast<const void*>(&x), sizeof(T), access_mode::in};
}
template <class T>
region_access out(T& x) {
  static_assert(!std::is_const_v<T>, "hytask::out on a const object: the task writes it");
  return region_access{static_cast<const void*>(&x), sizeof(T), access_mode::out};
}
template <class T>
region_access inout(T& x) {
  static_assert(!std::is_const_v<T>, "hytask::inout on a const object: the task writes it");
  return region_access{static_cast<const void*>(&x), sizeof(T), access_mode::inout};
}

// A list of region accesses whose length is known only at run time (the neighbours of a
// stencil block, the tiles of a panel):
//
//   std::vector<hytask::region_access> deps = {hytask::out(b, n)};
//   for (const double* p : neighbours) deps.push_back(hytask::in(p, n));
//   hytask::spawn(f, hytask::regions(deps));
//
// The list is read during spawn only; it may be reused or destroyed once spawn returns.
struct region_list {
  std::span<const region_access> list;
  inline void apply(detail::spawn_context& ctx) const;  // defined in spawn.hpp
};
inline region_list regions(std::span<const region_access> list) { return region_list{list}; }

}  // namespace hytask
