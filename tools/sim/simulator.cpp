#include "simulator.hpp"

#include <algorithm>
#include <stdexcept>

#include "world.hpp"

namespace hytask::sim {

const char* name(idle_reason r) {
  switch (r) {
    case idle_reason::data: return "data in flight";
    case idle_reason::release: return "owner's release";
    case idle_reason::matching: return "matching round";
    case idle_reason::local: return "local predecessors";
    case idle_reason::discovery: return "discovery";
    case idle_reason::end: return "end of work";
    case idle_reason::count: break;
  }
  return "?";
}

namespace detail {

void world::schedule_finish(rank_state* rs, int i, double at_time) {
  const std::uint64_t v = (++rs->workers[static_cast<std::size_t>(i)].version << 16) | static_cast<std::uint64_t>(i);
  at(at_time, [rs, v] {
    const auto wi = static_cast<std::size_t>(v & 0xffff);
    if (rs->workers[wi].version == v >> 16) rs->finished(static_cast<int>(wi), rs->workers[wi].cur);
  });
}

}  // namespace detail

result simulate(const app_model& model, const params& p) {
  if (p.workers < 1) throw std::invalid_argument("hytask-sim: workers must be at least 1");
  if (p.kernel_seconds.size() != model.kernels().size())
    throw std::invalid_argument("hytask-sim: " + std::to_string(p.kernel_seconds.size()) + " kernel times for " +
                                std::to_string(model.kernels().size()) + " kernels");
  detail::world w(model, p);
  w.run();
  result res;
  for (const auto& r : w.ranks) res.seconds = std::max(res.seconds, r->done_at);
  res.seconds += w.net.round_cost(model.ranks());  // wait_all's barrier
  res.events = w.events;
  res.rounds = w.rounds_done;
  for (auto& r : w.ranks) {
    for (auto& wk : r->workers)
      if (wk.idle) r->res.idle[static_cast<int>(idle_reason::end)] += res.seconds - wk.idle_since;
    res.tasks += r->res.tasks;
    res.ranks.push_back(r->res);
  }
  return res;
}

}  // namespace hytask::sim
