#include "rank.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "world.hpp"

namespace hytask::sim::detail {

rank_state::rank_state(world& w_, int r_)
    : w(w_), r(r_), eng(r_, w_.model.ranks(), *this, 2048), prog(w_.model.program(r_)),
      workers(static_cast<std::size_t>(w_.p.workers)) {
  for (std::size_t i = 1; i < workers.size(); ++i) workers[i].idle = true;
}

std::string rank_state::state() const {
  static const char* names[] = {"discovering", "blocked in fence", "in wait_all", "draining", "done"};
  std::ostringstream o;
  o << "rank " << r << ": main " << names[static_cast<int>(ms)] << ", phase " << eng.phase() << " matched "
    << eng.matched() << ", " << outstanding << " tasks not done (" << waiting_data << " transfers waiting for data), "
    << inbox.size() << " messages not handled";
  return o.str();
}

// ---- engine_host ---------------------------------------------------------------------------

void rank_state::send(int dest, std::vector<std::byte> buf) {
  gd::buffer_header h;
  if (gd::read_header(buf, h) && gd::in_a_round(h.round)) ++unacked[gd::round_key(h.round, h.epoch)];
  const auto bytes = static_cast<std::uint64_t>(buf.size());
  const message_times t = w.net.send(r, dest, bytes, w.now);
  ++res.messages;
  res.bytes += bytes;
  inbound m;
  m.source = r;
  m.buf = std::move(buf);
  w.deliver(dest, std::move(m), t.arrived);
}

void rank_state::release(void* p, std::uint16_t /*inherited: the simulated tasks never fail*/) {
  auto* t = static_cast<task*>(p);
  auto g = gated_by_phase.find(t->phase);
  if (g != gated_by_phase.end() && --g->second == 0) gated_by_phase.erase(g);
  t->gated = false;
  if (--t->pending == 0) make_ready(t);
}

void rank_state::remote_successor(void* p) {
  auto* t = static_cast<task*>(p);
  if (t->comm) return;
  t->comm = true;
  if (t->pending != 0 || t->started) return;
  // Ready already: it moves to the front class.
  if (auto it = std::find(ready.begin(), ready.end(), t); it != ready.end()) ready.erase(it);
  ready_comm.push_back(t);
}

// A tile above the eager limit goes by rendezvous, as MPI sends it: the owner's request to
// send is handled when the accessor polls (or posts its receive), and with a sender-driven
// protocol (TCP) the go-ahead again when the owner polls; only then does the tile cross.
void rank_state::push(int dest, std::uint64_t id, std::uint64_t key) {
  const std::uint64_t bytes = w.model.bytes(key);
  if (bytes <= w.p.eager_bytes) {
    send_data(dest, id, bytes);
    return;
  }
  rendezvous.emplace((id << 24) | static_cast<std::uint64_t>(dest), bytes);  // ids name accesses per accessor
  const message_times t = w.net.send(r, dest, control_bytes, w.now);
  ++res.messages;
  res.bytes += control_bytes;
  inbound m;
  m.k = inbound::kind::rts;
  m.source = r;
  m.value = id;
  w.deliver(dest, std::move(m), t.arrived);
}

// The tile leaves in pieces of at most pipeline_bytes (0: at once). After each piece but the
// last, the receiver must poll to take it (its socket buffer is full) and the sender must
// poll to write the next, as MPI over TCP moves a large message only from inside MPI calls.
void rank_state::send_data(int dest, std::uint64_t id, std::uint64_t bytes) {
  ++res.messages;
  res.bytes += bytes;
  send_piece(dest, id, bytes);
}

void rank_state::send_piece(int dest, std::uint64_t id, std::uint64_t left) {
  const std::uint64_t piece = w.p.pipeline_bytes == 0 ? left : std::min(left, w.p.pipeline_bytes);
  const message_times t = w.net.send(r, dest, piece, w.now);
  left -= piece;
  inbound m;
  m.source = r;
  m.value = id;
  if (left == 0) {
    const std::uint64_t packed = (id << 24) | static_cast<std::uint64_t>(dest);  // ids < 2^40, ranks < 2^24
    w.at(t.sent, [this, packed] {
      eng.push_sent(static_cast<int>(packed & 0xffffff), packed >> 24);
      dispatch();
    });
    m.k = inbound::kind::data;
  } else {
    m.k = inbound::kind::piece;
    m.count = left;
  }
  w.deliver(dest, std::move(m), t.arrived);
}

void rank_state::accept(task* t) {
  inbound m;
  m.k = inbound::kind::cts;
  m.source = r;
  m.value = t->xfer;
  if (w.p.sender_polls) {  // the go-ahead travels to the owner, who sends when it polls
    const message_times mt = w.net.send(r, t->owner, control_bytes, w.now);
    ++res.messages;
    res.bytes += control_bytes;
    w.deliver(t->owner, std::move(m), mt.arrived);
  } else {  // the accessor reads the tile (RDMA get): the owner's rank need not poll
    rank_state* owner = w.ranks[static_cast<std::size_t>(t->owner)].get();
    const std::uint64_t packed = (t->xfer << 24) | static_cast<std::uint64_t>(r);
    w.at(w.now + w.net.params().latency, [owner, packed] { owner->release_rendezvous(static_cast<int>(packed & 0xffffff), packed >> 24); });
  }
}

void rank_state::release_rendezvous(int dest, std::uint64_t id) {
  auto it = rendezvous.find((id << 24) | static_cast<std::uint64_t>(dest));
  if (it == rendezvous.end())
    throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " got a go-ahead for no tile");
  const std::uint64_t bytes = it->second;
  rendezvous.erase(it);
  send_data(dest, id, bytes);
}

