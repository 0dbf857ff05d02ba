// omp-detach: dataflow written with OpenMP tasks, stock OpenMP plus hytask::omp (issue 19).
// Every block of every iteration is an OpenMP task whose depend clauses name the blocks of
// the previous iteration it reads; halo receives and sends are detached tasks (OpenMP 5.0)
// that post with plain MPI and hand the request to hytask::omp::fulfill_when, so their
// successors wait for the messages while no thread blocks, and hytask's progress (OMPT
// callbacks at scheduling points under libomp, the session's progress thread) moves them.
// The same graph as dataflow (variants_hytask.cpp), on the same tokens: only the runtime
// differs.
//
// The run-ahead window differs by runtime. libomp from LLVM 19: iteration k is generated once
// iteration k - W has completed (taskwait depend on its marker), as dataflow's window. Older
// libomp (Debian 12's is LLVM 14) has a race in taskwait depend (llvm-project issue 85963,
// fixed in LLVM 19): the wait's dependence node lives on the waiting thread's stack, and the
// thread that completes the awaited task decrements the node's reference count after the
// waiter may have returned, in whatever that stack holds by then. It crashed jacobi3d-clang
// twice in CI (a pointer saved on the generator's stack, its high half one less), and a
// stand-alone OpenMP loop of one task and one taskwait depend dies of it within a second
// (docs/omp.md#runtimes). There, and under GCC's libgomp, the generator makes W iterations
// and waits for them all with a plain taskwait. GCC's libgomp needs more: it completes a
// detached task when its body returns if the thread runs it while waiting for the
// dependences of a task it must run at once — taskwait depend, and every task created while
// more than 64 tasks per thread exist (its throttle) — before the event is fulfilled:
// successors would read halos not received, and the fulfilment would touch a freed task.
// So under libgomp W is also cut so that the W iterations stay within the throttle. And its
// barrier at the region's end misses a last task completed by hytask's progress thread: the
// generator ends with a taskwait. libomp runs a team of one thread serialised and aborts when
// a detached task is fulfilled late there: omp-detach needs 2 threads under libomp.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "block_graph.hpp"
#include "hytask/omp.hpp"
#include "variants.hpp"

namespace jacobi {

namespace {

// libomp's taskwait depend writes into the waiting thread's stack after the wait (above) before
// LLVM 19. The libomp a Clang build links is the one of its own release.
#if defined(__clang__) && __clang_major__ < 19
constexpr bool libomp_taskwait_depend_racy = true;
#else
constexpr bool libomp_taskwait_depend_racy = false;
#endif

// An MPI error inside a task cannot be thrown out of it: report and abort.
void post(int rc, const char* call, int peer, MPI_Comm comm) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "jacobi3d: omp-detach: %s with rank %d failed: %.*s\n", call, peer, len, text);
  std::fflush(stderr);
  MPI_Abort(comm, 1);
}

}  // namespace

pass_result run_omp_detach(const domain& g, const fields& f, const pass_args& a) {
  // First touch in the static split of planes, as the fork-join peers do.
#pragma omp parallel num_threads(a.threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const long planes = g.local[0] + 2L * g.radius;
    const int z0 = static_cast<int>(-g.radius + planes * t / n), z1 = static_cast<int>(-g.radius + planes * (t + 1) / n);
    g.init_planes(f[0], z0, z1);
    g.init_planes(f[1], z0, z1);
  }
  const block_grid blocks(g);
  const block_graph graph(g, blocks);
  const bool packed = g.opts.halo == halo_mode::packed;
  const std::size_t nf = g.faces.size(), nb = blocks.boxes.size();
  const bool libgomp = std::strcmp(hytask::omp::openmp_runtime(), "libgomp") == 0;
  const bool libomp = std::strcmp(hytask::omp::openmp_runtime(), "libomp") == 0;
  // Batches of W iterations, each ended by a plain taskwait, where taskwait depend is unsafe
  // (above). W = 1 unless --window asks for more, as an OpenMP program would write it:
  // larger batches measured slower under libgomp (2 iterations: 20.7-21.9 ms against
  // 18.1-19.2 for 1, docs/benchmarks.md#omp-detach). Elsewhere dataflow's sliding window.
  const bool drain = libgomp || (libomp && libomp_taskwait_depend_racy);
  int window = g.opts.window > 0 ? g.opts.window : drain ? 1 : default_window;
  if (libomp && a.threads < 2)
    throw usage_error("omp-detach under libomp needs --threads 2 or more: libomp runs a team of one thread "
                      "serialised and aborts when a detached task is fulfilled after its body returned; "
                      "or use jacobi3d (GCC's libgomp)");
  if (libgomp) {
    // Tasks per iteration (blocks, halo tasks, the marker) times the window stay within its
    // throttle, 64 tasks per thread.
    const std::size_t per_iteration = nb + (packed ? 4 : 2) * nf + 1;
    const std::size_t fits = 64 * static_cast<std::size_t>(a.threads) / per_iteration;
    if (fits == 0)
      throw usage_error("omp-detach under GCC's libgomp: one iteration makes " + std::to_string(per_iteration) +
                        " tasks, more than libgomp's 64 per thread (" + std::to_string(64 * a.threads) +
                        " for " + std::to_string(a.threads) +
                        " threads), beyond which it completes detached tasks early: use a larger --block, "
                        "or jacobi3d-clang (libomp)");
    window = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(window), fits));
  }

  // Tokens: one byte each, per parity of the field they stand for (as dataflow's), plus a
  // channel per face and direction (MPI matches a face's messages in posting order, so its
  // receives, and its sends, are posted in iteration order) and one per window slot.
  std::vector<char> block_token[2] = {std::vector<char>(nb), std::vector<char>(nb)};
  std::vector<char> halo_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  std::vector<char> sbuf_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  std::vector<char> rbuf_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  std::vector<char> recv_channel(nf + 1), send_channel(nf + 1), iteration(static_cast<std::size_t>(window));
  face_buffers buffers(g, packed);
  auto& sbuf = buffers.send;
  auto& rbuf = buffers.recv;
  // Per block: the halos it reads (face indices).
  std::vector<std::vector<std::size_t>> halos(nb);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t i = 0; i < nf; ++i)
      if (blocks.needs[b] & (1u << i)) halos[b].push_back(i);

  // Pointers named in depend clauses only are [[maybe_unused]]: GCC 12 counts no use there.
  pass_result res;
  MPI_Barrier(g.comm);
  const double t0 = MPI_Wtime();
