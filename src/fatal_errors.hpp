// What happens to a hytask exception that the program does not catch.
//
// By default C++ ends such a program with "terminate called after throwing an instance of
// ..." and a core dump (status 134), which hides the message that names the fix. Once a
// runtime is created, hytask's own exceptions (config_error, usage_error, mpi::error) that
// escape main instead print "hytask: <message>" and end the program with status 1; any
// other exception goes to the handler that was installed before. Under an MPI launcher the
// job ends with MPI_Abort (MPI is initialised for that if the error came first) and the
// message is printed once: rank 0 prints at once, other ranks wait a moment first, so that
// when every rank fails alike rank 0's abort has ended them before they print.
#pragma once

namespace hytask::detail {

// Installs the handler (once per process; later calls do nothing).
void install_fatal_error_handler();

}  // namespace hytask::detail
