// The hytask variants: seed 000's commtask, and a dataflow graph across iterations.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "hytask/hytask.hpp"
#include "block_graph.hpp"
#include "hytask/mpi.hpp"
#include "plain_exchange.hpp"
#include "variants.hpp"

namespace jacobi {

namespace {

namespace mpi = hytask::mpi;

void init_fields(const domain& g, const fields& f) {
  // First touch in the static split a loop over planes would use.
  hytask::parallel_for(-g.radius, g.local[0] + g.radius, [&](int z0, int z1) {
    g.init_planes(f[0], z0, z1);
    g.init_planes(f[1], z0, z1);
  });
}

// A marker task that completes, setting the returned event, with the last block of the
// iteration whose block tokens are `written` (dataflow's and intercepted's run-ahead window).
std::unique_ptr<hytask::event> spawn_iteration_marker(std::vector<char>& written,
                                                      std::vector<hytask::region_access>& deps) {
  auto ev = std::make_unique<hytask::event>();
  deps.clear();
  for (char& token : written) deps.push_back(hytask::in(token));
  hytask::spawn({.name = "iteration done"}, [e = ev.get()] { e->set(); }, hytask::regions(deps));
  return ev;
}

// The halo exchange of masteronly and commtask: with packed halos a send and a receive
// buffer per face (empty otherwise), and the posting of one face's receive or send (packing
// the send data first).
struct halo_buffers {
  std::vector<std::vector<double>> send, recv;
  explicit halo_buffers(const domain& g) : send(g.faces.size()), recv(g.faces.size()) {
    if (g.opts.halo != halo_mode::packed) return;
    for (std::size_t i = 0; i < g.faces.size(); ++i) {
      send[i].resize(static_cast<std::size_t>(g.faces[i].count));
      recv[i].resize(static_cast<std::size_t>(g.faces[i].count));
    }
  }
};

mpi::request post_halo_recv(const domain& g, std::size_t i, double* src, halo_buffers& hb) {
  const face& fc = g.faces[i];
  if (g.opts.halo == halo_mode::packed)
    return mpi::irecv(hb.recv[i].data(), static_cast<int>(fc.count), MPI_DOUBLE, fc.peer, fc.recv_tag, g.comm);
  return mpi::irecv(src, 1, fc.recv_type, fc.peer, fc.recv_tag, g.comm);
}

mpi::request post_halo_send(const domain& g, std::size_t i, double* src, halo_buffers& hb) {
  const face& fc = g.faces[i];
  if (g.opts.halo != halo_mode::packed) return mpi::isend(src, 1, fc.send_type, fc.peer, fc.send_tag, g.comm);
  g.pack(src, fc, hb.send[i].data());
  return mpi::isend(hb.send[i].data(), static_cast<int>(fc.count), MPI_DOUBLE, fc.peer, fc.send_tag, g.comm);
}

}  // namespace

// Rabenseifner and Wellein's masteronly on hytask, the run hytask-model reads (docs/model.md):
// main exchanges the halos (all receives, all sends, then waits: both directions at once, as
// the overlapping variants exchange), then tasks compute and main waits for them. The work
// that reads no halo of this iteration (the inner domain) runs in tasks named "overlap:...",
// the marker hytask-model counts as overlappable (f_comp,overlap); the boundary in tasks
// named "boundary" (f_comp,non). One task per worker and part, split as hybrid-blocking
// splits its threads' shares.
pass_result run_masteronly(const domain& g, const fields& f, const pass_args& a) {
  init_fields(g, f);
  const bool packed = g.opts.halo == halo_mode::packed;
  const std::size_t nf = g.faces.size();
  halo_buffers hb(g);
  const box inner = g.inner();
  const std::vector<box> boundary = g.boundary();
  const int parts = std::max(1, a.threads);
  std::vector<mpi::request> reqs;
  pass_result res;
  MPI_Barrier(g.comm);
  const double t0 = MPI_Wtime();
  for (int k = 0; k < a.iters; ++k) {
    double* src = f[k];
    double* dst = f[k + 1];
    if (a.communicate) {
      reqs.clear();
      for (std::size_t i = 0; i < nf; ++i) reqs.push_back(post_halo_recv(g, i, src, hb));
      for (std::size_t i = 0; i < nf; ++i) reqs.push_back(post_halo_send(g, i, src, hb));
      mpi::waitall(reqs);  // no task exists yet: main only waits
      if (packed)
        for (std::size_t i = 0; i < nf; ++i) g.unpack(src, g.faces[i], hb.recv[i].data());
    }
    for (int p = 0; p < parts; ++p)
      hytask::spawn({.name = "overlap:inner"}, [&g, &inner, src, dst, parts, p] { g.sweep(src, dst, split(inner, parts, p)); });
    for (int p = 0; p < parts; ++p)
      hytask::spawn({.name = "boundary"}, [&g, &boundary, src, dst, parts, p] {
        for (const box& b : boundary) g.sweep(src, dst, split(b, parts, p));
      });
    hytask::wait_all();
  }
  MPI_Barrier(g.comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

// Seed 000's commtask (Alg. 4.7, 5.1): each iteration, main posts the halo receives and,
// after packing, the sends (the init regions); the inner blocks are ordinary tasks; each
// boundary block is released — at high priority — once the receives it reads from have
// completed (the finalize regions, with hytask's progress engine as the advance-check). The
// iteration ends when all its tasks and sends have completed, as in the thesis.
pass_result run_commtask(const domain& g, const fields& f, const pass_args& a) {
  init_fields(g, f);
  const block_grid blocks(g);
  const bool packed = g.opts.halo == halo_mode::packed;
  const std::size_t nf = g.faces.size();
  halo_buffers hb(g);
  std::vector<char> halo_token(std::max<std::size_t>(nf, 1));  // "this face's halo is in"
  pass_result res;
  MPI_Barrier(g.comm);
  const double t0 = MPI_Wtime();
  for (int k = 0; k < a.iters; ++k) {
    double* src = f[k];
    double* dst = f[k + 1];
    std::vector<mpi::request> sends;
    if (a.communicate) {
      for (std::size_t i = 0; i < nf; ++i) {
        const face& fc = g.faces[i];
        mpi::request r = post_halo_recv(g, i, src, hb);
        // Unpacking (nothing, with datatypes) is the receive's finalize work.
        hytask::spawn({.priority = 1, .name = "halo in"}, [&g, &fc, src, buf = hb.recv[i].data(), packed] {
          if (packed) g.unpack(src, fc, buf);
        }, hytask::after(r), hytask::out(halo_token[i]));
      }
      for (std::size_t i = 0; i < nf; ++i) sends.push_back(post_halo_send(g, i, src, hb));
    }
    std::vector<hytask::region_access> deps;
    for (std::size_t b = 0; b < blocks.boxes.size(); ++b) {
      const box bx = blocks.boxes[b];
      const unsigned needs = a.communicate ? blocks.needs[b] : 0;
      deps.clear();
      for (std::size_t i = 0; i < nf; ++i)
        if (needs & (1u << i)) deps.push_back(hytask::in(halo_token[i]));
      hytask::spawn({.priority = needs ? 1 : 0, .name = needs ? "boundary" : "inner"},
                    [&g, src, dst, bx] { g.sweep(src, dst, bx); }, hytask::regions(deps));
    }
    if (!sends.empty()) mpi::waitall(sends);  // main runs tasks meanwhile
    hytask::wait_all();
  }
  MPI_Barrier(g.comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

// Dataflow: every block of every iteration is a task that reads the blocks of the previous
// iteration within its stencil's reach and writes its own block; halo messages are tasks
// with the same kind of dependencies. Nothing waits for a whole iteration: a block of
// iteration k + 1 starts as soon as its neighbours of iteration k are done, so the inner
// blocks of later iterations run while earlier halos are on the wire (seeds 004, 001).
// Storage is the same two fields; dependencies on per-block tokens order the reuse (a
// block of iteration k + 1 overwrites what iteration k - 1's readers and sends read).
pass_result run_dataflow(const domain& g, const fields& f, const pass_args& a) {
  init_fields(g, f);
  const block_grid blocks(g);
  const block_graph graph(g, blocks);
  const bool packed = g.opts.halo == halo_mode::packed;
  const std::size_t nf = g.faces.size(), nb = blocks.boxes.size();

  // Tokens: one byte each, per parity of the field they stand for.
  std::vector<char> block_token[2] = {std::vector<char>(nb), std::vector<char>(nb)};
  std::vector<char> halo_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  std::vector<char> sbuf_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  std::vector<char> rbuf_token[2] = {std::vector<char>(nf + 1), std::vector<char>(nf + 1)};
  face_buffers buffers(g, packed);
  auto& sbuf = buffers.send;
  auto& rbuf = buffers.recv;

  // What each block reads of the previous iteration, the halo chain, the faces' blocks.
  const auto& reads = graph.reads;
  const auto& priority = graph.priority;
  const auto& face_blocks = graph.face_blocks;

  // Run-ahead window: iteration k is spawned once iteration k - window has completed. The
  // dependencies alone let the middle of the domain run many iterations ahead of the halo
  // chain, and ready blocks run newest first, so the blocks the next send needs (those of
  // older iterations, in the cone under the boundary) starved: a trace showed 70 ms without
  // a message. The window keeps older work in reach, and tasks in flight bounded.
  const int window = g.opts.window > 0 ? g.opts.window : default_window;
  std::vector<std::unique_ptr<hytask::event>> done(static_cast<std::size_t>(window));  // a ring
  pass_result res;
  MPI_Barrier(g.comm);
  const double t0 = MPI_Wtime();
  std::vector<hytask::region_access> deps;
  for (int k = 0; k < a.iters; ++k) {
    const int s = k % 2, d = 1 - s;
    auto& ev = done[static_cast<std::size_t>(k % window)];
    if (ev) ev->wait();  // iteration k - window; main runs tasks meanwhile
    double* src = f[s];
    double* dst = f[d];
    if (a.communicate) {
      for (std::size_t i = 0; i < nf; ++i) {
        const face& fc = g.faces[i];
        if (packed) {
          hytask::spawn({.priority = 1, .name = "recv"}, [&g, &fc, buf = rbuf[s][i].data()] {
            mpi::bind(mpi::irecv(buf, static_cast<int>(fc.count), MPI_DOUBLE, fc.peer, fc.recv_tag, g.comm));
          }, hytask::out(rbuf_token[s][i]), mpi::recv_channel(fc.peer, fc.recv_tag, g.comm));
          hytask::spawn({.priority = 1, .name = "unpack"}, [&g, &fc, src, buf = rbuf[s][i].data()] {
            g.unpack(src, fc, buf);
          }, hytask::in(rbuf_token[s][i]), hytask::out(halo_token[s][i]));
        } else {
          hytask::spawn({.priority = 1, .name = "recv"}, [&g, &fc, src] {
            mpi::bind(mpi::irecv(src, 1, fc.recv_type, fc.peer, fc.recv_tag, g.comm));
          }, hytask::out(halo_token[s][i]), mpi::recv_channel(fc.peer, fc.recv_tag, g.comm));
        }
        deps.clear();
        for (std::size_t b : face_blocks[i]) deps.push_back(hytask::in(block_token[s][b]));
        if (packed) {
          deps.push_back(hytask::out(sbuf_token[s][i]));
          hytask::spawn({.priority = 1, .name = "pack"}, [&g, &fc, src, buf = sbuf[s][i].data()] {
            g.pack(src, fc, buf);
          }, hytask::regions(deps));
          hytask::spawn({.priority = 1, .name = "send"}, [&g, &fc, buf = sbuf[s][i].data()] {
            mpi::bind(mpi::isend(buf, static_cast<int>(fc.count), MPI_DOUBLE, fc.peer, fc.send_tag, g.comm));
          }, hytask::in(sbuf_token[s][i]), mpi::send_channel(fc.peer, fc.send_tag, g.comm));
        } else {
          // Sending straight from the field: the task completes with the send, so the
          // next writer of these blocks waits for it.
          hytask::spawn({.priority = 1, .name = "send"}, [&g, &fc, src] {
            mpi::bind(mpi::isend(src, 1, fc.send_type, fc.peer, fc.send_tag, g.comm));
          }, hytask::regions(deps), mpi::send_channel(fc.peer, fc.send_tag, g.comm));
        }
      }
    }
    for (std::size_t b = 0; b < nb; ++b) {
      const unsigned needs = a.communicate ? blocks.needs[b] : 0;
      deps.clear();
      deps.push_back(hytask::out(block_token[d][b]));
      for (std::size_t n : reads[b]) deps.push_back(hytask::in(block_token[s][n]));
      for (std::size_t i = 0; i < nf; ++i)
        if (needs & (1u << i)) deps.push_back(hytask::in(halo_token[s][i]));
      const box bx = blocks.boxes[b];
      hytask::spawn({.priority = priority[b], .name = blocks.needs[b] ? "boundary" : "inner"},
                    [&g, src, dst, bx] { g.sweep(src, dst, bx); }, hytask::regions(deps));
    }
    ev = spawn_iteration_marker(block_token[d], deps);  // completes with iteration k
  }
  hytask::wait_all();
  MPI_Barrier(g.comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

// Intercepted: the mpi-nonblocking variant's exchange, unchanged — plain_exchange's
// MPI_Irecv, MPI_Isend (packing first) and MPI_Waitall (unpacking after) — made inside one
// hytask task per iteration, in the dataflow variant's graph of block tasks and run-ahead
// window. The exchange task of iteration k reads the blocks along the faces that its sends
// read (written by iteration k - 1) and writes the halos that iteration k's boundary blocks
// read. Linked with the interception library, its MPI_Waitall suspends only that task, so
// inner blocks of this and later iterations compute while the halos travel; with
// HYTASK_INTERCEPT=0 it holds a worker until they are in. Beside dataflow the difference is
// the exchange's granularity: one task posts every face and waits for them all, where
// dataflow has a receive and a send task per face, each released on its own.
pass_result run_intercepted(const domain& g, const fields& f, const pass_args& a) {
  init_fields(g, f);
  const block_grid blocks(g);
  const block_graph graph(g, blocks);
  const std::size_t nb = blocks.boxes.size();
  std::vector<std::size_t> sent_blocks;  // read by some face's send
  for (const auto& list : graph.face_blocks) sent_blocks.insert(sent_blocks.end(), list.begin(), list.end());
  std::sort(sent_blocks.begin(), sent_blocks.end());
  sent_blocks.erase(std::unique(sent_blocks.begin(), sent_blocks.end()), sent_blocks.end());

  // Tokens per parity of the field they stand for: a block each, the halos as one.
  std::vector<char> block_token[2] = {std::vector<char>(nb), std::vector<char>(nb)};
  char halo_token[2] = {0, 0};
  // One exchange at a time: the exchange of k + 1 reads blocks of k, which read k's halos.
  plain_exchange ex(g);

  const int window = g.opts.window > 0 ? g.opts.window : default_window;
  std::vector<std::unique_ptr<hytask::event>> done(static_cast<std::size_t>(window));
  pass_result res;
  MPI_Barrier(g.comm);
  const double t0 = MPI_Wtime();
  std::vector<hytask::region_access> deps;
  for (int k = 0; k < a.iters; ++k) {
    const int s = k % 2, d = 1 - s;
    auto& ev = done[static_cast<std::size_t>(k % window)];
    if (ev) ev->wait();  // iteration k - window; main runs tasks meanwhile
    double* src = f[s];
    double* dst = f[d];
    if (a.communicate && !g.faces.empty()) {
      deps.clear();
      for (std::size_t b : sent_blocks) deps.push_back(hytask::in(block_token[s][b]));
      deps.push_back(hytask::out(halo_token[s]));
      hytask::spawn({.priority = 1, .name = "exchange"}, [&ex, src] {
        ex.post(src);
        ex.wait(src);
      }, hytask::regions(deps));
    }
    for (std::size_t b = 0; b < nb; ++b) {
      const bool needs = a.communicate && blocks.needs[b] != 0;
      deps.clear();
      deps.push_back(hytask::out(block_token[d][b]));
      for (std::size_t n : graph.reads[b]) deps.push_back(hytask::in(block_token[s][n]));
      if (needs) deps.push_back(hytask::in(halo_token[s]));
      const box bx = blocks.boxes[b];
      hytask::spawn({.priority = graph.priority[b], .name = blocks.needs[b] ? "boundary" : "inner"},
                    [&g, src, dst, bx] { g.sweep(src, dst, bx); }, hytask::regions(deps));
    }
    ev = spawn_iteration_marker(block_token[d], deps);
  }
  hytask::wait_all();
  MPI_Barrier(g.comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

}  // namespace jacobi
