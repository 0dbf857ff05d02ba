#include "measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <stdexcept>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "threads.hpp"

namespace overlap {
namespace {

// ---- the exchange ---------------------------------------------------------------------------
// Buffers for every (partner, message) in both directions, and the datatype they use.
struct exchange {
  std::vector<int> partners;
  unsigned messages = 1;
  MPI_Datatype type = MPI_DOUBLE;
  int count = 0;
  bool own_type = false;
  std::vector<std::vector<double>> send, recv;
  // One-way orders: the lower half only sends, the upper half only receives (and is timed).
  bool sends = true, receives = true;
  double untimed_delay_us = 0;  // before the timer starts (a late receiver, sender-first)
  double timed_delay_us = 0;    // after it starts, before posting (a late sender, receiver-first)

  exchange(const context& ctx, std::size_t bytes) : messages(ctx.opt.messages) {
    // Ranks pair across the halves of the placement order (nodes first); partner k of
    // position i in the lower half is position half + (i + k) mod half, and the pairing is
    // symmetric (seed 000, sect. 4.2.3).
    const int half = ctx.size / 2;
    int pos = 0;
    while (ctx.placed[static_cast<std::size_t>(pos)] != ctx.rank) ++pos;
    const bool lower = pos < half;
    for (unsigned k = 0; k < ctx.opt.partners; ++k) {
      const int ki = static_cast<int>(k);
      const int other = lower ? half + (pos + ki) % half : ((pos - half - ki) % half + half) % half;
      partners.push_back(ctx.placed[static_cast<std::size_t>(other)]);
    }
    if (ctx.opt.direction != order::exchange) {
      sends = lower;
      receives = !lower;
      if (ctx.opt.direction == order::receiver_first && sends) timed_delay_us = ctx.opt.delay_us;
      if (ctx.opt.direction == order::sender_first && receives) untimed_delay_us = ctx.opt.delay_us;
    }
    std::size_t extent = bytes / sizeof(double);
    if (ctx.opt.block != 0) {
      const auto blocks = static_cast<int>(bytes / (ctx.opt.block * sizeof(double)));
      MPI_Type_vector(blocks, static_cast<int>(ctx.opt.block), static_cast<int>(ctx.opt.stride),
                      MPI_DOUBLE, &type);
      MPI_Type_commit(&type);
      own_type = true;
      count = 1;
      extent = static_cast<std::size_t>(blocks - 1) * ctx.opt.stride + ctx.opt.block;
    } else {
      count = static_cast<int>(extent);
    }
    const std::size_t n = partners.size() * messages;
    if (!receives) recv_marks = false;
    send.assign(n, std::vector<double>(extent));
    recv.assign(n, std::vector<double>(extent));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < extent; ++j)
        send[i][j] = static_cast<double>((ctx.rank * 131 + i * 7 + j) % 1009);
  }
  ~exchange() {
    if (own_type) MPI_Type_free(&type);
  }
  exchange(const exchange&) = delete;
  exchange& operator=(const exchange&) = delete;

  // Calls post(recv_buf, send_buf, peer, tag) for every message, receives first; a buffer
  // is null in the direction this rank does not take.
  template <class F>
  void each(F&& post) {
    for (std::size_t p = 0; p < partners.size(); ++p)
      for (unsigned m = 0; m < messages; ++m) {
        const std::size_t i = p * messages + m;
        post(receives ? recv[i].data() : nullptr, sends ? send[i].data() : nullptr, partners[p],
             static_cast<int>(m));
      }
  }

  // Seed 002's progression needs to know when the data arrived without calling MPI (a call
  // would progress it). Every iteration marks the first and last element of each message
  // it sends with a new stamp and clears them in each buffer it receives into; the compute
  // looks at the marks between sweeps (landed). The last element of a message is the last
  // to arrive over TCP, which delivers in order; the first guards against a library that
  // writes a message out of order.
  void arm() {
    stamp += 1;
    for (auto& b : send) b.front() = b.back() = stamp;
    for (auto& b : recv) b.front() = b.back() = -1;
  }
  bool landed() const {
    if (!recv_marks) return true;
    for (const auto& b : recv)
      if (seen(b.front()) != stamp || seen(b.back()) != stamp) return false;
    return true;
  }
  // The memory as it is now: MPI (or its progress thread) writes it while we look.
  static double seen(const double& v) { return *static_cast<const volatile double*>(&v); }
  double stamp = 0;
  bool recv_marks = true;

