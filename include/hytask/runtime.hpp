// runtime: the object that owns the workers. Create one in main, before any task.
//
// ```cpp
// #include <hytask/hytask.hpp>
//
// int main(int argc, char** argv) {
//   hytask::runtime rt(argc, argv);  // reads HYTASK_*, starts the workers
//   hytask::spawn([] { /* a task */ });
//   hytask::wait_all();
// }                                  // waits for every task, stops the workers
// ```
//
// HYTASK_THREADS counts the main thread: main is worker 0 and runs tasks whenever it waits
// (wait_all, a throttled spawn, yield); the other workers are background threads that
// sleep when there is nothing to do. Only one runtime may exist at a time.
#pragma once

#include <memory>

#include "hytask/config.hpp"

namespace hytask {

class runtime {
 public:
  runtime(int& argc, char**& argv);
  explicit runtime(const config& cfg = {});
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Waits for every task, stops the workers and rethrows the first exception no wait_all
  // collected. The destructor calls it and, if a task's exception was never collected,
  // prints it and terminates: call shutdown() (or wait_all()) to handle it yourself.
  void shutdown();

  const hytask::settings& settings() const noexcept;

  // True while a runtime exists.
  static bool active() noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace hytask
