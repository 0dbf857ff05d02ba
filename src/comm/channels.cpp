// Channels (comm/channels.hpp): the tokens tasks declare on, never handed out twice, and the
// order check of each post against the earlier posts of its task's siblings on the same channel.
#include "comm/channels.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/face.hpp"
#include "hytask/errors.hpp"
#include "platform/messages.hpp"

namespace hytask::mpi::detail {

namespace {

struct channel_key {
  std::uint64_t comm;
  int peer, tag;  // -1, -1 for collectives
  bool operator==(const channel_key&) const = default;
};

struct channel_hash {
  std::size_t operator()(const channel_key& k) const noexcept {
    return static_cast<std::size_t>((k.comm * 0x9E3779B97F4A7C15ull) ^
                                    (static_cast<std::uint64_t>(static_cast<unsigned>(k.peer)) << 32) ^
                                    static_cast<unsigned>(k.tag));
  }
};

// Per channel, per direction ([0] sends and collectives, [1] receives and probes).
struct channel_entry {
  const char* token = nullptr;
  std::uint64_t declared_seq = 0;      // spawn position of the sibling that declared it last
  std::uint64_t last_seq[2] = {0, 0};  // spawn position of the sibling that posted last
  const char* last_name[2] = {nullptr, nullptr};
  bool warned = false;
};

// The channels used by one task's children. When the table outgrows its mark it is swept of
// entries whose last post is more than `window` spawns old (a sibling spawned that long
// before is almost surely done) and, for declared channels, whose token no unfinished task
// holds (a later declaration then takes a fresh token, which orders nothing it need not):
// memory stays bounded when a task's children use ever new channels (tags numbered by
// step, say) before its wait_all. Only the spawning thread sweeps declared entries: it owns
// the tracker that knows who holds a token.
struct channel_scope {
  static constexpr std::uint64_t window = 1 << 13;
  static constexpr std::size_t first_mark = 1 << 12;
  std::mutex mutex;
  std::unordered_map<channel_key, channel_entry, channel_hash> entries;
  std::size_t sweep_mark = first_mark;

  // owner: the task whose children these are, when the caller spawns for it; else null.
  void sweep(std::uint64_t now, core::task* owner) {
    for (auto it = entries.begin(); it != entries.end();) {
      const channel_entry& e = it->second;
      const bool old = std::max({e.declared_seq, e.last_seq[0], e.last_seq[1]}) + window < now;
      const bool held = e.token != nullptr &&
                        (owner == nullptr || core::scope_region_busy(owner, e.token, 2));
      if (old && !held)
        it = entries.erase(it);
      else
        ++it;
    }
    sweep_mark = std::max(first_mark, 2 * entries.size());
  }
};

std::uint64_t comm_key(MPI_Comm c) {
  std::uint64_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}

// Tokens: two bytes each, from 16 GiB of address space reserved without access or memory.
class token_range {
 public:
  const char* next() {
    const std::uint64_t i = count_.fetch_add(1, std::memory_order_relaxed);
    return base_ + (2 * i) % bytes_;
  }
  token_range() {
    void* p = mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      // No address space to spare: fall back to a heap block (tokens may then repeat after
      // its size, which only adds ordering between channels declared far apart).
      bytes_ = std::size_t(1) << 20;
      p = new char[bytes_];
    }
    base_ = static_cast<const char*>(p);
  }

