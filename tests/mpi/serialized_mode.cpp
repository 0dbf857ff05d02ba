// HYTASK_MPI_MODE=serialized: the program calls MPI itself from tasks inside
// hytask::mpi::serialized_section while hytask's tasks exchange messages, and no two MPI
// calls of the process ever overlap.
//
// The program interposes the MPI calls hytask and the sections make here (PMPI): each counts
// the threads inside MPI, keeps the largest count seen, and sleeps 100 us inside so that
// calls that can overlap do. Checked on every rank: the messages arrive intact, every
// section ran, and at most one thread was ever inside MPI.
//
// --control (run with HYTASK_MPI_MODE=multiple, 2 workers): the same raw calls without
// sections must be seen overlapping, else this detector could not tell and the test fails.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "test_fail.hpp"

namespace {

std::atomic<int> g_inside{0};
std::atomic<int> g_most{0};
std::atomic<bool> g_widen{false};

struct inside_mpi {
  inside_mpi() {
    const int n = g_inside.fetch_add(1) + 1;
    int m = g_most.load();
    while (n > m && !g_most.compare_exchange_weak(m, n)) {
    }
    if (g_widen.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ~inside_mpi() { g_inside.fetch_sub(1); }
};

}  // namespace

// The calls hytask's engine makes for point-to-point traffic, and the one the sections make.
extern "C" {
int MPI_Isend(const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c, MPI_Request* r) {
  inside_mpi in;
  return PMPI_Isend(b, n, t, dst, tag, c, r);
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request* r) {
  inside_mpi in;
  return PMPI_Irecv(b, n, t, src, tag, c, r);
}
int MPI_Testsome(int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) {
  inside_mpi in;
  return PMPI_Testsome(n, r, out, idx, st);
}
int MPI_Test(MPI_Request* r, int* flag, MPI_Status* st) {
  inside_mpi in;
  return PMPI_Test(r, flag, st);
}
int MPI_Iprobe(int src, int tag, MPI_Comm c, int* flag, MPI_Status* st) {
  inside_mpi in;
  return PMPI_Iprobe(src, tag, c, flag, st);
}
}

namespace {

using hytask_test::fail;
namespace mpi = hytask::mpi;

constexpr int messages = 40;
constexpr int sections = 40;

void run_serialized(int rank, int size) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  std::vector<std::vector<int>> in(messages, std::vector<int>(256, -1));
  std::atomic<int> sections_done{0};
  g_widen = true;
  for (int m = 0; m < messages; ++m) {
    hytask::spawn([m, rank, next] {
      std::vector<int> out(256);
      for (int i = 0; i < 256; ++i) out[static_cast<std::size_t>(i)] = rank * 100000 + m * 1000 + i;
      mpi::send(out, next, m);
    });
    hytask::spawn([&in, m, prev] { mpi::recv(in[static_cast<std::size_t>(m)], prev, m); });
    if (m < sections) {
      hytask::spawn([&sections_done] {
        mpi::serialized_section s;
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        sections_done.fetch_add(1);
      });
    }
  }
  hytask::wait_all();
  g_widen = false;
  for (int m = 0; m < messages; ++m)
    for (int i = 0; i < 256; ++i)
      if (in[static_cast<std::size_t>(m)][static_cast<std::size_t>(i)] != prev * 100000 + m * 1000 + i)
        fail("message " + std::to_string(m) + " from rank " + std::to_string(prev) +
             " arrived wrong at element " + std::to_string(i));
  if (sections_done.load() != sections)
    fail(std::to_string(sections_done.load()) + " of " + std::to_string(sections) + " sections ran");
  if (g_most.load() != 1)
    fail(std::to_string(g_most.load()) +
         " threads were inside MPI at once in serialized mode: hytask's MPI thread called MPI "
         "while a serialized_section was open (or two sections overlapped)");
  std::printf("serialized_mode: ok on rank %d (at most %d thread inside MPI)\n", rank, g_most.load());
}

void run_control(int rank) {
  g_widen = true;
  for (int k = 0; k < 8; ++k) {
    hytask::spawn([] {
      for (int i = 0; i < 50; ++i) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      }
    });
  }
  hytask::wait_all();
  g_widen = false;
  if (g_most.load() < 2)
    fail("the control saw no two threads inside MPI at once (most " + std::to_string(g_most.load()) +
         "): the detector cannot tell overlapping calls; run it with 2 workers");
  std::printf("serialized_mode control: ok on rank %d (%d threads inside MPI at once)\n", rank, g_most.load());
}

}  // namespace

int main(int argc, char** argv) {
  const bool control = argc > 1 && std::strcmp(argv[1], "--control") == 0;
  hytask::runtime rt;
  const int rank = mpi::rank(), size = mpi::size();
  if (!control && rt.settings().mpi_mode != hytask::mpi_mode::serialized)
    fail("run this test with HYTASK_MPI_MODE=serialized");
  if (control) run_control(rank);
  else run_serialized(rank, size);
  return 0;
}
