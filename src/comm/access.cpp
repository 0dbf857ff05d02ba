// The four access modes (comm/access.hpp): multiple, funneled (its MPI thread, which
// initialises MPI, runs the queued operations and polls for idle workers), serialized
// (funneled, with the serial lock held inside MPI) and masteronly.
#include "comm/access.hpp"

#include <mpi.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/face.hpp"
#include "hytask/errors.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/thread_name.hpp"
#include "platform/topology.hpp"

namespace hytask::mpi::detail {
namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

class access_multiple final : public mpi_access {
 public:
  using mpi_access::mpi_access;
  int level_needed() const override { return MPI_THREAD_MULTIPLE; }
  std::string accept(bool initialised, int provided) override {
    if (provided >= MPI_THREAD_MULTIPLE) return "";
    return std::string("HYTASK_MPI_MODE=multiple needs MPI_THREAD_MULTIPLE, but this MPI ") +
           (initialised ? "was initialised with " : "provides only ") + level_name(provided) +
           ": use HYTASK_MPI_MODE=funneled (one hytask thread makes every MPI call" +
           (initialised ? ", which needs hytask to initialise MPI or MPI_THREAD_SERIALIZED" : "") +
           ") or HYTASK_MPI_MODE=masteronly";
  }
  bool may_call_mpi() const override { return true; }
  core::poll_result worker_poll(unsigned, bool) override { return port_.eng.poll(); }
};

// The modes where one thread makes every call.
class access_one_thread : public mpi_access {
 public:
  using mpi_access::mpi_access;
  bool may_call_mpi() const override { return std::this_thread::get_id() == mpi_thread_; }

 protected:
  std::thread::id mpi_thread_;
};

class access_funneled : public access_one_thread {
 public:
  using access_one_thread::access_one_thread;
  int level_needed() const override { return MPI_THREAD_FUNNELED; }
  std::string accept(bool initialised, int provided) override {
    if (initialised && provided < MPI_THREAD_SERIALIZED)
      return std::string("HYTASK_MPI_MODE=funneled makes MPI calls from a hytask thread, but the "
                         "program initialised MPI with ") +
             level_name(provided) +
             ", which allows only its own main thread to call MPI: let hytask::runtime "
             "initialise MPI, initialise it with MPI_THREAD_SERIALIZED or MULTIPLE, or use "
             "HYTASK_MPI_MODE=masteronly";
    if (!initialised && provided < MPI_THREAD_FUNNELED)
      return std::string("HYTASK_MPI_MODE=funneled needs MPI_THREAD_FUNNELED, but this MPI "
                         "provides only ") +
             level_name(provided) + ": use HYTASK_MPI_MODE=masteronly";
    mpi_thread_ = std::this_thread::get_id();
    return "";
  }
  bool has_mpi_thread() const override { return true; }
  // The MPI thread initialises MPI, so that MPI's "main thread" is the one calling it; or,
  // when the program initialised MPI (SERIALIZED or MULTIPLE, checked in accept()), it
  // adopts it: either way it is the only hytask thread that calls MPI.
  std::thread initialise_mpi(const std::function<void()>& init,
                             std::function<void()> loop) override {
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    std::string init_error;  // set by the MPI thread when initialising failed
    std::thread t([&init, loop = std::move(loop), &m, &cv, &ready, &init_error] {
      core::name_this_thread("hytask-mpi");
      core::leave_main_core();
      std::string why;
      try {
        init();
      } catch (const std::exception& e) {
        why = e.what();
      }
      const bool ok = why.empty();
      {
        // Notify under the lock: once it is released initialise_mpi may return and
        // destroy m, cv, ready and init_error.
        std::lock_guard<std::mutex> lock(m);
        init_error = std::move(why);
        ready = true;
        cv.notify_one();
      }
      if (ok) loop();
    });
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready; });
    if (!init_error.empty()) {
      t.join();
      throw usage_error(init_error);
    }
    return t;
  }
  void nudge() override {
    // A request still pending will be served: no second wake-up (busy workers nudge at
    // task switches, waits from threads that are not workers in a loop).
    if (port_.word.ask_poll()) port_.word.wake();
  }
  // A worker cannot poll: it asks the MPI thread to, which then polls back to back for as
  // long as some worker is idle and operations are pending (mpi_thread_serves), the way an
  // idle worker polls in multiple mode. The idle worker itself looks for tasks and
  // sleeps: spinning only to ask again would take the core the MPI thread needs (with more
  // threads than cores it starved the MPI thread for seconds) and make a system call per
  // poll to wake it.
  core::poll_result worker_poll(unsigned, bool idle) override {
    if (!port_.has_work()) return core::poll_result::nothing_pending;
    nudge();
    return idle ? core::poll_result::delegated : core::poll_result::nothing_pending;
  }
  // The MPI thread polls what it registers while a worker idles: no sleeper is woken.
  bool workers_poll() const override { return false; }
  bool mpi_thread_serves() override {
    if (!port_.has_work() || !core::any_worker_idle()) {
      serving_since_ = -1;
      return false;
    }
    // A worker idles while operations are pending: it cannot poll and sleeps, so this
    // thread polls for it as an idle worker would in multiple mode: back to back for
    // HYTASK_SPIN_US after the last completion, then yielding the core between polls; and it
    // yields right after a completion, which may have woken that worker. The policy's own
    // schedule resumes once every worker is busy or nothing is pending.
    const core::poll_result r = port_.eng.poll();
    const std::int64_t now = core::now_ns();
    if (r == core::poll_result::progressed || serving_since_ < 0) serving_since_ = now;
    if (r != core::poll_result::progressed && now - serving_since_ < port_.spin_ns) {
      for (int i = 0; i < 16; ++i) core::cpu_relax();
    } else {
      std::this_thread::yield();
    }
    return true;
  }

 private:
  std::int64_t serving_since_ = -1;  // serving idle workers: since the last completion
};