// ---- main: discovery -----------------------------------------------------------------------

void rank_state::step_main() {
  if (ms != main_state::discovering) return;
  if (!prog.next()) {
    ms = main_state::done;
    done_at = w.now;
    ++w.done;
    go_idle(0);
    return;
  }
  const op& o = prog.value();
  switch (o.k) {
    case op::kind::spawn: {
      const std::uint64_t before = res.tasks + outstanding;
      spawn(o);
      const double spawned = static_cast<double>(res.tasks + outstanding - before);
      w.at(w.now + w.p.spawn * std::max(spawned, 1.0), [this] { step_main(); });
      return;
    }
    case op::kind::fence:
      close_round();
      ms = main_state::fence;
      break;
    case op::kind::wait_all:
      close_round();
      ms = main_state::wait_all;
      break;
  }
  check_main();  // main goes on at once when the window allows it
  if (ms != main_state::discovering) go_idle(0);
}

void rank_state::close_round() {
  const std::uint32_t round = eng.fence();
  join_when_acknowledged(gd::round_key(round, eng.epoch()));
}

// A rank joins a round's collective once every buffer of the round it sent has been handled
// by its receiver (acknowledged).
void rank_state::join_when_acknowledged(std::uint64_t key) {
  if (unacked.count(key)) {
    to_join[key] = true;
    return;
  }
  w.join(key);
}

bool rank_state::copyin_needed(std::uint64_t buf, std::uint64_t key) {
  if (copyin_phase != eng.phase()) {
    copyins.clear();
    copyin_of.clear();
    copyin_phase = eng.phase();
  }
  auto [it, fresh] = copyins.try_emplace(buf, key);
  if (!fresh && it->second == key) return false;
  it->second = key;
  copyin_of[key].push_back(buf);
  return true;
}

void rank_state::copyin_written(std::uint64_t key) {
  if (copyin_phase != eng.phase()) return;
  auto it = copyin_of.find(key);
  if (it == copyin_of.end()) return;
  for (std::uint64_t buf : it->second) {
    auto c = copyins.find(buf);
    if (c != copyins.end() && c->second == key) copyins.erase(c);
  }
  copyin_of.erase(it);
}

void rank_state::spawn(const op& o) {
  std::vector<decl> mine;
  for (const access& a : o.accesses) {
    switch (a.m) {
      case mode::in: mine.push_back({a.where, false}); break;
      case mode::inout: mine.push_back({a.where, true}); break;
      case mode::copyin_r:
        if (a.where.owner == r) {
          mine.push_back({a.where, false});
          break;
        }
        [[fallthrough]];
      case mode::copyin:
        if (copyin_needed(a.buffer.key, a.where.key)) {
          const bool remote = a.where.owner != r;
          task* t = make_task(remote ? transfer_kernel : copy_kernel,
                              {decl{a.where, false, remote}, decl{a.buffer, true}}, a.where.bytes);
          (void)t;
        }
        mine.push_back({a.buffer, false});
        break;
    }
  }
  make_task(o.kernel, mine, 0);
  for (const decl& d : mine)
    if (d.write && d.where.owner >= 0) copyin_written(d.where.key);
}

