// A free list of fixed-size nodes, and an allocator over it for node-based containers.
//
// The dependency tracker's ordered map creates and erases a node per region fragment; with
// the global allocator that is a malloc and a free on the spawning thread for every new
// region. node_pool keeps freed nodes for the next insertion and allocates them in chunks,
// so a steady stream of spawns allocates nothing. Single-threaded, like its owner; memory is
// returned when the pool is destroyed.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace hytask::core {

class node_pool {
 public:
  node_pool() = default;
  node_pool(const node_pool&) = delete;
  node_pool& operator=(const node_pool&) = delete;
  ~node_pool() {
    for (void* c : chunks_) ::operator delete(c);
  }

  // Every allocation from one pool has the size and alignment of the first (a container
  // allocates one node type); others go to the global allocator.
  void* allocate(std::size_t bytes) {
    if (node_bytes_ == 0) node_bytes_ = round_up(bytes);
    if (round_up(bytes) != node_bytes_) return ::operator new(bytes);
    if (free_ == nullptr) refill();
    free_node* n = free_;
    free_ = n->next;
    return n;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    if (round_up(bytes) != node_bytes_) {
      ::operator delete(p);
      return;
    }
    auto* n = static_cast<free_node*>(p);
    n->next = free_;
    free_ = n;
  }

 private:
  struct free_node {
    free_node* next;
  };
  static constexpr std::size_t chunk_nodes = 64;
  static std::size_t round_up(std::size_t b) {
    constexpr std::size_t a = alignof(std::max_align_t);
    return (b + a - 1) / a * a;
  }
  void refill() {
    char* c = static_cast<char*>(::operator new(node_bytes_ * chunk_nodes));
    chunks_.push_back(c);
    for (std::size_t i = chunk_nodes; i-- > 0;) {
      auto* n = reinterpret_cast<free_node*>(c + i * node_bytes_);
      n->next = free_;
      free_ = n;
    }
  }

  free_node* free_ = nullptr;
  std::size_t node_bytes_ = 0;
  std::vector<void*> chunks_;
};

// A standard allocator that draws single objects from a node_pool (node-based containers
// allocate one node at a time) and anything else from the global allocator.
template <class T>
struct pool_allocator {
  static_assert(alignof(T) <= alignof(std::max_align_t), "node_pool nodes are max_align_t-aligned");
  using value_type = T;
  node_pool* pool;
  explicit pool_allocator(node_pool* p) noexcept : pool(p) {}
  template <class U>
  pool_allocator(const pool_allocator<U>& o) noexcept : pool(o.pool) {}
  T* allocate(std::size_t n) {
    if (n == 1) return static_cast<T*>(pool->allocate(sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1) pool->deallocate(p, sizeof(T));
    else ::operator delete(p);
  }
  template <class U>
  bool operator==(const pool_allocator<U>& o) const noexcept { return pool == o.pool; }
};

}  // namespace hytask::core
