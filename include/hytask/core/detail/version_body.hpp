// Internal: how spawn runs a task whose accesses include hytask::versioned objects. The body
// is wrapped with one slot per versioned access; binding the access (src/core/versions.cpp)
// fills the slot with the version the task must use, and the wrapper passes the slots'
// pointers to the callable in access order. Users never touch this.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::detail {

class spawn_context;
struct version_object;

// What one versioned access of a task resolved to: the version it uses, and for an inout
// access that got a fresh version, the version to copy from first.
struct version_slot {
  void* ptr = nullptr;
  const void* copy_from = nullptr;
  std::size_t bytes = 0;
};

// Before a spawn applies its accesses: bind_version writes the slots of t in order.
void begin_version_binding(task* t, version_slot* slots, std::size_t n);
// Binds one access of the task being spawned to a version of o (declares the dependency
// on that version's memory and keeps the version for the task until it completes).
void bind_version(spawn_context& ctx, version_object* o, access_mode mode);

// The access of a task to a versioned object; P is the pointer the body receives.
template <class T, access_mode M>
struct version_access {
  using pointer = std::conditional_t<M == access_mode::in, const T*, T*>;
  version_object* object;
  void apply(spawn_context& ctx) const { bind_version(ctx, object, M); }
};

template <class A>
inline constexpr bool is_version_access_v = false;
template <class T, access_mode M>
inline constexpr bool is_version_access_v<version_access<T, M>> = true;

template <class F, class... P>
struct version_body {
  F f;
  version_slot slots[sizeof...(P)];

  void operator()() {
    // An inout access that was given a fresh version starts from the value it replaces.
    for (const version_slot& s : slots)
      if (s.copy_from != nullptr) std::memcpy(s.ptr, s.copy_from, s.bytes);
    call(std::index_sequence_for<P...>{});
  }
  template <std::size_t... I>
  void call(std::index_sequence<I...>) {
    f(static_cast<P>(slots[I].ptr)...);
  }
};

// version_body<F, P...> where P are the pointers of the versioned accesses among A, in order.
template <class Body, class... A>
struct version_body_for;
template <class F, class... P>
struct version_body_for<version_body<F, P...>> {
  using type = version_body<F, P...>;
};
template <bool versioned, class Body, class A0, class... A>
struct version_body_step;
template <class F, class... P, class A0, class... A>
struct version_body_step<true, version_body<F, P...>, A0, A...> {
  using type = typename version_body_for<version_body<F, P..., typename A0::pointer>, A...>::type;
};
template <class F, class... P, class A0, class... A>
struct version_body_step<false, version_body<F, P...>, A0, A...> {
  using type = typename version_body_for<version_body<F, P...>, A...>::type;
};
template <class F, class... P, class A0, class... A>
struct version_body_for<version_body<F, P...>, A0, A...> {
  using type = typename version_body_step<is_version_access_v<A0>, version_body<F, P...>, A0, A...>::type;
};

template <class Body>
struct version_body_check;
template <class F, class... P>
struct version_body_check<version_body<F, P...>> {
  static constexpr bool ok = std::is_invocable_v<F&, P...>;
};

}  // namespace hytask::detail