task* rank_state::make_task(int kernel, const std::vector<decl>& accesses, std::uint64_t bytes) {
  task* t = new_task();
  t->kernel = kernel;
  t->bytes = bytes;
  t->phase = eng.phase();
  if (kernel == transfer_kernel) {
    t->comm = true;
    ++res.transfers;
  }
  ++outstanding;
  res.peak_live_tasks = std::max(res.peak_live_tasks, outstanding);
  auto edge = [&](task* pred) {
    if (pred == nullptr || pred == t) return;
    pred->succ.push_back(t);
    ++t->pending;
  };
  bool global = false;
  for (const decl& d : accesses) {
    global |= d.where.owner >= 0;
    tracker_entry& e = tracker[d.where.key];
    edge(e.writer);
    if (!d.write) {
      e.readers.push_back(t);
    } else {
      for (task* rd : e.readers) edge(rd);
      e.readers.clear();
      e.writer = t;
    }
    t->keys.emplace_back(d.where.key, d.write);
  }
  if (global) {
    bool gated = false;
    t->rec = eng.begin_task(t, gated);
    if (gated) {
      t->gated = true;
      ++t->pending;
      ++gated_by_phase[t->phase];
    }
    for (const decl& d : accesses) {
      if (d.where.owner < 0) continue;
      const std::uint64_t id = eng.add_access(t->rec, gd::location{d.where.owner, d.where.key},
                                              d.write ? gd::dep_kind::out : gd::dep_kind::in, d.push);
      if (d.push) {
        t->xfer = id;
        t->owner = d.where.owner;
        transfers.emplace(id, t);
      }
    }
  }
  if (--t->pending == 0) make_ready(t);
  return t;
}

// ---- workers ---------------------------------------------------------------------------------

void rank_state::make_ready(task* t) {
  (t->comm ? ready_comm : ready).push_back(t);
  dispatch();
}

task* rank_state::pop() {
  for (auto* q : {&ready_comm, &ready}) {
    if (q->empty()) continue;
    task* t = q->front();
    q->pop_front();
    return t;
  }
  return nullptr;
}

void rank_state::dispatch() {
  for (int i = 0; i < static_cast<int>(workers.size()); ++i) {
    if (!available(i)) continue;
    task* t = pop();
    if (t == nullptr) return;
    wake(i);
    start(i, t);
  }
}

void rank_state::start(int i, task* t) {
  t->started = true;
  workers[static_cast<std::size_t>(i)].cur = t;
  w.run_task(this, i, t);
}

void rank_state::finished(int i, task* t) {
  w.task_left_cpu(this, i);
  res.busy += w.now - t->started_at;
  workers[static_cast<std::size_t>(i)].cur = nullptr;
  if (t->kernel == transfer_kernel) {
    t->posted = true;
    if (t->arrived) {
      complete(t);
    } else {
      ++waiting_data;
      if (t->announced) accept(t);  // posting the receive matches the waiting request
    }
  } else {
    complete(t);
  }
  // A task switch: the worker polls.
  if (!inbox.empty()) poll();
  if (i == 0 && ms != main_state::discovering && ms != main_state::done) {
    check_main();
    if (ms == main_state::discovering) return;  // main went back to its program
  }
  if (i == 0 && ms == main_state::discovering) return;
  if (task* n = pop()) {
    start(i, n);
    return;
  }
  go_idle(i);
}

void rank_state::complete(task* t) {
  for (task* s : t->succ)
    if (--s->pending == 0) make_ready(s);
  for (const auto& [key, write] : t->keys) {
    auto it = tracker.find(key);
    if (it == tracker.end()) continue;
    tracker_entry& e = it->second;
    if (e.writer == t) e.writer = nullptr;
    if (!write) std::erase(e.readers, t);
    if (e.writer == nullptr && e.readers.empty()) tracker.erase(it);
  }
  if (t->rec) eng.task_completed(t->rec, 0);
  --outstanding;
  ++res.tasks;
  free_task(t);
  check_main();
}

idle_reason rank_state::judge() const {
  if (waiting_data > 0) return idle_reason::data;
  if (!gated_by_phase.empty())
    return gated_by_phase.begin()->first < eng.matched() ? idle_reason::release : idle_reason::matching;
  if (outstanding > 0) return idle_reason::local;
  if (ms == main_state::discovering || ms == main_state::fence) return idle_reason::discovery;
  return idle_reason::end;
}

void rank_state::go_idle(int i) {
  worker& wk = workers[static_cast<std::size_t>(i)];
  if (wk.idle) return;
  wk.idle = true;
  wk.idle_since = w.now;
  wk.why = judge();
  dispatch();
}

void rank_state::wake(int i) {
  worker& wk = workers[static_cast<std::size_t>(i)];
  if (!wk.idle) return;
  wk.idle = false;
  res.idle[static_cast<int>(wk.why)] += w.now - wk.idle_since;
}

// ---- messages and progress ---------------------------------------------------------------------

