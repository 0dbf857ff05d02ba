// hytask::mpi::serialized_section: call MPI yourself beside hytask under
// HYTASK_MPI_MODE=serialized.
//
// ```cpp context=mpi
// {
//   hytask::mpi::serialized_section mpi;  // hytask's MPI thread is outside MPI until the end
//   int flag = 0;
//   MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
// }
// ```
//
// In `serialized` mode hytask asks MPI for MPI_THREAD_SERIALIZED: any thread may call MPI,
// one at a time. hytask's own calls are all made by its MPI thread, which holds one lock
// while it is inside MPI; a section holds the same lock, so the program's calls made inside
// sections never overlap hytask's or each other's. While a section is open hytask makes no
// progress on this rank: keep sections short, and do not wait inside one for something only
// hytask's operations can bring (a blocking receive of a message a hytask task sends).
//
// Outside `serialized` mode a section only orders the sections among themselves: in
// `multiple` mode the program needs none, and in `funneled` and `masteronly` modes the
// program's own MPI calls follow those modes' rules (docs/mpi.md, "Access modes").
#pragma once

namespace hytask::mpi {

class serialized_section {
 public:
  serialized_section();   // waits until hytask's MPI thread is outside MPI
  ~serialized_section();  // lets it in again
  serialized_section(const serialized_section&) = delete;
  serialized_section& operator=(const serialized_section&) = delete;
};

}  // namespace hytask::mpi
