// Checks a cluster-in-a-box job: every rank exchanges a patterned message with every other
// rank and verifies it bit for bit, and the ranks report their network namespace.
//   cluster_check [--bytes N] [--expect-separate]
// --expect-separate fails unless the ranks run in more than one network namespace (the
// job really crossed nodes). Exit status 0 when every check passed.
#include <mpi.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

std::uint64_t pattern(int from, int to, std::size_t i) {
  return (std::uint64_t(from) << 48) ^ (std::uint64_t(to) << 40) ^ (i * 0x9E3779B97F4A7C15ull);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t bytes = 8u << 20;
  bool expect_separate = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
      bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--expect-separate") == 0) {
      expect_separate = true;
    } else {
      if (rank == 0) std::fprintf(stderr, "usage: cluster_check [--bytes N] [--expect-separate]\n");
      MPI_Finalize();
      return 2;
    }
  }
  const std::size_t n = bytes / sizeof(std::uint64_t);
  int failures = 0;
  double t0 = MPI_Wtime();
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    std::vector<std::uint64_t> out(n), in(n, 0);
    for (std::size_t i = 0; i < n; ++i) out[i] = pattern(rank, peer, i);
    MPI_Sendrecv(out.data(), static_cast<int>(n), MPI_UINT64_T, peer, 1, in.data(),
                 static_cast<int>(n), MPI_UINT64_T, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (std::size_t i = 0; i < n; ++i) {
      if (in[i] != pattern(peer, rank, i)) {
        std::fprintf(stderr, "rank %d: word %zu from rank %d is wrong\n", rank, i, peer);
        ++failures;
        break;
      }
    }
  }
  double seconds = MPI_Wtime() - t0;

  struct stat st {};
  unsigned long long ns = stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
  std::vector<unsigned long long> all(static_cast<std::size_t>(size));
  MPI_Gather(&ns, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
             MPI_COMM_WORLD);
  int total = 0;
  MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  int status = 0;
  if (rank == 0) {
    std::set<unsigned long long> distinct(all.begin(), all.end());
    std::printf("cluster_check: %d ranks in %zu network namespace(s); %zu bytes per pair in "
                "%.3f s; %s\n",
                size, distinct.size(), bytes, seconds, total ? "DATA CORRUPTED" : "data intact");
    if (total) status = 1;
    if (expect_separate && distinct.size() < 2) {
      std::printf("cluster_check: expected the ranks on separate nodes, but they share one "
                  "network namespace\n");
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
