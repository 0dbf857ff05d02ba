// Options of one task: its priority and its name.
#pragma once

#include <string_view>

namespace hytask {

struct task_options {
  // 0 is normal. A task with priority > 0 runs before every ready task of priority 0
  // (hytask has two classes: the high class is for communication and critical paths).
  int priority = 0;
  // Shown in traces, error messages and the watchdog. Copied at spawn; any string works.
  std::string_view name{};
};

}  // namespace hytask