  // After the barrier: the late side's delay, then the timer starts (returned).
  double start() const {
    if (untimed_delay_us > 0) pause(untimed_delay_us);
    const double t0 = now_us();
    if (timed_delay_us > 0) pause(timed_delay_us);
    return t0;
  }
  static void pause(double us) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
  }
};

struct times {
  double et = 0, done = 0, comp = 0;
  double arrived = 0;  // when the data was in the receive buffers (at most done)
};

// The first time, since t0, that the compute saw every message of the iteration landed.
struct arrival {
  const exchange* x = nullptr;
  double t0 = 0;
  std::atomic<double> at{-1};
  watcher look() {
    return {[](void* a) {
              auto* self = static_cast<arrival*>(a);
              if (self->at.load(std::memory_order_relaxed) >= 0) return true;
              if (!self->x->landed()) return false;
              double none = -1;
              self->at.compare_exchange_strong(none, now_us() - self->t0);
              return true;
            },
            this};
  }
  // Arrival is what the compute saw, or the completion the program saw if that came first
  // (data that arrived during the final wait, or after the compute ended).
  double time(double done) const {
    const double a = at.load();
    return a >= 0 && a < done ? a : done;
  }
};

// Splits `units` into `pieces` nearly equal shares.
std::uint64_t share(std::uint64_t units, unsigned pieces, unsigned i) {
  return units / pieces + (i < units % pieces ? 1 : 0);
}

// One iteration with plain MPI on this thread (seed 000, Alg. 4.3-4.5).
times plain_iteration(exchange& x, const pattern& p, std::uint64_t units) {
  std::vector<MPI_Request> reqs;
  reqs.reserve(x.send.size() * 2);
  x.arm();
  MPI_Barrier(MPI_COMM_WORLD);
  times t;
  const double t0 = x.start();
  arrival seen;
  seen.x = &x;
  seen.t0 = t0;
  const watcher look = seen.look();
  x.each([&](double* in, const double* out, int peer, int tag) {
    if (in != nullptr) {
      reqs.emplace_back();
      MPI_Irecv(in, x.count, x.type, peer, tag, MPI_COMM_WORLD, &reqs.back());
    }
    if (out != nullptr) {
      reqs.emplace_back();
      MPI_Isend(out, x.count, x.type, peer, tag, MPI_COMM_WORLD, &reqs.back());
    }
  });
  const int n = static_cast<int>(reqs.size());
  auto work = [&](std::uint64_t u) {
    const double a = now_us();
    compute(u, &look);
    t.comp += now_us() - a;
  };
  t.done = -1;
  if (p.kind == pattern::sync) {
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    t.done = now_us() - t0;
    work(units);
  } else if (p.kind == pattern::async) {
    work(units);
  } else {
    const unsigned pieces = p.tests + 1;
    for (unsigned i = 0; i < pieces; ++i) {
      work(share(units, pieces, i));
      if (i < p.tests && t.done < 0) {
        int flag = 0;
        MPI_Testall(n, reqs.data(), &flag, MPI_STATUSES_IGNORE);
        if (flag) t.done = now_us() - t0;
      }
    }
  }
  if (t.done < 0) {
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    t.done = now_us() - t0;
  }
  t.et = now_us() - t0;
  t.arrived = seen.time(t.done);
  return t;
}

