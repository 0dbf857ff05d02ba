#include "global/system.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <thread>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "core/face.hpp"
#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"
#include "global/mpi_call.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/errors.hpp"
#include "hytask/global/memory.hpp"
#include "hytask/global/phase.hpp"

namespace hytask::global::detail {

namespace {

std::unique_ptr<global_system> g_system;
unsigned g_window = 8;
hytask::global_am g_transport = hytask::global_am::automatic;
constexpr std::size_t records_per_buffer = 2048;
constexpr int key_shift = 40;  // key = object id << 40 | location

}  // namespace

void configure(unsigned phase_window, hytask::global_am transport) {
  g_window = phase_window == 0 ? 8 : phase_window;
  g_transport = transport;
}

global_system* global_system::instance() noexcept { return g_system.get(); }

global_system& global_system::acquire() {
  if (!g_system) {
    mpi::detail::comm_system& c = comm_or_throw("PGAS objects (hytask::global_array, tiled_matrix)");
    g_system.reset(new global_system(c.rank(), c.size(), g_window));
  }
  return *g_system;
}

void global_system::shutdown() {
  if (!g_system) return;
  std::exception_ptr error;
  const bool unwinding = std::uncaught_exceptions() != 0;
  if (!unwinding) {  // unwinding: the other ranks may not come
    try {
      hytask::wait_all();
    } catch (...) {
      error = std::current_exception();
    }
  }
  g_system->detach_live_objects(unwinding);
  g_system.reset();
  if (error) std::rethrow_exception(error);
}

global_system::global_system(int rank, int nranks, unsigned window)
    : window_(window), engine_(rank, nranks, *this, records_per_buffer) {
  mpi::detail::comm_system& c = comm_or_throw("PGAS objects");
  am_ = make_am_transport(
      am_kind_for(g_transport), c.world(),
      [this](int source, std::span<const std::byte> buf) {
        engine_.receive(source, buf);
        try_match();
        notify();
      },
      [this](std::exception_ptr e) { failed(std::move(e)); },
      sizeof(buffer_header) + records_per_buffer * sizeof(record));
  blocking_mpi("MPI_Comm_dup", -1, [&] {
    int rc = MPI_Comm_dup(c.world(), &data_comm_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(data_comm_, MPI_ERRORS_RETURN);
    int* ub = nullptr;
    int found = 0;
    if (rc == MPI_SUCCESS) rc = MPI_Comm_get_attr(data_comm_, MPI_TAG_UB, &ub, &found);
    if (rc == MPI_SUCCESS && found && ub && *ub > 0) tag_limit_ = static_cast<std::uint64_t>(*ub) + 1;
    return rc;
  });
  core::root_wait_hooks hooks;
  hooks.ctx = this;
  hooks.before = [](void* self) { static_cast<global_system*>(self)->before_wait_all(); };
  hooks.after = [](void* self) { static_cast<global_system*>(self)->after_wait_all(); };
  core::set_root_wait_hooks(hooks);
}

global_system::~global_system() {
  core::set_root_wait_hooks({});
  am_.reset();
  try {
    blocking_mpi("MPI_Comm_free", -1, [&] { return MPI_Comm_free(&data_comm_); });
  } catch (const std::exception& e) {
    core::messagef(core::verbosity::warning, "closing the global layer: %s", e.what());
  }
}

std::uint32_t global_system::add_object(hytask::detail::global_memory* m) {
  std::lock_guard lk(objects_mu_);
  if (m->layout().locations() >= (std::uint64_t(1) << key_shift))
    throw usage_error("hytask: a " + std::string(m->kind()) + " of " +
                      std::to_string(m->layout().locations()) +
                      " locations: global dependencies name at most 2^40 per object; use "
                      "larger tiles");
  const std::uint32_t id = next_object_++;
  objects_[id] = m;
  return id;
}

// PGAS objects still alive at the runtime's end (a program that declares them before the
// runtime, or holds them elsewhere): their windows must go before MPI_Finalize, and later
// uses must not reach MPI. Every rank has the same objects (they are collective), in the
// same order of ids.
void global_system::detach_live_objects(bool unwinding) {
  std::vector<hytask::detail::global_memory*> live;
  {
    std::lock_guard lk(objects_mu_);
    for (auto& [id, m] : objects_) live.push_back(m);
  }
  for (hytask::detail::global_memory* m : live) {
    if (!unwinding)  // every rank has the same objects
      core::messagef_once_per_job(
          core::verbosity::warning,
          "%s is still alive at the runtime's end: destroy PGAS objects before the runtime "
          "(create hytask::runtime first in main, so that it ends last). Its window is released "
          "now; afterwards only local() may be used (it keeps this rank's last values)",
          m->name().c_str());
    m->detach(unwinding);
  }
}

void global_system::remove_object(std::uint32_t id) {
  std::lock_guard lk(objects_mu_);
  objects_.erase(id);
}

std::string global_system::describe(std::uint64_t key) const {
  const auto id = static_cast<std::uint32_t>(key >> key_shift);
  const std::uint64_t index = key & ((std::uint64_t(1) << key_shift) - 1);
  std::lock_guard lk(objects_mu_);
  auto it = objects_.find(id);
  if (it == objects_.end()) return "location " + std::to_string(index) + " of object " + std::to_string(id);
  return it->second->layout().describe(index) + " of " + it->second->kind() + " " + std::to_string(id);
}

void global_system::require_main(const char* what) const {
  if (core::on_main_outside_tasks()) return;
  throw usage_error(std::string("hytask: ") + what +
                    (!core::on_worker() ? " on a thread that is not main or a task"
                                  : " in a task") +
                    ": global dependencies are declared by tasks that main spawns, and phases "
                    "are advanced by main (remote dependencies are root-level only); "
                    "spawn the task from main");
}

void global_system::open() { am_->open(); }

std::uint64_t global_system::declare(hytask::detail::spawn_context& ctx, location where,
                                     const void* addr, std::size_t bytes, access_mode mode,
                                     bool push) {
  require_main("hytask::in/out/inout on a global reference");
  open();
  hytask::detail::task* t = ctx.target();
  task_record* rec;
  if (core::watched(t)) {
    rec = static_cast<task_record*>(core::watch_arg(t));
  } else {
    bool gated = false;
    rec = engine_.begin_task(t, gated);
    if (gated) {
      ctx.add_external();
      // Until its phase is matched, which needs main's next fence, the task cannot run: a
      // spawn that waited for it in the throttle would wait forever (seed 001 §5.2.1: a
      // phase must be discovered whole; the window of active phases bounds memory instead).
      core::set_aside(1);
    }
    core::watch_completion(t, &global_system::completed, rec);
  }
  const std::uint64_t id =
      engine_.add_access(rec, where, mode == access_mode::in ? dep_kind::in : dep_kind::out, push);
  if (mode != access_mode::in) copyin_written(where.key);
  // An access to another rank's location is communication (its completion reaches the
  // owner, and may release tasks there): the task joins the communication class.
  if (where.owner != engine_.rank()) ctx.raise_priority();
  ctx.region(addr, bytes, mode);
  return id;
}

namespace {
// The send of a copyin's data; its completion tells the engine.
struct push_node : hytask::detail::event_waiter {
  global_system* sys;
  engine* eng;
  mpi::detail::operation* op;
  int dest;
  std::uint64_t id;
};
}  // namespace

// A copyin of rank dest was released: send it the location's bytes, from the location itself
// (the owner's next writer waits for this send and for the accessor's C record).
void global_system::push(int dest, std::uint64_t id, std::uint64_t key) {
  const auto object = static_cast<std::uint32_t>(key >> key_shift);
  const std::uint64_t index = key & ((std::uint64_t(1) << key_shift) - 1);
  hytask::detail::global_memory* mem = nullptr;
  {
    std::lock_guard lk(objects_mu_);
    auto it = objects_.find(object);
    if (it != objects_.end()) mem = it->second;
  }
  if (mem == nullptr) {
    failed(std::make_exception_ptr(std::logic_error(
        "hytask: internal error: a copyin of " + describe(key) + " whose object is gone")));
    return;
  }
  const hytask::detail::global_place p = mem->layout().locate(index);
  auto* n = new push_node;
  n->sys = this;
  n->eng = &engine_;
  n->dest = dest;
  n->id = id;
  mpi::detail::operation* op = layer_op(mpi::detail::kind::send, data_comm_);
  op->sbuf = mem->local_base() + p.offset;
  op->scount = static_cast<MPI_Count>(p.bytes);
  op->stype = MPI_BYTE;
  op->peer = dest;
  op->tag = data_tag(id);
  op->bytes = p.bytes;
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<push_node*>(e);
    const bool ok = self->op->error == MPI_SUCCESS;
    std::exception_ptr err = ok ? nullptr : std::make_exception_ptr(mpi::make_error(self->op));
    mpi::detail::release(self->op);
    global_system* sys = self->sys;
    if (ok) {
      try {
        self->eng->push_sent(self->dest, self->id);
      } catch (...) {
        err = std::current_exception();
      }
    }
    delete self;
    if (err) sys->failed(err);
    else sys->notify();
  };
  op->done.add_waiter(n);
  mpi::detail::comm_system& c = comm_or_throw("global dependencies");
  c.submit(op, true);
}

// Matching found a successor on another rank: the task joins the communication class (if it
// has not started, it starts in it) and so do later tasks of its type (the core learns it as
// it learns the types of tasks that post MPI operations).
void global_system::remote_successor(void* task) {
  auto* t = static_cast<hytask::detail::task*>(task);
  core::raise_to_comm(t);
  core::learn_comm(t);
}

void global_system::phase_matched(std::size_t tasks) {
  if (tasks) core::take_back(static_cast<std::int64_t>(tasks));
}

void global_system::copyin_new_phase() {
  const std::uint32_t phase = engine_.phase();
  if (phase == copyin_phase_) return;
  copyins_.clear();
  copyin_buffers_.clear();
  copyin_phase_ = phase;
}

bool global_system::copyin_needed(const void* buf, std::uint64_t key, std::size_t bytes) {
  copyin_new_phase();
  auto [it, fresh] = copyins_.try_emplace(buf, copyin_target{key, bytes});
  if (!fresh && it->second.key == key && it->second.bytes == bytes) {
    copyins_shared_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  it->second = copyin_target{key, bytes};
  copyin_buffers_[key].push_back(buf);
  return true;
}

// A write of this rank to `key` later in the phase makes what earlier copyins of it brought
// stale: later copyins of the phase must transfer again (after the write).
void global_system::copyin_written(std::uint64_t key) {
  if (copyins_.empty()) return;
  copyin_new_phase();
  auto it = copyin_buffers_.find(key);
  if (it == copyin_buffers_.end()) return;
  for (const void* buf : it->second) {
    auto c = copyins_.find(buf);
    if (c != copyins_.end() && c->second.key == key) copyins_.erase(c);
  }
  copyin_buffers_.erase(it);
}

hytask::global_counters global_system::counters() const {
  const engine_stats e = engine_.stats();
  hytask::global_counters c;
  c.announces_sent = e.announces_sent;
  c.releases_sent = e.releases_sent;
  c.completions_sent = e.completions_sent;
  c.buffers_sent = e.buffers_sent;
  c.buffers_received = e.buffers_received;
  c.transfers = transfers_.load(std::memory_order_relaxed);
  c.bytes_sent = bytes_sent_.load(std::memory_order_relaxed);
  c.rounds = rounds_;
  const std::uint64_t acks = am_->acks_sent();
  c.round_messages = acks + drain_buffers_.load(std::memory_order_relaxed);
  c.round_bytes = acks * sizeof(buffer_header) + drain_bytes_.load(std::memory_order_relaxed);
  c.copyins_shared = copyins_shared_.load(std::memory_order_relaxed);
  c.tasks_alive = e.records_alive;
  c.nodes_alive = e.nodes_alive;
  c.chains_alive = e.chains_alive;
  return c;
}

void global_system::completed(hytask::detail::task* t) {
  global_system* self = g_system.get();
  const core::ending how = core::how_it_ended(t);
  const std::uint16_t ended = how == core::ending::cancelled ? flag_cancelled
                              : how == core::ending::failed  ? flag_failed
                                                             : 0;
  self->engine_.task_completed(static_cast<task_record*>(core::watch_arg(t)), ended);
  self->notify();
}

// A predecessor on another rank that failed makes the task fail, skipped, as a local
// predecessor that failed would; one that was cancelled makes it cancelled (no failure).
void global_system::release(void* task, std::uint16_t inherited) {
  std::exception_ptr skip;
  if (inherited & flag_conflict)
    skip = std::make_exception_ptr(usage_error(
        "hytask: a task was skipped: its global access conflicts with another rank's in the same "
        "phase (every rank's collective wait_all reports the conflict)"));
  else if (inherited & flag_failed)
    skip = std::make_exception_ptr(std::runtime_error(
        "hytask: a task was skipped: a task it depends on through a global dependency failed on "
        "another rank (that rank reports the failure)"));
  else if (inherited & flag_cancelled)
    skip = core::cancelled_error();
  hytask::detail::release_external(static_cast<hytask::detail::task*>(task), std::move(skip));
}

void global_system::send(int dest, std::vector<std::byte> buf) {
  buffer_header h{};
  if (read_header(buf, h) && h.round == drain_round) {  // the drain round's, not the protocol's
    drain_buffers_.fetch_add(1, std::memory_order_relaxed);
    drain_bytes_.fetch_add(buf.size(), std::memory_order_relaxed);
  } else {
    bytes_sent_.fetch_add(buf.size(), std::memory_order_relaxed);
  }
  am_->send(dest, std::move(buf));
}

// A round's label: what main is in (a fence, a wait_all, its drain), the collective
// wait_alls before it and the fences since the last one — equal on every rank when the
// ranks call fence() and wait_all() alike.
std::uint64_t global_system::label(round_kind k) const {
  return std::uint64_t(k) << 62 | (std::uint64_t(epochs_) & 0x3fffffffu) << 32 | fences_;
}

void global_system::close_phase(round_kind k) {
  ++rounds_;
  const std::uint32_t round = engine_.fence();  // its A buffers have left
  am_->complete_round(
      round_key(round, engine_.epoch()), label(k),
      [this, round](std::uint64_t n) {
        engine_.expect(round, n);
        try_match();
        notify();
      },
      [this](const std::vector<std::uint64_t>& labels) { phases_differ(labels); });
}

void global_system::fence() {
  require_main("hytask::fence()");
  open();
  am_->set_activity("hytask::fence() on main (its round needs every rank's matching fence)");
  close_phase(round_kind::fence);
  ++fences_;
  wait_until([this] { return engine_.active_phases() < window_; });
}

void global_system::before_wait_all() {
  open();
  am_->set_activity("hytask::wait_all() on main (collective while PGAS objects exist: every "
                    "rank must call it)");
  close_phase(round_kind::wait_all);
}

void global_system::after_wait_all() {
  wait_until([this] { return engine_.matched() == engine_.phase(); });
  ++rounds_;
  engine_.drain();  // this rank's tasks are done: it sends no more C buffers
  am_->complete_round(
      round_key(drain_round, engine_.epoch()), label(round_kind::drain),
      [this](std::uint64_t n) {
        engine_.expect_drain(n);
        notify();
      },
      [this](const std::vector<std::uint64_t>& labels) { phases_differ(labels); });
  wait_until([this] { return engine_.drained(); });
  // Nothing more can come before every rank has passed the barrier: retire the receives,
  // so that nothing stays pending between epochs.
  am_->close();
  const std::string conflict = share_conflicts();  // also the barrier
  engine_.reset();
  ++epochs_;
  fences_ = 0;
  am_->set_activity("hytask global dependencies");
  if (!conflict.empty()) throw usage_error(conflict);
}

// Conflicts are found by the owner of the location, while it matches; every rank learns of
// them here, where all ranks are: the lowest rank that found one sends its first to all.
// An allreduce, so also the barrier that ends the epoch; a broadcast only after a conflict.
std::string global_system::share_conflicts() {
  const std::vector<std::string> mine = engine_.take_conflicts();
  const int rank = engine_.rank();
  // The layer's own operations: a cancelled job (cancel_collective) must not cancel them.
  auto collective = [this](mpi::detail::kind k, void* buf, MPI_Count count, MPI_Datatype type, int root) {
    mpi::detail::operation* op = layer_op(k, data_comm_);
    op->task_name = "hytask::wait_all() on main (collective while PGAS objects exist: every rank must call it)";
    op->rbuf = buf;
    op->rcount = count;
    op->rtype = type;
    if (k == mpi::detail::kind::allreduce) {
      op->sbuf = MPI_IN_PLACE;
      op->scount = count;
      op->stype = type;
      op->op = MPI_MIN;
    } else {
      op->peer = root;
    }
    run_and_wait(op);
  };
  int reporter = mine.empty() ? std::numeric_limits<int>::max() : rank;
  collective(mpi::detail::kind::allreduce, &reporter, 1, MPI_INT, 0);
  if (reporter == std::numeric_limits<int>::max()) return {};
  std::string text;
  if (reporter == rank) {
    text = mine.front();
    if (mine.size() > 1) text += " (rank " + std::to_string(rank) + " found " + std::to_string(mine.size() - 1) +
                                 " more conflict" + (mine.size() > 2 ? "s" : "") + " in this epoch)";
  }
  long length = static_cast<long>(text.size());
  collective(mpi::detail::kind::bcast, &length, 1, MPI_LONG, reporter);
  text.resize(static_cast<std::size_t>(length));
  collective(mpi::detail::kind::bcast, text.data(), length, MPI_CHAR, reporter);
  return text;
}

namespace {
std::string describe_label(std::uint64_t label) {
  const auto k = static_cast<unsigned>(label >> 62);
  const auto epochs = static_cast<unsigned>((label >> 32) & 0x3fffffffu);
  const auto fences = static_cast<unsigned>(label & 0xffffffffu);
  const std::string after = std::to_string(epochs) + " collective wait_all() before it";
  switch (k) {
    case 1:
      return "in fence() number " + std::to_string(fences + 1) + " since the last wait_all() (" +
             after + ")";
    case 2:
      return "in wait_all() number " + std::to_string(epochs + 1) + ", after " +
             std::to_string(fences) + " fence() since the previous one";
    case 3:
      return "finishing wait_all() number " + std::to_string(epochs + 1) + ", after " +
             std::to_string(fences) + " fence() since the previous one";
    default:
      return "in an unknown round (label " + std::to_string(label) + ")";
  }
}

// "0-2, 5"
std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}
}  // namespace

// The ranks met in a round of different fences or wait_alls: the program calls them
// differently on different ranks, and the rounds after this one would pair other calls, or
// none. Rank 0 says how each rank stands; the others end the job a moment later.
void global_system::phases_differ(const std::vector<std::uint64_t>& labels) {
  if (engine_.rank() != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // rank 0 reports
    failed(std::make_exception_ptr(usage_error(
        "hytask: rank " + std::to_string(engine_.rank()) +
        ": the ranks' fence() and wait_all() calls differ (rank 0 reports how)")));
    return;
  }
  std::map<std::uint64_t, std::vector<int>> by_label;
  for (std::size_t r = 0; r < labels.size(); ++r) by_label[labels[r]].push_back(static_cast<int>(r));
  std::string what =
      "hytask: the ranks' global phases differ: with PGAS objects (global_array, "
      "tiled_matrix), every rank must call hytask::fence() equally often and hytask::wait_all() "
      "at the same points (it is collective then). The ranks met at:";
  for (const auto& [l, ranks] : by_label)
    what += std::string("\n  rank") + (ranks.size() > 1 ? "s " : " ") + rank_list(ranks) + ": " +
            describe_label(l);
  failed(std::make_exception_ptr(usage_error(what)));
}

void global_system::try_match() {
  match_requests_.fetch_add(1, std::memory_order_seq_cst);
  while (!matching_.exchange(true, std::memory_order_seq_cst)) {
    match_requests_.store(0, std::memory_order_seq_cst);
    try {
      for (;;) {
        const std::uint32_t m = engine_.matched();
        if (m >= engine_.phase() || !engine_.round_complete(m)) break;
        engine_.match(m);  // a conflict throws
      }
    } catch (...) {
      matching_.store(false, std::memory_order_seq_cst);
      failed(std::current_exception());
      return;
    }
    matching_.store(false, std::memory_order_seq_cst);
    if (match_requests_.load(std::memory_order_seq_cst) == 0) break;
  }
}

// An error found while moving the protocol's messages — a conflict found by matching, a
// failed MPI call — arises on whichever thread polls, where no caller can catch it, and
// leaves the ranks' task graphs inconsistent: end the job as an uncaught hytask exception
// does (fatal_errors.hpp), with the message.
void global_system::failed(std::exception_ptr e) {
  std::string what = "unknown error";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    what = x.what();
  } catch (...) {
  }
  core::message(core::verbosity::error, what + "\nending the job (global dependencies)");
  core::wait_until_stderr_read();  // the launcher forwards it before the abort kills us
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void global_system::notify() {
  std::lock_guard lk(wait_mu_);
  if (waiter_ != nullptr) {
    waiter_->set();
    waiter_ = nullptr;
  }
}

void global_system::wait_until(const std::function<bool()>& done) {
  while (!done()) {
    hytask::event ev;
    {
      std::lock_guard lk(wait_mu_);
      waiter_ = &ev;
    }
    if (!done()) ev.wait();
    std::lock_guard lk(wait_mu_);
    if (waiter_ == &ev) waiter_ = nullptr;
  }
}

}  // namespace hytask::global::detail

namespace hytask {

// Before any PGAS object, phases order nothing: a fence does nothing (creating the layer here
// would make every later wait_all collective, in programs that have no global dependencies).
void fence() {
  auto* sys = global::detail::global_system::instance();
  if (sys == nullptr) {
    if (!core::on_main_outside_tasks())
      throw usage_error("hytask: hytask::fence() in a task or on a thread that is not main: "
                        "phases are advanced by main, on every rank");
    return;
  }
  sys->fence();
}

global_counters global_stats() {
  auto* sys = global::detail::global_system::instance();
  return sys ? sys->counters() : global_counters{};
}

}  // namespace hytask