void rank_state::arrive(inbound m) {
  inbox.push_back(std::move(m));
  for (int i = 0; i < static_cast<int>(workers.size()); ++i)
    if (available(i)) {
      poll();  // an idle worker polls at once
      return;
    }
  if (backstop_armed) return;
  backstop_armed = true;
  w.at(w.now + w.p.backstop, [this] {
    backstop_armed = false;
    if (!inbox.empty()) poll();
  });
}

void rank_state::poll() {
  std::vector<inbound> items;
  items.swap(inbox);
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> acks;  // (source, round key) -> buffers
  for (inbound& m : items) {
    switch (m.k) {
      case inbound::kind::buffer: {
        gd::buffer_header h;
        const bool counted = gd::read_header(m.buf, h) && gd::in_a_round(h.round);
        eng.receive(m.source, m.buf);
        if (counted) {
          const std::uint64_t key = gd::round_key(h.round, h.epoch);
          ++handled[key];
          ++acks[{m.source, key}];
        }
        break;
      }
      case inbound::kind::ack: {
        auto it = unacked.find(m.value);
        if (it == unacked.end() || it->second < m.count)
          throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " got an acknowledgement it did not expect");
        if ((it->second -= m.count) == 0) {
          unacked.erase(it);
          if (to_join.erase(m.value)) w.join(m.value);
        }
        break;
      }
      case inbound::kind::data: {
        auto it = transfers.find(m.value);
        if (it == transfers.end())
          throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " received data no transfer waits for");
        task* t = it->second;
        transfers.erase(it);
        t->arrived = true;
        if (t->posted) {
          --waiting_data;
          complete(t);
        }
        break;
      }
      case inbound::kind::rts: {
        auto it = transfers.find(m.value);
        if (it == transfers.end())
          throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " got a request to send no transfer waits for");
        it->second->announced = true;
        if (it->second->posted) accept(it->second);
        break;
      }
      case inbound::kind::cts:
        release_rendezvous(m.source, m.value);
        break;
      case inbound::kind::piece: {  // taken: the sender may write the next piece when it polls
        inbound more;
        more.k = inbound::kind::more;
        more.source = r;
        more.value = m.value;
        more.count = m.count;
        w.deliver(m.source, std::move(more), w.now + w.net.params().latency);
        break;
      }
      case inbound::kind::more:
        send_piece(m.source, m.value, m.count);
        break;
      case inbound::kind::round_end: {
        std::uint64_t n = 0;
        if (auto it = handled.find(m.value); it != handled.end()) {
          n = it->second;
          handled.erase(it);
        }
        const auto round = static_cast<std::uint32_t>(m.value & 0xffffffffu);
        if (round == gd::drain_round) {
          eng.expect_drain(n);
          drain_expected = true;
        } else {
          round_results[round] = n;
        }
        break;
      }
    }
  }
  // One acknowledgement per sender and round for what this poll handled.
  for (const auto& [who, n] : acks) {
    const message_times t = w.net.send(r, who.first, sizeof(gd::buffer_header), w.now);
    ++res.messages;
    res.bytes += sizeof(gd::buffer_header);
    inbound a;
    a.k = inbound::kind::ack;
    a.value = who.second;
    a.count = n;
    w.deliver(who.first, std::move(a), t.arrived);
  }
  try_match();
  check_main();
  dispatch();
}

void rank_state::try_match() {
  for (;;) {
    const std::uint32_t m = eng.matched();
    if (m >= eng.phase()) return;
    auto it = round_results.find(m);
    if (it != round_results.end()) {
      eng.expect(m, it->second);
      round_results.erase(it);
    }
    if (!eng.round_complete(m)) return;
    eng.match(m);
  }
}

void rank_state::check_main() {
  switch (ms) {
    case main_state::fence:
      if (eng.active_phases() >= w.p.window) return;
      break;
    case main_state::wait_all:
      if (outstanding != 0 || eng.matched() != eng.phase()) return;
      ms = main_state::draining;
      drain_expected = false;
      eng.drain();
      join_when_acknowledged(gd::round_key(gd::drain_round, eng.epoch()));
      return;
    case main_state::draining:
      if (!drain_expected || !eng.drained()) return;
      eng.reset();
      break;
    case main_state::discovering:
    case main_state::done:
      return;
  }
  // Main returns to its program once the task it runs, if any, is done.
  if (workers[0].cur != nullptr) {
    if (ms == main_state::draining) ms = main_state::fence;  // resumes like a fence
    return;
  }
  wake(0);
  ms = main_state::discovering;
  w.at(w.now, [this] { step_main(); });
}

}  // namespace hytask::sim::detail
