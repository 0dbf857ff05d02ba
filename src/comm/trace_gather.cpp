#include "platform/messages.hpp"
#include "comm/trace_gather.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "comm/clock_exchange.hpp"
#include "trace/merge.hpp"
#include "trace/paths.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {

namespace {

constexpr int tag_go = 1, tag_head = 2, tag_data = 3;
constexpr std::size_t chunk_bytes = 1 << 20;

void gather_ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS)
    throw std::runtime_error(std::string("hytask: merging the trace of the ranks failed in ") + what +
                             " (error " + std::to_string(rc) + ")");
}

// What a rank tells rank 0 before its file: whether it has one, and its drift.
struct head {
  std::int64_t has_file, measured, drift_ns, at_ns;
};

}  // namespace

void finish_job_trace(MPI_Comm world, const std::string& path, const trace::clock_alignment& start) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  const bool had_file = trace::started();
  const trace::clock_drift drift = size > 1 ? measure_drift(world, start) : trace::clock_drift{};
  trace::stop(drift);
  if (!trace::merged(path, size)) return;
  MPI_Comm comm;
  gather_ok(MPI_Comm_dup(world, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const std::string mine = trace::rank_path(path, rank, size);
  const bool otf2 = trace::format_of(path) == trace::format::otf2;
  std::vector<char> buf(chunk_bytes);
  if (rank == 0) {
    const std::string out = trace::job_path(path);
    std::unique_ptr<trace::merger> m;
    try {
      m = std::make_unique<trace::merger>(out);
    } catch (const std::exception& e) {
      core::message(core::verbosity::warning, std::string(e.what()) + "; the ranks\' own trace files are kept");
    }
    const int go = m ? 1 : 0;
    try {
      if (m && had_file) {
        m->begin_input({.pid = 0, .drift = {}, .shift_ns = 0});
        std::ifstream f(mine, std::ios::binary);
        while (f) {
          f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
          m->feed(std::string_view(buf.data(), static_cast<std::size_t>(f.gcount())));
        }
        m->end_input();
      }
    } catch (const std::exception& e) {
      core::message(core::verbosity::warning, e.what());
      m.reset();
    }
    for (int r = 1; r < size; ++r) {
      gather_ok(MPI_Send(&go, 1, MPI_INT, r, tag_go, comm), "MPI_Send");
      if (!go) continue;
      head h{};
      gather_ok(MPI_Recv(&h, 4, MPI_INT64_T, r, tag_head, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      if (!h.has_file) continue;
      if (m)
        m->begin_input({.pid = r,
                        .drift = {.measured = h.measured != 0, .drift_ns = h.drift_ns, .at_ns = h.at_ns},
                        .shift_ns = 0});
      for (;;) {
        MPI_Status st;
        gather_ok(MPI_Recv(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, r, tag_data, comm, &st), "MPI_Recv");
        int n = 0;
        MPI_Get_count(&st, MPI_CHAR, &n);
        if (n == 0) break;
        if (!m) continue;  // drained, after a failure
        try {
          m->feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
        } catch (const std::exception& e) {
          core::message(core::verbosity::warning, e.what());
          m.reset();
        }
      }
      if (m) m->end_input();
    }
    if (m) {
      try {
        const trace::merge_stats s = m->finish();
        (void)s;
        if (otf2) std::filesystem::remove(mine);
      } catch (const std::exception& e) {
        core::message(core::verbosity::warning, e.what());
      }
    }
  } else {
    int go = 0;
    gather_ok(MPI_Recv(&go, 1, MPI_INT, 0, tag_go, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    if (go) {
      std::ifstream f;
      if (had_file) f.open(mine, std::ios::binary);
      head h{f.is_open() ? 1 : 0, drift.measured ? 1 : 0, drift.drift_ns, drift.at_ns};
      gather_ok(MPI_Send(&h, 4, MPI_INT64_T, 0, tag_head, comm), "MPI_Send");
      if (h.has_file) {
        while (f) {
          f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
          const auto n = static_cast<int>(f.gcount());
          if (n > 0) gather_ok(MPI_Send(buf.data(), n, MPI_CHAR, 0, tag_data, comm), "MPI_Send");
        }
        gather_ok(MPI_Send(buf.data(), 0, MPI_CHAR, 0, tag_data, comm), "MPI_Send");
        f.close();
        if (otf2) std::filesystem::remove(mine);
      }
    }
  }
  MPI_Comm_free(&comm);
}

}  // namespace hytask::mpi::detail