// One iteration with hytask, written as a user would: a task exchanges the messages (it
// suspends while they are in flight), then the compute is spawned as tasks beside it. No
// priority, no channel declaration: the runtime's order and learned communication class are
// what is measured.
times task_iteration(exchange& x, const pattern& p, std::uint64_t units, unsigned tasks) {
  x.arm();
  MPI_Barrier(MPI_COMM_WORLD);
  std::atomic<double> done{-1};
  std::atomic<std::int64_t> comp_ns{0};
  const double t0 = x.start();
  arrival seen;
  seen.x = &x;
  seen.t0 = t0;
  const watcher look = seen.look();
  hytask::spawn({.name = "exchange"}, [&] {
    std::vector<hytask::mpi::request> reqs;
    reqs.reserve(x.send.size() * 2);
    x.each([&](double* in, const double* out, int peer, int tag) {
      if (in != nullptr) reqs.push_back(hytask::mpi::irecv(in, x.count, x.type, peer, tag));
      if (out != nullptr) reqs.push_back(hytask::mpi::isend(out, x.count, x.type, peer, tag));
    });
    hytask::mpi::waitall(reqs);
    done.store(now_us() - t0);
  });
  if (p.kind == pattern::sync) hytask::wait_all();
  const unsigned pieces = p.kind == pattern::async_x ? p.tests + 1 : tasks;
  for (unsigned i = 0; i < pieces; ++i) {
    const std::uint64_t u = share(units, pieces, i);
    if (u == 0) continue;
    hytask::spawn({.name = "compute"}, [u, &comp_ns, &look] {
      const double a = now_us();
      compute(u, &look);
      comp_ns.fetch_add(static_cast<std::int64_t>((now_us() - a) * 1e3));
    });
  }
  hytask::wait_all();
  times t;
  t.et = now_us() - t0;
  t.done = done.load();
  t.comp = static_cast<double>(comp_ns.load()) * 1e-3;
  t.arrived = seen.time(t.done);
  return t;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double sum_over_ranks(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
double max_over_ranks(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr);
  return 0;
}

hytask::progress_policy policy_of(mode m) {
  switch (m) {
    case mode::hytask_thread: return hytask::progress_policy::thread;
    case mode::hytask_none: return hytask::progress_policy::none;
    case mode::hytask_node: return hytask::progress_policy::node;
    default: return hytask::progress_policy::workers;
  }
}

}  // namespace

