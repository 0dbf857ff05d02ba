// A message of more than INT_MAX elements (2^31 + 3 bytes) from a task: delivered whole where
// the MPI has large-count calls (MPI 4: MPICH), refused on both ranks with a
// hytask::mpi::error naming the call and the count where it has not (Open MPI 4) — never
// truncated to a smaller count.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const int rank = mpi::rank();
  const std::size_t n = (std::size_t{1} << 31) + 3;
  const std::string count = std::to_string(n);
  bool ok = true;
  if (rank <= 1) {
    // Not initialised: the sender's untouched pages read as zeros without taking memory.
    std::unique_ptr<char[]> buf(new char[n]);
    if (rank == 0) {
      buf[0] = 'a';
      buf[n - 1] = 'z';
    }
    std::string error;
    hytask::spawn({.name = "large"}, [&] {
      try {
        if (rank == 0) mpi::send(std::span(buf.get(), n), 1, 9);
        else mpi::recv(std::span(buf.get(), n), 0, 9);
      } catch (const mpi::error& e) {
        error = std::string(e.call()) + ": " + e.what();
      }
    });
    hytask::wait_all();
#if MPI_VERSION >= 4
    if (!error.empty()) {
      ok = false;
      std::fprintf(stderr, "large_count: rank %d: %s\n", rank, error.c_str());
    } else if (rank == 1 && (buf[0] != 'a' || buf[n - 1] != 'z')) {
      ok = false;
      std::fprintf(stderr, "large_count: rank 1: the message did not arrive whole\n");
    }
#else
    const std::string call = rank == 0 ? "MPI_Isend" : "MPI_Irecv";
    if (error.rfind(call, 0) != 0 || error.find(count) == std::string::npos ||
        error.find("INT_MAX") == std::string::npos) {
      ok = false;
      std::fprintf(stderr, "large_count: rank %d: expected an error naming %s and the count %s, got '%s'\n",
                   rank, call.c_str(), count.c_str(), error.c_str());
    }
#endif
  }
  mpi::barrier();
  std::printf("large_count (MPI %d): rank %d: %s\n", MPI_VERSION, rank, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
