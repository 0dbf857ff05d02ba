// HYTASK_PROGRESS=node, the node layer's progress policy (node/progress_node.cpp): registered
// with comm's registry of policies (comm/progress_registry.hpp) by the runtime.
#pragma once

namespace hytask::node {

void register_progress_policy() noexcept;

}  // namespace hytask::node
