#include "global/engine.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "platform/assert.hpp"

namespace hytask::global::detail {

engine::engine(int rank, int nranks, engine_host& host, std::size_t max_records)
    : rank_(rank),
      nranks_(nranks),
      host_(host),
      max_records_(max_records == 0 ? 1 : max_records),
      home_(rank, [this](std::uint64_t key) { return host_.describe(key); }) {}

engine::~engine() {
  for (auto& [phase, list] : gated_)
    for (task_record* t : list) delete t;
}

std::uint32_t engine::matched() const {
  std::lock_guard lk(mu_);
  return matched_;
}

std::uint32_t engine::active_phases() const {
  std::lock_guard lk(mu_);
  HYTASK_ASSERT(matched_ <= phase_, "matched phases never exceed the fenced (closed) ones");
  std::uint32_t oldest = matched_;
  if (!live_.empty()) oldest = std::min(oldest, live_.begin()->first);
  return phase_ - oldest;
}

task_record* engine::begin_task(void* task, bool& gated) {
  auto* t = new task_record;
  t->task = task;
  std::lock_guard lk(mu_);
  HYTASK_ASSERT(first_ <= phase_, "the first phase of an epoch is never ahead of discovery");
  t->phase = phase_;
  ++live_[phase_];
  // Held by the matching of its phase, which cannot happen before the phase closes, so its
  // accesses' B records can be added to the gate as they are declared.
  gated = phase_ > first_;
  if (gated) {
    t->gate = 1;
    gated_[t->phase].push_back(t);
  }
  return t;
}

std::uint64_t engine::add_access(task_record* t, location where, dep_kind k, bool push) {
  actions a;
  std::uint64_t id = 0;
  {
    std::lock_guard lk(mu_);
    HYTASK_ASSERT(t->phase == phase_,
                  "a task declares all its accesses in the phase it began in (discovery and "
                  "fence are main's, one after the other)");
    if (where.owner == rank_) {
      t->owned.push_back(home_.add_local(t, where.key, k, phase_, seq_++));
      return 0;
    }
    id = next_id_++;
    t->remote.push_back({where.owner, id});
    outbox& box = announce_[where.owner];
    box.push(record{msg_type::announce, k, push ? flag_push : std::uint16_t{0}, phase_, where.key, id, seq_++});
    ++stats_.announces_sent;
    if (phase_ > first_) {
      HYTASK_ASSERT(t->gate > 0, "a gated task holds its phase's share of its gate until matching: "
                                 "a B record is added to a gate that has not opened");
      ++t->gate;  // its B record
      awaiting_b_.emplace(id, t);
    }
    if (box.size() >= max_records_) {
      box.flush(phase_, epoch_, max_records_, [&](std::vector<std::byte>&& b) {
        a.out.emplace_back(where.owner, std::move(b));
        ++stats_.buffers_sent;
      });
    }
  }
  deliver(a);
  return id;
}

void engine::push_sent(int accessor, std::uint64_t id) {
  actions a;
  {
    std::lock_guard lk(mu_);
    effects fx;
    home_.push_sent(accessor, id, fx);
    act(fx, a);
    flush_bc(a.out);
  }
  deliver(a);
}

std::vector<std::string> engine::take_conflicts() {
  std::lock_guard lk(mu_);
  return home_.take_conflicts();
}

void engine::task_completed(task_record* t, std::uint16_t ended) {
  actions a;
  {
    std::lock_guard lk(mu_);
    effects fx;
    for (node* n : t->owned) home_.complete_local(n, ended, fx);
    for (const auto& r : t->remote) {
      stage(c_, r.owner, record{msg_type::complete, dep_kind::in, ended, 0, 0, r.id, 0});
      ++stats_.completions_sent;
    }
    HYTASK_ASSERT(t->gate == 0,
                  "a task completes only after its gate opened (host.release): matching, B "
                  "records and predecessors of other ranks were all counted out");
    auto live = live_.find(t->phase);
    HYTASK_ASSERT(live != live_.end() && live->second > 0,
                  "a task record is completed once, in the phase it was counted in");
    if (--live->second == 0) live_.erase(live);
    delete t;
    act(fx, a);
    flush_bc(a.out);
  }
  deliver(a);
}

std::uint32_t engine::fence() {
  actions a;
  std::uint32_t round;
  {
    std::lock_guard lk(mu_);
    round = phase_;
    for (auto& [r, box] : announce_) {  // the owners this rank announced to
      const int owner = r;
      box.flush(phase_, epoch_, max_records_, [&](std::vector<std::byte>&& b) {
        a.out.emplace_back(owner, std::move(b));
        ++stats_.buffers_sent;
      });
    }
    phase_.store(phase_ + 1, std::memory_order_release);
    HYTASK_ASSERT(phase_ > round, "phases advance one at a time, in order");
  }
  deliver(a);
  return round;
}

std::uint32_t engine::epoch() const {
  std::lock_guard lk(mu_);
  return epoch_;
}

void engine::expect(std::uint32_t round, std::uint64_t buffers) {
  std::lock_guard lk(mu_);
  HYTASK_ASSERT(round < phase_ && round >= matched_,
                "only a fenced round that is not matched yet ends");
  round_state& r = rounds_[round];
  HYTASK_ASSERT(!r.expected, "a round ends once");
  HYTASK_ASSERT(r.got <= buffers, "a round's end counts at least the buffers already handled");
  r.expected = true;
  r.want = buffers;
}

bool engine::round_complete(std::uint32_t round) const {
  std::lock_guard lk(mu_);
  auto it = rounds_.find(round);
  return it != rounds_.end() && it->second.expected && it->second.got == it->second.want;
}

void engine::match(std::uint32_t round) {
  actions a;
  {
    std::lock_guard lk(mu_);
    auto it = rounds_.find(round);
    if (round != matched_ || round >= phase_ || it == rounds_.end() || !it->second.expected ||
        it->second.got != it->second.want)
      throw std::logic_error("hytask: internal error: phase " + std::to_string(round) +
                             " matched out of turn (next " + std::to_string(matched_) + ")");
    effects fx;
    home_.match(round, round == first_, fx);
    rounds_.erase(it);
    ++matched_;
    HYTASK_ASSERT(matched_ <= phase_, "matched phases never exceed the fenced ones");
    auto g = gated_.find(round);
    if (g != gated_.end()) {
      host_.phase_matched(g->second.size());
      for (task_record* t : g->second) {
        HYTASK_ASSERT(t->phase == round && t->gate > 0,
                      "a gated task keeps its phase's share until its phase is matched, once");
        if (--t->gate == 0) fx.ready.push_back(t);
      }
      gated_.erase(g);
    }
    act(fx, a);
    flush_bc(a.out);
  }
  deliver(a);
}

void engine::receive(int source, std::span<const std::byte> buf) {
  buffer_header h;
  std::vector<record> recs;
  if (!parse(buf, h, recs))
    throw std::runtime_error("hytask: internal error: a global-dependency message of " +
                             std::to_string(buf.size()) + " bytes from rank " +
                             std::to_string(source) + " is malformed");
  actions a;
  {
    std::lock_guard lk(mu_);
    if (h.epoch != epoch_) {
      // From a rank that finished this wait_all and went on: for after our reset.
      stashed_.emplace_back(source, std::vector<std::byte>(buf.begin(), buf.end()));
      return;
    }
    take(source, h, recs, a);
    flush_bc(a.out);
  }
  deliver(a);
}

void engine::take(int source, const buffer_header& h, const std::vector<record>& recs, actions& a) {
  if (h.round != drain_round) ++stats_.buffers_received;  // the protocol's (D: the drain's)
  if (h.round == completion_round) ++c_received_;
  else if (h.round == drain_round) ++d_received_;
  else if (h.round != release_round) {
    HYTASK_ASSERT(h.round >= matched_, "no buffer of a matched round is still on its way");
    round_state& rs = rounds_[h.round];
    ++rs.got;
    HYTASK_ASSERT(!rs.expected || rs.got <= rs.want,
                  "a round's buffers never exceed the count its end reported");
  }
  HYTASK_ASSERT(!drain_expected_ || d_received_ <= d_want_,
                "D buffers never exceed the count the drain round's end reported");
  effects fx;
  for (const record& r : recs) {
    switch (r.type) {
      case msg_type::announce:
        home_.add_remote(source, r);
        break;
      case msg_type::release: {
        auto it = awaiting_b_.find(r.id);
        if (it == awaiting_b_.end())
          throw std::logic_error("hytask: internal error: rank " + std::to_string(source) +
                                 " released an access that does not wait");
        task_record* t = it->second;
        awaiting_b_.erase(it);
        HYTASK_ASSERT(t->gate > 0, "a B record opens one share of its task's gate: the gate "
                                   "never goes below zero");
        t->inherited |= r.flags;
        if (--t->gate == 0) fx.ready.push_back(t);
        break;
      }
      case msg_type::complete:
        home_.complete_remote(source, r.id, r.flags, fx);
        break;
      case msg_type::drained:
        c_want_ += r.id;
        break;
      default:
        throw std::logic_error("hytask: internal error: unknown global-dependency record");
    }
  }
  act(fx, a);
}

void engine::act(effects& fx, actions& a) {
  for (task_record* t : fx.remote_succ) host_.remote_successor(t->task);
  for (const release_order& b : fx.releases) {
    stage(b_, b.rank, record{msg_type::release, dep_kind::in, b.flags, 0, 0, b.id, 0});
    ++stats_.releases_sent;
  }
  stats_.pushes += fx.pushes.size();
  a.pushes.insert(a.pushes.end(), fx.pushes.begin(), fx.pushes.end());
  for (task_record* t : fx.ready) a.ready.emplace_back(t->task, t->inherited);
}

void engine::stage(peer_boxes& boxes, int rank, const record& rec) {
  outbox& box = boxes[rank];
  if (box.empty()) staged_ranks_.push_back(rank);  // once per box until it is flushed
  box.push(rec);
}

// Only the ranks with records staged since the last flush: an event costs what it sends,
// not a look at every rank of the job.
void engine::flush_bc(outgoing& out) {
  for (const int r : staged_ranks_) {
    auto rb = b_.find(r);
    if (rb != b_.end() && !rb->second.empty())
      rb->second.flush(release_round, epoch_, max_records_, [&](std::vector<std::byte>&& b) {
        out.emplace_back(r, std::move(b));
        ++stats_.buffers_sent;
      });
    auto rc = c_.find(r);
    if (rc != c_.end() && !rc->second.empty())
      rc->second.flush(completion_round, epoch_, max_records_, [&](std::vector<std::byte>&& b) {
        out.emplace_back(r, std::move(b));
        ++c_sent_[r];  // a peer written to: its box exists already
        ++stats_.buffers_sent;
      });
  }
  staged_ranks_.clear();
}

void engine::deliver(actions& a) {
  for (auto& [dest, b] : a.out) host_.send(dest, std::move(b));
  for (const push_order& p : a.pushes) host_.push(p.rank, p.id, p.key);
  for (const auto& [t, inherited] : a.ready) host_.release(t, inherited);
}

// One D buffer per rank this rank sent C buffers to since the last drain: what the drain
// costs grows with the peers a rank wrote to, not with the ranks of the job.
std::size_t engine::drain() {
  actions a;
  {
    std::lock_guard lk(mu_);
    HYTASK_ASSERT(live_.empty(), "a drain starts once this rank's tasks have all completed: "
                                 "no C record may follow the counts the D records carry");
    for (const auto& [r, n] : c_sent_) {
      outbox box;
      box.push(record{msg_type::drained, dep_kind::in, 0, 0, 0, n, 0});
      const int dest = r;
      box.flush(drain_round, epoch_, max_records_,
                [&](std::vector<std::byte>&& b) { a.out.emplace_back(dest, std::move(b)); });
    }
    c_sent_.clear();
  }
  deliver(a);
  return a.out.size();
}

void engine::expect_drain(std::uint64_t buffers) {
  std::lock_guard lk(mu_);
  HYTASK_ASSERT(!drain_expected_ && d_received_ <= buffers,
                "the drain round ends once, counting at least the D buffers already handled");
  d_want_ = buffers;
  drain_expected_ = true;
}

bool engine::drained() const {
  std::lock_guard lk(mu_);
  return drain_expected_ && d_received_ == d_want_ && c_received_ == c_want_;
}

void engine::reset() {
  outgoing stash;
  {
    std::lock_guard lk(mu_);
    if (live_.empty()) home_.end_epoch();  // chains kept for cancelled or failed accesses
    if (!drain_expected_ || d_received_ != d_want_ || c_received_ != c_want_ || !home_.idle() ||
        !live_.empty() || !awaiting_b_.empty() || !gated_.empty() || !rounds_.empty() ||
        matched_ != phase_)
      throw std::logic_error(
          "hytask: internal error: global-dependency state left after wait_all (" +
          std::to_string(home_.nodes()) + " nodes, " + std::to_string(live_tasks()) +
          " tasks, phase " + std::to_string(phase_) + " matched " + std::to_string(matched_) +
          ")");
    c_received_ = c_want_ = d_received_ = d_want_ = 0;
    drain_expected_ = false;
    first_ = phase_;
    ++epoch_;
    // The peers' boxes are empty now: drop them, so that they hold the peers of one epoch.
    for (peer_boxes* boxes : {&announce_, &b_, &c_})
      std::erase_if(*boxes, [](const auto& entry) { return entry.second.empty(); });
    stash.swap(stashed_);
  }
  for (auto& [source, b] : stash) receive(source, b);
}

std::size_t engine::live_tasks() const {
  std::size_t n = 0;
  for (const auto& [phase, count] : live_) n += count;
  return n;
}

engine_stats engine::stats() const {
  std::lock_guard lk(mu_);
  engine_stats s = stats_;
  s.records_alive = live_tasks();
  s.nodes_alive = home_.nodes();
  s.chains_alive = home_.chains();
  return s;
}

}  // namespace hytask::global::detail