#pragma omp parallel num_threads(a.threads)
#pragma omp single
  for (int k = 0; k < a.iters; ++k) {
    const int s = k % 2, d = 1 - s;
    double* src = f[s];
    double* dst = f[d];
    [[maybe_unused]] char* bs = block_token[s].data();  // the blocks of iteration k - 1 (src)
    [[maybe_unused]] char* bd = block_token[d].data();  // the blocks of iteration k (dst)
    [[maybe_unused]] char* hs = halo_token[s].data();
    [[maybe_unused]] char* win = &iteration[static_cast<std::size_t>(k % window)];
    // Run-ahead window (above); this thread runs tasks meanwhile.
    if (drain) {
      if (k % window == 0 && k > 0) {
#pragma omp taskwait
      }
    } else if (k >= window) {
#pragma omp taskwait depend(in: win[0])
    }
    if (a.communicate) {
      for (std::size_t i = 0; i < nf; ++i) {
        const face* fc = &g.faces[i];
        [[maybe_unused]] char* rc = &recv_channel[i];
        [[maybe_unused]] char* sc = &send_channel[i];
        const std::size_t* fb = graph.face_blocks[i].data();
        const int nfb = static_cast<int>(graph.face_blocks[i].size());
        if (packed) {
          double* rb = rbuf[s][i].data();
          double* sb = sbuf[s][i].data();
          [[maybe_unused]] char* rt = &rbuf_token[s][i];
          [[maybe_unused]] char* st = &sbuf_token[s][i];
          omp_event_handle_t recv_done;
#pragma omp task detach(recv_done) depend(out: rt[0]) depend(inout: rc[0]) priority(1) firstprivate(fc, rb)
          {
            MPI_Request r;
            post(MPI_Irecv(rb, static_cast<int>(fc->count), MPI_DOUBLE, fc->peer, fc->recv_tag, g.comm, &r), "MPI_Irecv", fc->peer, g.comm);
            hytask::omp::fulfill_when(recv_done, r);
          }
#pragma omp task depend(in: rt[0]) depend(out: hs[i]) priority(1) firstprivate(fc, rb, src)
          g.unpack(src, *fc, rb);
#pragma omp task depend(iterator(int j = 0 : nfb), in: bs[fb[j]]) depend(out: st[0]) priority(1) firstprivate(fc, sb, src)
          g.pack(src, *fc, sb);
          omp_event_handle_t send_done;
#pragma omp task detach(send_done) depend(in: st[0]) depend(inout: sc[0]) priority(1) firstprivate(fc, sb)
          {
            MPI_Request r;
            post(MPI_Isend(sb, static_cast<int>(fc->count), MPI_DOUBLE, fc->peer, fc->send_tag, g.comm, &r), "MPI_Isend", fc->peer, g.comm);
            hytask::omp::fulfill_when(send_done, r);
          }
        } else {
          omp_event_handle_t recv_done;
#pragma omp task detach(recv_done) depend(out: hs[i]) depend(inout: rc[0]) priority(1) firstprivate(fc, src)
          {
            MPI_Request r;
            post(MPI_Irecv(src, 1, fc->recv_type, fc->peer, fc->recv_tag, g.comm, &r), "MPI_Irecv", fc->peer, g.comm);
            hytask::omp::fulfill_when(recv_done, r);
          }
          // Sending straight from the field: the task completes with the send, so the next
          // writer of these blocks waits for it.
          omp_event_handle_t send_done;
#pragma omp task detach(send_done) depend(iterator(int j = 0 : nfb), in: bs[fb[j]]) depend(inout: sc[0]) priority(1) firstprivate(fc, src)
          {
            MPI_Request r;
            post(MPI_Isend(src, 1, fc->send_type, fc->peer, fc->send_tag, g.comm, &r), "MPI_Isend", fc->peer, g.comm);
            hytask::omp::fulfill_when(send_done, r);
          }
        }
      }
    }
    for (std::size_t b = 0; b < nb; ++b) {
      const std::size_t* rd = graph.reads[b].data();
      const int nr = static_cast<int>(graph.reads[b].size());
      const std::size_t* hl = halos[b].data();
      const int nh = a.communicate ? static_cast<int>(halos[b].size()) : 0;
      const box bx = blocks.boxes[b];
#pragma omp task depend(out: bd[b]) depend(iterator(int j = 0 : nr), in: bs[rd[j]]) depend(iterator(int j = 0 : nh), in: hs[hl[j]]) priority(graph.priority[b]) firstprivate(bx, src, dst)
      g.sweep(src, dst, bx);
    }
    // A marker that completes with the last block of iteration k.
    const int nbi = static_cast<int>(nb);
#pragma omp task depend(iterator(int j = 0 : nbi), in: bd[j]) depend(out: win[0])
    {
    }
    if (k == a.iters - 1) {
#pragma omp taskwait
    }
  }
  MPI_Barrier(g.comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

}  // namespace jacobi
