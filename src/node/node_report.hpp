// Reads the node tables of the HYTASK_PROGRESS=node jobs running on this machine, from
// outside them (hytask-info --node): every rank keeps its table's descriptor open, so the
// table is found through /proc/<pid>/fd even though its name was unlinked. Read-only.
#pragma once

#include <string>

namespace hytask::node {

// A report of every table found: the agent and a row per local rank with seed 002's
// counters. Tables of processes that belong to another user cannot be read and are not shown.
std::string describe_tables();

}  // namespace hytask::node
