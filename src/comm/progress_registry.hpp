// The progress policies (HYTASK_PROGRESS) by name, and the factory of each. A policy's file
// registers its factory (register_progress_<policy>(): comm's own three here, node's in
// node/progress_node.hpp), and the runtime calls the registrations before it creates the
// comm system: comm names no policy of a layer above it. The names are spelt here only.
#pragma once

#include <array>
#include <memory>

#include "hytask/config.hpp"

namespace hytask::mpi::detail {

class comm_system;
class progress_policy_impl;

// Every policy, in the order HYTASK_PROGRESS lists them.
inline constexpr std::array<hytask::progress_policy, 4> progress_policies = {
    hytask::progress_policy::workers, hytask::progress_policy::thread,
    hytask::progress_policy::node, hytask::progress_policy::none};

// Its name in HYTASK_PROGRESS: "workers", "thread", "node" or "none".
const char* progress_policy_name(hytask::progress_policy p) noexcept;

using progress_factory = std::unique_ptr<progress_policy_impl> (*)(comm_system& c);

// Makes factory the one of policy p (registering again replaces it).
void register_progress_policy(hytask::progress_policy p, progress_factory factory) noexcept;

// The policy c's settings ask for, made by its factory; a usage_error when it has none.
std::unique_ptr<progress_policy_impl> make_progress_policy(comm_system& c);

// comm's own policies, one file each (progress_<policy>.cpp), and all three.
void register_progress_workers() noexcept;
void register_progress_thread() noexcept;
void register_progress_none() noexcept;
void register_comm_progress_policies() noexcept;

}  // namespace hytask::mpi::detail
