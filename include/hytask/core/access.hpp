// Accesses: what a task declares about the memory it touches, so hytask can order it.
//
// ```cpp context=tasks
// hytask::spawn([&] { consume(a, b); }, hytask::in(a, n), hytask::inout(b, n));
// hytask::spawn([&] { fill(v); }, hytask::out(v));  // v's elements, v a std::vector
// ```
//
// A region is (address, bytes). in(p, count) covers count objects of type T starting at p.
// in(x) on a contiguous range — std::vector, std::array, std::span, std::string, a C
// array — covers its elements, [data(), data() + size()); an empty range covers nothing and
// orders nothing. data() is read at spawn: a vector that the task (or anyone) resizes or
// reallocates afterwards is not covered at its new place — declare what the task touches.
// A view (std::span) may be passed as a temporary. in(x) on any other object covers the
// object itself, which must be trivially copyable: for a pointer variable that is the
// pointer, not what it points to — pass (p, count) for the pointee; for a type that owns
// memory elsewhere (a std::map, a class holding a std::vector) it is a compile-time error,
// as it would order nothing the task touches — pass (ptr, count) for that memory.
//
// The ordering rules are OpenMP's and OmpSs's: a task that writes a region (out or inout)
// runs after every earlier task that read or wrote any part of it; a task that reads runs
// after the last earlier writer; readers of the same region run concurrently. Regions may
// overlap partially; ordering is then per byte. Dependencies order siblings: tasks spawned
// by the same task (or by main).
#pragma once

#include <cstddef>
#include <ranges>
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

// One-object forms: a contiguous range's elements, else the object itself (see the top).
namespace detail {

template <class X>
concept element_range = std::ranges::contiguous_range<X&> && std::ranges::sized_range<X&>;

// What in/out/inout(x) declares for an argument of type X&& (X deduced by forwarding).
template <class X>
struct one_object {
  using T = std::remove_reference_t<X>;
  static constexpr bool range = element_range<T>;
  // A temporary is fine only when it is a view: its elements outlive it.
  static constexpr bool lasting = std::is_lvalue_reference_v<X> || std::ranges::borrowed_range<X>;
  static constexpr bool elements_trivial = [] {
    if constexpr (range) return std::is_trivially_copyable_v<std::ranges::range_value_t<T&>>;
    else return true;
  }();
  static constexpr bool other_range = !range && std::ranges::range<T&>;
  static constexpr bool object_trivial = range || std::is_trivially_copyable_v<T>;
  static constexpr bool writable = [] {
    if constexpr (range)
      return !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<T&>>>;
    else return !std::is_const_v<T>;
  }();
};

template <class T>
region_access one_object_region(T& x, access_mode m) {
  if constexpr (element_range<T>) {
    const auto* p = std::ranges::data(x);
    const std::size_t bytes = static_cast<std::size_t>(std::ranges::size(x)) * sizeof(*p);
    return region_access{bytes ? static_cast<const void*>(p) : nullptr, bytes, m};
  } else {
    return region_access{static_cast<const void*>(&x), sizeof(T), m};
  }
}

}  // namespace detail

// The checks of in/out/inout(x), with messages that say what to write instead. (A macro
// so that each message names the function that was called.)
#define HYTASK_DETAIL_CHECK_ONE_OBJECT(F, X)                                                   \
  static_assert(detail::one_object<X>::lasting,                                                \
                "hytask::" F "(x): x is a temporary that is not a view (std::span): the "      \
                "region would be gone when the task runs; declare a named object, or the "     \
                "memory the task touches with hytask::" F "(ptr, count)");                     \
  static_assert(!detail::one_object<X>::other_range,                                           \
                "hytask::" F "(x): x is a range whose elements are not contiguous (a list, a " \
                "map, a deque, std::vector<bool>...); declare the memory the task touches "    \
                "with hytask::" F "(ptr, count), or a run-time list of them with "             \
                "hytask::regions(list)");                                                      \
  static_assert(detail::one_object<X>::other_range || detail::one_object<X>::object_trivial,   \
                "hytask::" F "(x): x is not trivially copyable and not a contiguous range, "   \
                "so its bytes are not the data the task uses; declare the memory the task "    \
                "touches with hytask::" F "(ptr, count) (hytask::" F "(&x, 1) for the "       \
                "object itself)");                                                             \
  static_assert(detail::one_object<X>::elements_trivial,                                       \
                "hytask::" F "(x): the elements of x are not trivially copyable, so they own " \
                "memory that this would not declare; declare the memory the task touches "     \
                "with hytask::" F "(ptr, count) (hytask::" F "(x.data(), x.size()) for the "  \
                "element objects themselves)")

// Objects that name memory elsewhere (the global layer's references to elements and tiles of
// PGAS objects) declare their own access: x.hytask_access(mode) returns it.
namespace detail {
template <class X>
concept declares_access = requires(const std::remove_cvref_t<X>& x) {
  { x.hytask_access(access_mode::in) } -> access;
};
}  // namespace detail

// hytask::versioned objects have accesses of their own (hytask/core/versioned.hpp).
template <class T>
class versioned;
namespace detail {
template <class X>
inline constexpr bool is_versioned_v = false;
template <class T>
inline constexpr bool is_versioned_v<versioned<T>> = true;
template <class X>
concept plain_object = !declares_access<X> && !is_versioned_v<std::remove_cvref_t<X>>;
}  // namespace detail

template <class X>
  requires detail::plain_object<X>
region_access in(X&& x) {
  HYTASK_DETAIL_CHECK_ONE_OBJECT("in", X);
  return detail::one_object_region(x, access_mode::in);
}
template <class X>
  requires detail::plain_object<X>
region_access out(X&& x) {
  HYTASK_DETAIL_CHECK_ONE_OBJECT("out", X);
  static_assert(detail::one_object<X>::writable,
                "hytask::out on a const object, or a range of const elements: the task writes it");
  return detail::one_object_region(x, access_mode::out);
}
template <class X>
  requires detail::plain_object<X>
region_access inout(X&& x) {
  HYTASK_DETAIL_CHECK_ONE_OBJECT("inout", X);
  static_assert(detail::one_object<X>::writable,
                "hytask::inout on a const object, or a range of const elements: the task "
                "writes it");
  return detail::one_object_region(x, access_mode::inout);
}
template <detail::declares_access X>
  requires(!detail::is_versioned_v<std::remove_cvref_t<X>>)
auto in(X&& x) {
  return x.hytask_access(access_mode::in);
}
template <detail::declares_access X>
  requires(!detail::is_versioned_v<std::remove_cvref_t<X>>)
auto out(X&& x) {
  return x.hytask_access(access_mode::out);
}
template <detail::declares_access X>
  requires(!detail::is_versioned_v<std::remove_cvref_t<X>>)
auto inout(X&& x) {
  return x.hytask_access(access_mode::inout);
}

#undef HYTASK_DETAIL_CHECK_ONE_OBJECT

// A list of region accesses whose length is known only at run time (the neighbours of a
// stencil block, the tiles of a panel):
//
// ```cpp context=tasks
// std::vector<hytask::region_access> deps = {hytask::out(b, n)};
// for (const double* p : neighbours) deps.push_back(hytask::in(p, n));
// hytask::spawn([&] { stencil(b, neighbours); }, hytask::regions(deps));
// ```
//
// The list is read during spawn only; it may be reused or destroyed once spawn returns.
struct region_list {
  std::span<const region_access> list;
  inline void apply(detail::spawn_context& ctx) const;  // defined in spawn.hpp
};
inline region_list regions(std::span<const region_access> list) { return region_list{list}; }

}  // namespace hytask
