#include "node/node_table.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "hytask/errors.hpp"

namespace hytask::node {

node_table::node_table(MPI_Comm world) {
  MPI_Comm local = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
    throw usage_error("HYTASK_PROGRESS=node: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  bytes_ = sizeof(node_header) + sizeof(node_row) * static_cast<std::size_t>(local_size_);

  // The first rank creates the segment under a name unique on this node and tells the others.
  char name[64] = {};
  int error = 0;
  int fd = -1;
  if (local_rank_ == 0) {
    static std::atomic<unsigned> serial{0};
    std::snprintf(name, sizeof name, "/hytask-node-%d-%u", static_cast<int>(getpid()),
                  serial.fetch_add(1));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes_)) != 0) error = errno ? errno : EIO;
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, local);
  MPI_Bcast(&error, 1, MPI_INT, 0, local);
  if (error == 0 && local_rank_ != 0) {
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) error = errno;
  }
  if (fd >= 0) {
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      error = errno;
    }
  }
  if (local_rank_ == 0 && base_ != nullptr) {
    header_ = ::new (base_) node_header;
    header_->local_size = static_cast<std::uint32_t>(local_size_);
    auto* rows = reinterpret_cast<node_row*>(static_cast<char*>(base_) + sizeof(node_header));
    for (int i = 0; i < local_size_; ++i) ::new (&rows[i]) node_row;
  }
  // Everyone mapped it (or failed): the name can go.
  int any_error = 0;
  MPI_Allreduce(&error, &any_error, 1, MPI_INT, MPI_MAX, local);
  if (local_rank_ == 0 && name[0] != '\0') shm_unlink(name);
  MPI_Comm_free(&local);
  if (any_error != 0) {
    if (fd >= 0) close(fd);
    if (base_ != nullptr) munmap(base_, bytes_);
    base_ = nullptr;
    throw usage_error(std::string("HYTASK_PROGRESS=node: the node table (shared memory in "
                                  "/dev/shm) could not be created: ") +
                      std::strerror(any_error) +
                      "; check that /dev/shm is mounted and writable, or use "
                      "HYTASK_PROGRESS=thread");
  }
  fd_ = fd;  // kept open: hytask-info --node finds the table through /proc/<pid>/fd
  header_ = static_cast<node_header*>(base_);
  rows_ = reinterpret_cast<node_row*>(static_cast<char*>(base_) + sizeof(node_header));
  node_row& me = mine();
  me.world_rank = rank;
  me.pid.store(static_cast<std::int32_t>(getpid()), std::memory_order_relaxed);
  me.state.store(row_attached, std::memory_order_release);
}

node_table::~node_table() {
  if (base_ == nullptr) return;
  mine().state.store(row_detached, std::memory_order_release);
  munmap(base_, bytes_);
  if (fd_ >= 0) close(fd_);
}

}  // namespace hytask::node
