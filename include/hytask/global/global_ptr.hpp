// global_ptr<T>: a pointer into a hytask::global_array<T>, and the array's random-access
// iterator over its global range.
//
// ```cpp context=global
// hytask::global_array<int> a(10);            // 4 ranks: blocks of 3, 3, 3 and 1
// hytask::global_ptr<int> p = a.begin() + 2;  // element 2, on rank 0
// ++p;                                        // element 3, on rank 1
// if (p.is_local()) *p.local() = 7;           // this rank's memory: a plain store
// int v = *p;                                 // anywhere: a get (a task suspends)
// (*p).put(v + 1);                            // a put
// std::ptrdiff_t n = a.end() - p;             // 7
// ```
//
// A pointer is the object and an index from 0 to size() (one past the end): arithmetic
// (+, -, ++, --, +=, -=, [], the difference of two pointers) and comparison are on the index
// and cost no communication; stepping outside [0, size()] is a usage_error. Dereferencing
// gives the element's global_ref (get, put, in/out/inout, and a conversion to T that gets),
// and owner(), is_local() and local() say where the element lives; these need an element
// (not the end) and throw usage_error otherwise.
// - local() is the element's address where this rank owns it, else nullptr (never throws
//   for a valid element): test it, or is_local(), before using it.
// - Pointers into different objects do not compare or subtract: ==, <, - and the ranges of
//   the algorithms (algorithm.hpp) throw usage_error. == and != with a null pointer
//   (global_ptr<T>{}) are allowed and test for null.
// - As an iterator it is a std::random_access_iterator whose reference is a proxy (the
//   global_ref): reading `*it` converts to T, writing is `(*it).put(v)`. Standard algorithms
//   that only read work, element by element (one transfer each); for whole ranges the
//   copy and the other algorithms of algorithm.hpp move blocks.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "hytask/global/global_ref.hpp"

namespace hytask {

template <class T>
class global_array;

template <class T>
class global_ptr {
 public:
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using reference = global_ref<T>;
  using pointer = void;
  using iterator_concept = std::random_access_iterator_tag;
  using iterator_category = std::random_access_iterator_tag;

  global_ptr() noexcept = default;  // null

  // The element's reference (get, put, in/out/inout; converts to T).
  global_ref<T> operator*() const {
    check_element();
    return global_ref<T>(mem_, index_);
  }
  global_ref<T> operator[](difference_type n) const { return *(*this + n); }

  // The owning rank (of the array's communicator), and whether it is this one.
  int owner() const { return (**this).owner(); }
  bool is_local() const { return (**this).is_local(); }
  // The element in this rank's memory where it owns it, else nullptr.
  T* local() const { return (**this).local_data(); }
  // The element's global index (size() for the end).
  std::uint64_t index() const noexcept { return index_; }
  explicit operator bool() const noexcept { return mem_ != nullptr; }

  global_ptr& operator+=(difference_type n) {
    move_by(n);
    return *this;
  }
  global_ptr& operator-=(difference_type n) {
    move_by(-n);
    return *this;
  }
  global_ptr& operator++() { return *this += 1; }
  global_ptr& operator--() { return *this -= 1; }
  global_ptr operator++(int) {
    global_ptr old = *this;
    ++*this;
    return old;
  }
  global_ptr operator--(int) {
    global_ptr old = *this;
    --*this;
    return old;
  }
  friend global_ptr operator+(global_ptr p, difference_type n) { return p += n; }
  friend global_ptr operator+(difference_type n, global_ptr p) { return p += n; }
  friend global_ptr operator-(global_ptr p, difference_type n) { return p -= n; }
  friend difference_type operator-(const global_ptr& a, const global_ptr& b) {
    same_object(a, b, "the difference");
    return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
  }
  friend bool operator==(const global_ptr& a, const global_ptr& b) {
    if (a.mem_ == nullptr || b.mem_ == nullptr) return a.mem_ == b.mem_ && a.index_ == b.index_;
    same_object(a, b, "a comparison");
    return a.index_ == b.index_;
  }
  friend std::strong_ordering operator<=>(const global_ptr& a, const global_ptr& b) {
    same_object(a, b, "a comparison");
    return a.index_ <=> b.index_;
  }

  // Internal (global_array, the algorithms): the object.
  detail::global_memory* hytask_memory() const noexcept { return mem_; }
  global_ptr(detail::global_memory* mem, std::uint64_t index) noexcept : mem_(mem), index_(index) {}

 private:
  static void same_object(const global_ptr& a, const global_ptr& b, const char* what) {
    if (a.mem_ != b.mem_ || a.mem_ == nullptr) detail::throw_global_ptr(what, a.mem_, b.mem_);
  }
  std::uint64_t size() const { return mem_->layout().locations(); }
  void check_element() const {
    if (mem_ == nullptr) detail::throw_global_ptr("a dereference", nullptr, nullptr);
    if (index_ >= size()) detail::throw_global_ptr_range(static_cast<std::int64_t>(index_), size(), mem_);
  }
  void move_by(difference_type n) {
    if (mem_ == nullptr) {
      if (n == 0) return;
      detail::throw_global_ptr("arithmetic", nullptr, nullptr);
    }
    const auto to = static_cast<std::int64_t>(index_) + static_cast<std::int64_t>(n);
    if (to < 0 || static_cast<std::uint64_t>(to) > size()) detail::throw_global_ptr_range(to, size(), mem_);
    index_ = static_cast<std::uint64_t>(to);
  }

  detail::global_memory* mem_ = nullptr;
  std::uint64_t index_ = 0;
};

}  // namespace hytask