 private:
  std::size_t bytes_ = std::size_t(16) << 30;
  const char* base_ = nullptr;
  std::atomic<std::uint64_t> count_{0};
};

token_range& tokens() {
  static token_range* r = new token_range;  // lives as long as the process
  return *r;
}

void release_scope(void* s) { delete static_cast<channel_scope*>(s); }

channel_scope& scope_of(core::task* t) {
  if (void* s = core::scope_ext(t)) return *static_cast<channel_scope*>(s);
  auto* fresh = new channel_scope;
  void* in_place = core::install_scope_ext(t, fresh);
  if (in_place != fresh) delete fresh;
  return *static_cast<channel_scope*>(in_place);
}

channel_key key_of(MPI_Comm comm, int peer, int tag, bool collective) {
  return channel_key{comm_key(comm), collective ? -1 : peer, collective ? -1 : tag};
}

std::string channel_words(const operation* op, bool coll, int dir) {
  if (coll) return "collectives on one communicator";
  return std::string(dir ? "receives from rank " : "sends to rank ") + std::to_string(op->peer) +
         " (tag " + std::to_string(op->tag) + ")";
}

std::string ordinal(std::uint64_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    else if (n % 10 == 2) suffix = "nd";
    else if (n % 10 == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

}  // namespace

void install_channel_state_release() { core::set_scope_release(&release_scope); }

const char* declare_channel(MPI_Comm comm, int peer, int tag, bool collective) {
  core::task* scope = core::spawning_scope();
  if (scope == nullptr)
    throw usage_error(
        "hytask::mpi: channels are declared for a spawn, from main or from inside a task; "
        "this thread is neither");
  channel_scope& s = scope_of(scope);
  std::lock_guard<std::mutex> lock(s.mutex);
  channel_entry& e = s.entries[key_of(comm, peer, tag, collective)];
  if (e.token == nullptr) e.token = tokens().next();
  const std::uint64_t seq = scope->children_spawned + 1;  // the spawn this is for
  e.declared_seq = seq;
  const char* token = e.token;
  if (s.entries.size() > s.sweep_mark) s.sweep(seq, scope);
  return token;
}

void check_post_order(const operation* op, hytask::order_check mode, int rank) {
  if (mode == hytask::order_check::off) return;
  // Posted by the program, where hytask did not see it; or a call the check has no channel
  // for (custom: the direction and whether it is collective are the caller's).
  // A matched probe takes whichever message matches and learns its size, so tasks that probe
  // one channel in any order each get a whole message; its receive is already matched.
  if (op->what == kind::adopted || op->what == kind::custom || op->what == kind::polled ||
      op->what == kind::mprobe || op->what == kind::mrecv)
    return;
  const bool coll = is_collective(op->what);
  if (!coll && (op->peer < 0 || op->tag < 0)) return;  // wildcards and MPI_PROC_NULL
  core::task* me = core::current_task();
  if (me == nullptr || me->parent == nullptr || me->spawn_seq == 0) return;  // main, loops
  const int dir = coll ? 0
                       : (op->what == kind::recv || op->what == kind::probe ||
                                  op->what == kind::start_recv
                              ? 1
                              : 0);
  const std::uint64_t seq = me->spawn_seq;
  channel_scope& s = scope_of(me->parent);
  std::uint64_t later_seq = 0;
  const char* later_name = nullptr;
  bool report = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    channel_entry& e = s.entries[key_of(op->comm, op->peer, op->tag, coll)];
    if (seq >= e.last_seq[dir]) {
      e.last_seq[dir] = seq;
      e.last_name[dir] = op->task_name;
      if (s.entries.size() > s.sweep_mark) s.sweep(seq, nullptr);
      return;
    }
    later_seq = e.last_seq[dir];
    later_name = e.last_name[dir];
    const bool fails = coll || mode == hytask::order_check::error;
    report = fails || !e.warned;
    if (!fails) e.warned = true;
  }
  if (!report) return;
  const std::string msg =
      std::string("task '") +
      (op->task_name ? op->task_name : "(unnamed)") + "' (spawned " + ordinal(seq) +
      " by its parent) posts " + mpi_call_name(op->what) + " after task '" +
      (later_name ? later_name : "(unnamed)") + "' (spawned " + ordinal(later_seq) +
      ") posted on the same channel, " + channel_words(op, coll, dir) +
      ": MPI matches a channel in posting order, so these tasks " +
      (coll ? "would meet other ranks' collectives in a different order (a hang or mixed-up data)"
            : "do not get the messages their spawn order says") +
      ". Declare hytask::mpi::" +
      (coll ? "collective(comm)" : dir ? "recv_channel(peer, tag)" : "send_channel(peer, tag)") +
      " on these tasks: they then post in spawn order (HYTASK_ORDER_CHECK=warn|error|off)";
  if (coll || mode == hytask::order_check::error)
    throw usage_error("hytask: rank " + std::to_string(rank) + ": " + msg);
  core::message(core::verbosity::warning, msg);
}

}  // namespace hytask::mpi::detail