std::vector<row> measure(const context& ctx, mode m, std::size_t bytes) {
  const options& opt = ctx.opt;
  exchange x(ctx, bytes);
  // Averages and maxima over the ranks that are timed: all in an exchange, the receivers in
  // a one-way order.
  const double weight = x.receives ? 1.0 : 0.0;
  const double timed_ranks = sum_over_ranks(weight);
  auto mean_timed = [&](double v) { return sum_over_ranks(v * weight) / timed_ranks; };
  auto max_timed = [&](double v) { return max_over_ranks(x.receives ? v : -1e300); };

  std::unique_ptr<hytask::runtime> rt;
  unsigned threads = 1;
  if (is_hytask(m)) {
    hytask::config cfg;
    cfg.progress = policy_of(m);
    rt = std::make_unique<hytask::runtime>(cfg);
    threads = rt->settings().threads;
  }
  auto iteration = [&](const pattern& p, std::uint64_t units) {
    if (!x.receives) units = 0;  // a one-way sender only sends
    unsigned tasks = opt.tasks;
    if (opt.task_us > 0)
      tasks = static_cast<unsigned>(std::max<long long>(
          1, std::llround(static_cast<double>(units) * ctx.unit_ns * 1e-3 / opt.task_us)));
    return rt ? task_iteration(x, p, units, tasks) : plain_iteration(x, p, units);
  };
  // Enough iterations for min_time, decided from the slowest rank so all agree.
  auto iterations_for = [&](double estimate_us) {
    const double need = std::ceil(opt.min_time * 1e6 / std::max(estimate_us, 1.0));
    return static_cast<unsigned>(std::clamp(need, static_cast<double>(opt.iters), 1e6));
  };
  const double cpu0 = cpu_seconds(), wall0 = now_us();
  const auto threads0 = thread_times();
  hytask::mpi::progress_counters counters0;
  if (rt) counters0 = hytask::mpi::progress_stats();

  const pattern comm_only{pattern::sync, 0};
  for (int i = 0; i < 2; ++i) iteration(comm_only, 0);  // connections, registration, pages
  const double first = max_over_ranks(iteration(comm_only, 0).et);
  const unsigned lat_iters = iterations_for(first);
  std::vector<double> lat;
  for (unsigned i = 0; i < lat_iters; ++i) lat.push_back(iteration(comm_only, 0).et);
  // Medians: on a shared machine a few iterations lose their core for a while.
  const double t_lat = mean_timed(median(lat));

  std::vector<row> rows;
  for (const pattern& p : opt.patterns) {
    row r;
    r.mpi = ctx.mpi;
    r.mode = name(m);
    r.pattern = p.label();
    r.layout = opt.layout();
    r.order = name(opt.direction);
    r.bytes = bytes;
    r.partners = opt.partners;
    r.messages = opt.messages;
    r.ranks = static_cast<unsigned>(ctx.size);
    r.nodes = ctx.nodes;
    r.threads = threads;
    r.t_lat_us = t_lat;
    for (double f : opt.steps) {
      if (ctx.progress)
        ctx.progress(std::string(name(m)) + " " + p.label() + ", compute " +
                     std::to_string(static_cast<int>(std::lround(f * 100))) + "% of T_lat");
      const auto units = static_cast<std::uint64_t>(std::llround(f * t_lat * 1e3 / ctx.unit_ns));
      const double planned = static_cast<double>(units) * ctx.unit_ns * 1e-3;
      const unsigned n = iterations_for(t_lat + planned);
      r.iterations = n;
      std::vector<double> et, done, comp, ratio, arrived;
      for (unsigned i = 0; i < n; ++i) {
        times t = iteration(p, units);
        et.push_back(t.et);
        done.push_back(t.done);
        arrived.push_back(t.arrived);
        comp.push_back(t.comp);
        // Eq. 4.2 with T_syn the time this iteration's compute took: how much of T_lat it hid.
        ratio.push_back((t.comp - (t.et - t_lat)) / t_lat);
      }
      const double et_med = median(et), comp_med = median(comp);
      step_result s;
      s.fraction = f;
      s.t_syn_us = mean_timed(comp_med);
      s.t_et_us = max_timed(et_med);
      s.overlap_pct = 100 * mean_timed(median(ratio));
      s.speed_pct = 100 * mean_timed(comp_med > 0 ? planned / comp_med : 1.0);
      s.done_us = mean_timed(median(done));
      s.arrived_us = mean_timed(median(arrived));
      // Eq. 4.1, T_diff = 1.1 T_lat - T_et >= 0, on every timed rank.
      s.within = max_timed(et_med <= 1.1 * t_lat ? 0.0 : 1.0) <= 0.0;
      r.steps.push_back(s);
    }
    // Seed 002: the overlap at the largest T_syn for which T_diff >= 0 on every rank. When
    // none qualifies (the exchange took over 1.1 T_lat beside any compute), the step nearest
    // T_syn = T_lat: there Eq. 4.2 is the classic (T_comm + T_comp - T_both) / T_comm, ~0
    // when nothing overlapped.
    r.chosen = r.steps.front();
    for (const auto& s : r.steps)
      if (std::abs(s.fraction - 1.0) < std::abs(r.chosen.fraction - 1.0)) r.chosen = s;
    bool any_within = false;
    for (const auto& s : r.steps)
      if (s.within && (!any_within || s.fraction > r.chosen.fraction)) {
        r.chosen = s;
        any_within = true;
      }
    rows.push_back(std::move(r));
  }
  const double wall_s = (now_us() - wall0) * 1e-6;
  const double cpu = (cpu_seconds() - cpu0) / wall_s;
  const double cpu_mean = sum_over_ranks(cpu) / ctx.size;
  const double rss = max_over_ranks(rss_kib());
  // Cores given to progress, per node: this rank's progress threads (and its node agent),
  // summed over the node's ranks, averaged over nodes.
  const thread_cpu used = thread_cpu_between(threads0, thread_times());
  const double mine = (used.progress_s + used.library_s) / wall_s;
  double node_sum = 0;
  MPI_Allreduce(&mine, &node_sum, 1, MPI_DOUBLE, MPI_SUM, ctx.node);
  int local = 0;
  MPI_Comm_rank(ctx.node, &local);
  const double progress_cores = sum_over_ranks(local == 0 ? node_sum : 0.0) /
                                sum_over_ranks(local == 0 ? 1.0 : 0.0);
  double counts[4] = {};
  if (rt) {
    const auto c = hytask::mpi::progress_stats();
    counts[0] = static_cast<double>(c.wakes - counters0.wakes);
    counts[1] = static_cast<double>(c.futile - counters0.futile);
    counts[2] = static_cast<double>(c.completed - counters0.completed);
    counts[3] = static_cast<double>(c.suppressed - counters0.suppressed);
  }
  for (double& v : counts) v = sum_over_ranks(v);
  for (auto& r : rows) {
    r.cpu_per_wall = cpu_mean;
    r.rss_kib = rss;
    r.progress_cores = progress_cores;
    r.wakes = static_cast<std::uint64_t>(counts[0]);
    r.futile = static_cast<std::uint64_t>(counts[1]);
    r.completed = static_cast<std::uint64_t>(counts[2]);
    r.suppressed = static_cast<std::uint64_t>(counts[3]);
  }
  if (rt) rt->shutdown();
  return rows;
}

}  // namespace overlap
