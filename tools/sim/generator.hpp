// A lazily produced sequence (C++23's std::generator, reduced to what the simulator needs):
// a coroutine that co_yields values, pulled one at a time with next(). A simulated rank's
// program is one, so that a model reads like the application's loop nest and a rank holds
// only its position in it, not its whole task list.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace hytask::sim {

template <class T>
class generator {
 public:
  struct promise_type {
    std::optional<T> current;
    std::exception_ptr error;
    generator get_return_object() { return generator{handle::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(T v) {
      current = std::move(v);
      return {};
    }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };
  using handle = std::coroutine_handle<promise_type>;

  generator() = default;
  generator(generator&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  generator& operator=(generator&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~generator() {
    if (h_) h_.destroy();
  }

  // Advances to the next value; false once the coroutine has returned.
  bool next() {
    if (!h_ || h_.done()) return false;
    h_.promise().current.reset();
    h_.resume();
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return !h_.done();
  }
  T& value() { return *h_.promise().current; }

 private:
  explicit generator(handle h) : h_(h) {}
  handle h_;
};

}  // namespace hytask::sim
