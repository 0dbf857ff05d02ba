// The blocks of commtask, dataflow and omp-detach, and the dependencies between blocks of
// consecutive iterations that dataflow and omp-detach declare (docs/jacobi3d.md).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "domain.hpp"

namespace jacobi {

// The domain cut into blocks: low band / chunks of the middle / high band along each axis,
// so a block either reads no refreshed halo (an inner block) or lies within `radius` of a
// face (a boundary block, whose `needs` says which halos it reads).
struct block_grid {
  explicit block_grid(const domain& g) {
    for (int d = 0; d < 3; ++d) iv[d] = g.intervals(d, g.opts.block[d]);
    for (const auto& z : iv[0])
      for (const auto& x : iv[1])
        for (const auto& y : iv[2]) {
          box b{{z[0], x[0], y[0]}, {z[1], x[1], y[1]}};
          boxes.push_back(b);
          needs.push_back(g.needs(b));
        }
  }
  std::size_t id(std::size_t i0, std::size_t i1, std::size_t i2) const {
    return (i0 * iv[1].size() + i1) * iv[2].size() + i2;
  }
  std::array<std::vector<std::array<int, 2>>, 3> iv;
  std::vector<box> boxes;
  std::vector<unsigned> needs;
};

// Across iterations: what each block of iteration k + 1 reads of iteration k, which blocks
// are on the halo chain, and which blocks each face's send reads.
struct block_graph {
  block_graph(const domain& g, const block_grid& blocks) {
    const std::size_t nb = blocks.boxes.size(), nf = g.faces.size();
    const int r = g.radius;
    // Per block: the blocks its stencil reads (itself and, along each axis, those within r).
    reads.resize(nb);
    for (std::size_t i0 = 0; i0 < blocks.iv[0].size(); ++i0)
      for (std::size_t i1 = 0; i1 < blocks.iv[1].size(); ++i1)
        for (std::size_t i2 = 0; i2 < blocks.iv[2].size(); ++i2) {
          const std::size_t idx[3] = {i0, i1, i2};
          const std::size_t self = blocks.id(i0, i1, i2);
          std::vector<std::size_t>& list = reads[self];
          list.push_back(self);
          for (int d = 0; d < 3; ++d) {
            const auto& own = blocks.iv[d][idx[d]];
            for (std::size_t j = 0; j < blocks.iv[d].size(); ++j) {
              if (j == idx[d]) continue;
              const auto& other = blocks.iv[d][j];
              if (other[1] <= own[0] - r || other[0] >= own[1] + r) continue;
              std::size_t n[3] = {i0, i1, i2};
              n[d] = j;
              list.push_back(blocks.id(n[0], n[1], n[2]));
            }
          }
        }
    // The halo chain is the critical path: a send of iteration k + 1 reads the boundary
    // blocks of k, which read the blocks next to them of k - 1. Those run at high priority
    // too, or ready inner blocks of later iterations delay the chain by whole iterations
    // (seen in traces: 70 ms without a message).
    priority.assign(nb, 0);
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t n : reads[b])
        if (blocks.needs[n]) priority[b] = 1;
    // Per face: the blocks its send reads.
    face_blocks.resize(nf);
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t i = 0; i < nf; ++i)
        if (blocks.needs[b] & (1u << i)) face_blocks[i].push_back(b);
  }
  std::vector<std::vector<std::size_t>> reads;
  std::vector<int> priority;
  std::vector<std::vector<std::size_t>> face_blocks;
};

// The packed exchange's buffers of dataflow and omp-detach: per parity of the field and per
// face, a send and a receive buffer of the face's size (empty with datatype halos).
struct face_buffers {
  face_buffers(const domain& g, bool packed) {
    for (int p = 0; p < 2; ++p) {
      send[p].resize(g.faces.size());
      recv[p].resize(g.faces.size());
      if (packed)
        for (std::size_t i = 0; i < g.faces.size(); ++i) {
          send[p][i].resize(static_cast<std::size_t>(g.faces[i].count));
          recv[p][i].resize(static_cast<std::size_t>(g.faces[i].count));
        }
    }
  }
  std::vector<std::vector<double>> send[2], recv[2];
};

}  // namespace jacobi
