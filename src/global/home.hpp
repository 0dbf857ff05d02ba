// The owner's side of global dependencies (seed 001 §3.3, Fig. 3.6): for each location this
// rank owns, the chain of accesses that orders the tasks of every rank touching it.
//
// Each access to an owned location is a node: a local one (a task of this rank, created
// when the task is spawned) or a remote one (created when its A record arrives). Nodes of
// phase P enter the location's chain when phase P is matched, in the order (location, rank,
// discovery order); the local rule (Fig. 3.2) applied in that order yields the global rule's
// edges (Fig. 3.4), since one phase holds either one rank's accesses to a location or only
// reads. Only edges between different ranks are kept: an edge within a rank is the core's
// tracker's business (each rank orders its own accesses, remote ones included, by address),
// and where it is skipped a path through other ranks' nodes remains — except before a
// copyin (push) access, whose data the owner sends: it must come after the accessing rank's
// own earlier writes of the location too.
//
// A chain keeps the last writer and the readers since; nodes leave it when a later writer
// supersedes them, completed readers are pruned once they are half the readers (a location
// that is only read never sees that writer), and a chain whose nodes have all completed is
// dropped. So memory follows the accesses in flight, not the program's length.
//
// A task that was cancelled or failed passes that on, as the core does between local tasks:
// its node's `ended` flags reach each successor of another rank (B records carry them), and
// a later access linked behind it after it completed inherits them at matching. Such nodes
// stay in their chain (which is not dropped) until a later writer supersedes them, or the
// epoch ends (wait_all: end_epoch).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "global/messages.hpp"
#include "global/task_record.hpp"

namespace hytask::global::detail {

struct chain;

struct node {
  task_record* task = nullptr;  // a local access: its task, until the task completes
  std::uint64_t id = 0;         // a remote access: the accessor's name for it
  std::uint64_t key = 0;        // the location
  int rank = 0;                 // the accessing rank
  dep_kind kind = dep_kind::in;
  bool complete = false;
  bool matched = false;
  bool in_chain = false;
  bool b = false;               // a remote access that waits for a B record (not a first phase)
  bool push = false;            // a copyin: the owner sends the data when it is released
  std::uint16_t ended = 0;      // how its task ended: flag_cancelled, flag_failed or 0
  std::uint16_t inherited = 0;  // a remote access: how predecessors of other ranks ended
  std::uint8_t holds = 1;       // a remote access: C record (and, for push, the send) to come
  std::uint32_t waiting = 0;    // a remote access: unfinished predecessors on other ranks
  chain* where = nullptr;       // while in_chain
  std::vector<node*> succ;      // accesses of other ranks that wait for this one
};

// What a matching or a completion caused, for the engine to act on outside its lock.
struct push_order {
  int rank;           // the accessor
  std::uint64_t id;   // its access
  std::uint64_t key;  // the location whose bytes to send
};

struct release_order {
  int rank;             // the accessor
  std::uint64_t id;     // its access
  std::uint16_t flags;  // flag_cancelled / flag_failed: a predecessor ended so
  friend bool operator==(const release_order&, const release_order&) = default;
};

struct effects {
  std::vector<release_order> releases;                   // send B
  std::vector<push_order> pushes;                        // copyins released: send the data
  std::vector<task_record*> ready;                       // local tasks whose gate opened
  std::vector<task_record*> remote_succ;  // local tasks that gained a successor elsewhere
};

class home {
 public:
  // describe(key) names a location of this rank for error messages.
  home(int self, std::function<std::string(std::uint64_t)> describe);
  ~home();
  home(const home&) = delete;
  home& operator=(const home&) = delete;

  // A task of this rank accesses an owned location in `phase`; seq is its discovery order.
  node* add_local(task_record* t, std::uint64_t key, dep_kind k, std::uint32_t phase,
                  std::uint64_t seq);
  // An A record from `rank`.
  void add_remote(int rank, const record& a);
  // The local task of n completed; `ended`: flag_cancelled, flag_failed or 0.
  void complete_local(node* n, std::uint16_t ended, effects& fx);
  // A C record from `rank`; it may precede its A record's matching (a task of a first phase).
  void complete_remote(int rank, std::uint64_t id, std::uint16_t ended, effects& fx);
  // The data of a copyin (push) access has been sent: the location may change again once
  // its C record has come too.
  void push_sent(int rank, std::uint64_t id, effects& fx);
  // Matches `phase`: every A record of it must have arrived. `first`: the first phase of the
  // program or after a wait_all, whose accesses have no predecessors and get no B.
  // Conflicting accesses of two ranks to one location are matched all the same (in rank
  // order), but each inherits flag_failed | flag_conflict, so that they and their successors
  // are skipped; the conflict's description waits in take_conflicts().
  void match(std::uint32_t phase, bool first, effects& fx);
  // The conflicts found since the last call, described for the program.
  std::vector<std::string> take_conflicts() { return std::exchange(conflicts_, {}); }

  // wait_all has drained the protocol: every access has completed. The chains kept for
  // cancelled or failed accesses go (the next epoch's accesses have no predecessors).
  void end_epoch();

  // Nodes and chains alive, and whether nothing at all is left (after a drained wait_all).
  std::size_t nodes() const noexcept { return nodes_; }
  std::size_t chains() const noexcept { return chains_.size(); }
  bool idle() const noexcept;

 private:
  struct entry {
    std::uint64_t key;
    int rank;
    std::uint64_t seq;
    node* n;
  };
  node* new_node();
  void free_node(node* n);
  void finish(node* n, effects& fx);
  void release_hold(std::unordered_map<std::uint64_t, node*>::iterator it, effects& fx);
  static void released(node* n, effects& fx);
  static void inherit(node* succ, std::uint16_t ended);
  void enter(chain& c, node* n);
  void leave(node* n);
  void prune_readers(chain& c);
  void drop_chain(std::uint64_t key, chain& c);
  std::string conflict(std::uint64_t key, std::uint32_t phase, const entry* b, const entry* e) const;
  static std::uint64_t remote_key(int rank, std::uint64_t id) noexcept;

  int self_;
  std::function<std::string(std::uint64_t)> describe_;
  std::unordered_map<std::uint64_t, chain> chains_;
  std::map<std::uint32_t, std::vector<entry>> unmatched_;         // by phase
  std::unordered_map<std::uint64_t, node*> remote_;               // awaiting their C
  std::unordered_map<std::uint64_t, std::uint16_t> early_complete_;  // C before the A was seen
  std::vector<node*> free_;
  std::size_t nodes_ = 0;
  std::vector<std::string> conflicts_;
};

struct chain {
  std::uint64_t key = 0;
  node* last_out = nullptr;
  std::vector<node*> readers;    // since last_out
  std::uint32_t incomplete = 0;  // nodes in the chain that have not completed
  std::uint32_t done_readers = 0;  // readers that have completed since the last pruning
  std::uint32_t ended_badly = 0;   // completed nodes that were cancelled or failed (kept)
};

}  // namespace hytask::global::detail
