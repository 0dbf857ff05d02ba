// The merge's OTF2 output (Score-P's Open Trace Format 2, which Vampir and otf2-print read):
// a process (location group) per rank, a location per thread, a region per task name and
// per MPI call, and MPI point-to-point records for the traced sends and receives. Built
// when CMake finds the OTF2 library (Debian: libotf2-trace-dev).
#pragma once

#include <memory>
#include <string>

namespace hytask::trace {

class merge_sink;

// Whether this build writes OTF2.
bool otf2_available() noexcept;
// Opens the archive whose anchor file is `path` ("dir/name.otf2": dir/name.def and the
// directory dir/name/ beside it). Throws std::runtime_error when it cannot, or when this
// build has no OTF2 (the message says how to get it).
std::unique_ptr<merge_sink> make_otf2_sink(const std::string& path);

}  // namespace hytask::trace
