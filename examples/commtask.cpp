// Seed 000's commtask (Buettner, Alg. 4.7/4.8) written with hytask.
//
//   mpiexec -n 2 build/examples/commtask [--iters T] [--n N] [--work W] [--form bind|after]
//
// The thesis proposes an OpenMP construct that tells the runtime about pending MPI requests:
//
//   #pragma omp commtask init ID(R)      { MPI_Irecv }
//   #pragma omp commtask init ID(S)      { pre-communication work; MPI_Isend }
//   OpenMP FOR schedule(static-ws)         communication-independent work
//   #pragma omp commtask finalize ID(R,S)
//   { #pragma omp commtask-advancecheck MPI_Testall
//     MPI_Waitall; post-communication work }
//
// The runtime schedules the init regions with high priority, runs the advance-check at its
// scheduling points, and releases the finalize region (with high priority) once the check
// succeeds. hytask has each piece:
//
//   init regions      tasks that post a non-blocking call and bind() its request: the task
//                     returns at once, and completes when the operation does;
//   IDs               the buffers the init and finalize tasks declare (out / in): finalize
//                     ID(R,S) depends on both inits, so it waits for both communications;
//   advance-check     hytask's progress engine (MPI_Testsome over all pending requests, at
//                     scheduling points of idle or busy workers, HYTASK_PROGRESS);
//   priority          HYTASK_COMM_PRIORITY=1 (the default, as OMP_COMMTASK_PRIORITY): tasks
//                     released by communication run before ordinary ready tasks.
//
// --form after writes the same iteration with requests posted by main and a finalize task
// gated by hytask::after(r, s): the commtask finalize with its advance-check, literally.
//
// The ranks form a ring: each sends a vector to its right and receives one from its left.
// Every received vector is checked; the independent work is checked against a sequential
// recomputation.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

double message_value(long iter, int from, long i) { return static_cast<double>(iter * 1000 + from) + 1e-3 * static_cast<double>(i); }

// The communication-independent work on one block: a few flops per element, repeated.
void independent_work(double* x, long lo, long hi, int repeat) {
  for (int r = 0; r < repeat; ++r)
    for (long i = lo; i < hi; ++i) x[i] = std::sqrt(x[i] * x[i] + 1.0) * 0.5;
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 100, n = 1 << 14, m = 1 << 16;
  int work = 4;
  std::string form = "bind";
  for (int i = 1; i < argc; ++i) {  // before the runtime: a bad option ends every rank alike
    std::string a = argv[i];
    if (a == "--iters") iters = example::option_value("commtask", argc, argv, i);
    else if (a == "--n") n = example::option_value("commtask", argc, argv, i, 1, 1L << 30);
    else if (a == "--work") work = static_cast<int>(example::option_value("commtask", argc, argv, i, 0, 1 << 20));
    else if (a == "--form" && i + 1 < argc) form = argv[++i];
    else {
      std::fprintf(stderr, "usage: commtask [--iters T] [--n N] [--work W] [--form bind|after]\n");
      return 2;
    }
  }
  if (form != "bind" && form != "after") {
    std::fprintf(stderr, "commtask: --form must be 'bind' or 'after', not '%s'\n", form.c_str());
    return 2;
  }
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  constexpr int tag = 7;

  // Two generations of message buffers, so that iteration k + 1's init can run while
  // iteration k's finalize still reads its buffers (the dependencies keep them apart).
  std::vector<double> sendbuf[2] = {std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> recvbuf[2] = {std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> field(m, 1.0);
  std::vector<long> bad(iters, 0);
  const long block = 4096;
  std::unique_ptr<hytask::event> reused[2];  // --form after: set by the finalize of a generation

  hytask::mpi::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < iters; ++k) {
    std::vector<double>& out = sendbuf[k & 1];
    std::vector<double>& in = recvbuf[k & 1];
    long* bad_k = &bad[k];
    auto pre_work = [&out, k, rank] {  // "work necessary before communication can start"
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = message_value(k, rank, static_cast<long>(i));
    };
    auto post_work = [&in, k, left, bad_k] {  // "work necessary after communication has finished"
      for (std::size_t i = 0; i < in.size(); ++i) *bad_k += in[i] != message_value(k, left, static_cast<long>(i));
    };
    if (form == "bind") {
      // commtask init ID(R)
      hytask::spawn({.name = "init R"}, [&in, left] { hytask::mpi::bind(hytask::mpi::irecv(in, left, tag)); },
                    hytask::out(in.data(), in.size()), hytask::mpi::recv_channel(left, tag));
      // commtask init ID(S)
      hytask::spawn({.name = "init S"}, [&out, right, pre_work] {
        pre_work();
        hytask::mpi::bind(hytask::mpi::isend(out, right, tag));
      }, hytask::out(out.data(), out.size()), hytask::mpi::send_channel(right, tag));
    }
    // Communication-independent work, in blocks any worker may take.
    for (long lo = 0; lo < m; lo += block) {
      const long hi = std::min(m, lo + block);
      hytask::spawn({.name = "independent"}, [&field, lo, hi, work] { independent_work(field.data(), lo, hi, work); },
                    hytask::inout(field.data() + lo, static_cast<std::size_t>(hi - lo)));
    }
    if (form == "bind") {
      // commtask finalize ID(R,S): after both inits, hence after both communications.
      hytask::spawn({.name = "finalize R,S"}, post_work, hytask::in(in.data(), in.size()),
                    hytask::in(out.data(), out.size()));
    } else {
      // The same with requests: main plays the init regions (pre-work and posts), and the
      // finalize task becomes ready when the progress engine finds both requests complete.
      // Main first waits for the finalize that last used these buffers (two iterations ago;
      // it runs other tasks meanwhile).
      if (reused[k & 1]) reused[k & 1]->wait();
      reused[k & 1] = std::make_unique<hytask::event>();
      hytask::mpi::request r = hytask::mpi::irecv(in, left, tag);
      pre_work();
      hytask::mpi::request s = hytask::mpi::isend(out, right, tag);
      hytask::spawn({.name = "finalize R,S"}, [post_work, ev = reused[k & 1].get()] {
        post_work();
        ev->set();
      }, hytask::after(r, s));
    }
  }
  hytask::wait_all();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  long my_bad = 0;
  for (long b : bad) my_bad += b;
  std::vector<double> expect(m, 1.0);
  independent_work(expect.data(), 0, m, static_cast<int>(work * iters));
  long field_bad = 0;
  for (long i = 0; i < m; ++i) field_bad += field[i] != expect[i];
  long local[2] = {my_bad, field_bad}, total[2] = {0, 0};
  hytask::mpi::reduce(std::span<const long>(local, 2), std::span<long>(total, 2), MPI_SUM, 0);
  if (rank == 0) {
    std::printf("commtask (%s form): %d ranks, %ld iterations, %ld doubles per message: %.3f s\n",
                form.c_str(), size, iters, n, seconds);
    std::printf("received values checked: %s; independent work checked: %s\n",
                total[0] == 0 ? "ok" : "WRONG", total[1] == 0 ? "ok" : "WRONG");
  }
  return total[0] == 0 && total[1] == 0 ? 0 : 1;
}
