#include "comm/trace_messages.hpp"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "comm/operation.hpp"

namespace hytask::mpi::detail {

namespace {

struct comm_info {
  bool usable = false;
  std::uint32_t id = 0;
  std::vector<int> world;  // world rank of each rank of the communicator
};

std::mutex g_messages_mutex;
std::map<MPI_Fint, comm_info> g_message_comms;  // by handle: a freed handle's reuse is not noticed
std::map<std::tuple<std::uint32_t, int, int>, std::uint64_t> g_sent, g_received;
int g_world_rank = -1;

// Called under g_messages_mutex, on a thread that may call MPI.
const comm_info& message_comm(MPI_Comm c) {
  auto [it, fresh] = g_message_comms.try_emplace(MPI_Comm_c2f(c));
  if (!fresh) return it->second;
  if (g_world_rank < 0) MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  comm_info& ci = it->second;
  int inter = 0;
  MPI_Comm_test_inter(c, &inter);
  if (inter) return ci;
  MPI_Group g, wg;
  MPI_Comm_group(c, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int n = 0;
  MPI_Group_size(g, &n);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  ci.world.resize(static_cast<std::size_t>(n));
  MPI_Group_translate_ranks(g, n, ranks.data(), wg, ci.world.data());
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  std::uint32_t h = 2166136261u;  // FNV-1a over the members
  for (int w : ci.world)
    for (int b = 0; b < 4; ++b) h = (h ^ ((static_cast<std::uint32_t>(w) >> (8 * b)) & 0xff)) * 16777619u;
  ci.id = h;
  ci.usable = true;
  return ci;
}

int world_of(const comm_info& ci, int r) {
  return r >= 0 && static_cast<std::size_t>(r) < ci.world.size() ? ci.world[static_cast<std::size_t>(r)] : -1;
}

}  // namespace

bool trace_send(const operation* op, trace::message& m) {
  if (op->peer < 0) return false;  // MPI_PROC_NULL
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  const comm_info& ci = message_comm(op->comm);
  if (!ci.usable) return false;
  m.comm = ci.id;
  m.source = g_world_rank;
  m.dest = world_of(ci, op->peer);
  m.tag = op->tag;
  m.bytes = static_cast<std::int64_t>(op->bytes);
  m.seq = g_sent[{ci.id, m.dest, m.tag}]++;
  return m.dest >= 0;
}

void trace_receive_posted(operation* op) {
  if (op->peer < 0 || op->tag == MPI_ANY_TAG) return;  // MPI_ANY_SOURCE, MPI_PROC_NULL
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  const comm_info& ci = message_comm(op->comm);
  if (!ci.usable) return;
  op->trace_seq = g_received[{ci.id, world_of(ci, op->peer), op->tag}]++ + 1;
}

bool trace_receive_completed(const operation* op, const MPI_Status& status, trace::message& m) {
  if (status.MPI_SOURCE < 0 || status.MPI_TAG < 0) return false;  // MPI_PROC_NULL, cancelled
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  const comm_info& ci = message_comm(op->comm);
  if (!ci.usable) return false;
  m.comm = ci.id;
  m.source = world_of(ci, status.MPI_SOURCE);
  m.dest = g_world_rank;
  m.tag = status.MPI_TAG;
  m.bytes = static_cast<std::int64_t>(op->bytes);
  m.seq = op->trace_seq != 0 ? op->trace_seq - 1 : g_received[{ci.id, m.source, m.tag}]++;
  return m.source >= 0;
}

}  // namespace hytask::mpi::detail