class access_serialized final : public access_funneled {
 public:
  using access_funneled::access_funneled;
  int level_needed() const override { return MPI_THREAD_SERIALIZED; }
  std::string accept(bool initialised, int provided) override {
    if (provided < MPI_THREAD_SERIALIZED)
      return std::string("HYTASK_MPI_MODE=serialized needs MPI_THREAD_SERIALIZED (any thread "
                         "calls MPI, one at a time), but this MPI ") +
             (initialised ? "was initialised with " : "provides only ") + level_name(provided) +
             (initialised ? ": initialise it with MPI_THREAD_SERIALIZED or MULTIPLE, let "
                            "hytask::runtime initialise it, or use HYTASK_MPI_MODE=masteronly"
                          : ": use HYTASK_MPI_MODE=funneled (the program may then call MPI "
                            "only through hytask) or masteronly");
    return access_funneled::accept(initialised, provided);
  }
  // MPI's initialisation (or adoption) runs under the lock too: a program that initialised
  // MPI may already be calling it in its sections.
  std::thread initialise_mpi(const std::function<void()>& init,
                             std::function<void()> loop) override {
    const std::function<void()> locked = [this, &init] {
      std::lock_guard<serial_lock> hold(process_serial_lock());
      init();
    };
    return access_funneled::initialise_mpi(locked, std::move(loop));
  }
  serial_lock* serial() override { return &process_serial_lock(); }
};

class access_masteronly final : public access_one_thread {
 public:
  using access_one_thread::access_one_thread;
  int level_needed() const override { return MPI_THREAD_FUNNELED; }
  std::string accept(bool, int provided) override {
    if (provided < MPI_THREAD_FUNNELED)
      return std::string("HYTASK_MPI_MODE=masteronly needs MPI_THREAD_FUNNELED (MPI calls from "
                         "main while other threads exist), but this MPI provides only ") +
             level_name(provided);
    int is_main = 0;
    MPI_Is_thread_main(&is_main);
    if (!is_main)
      return "HYTASK_MPI_MODE=masteronly: the thread creating hytask::runtime is not the one "
             "that initialised MPI; create the runtime on that thread";
    mpi_thread_ = std::this_thread::get_id();
    return "";
  }
  void nudge() override {
    core::wake_worker(0);
  }
  core::poll_result worker_poll(unsigned worker, bool) override {
    if (worker != 0) return core::poll_result::nothing_pending;  // only main calls MPI
    // Main polls at its scheduling points only when it has nothing else to run, or every
    // HYTASK_POLL_EVERY task switches with the workers policy.
    const bool had = port_.queue.any();
    port_.run_queued(port_.ctx);
    const core::poll_result r = port_.eng.poll();
    return had && r != core::poll_result::nothing_pending ? core::poll_result::progressed : r;
  }
  bool worker_has_pending(unsigned worker) const override {
    return worker == 0 && mpi_access::worker_has_pending(worker);
  }
  bool workers_poll() const override { return false; }
};

}  // namespace

bool mpi_access::worker_has_pending(unsigned) const { return port_.has_work(); }

std::thread mpi_access::initialise_mpi(const std::function<void()>& init,
                                       std::function<void()>) {
  init();
  return {};
}

std::unique_ptr<mpi_access> mpi_access::make(hytask::mpi_mode mode, const access_port& p) {
  switch (mode) {
    case hytask::mpi_mode::funneled: return std::make_unique<access_funneled>(p);
    case hytask::mpi_mode::masteronly: return std::make_unique<access_masteronly>(p);
    case hytask::mpi_mode::serialized: return std::make_unique<access_serialized>(p);
    case hytask::mpi_mode::multiple: break;
  }
  return std::make_unique<access_multiple>(p);
}

}  // namespace hytask::mpi::detail
