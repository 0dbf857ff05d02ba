// Where HYTASK_TRACE's files go. Each rank writes its own timeline; the job's merged trace
// (one file for every rank) is written by rank 0 at the end.
//
// - "%r" in the path becomes the rank (and "all" for the merged trace);
// - otherwise, with several ranks, ".rank<r>" goes before the extension, and the merged trace
//   takes the path itself;
// - a path ending in ".otf2" names the OTF2 archive: the ranks' timelines are then JSON files
//   beside it (".rank<r>.json"), removed once merged.
#pragma once

#include <string>

namespace hytask::trace {

std::string rank_path(const std::string& path, int rank, int size);
std::string job_path(const std::string& path);
// Whether the run ends with a merge: several ranks, or OTF2 asked for.
bool merged(const std::string& path, int size);

}  // namespace hytask::trace
