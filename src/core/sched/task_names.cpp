// Task names, interned for the life of the process.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "core/sched/scheduler.hpp"
#include "platform/messages.hpp"

namespace hytask::core {

// ---- names ---------------------------------------------------------------------------

const char* intern_name(std::string_view name) {
  if (name.empty()) return nullptr;
  struct entry {
    const char* key = nullptr;
    std::size_t len = 0;
    const char* value = nullptr;
  };
  thread_local entry cache[64];
  entry& e = cache[(reinterpret_cast<std::uintptr_t>(name.data()) >> 3 ^ name.size()) & 63];
  if (e.key == name.data() && e.len == name.size() && std::memcmp(e.value, name.data(), e.len) == 0)
    return e.value;
  static std::mutex m;
  static std::unordered_set<std::string> names;
  static bool warned = false;
  constexpr std::size_t max_names = 1 << 20;
  const char* value;
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = names.find(std::string(name));
    if (it == names.end()) {
      if (names.size() >= max_names) {
        if (!warned) {
          messagef(verbosity::warning,
                   "more than %zu distinct task names; further new names show as '(unnamed)'. "
                   "Use a few names and put varying data elsewhere.",
                   max_names);
          warned = true;
        }
        return "(unnamed)";
      }
      it = names.emplace(name).first;
    }
    value = it->c_str();
  }
  e = entry{name.data(), name.size(), value};
  return value;
}

}  // namespace hytask::core
