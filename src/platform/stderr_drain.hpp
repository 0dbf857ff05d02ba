// Letting a launcher see a last message before the job is aborted.
//
// MPI launchers read their ranks' stderr through a pipe. One that handles MPI_Abort before
// draining those pipes (MPICH's Hydra under load) drops whatever the rank printed last: the
// very message that says why the job ends. Call this after writing (and flushing) such a
// message and before aborting.
#pragma once

#include <sys/ioctl.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

namespace hytask::core {

// Waits, at most `limit`, until the reader of this process's stderr pipe has taken everything
// written to it. Returns at once when stderr is not a pipe (a terminal, a file).
inline void wait_until_stderr_read(std::chrono::milliseconds limit = std::chrono::seconds(2)) {
  struct stat st {};
  if (fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int pending = 0;
  while (ioctl(2, FIONREAD, &pending) == 0 && pending > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace hytask::core
