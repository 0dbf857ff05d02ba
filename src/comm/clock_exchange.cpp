#include "comm/clock_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "trace/trace.hpp"

namespace hytask::mpi::detail {

namespace {

constexpr int tag_ping = 1, tag_pong = 2, tag_turn = 3, tag_origin = 4;

void clock_ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS)
    throw std::runtime_error(std::string("hytask: aligning the trace clocks of the ranks failed in ") + what +
                             " (error " + std::to_string(rc) + ")");
}

// Receives without holding a core that another thread needs. A blocking receive spins in
// both MPIs: the ranks that wait for their turn would take the cores the ping-pong needs,
// and when the two threads of a ping-pong share a core (funneled mode's MPI threads leave
// their main's core) each spins through its time slice before the other can answer —
// round trips of 5-16 ms instead of microseconds, offsets off by milliseconds, with more
// ranks than cores. So the ping-pong yields between tests, and the waiting ranks sleep.
void receive_politely(void* buf, int count, MPI_Datatype type, MPI_Comm comm, int source, int tag, bool sleep) {
  MPI_Request req;
  clock_ok(MPI_Irecv(buf, count, type, source, tag, comm, &req), "MPI_Irecv");
  for (int done = 0;;) {
    clock_ok(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (sleep) std::this_thread::sleep_for(std::chrono::microseconds(100));
    else std::this_thread::yield();
  }
}

// Offset of this rank's clock to rank 0's, on a communicator of its own; `origin` is rank
// 0's clock when it served the last rank (sent to every rank).
trace::clock_estimate exchange(MPI_Comm comm, int rank, int size, int rounds, std::int64_t& origin) {
  trace::clock_estimate est{};
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      clock_ok(MPI_Send(nullptr, 0, MPI_CHAR, r, tag_turn, comm), "MPI_Send");
      for (int k = 0; k < rounds; ++k) {
        char ping = 0;
        receive_politely(&ping, 1, MPI_CHAR, comm, r, tag_ping, false);
        const std::int64_t now = trace::local_clock_ns();
        clock_ok(MPI_Send(&now, 1, MPI_INT64_T, r, tag_pong, comm), "MPI_Send");
      }
    }
    origin = trace::local_clock_ns();
    for (int r = 1; r < size; ++r) clock_ok(MPI_Send(&origin, 1, MPI_INT64_T, r, tag_origin, comm), "MPI_Send");
    return est;
  }
  receive_politely(nullptr, 0, MPI_CHAR, comm, 0, tag_turn, true);
  std::vector<trace::clock_sample> samples(static_cast<std::size_t>(rounds));
  for (auto& s : samples) {
    char ping = 0;
    s.t0 = trace::local_clock_ns();
    clock_ok(MPI_Send(&ping, 1, MPI_CHAR, 0, tag_ping, comm), "MPI_Send");
    receive_politely(&s.remote, 1, MPI_INT64_T, comm, 0, tag_pong, false);
    s.t1 = trace::local_clock_ns();
  }
  receive_politely(&origin, 1, MPI_INT64_T, comm, 0, tag_origin, true);
  return trace::estimate_offset(samples);
}

struct own_comm {
  MPI_Comm c = MPI_COMM_NULL;
  explicit own_comm(MPI_Comm world) {
    clock_ok(MPI_Comm_dup(world, &c), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  }
  ~own_comm() { MPI_Comm_free(&c); }
};

}  // namespace

trace::clock_alignment align_clocks(MPI_Comm world, int rounds) {
  own_comm comm(world);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm.c, &rank);
  MPI_Comm_size(comm.c, &size);
  std::int64_t origin = 0;
  const trace::clock_estimate est = exchange(comm.c, rank, size, rounds, origin);
  return trace::clock_alignment{.aligned = true, .offset_ns = est.offset_ns, .rtt_ns = est.rtt_ns, .origin_ns = origin};
}

trace::clock_drift measure_drift(MPI_Comm world, const trace::clock_alignment& start, int rounds) {
  own_comm comm(world);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm.c, &rank);
  MPI_Comm_size(comm.c, &size);
  std::int64_t origin = 0;
  const trace::clock_estimate est = exchange(comm.c, rank, size, rounds, origin);
  if (rank == 0 || !start.aligned) return {};
  return trace::clock_drift{.measured = true,
                            .drift_ns = est.offset_ns - start.offset_ns,
                            .at_ns = static_cast<std::int64_t>(trace::now())};
}

}  // namespace hytask::mpi::detail
