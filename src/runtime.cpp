// The runtime object ties the layers together: it resolves the settings, starts the trace
// and the scheduler, and stops them in the reverse order.
#include "hytask/runtime.hpp"

#include <cstdio>
#include <exception>

#include "core/scheduler.hpp"
#include "trace/trace.hpp"

namespace hytask {

struct runtime::impl {
  hytask::settings settings;
  std::unique_ptr<core::scheduler> sched;
  bool tracing = false;
  bool stopped = false;
};

runtime::runtime(int& argc, char**& argv) : runtime(config{}) {
  (void)argc;  // reserved: the MPI layer passes them to MPI_Init_thread
  (void)argv;
}

runtime::runtime(const config& cfg) : impl_(std::make_unique<impl>()) {
  if (core::scheduler::instance() != nullptr)
    throw usage_error(
        "hytask: a hytask::runtime already exists; create exactly one, in main, and keep it "
        "alive while tasks run");
  impl_->settings = settings::resolve(cfg);
  if (!impl_->settings.trace.empty()) {
    trace::start(impl_->settings.trace, impl_->settings.trace_buffer, 0, "hytask");
    impl_->tracing = true;
  }
  try {
    impl_->sched = std::make_unique<core::scheduler>(impl_->settings);
  } catch (...) {
    if (impl_->tracing) trace::stop();
    throw;
  }
}

void runtime::shutdown() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  std::exception_ptr error;
  try {
    impl_->sched->shutdown();
  } catch (...) {
    error = std::current_exception();
  }
  impl_->sched.reset();
  if (impl_->tracing) trace::stop();
  if (error) std::rethrow_exception(error);
}

runtime::~runtime() {
  try {
    shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "hytask: a task threw an exception that no wait_all collected: %s\n"
                 "hytask: call hytask::wait_all() or runtime::shutdown() to handle it.\n",
                 e.what());
    std::terminate();
  } catch (...) {
    std::fprintf(stderr,
                 "hytask: a task threw a non-standard exception that no wait_all collected.\n"
                 "hytask: call hytask::wait_all() or runtime::shutdown() to handle it.\n");
    std::terminate();
  }
}

const hytask::settings& runtime::settings() const noexcept { return impl_->settings; }

bool runtime::active() noexcept { return core::scheduler::instance() != nullptr; }

}  // namespace hytask
