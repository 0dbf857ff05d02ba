// Honouring `priority` clauses by default (omp/task_priority.hpp).
#include "omp/task_priority.hpp"

#include <link.h>
#include <omp.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace hytask::omp::detail {

namespace {

constexpr char kVariable[] = "OMP_MAX_TASK_PRIORITY";
constexpr char kValue[] = "1000000";
// Added beside the variable when hytask_omp re-executes the program, so that the new image
// knows the value is hytask_omp's and not the user's.
constexpr char kMarker[] = "HYTASK_OMP_SET_MAX_TASK_PRIORITY";

// Written before main, single-threaded.
const char* g_priority_state = "OMP_MAX_TASK_PRIORITY left unset: priority clauses are ignored";

bool starts_with(const char* s, const char* prefix, std::size_t n) {
  return std::strncmp(s, prefix, n) == 0 && s[n] == '=';
}

#ifdef HYTASK_OMP_PREINIT
// Runs before every shared library's constructor, with glibc's environ not yet set: reads the
// environment from its argument, calls nothing that needs an initialised libc but execve.
void before_libraries(int, char** argv, char** envp) {
  std::size_t n = 0;
  bool valgrind = false;
  for (char** e = envp; *e != nullptr; ++e, ++n) {
    if (starts_with(*e, kVariable, sizeof kVariable - 1)) return;  // the user's, or ours
    if (starts_with(*e, "LD_PRELOAD", 10) && std::strstr(*e, "vgpreload") != nullptr) valgrind = true;
  }
  bool libgomp = false;
  for (const link_map* m = _r_debug.r_map; m != nullptr; m = m->l_next)
    if (m->l_name != nullptr && std::strstr(m->l_name, "/libgomp.so") != nullptr) libgomp = true;
  if (!libgomp) return;  // libomp: the constructor below is in time
  if (valgrind) {
    g_priority_state = "OMP_MAX_TASK_PRIORITY unset, and hytask_omp does not re-execute the program "
              "under valgrind: priority clauses are ignored; set OMP_MAX_TASK_PRIORITY";
    return;
  }
  static char variable[] = "OMP_MAX_TASK_PRIORITY=1000000";
  static char marker[] = "HYTASK_OMP_SET_MAX_TASK_PRIORITY=1";
  char* env[n + 3];
  std::memcpy(env, envp, n * sizeof(char*));
  env[n] = variable;
  env[n + 1] = marker;
  env[n + 2] = nullptr;
  execve("/proc/self/exe", argv, env);
  g_priority_state = "OMP_MAX_TASK_PRIORITY unset, and hytask_omp could not re-execute the program "
            "(/proc/self/exe) to set it before GCC's libgomp reads it: priority clauses are "
            "ignored; set OMP_MAX_TASK_PRIORITY";
}

[[gnu::used, gnu::section(".preinit_array")]] void (*const g_preinit)(int, char**, char**) =
    &before_libraries;
#endif

[[gnu::constructor]] void before_main() {
  if (std::getenv(kVariable) != nullptr) {
    g_priority_state = std::getenv(kMarker) != nullptr
                  ? "OMP_MAX_TASK_PRIORITY=1000000 set by hytask_omp: priority clauses take effect"
                  : "OMP_MAX_TASK_PRIORITY from the environment";
    return;
  }
  if (std::strstr(g_priority_state, "left unset") == nullptr) return;  // the preinit step said why
  // libomp reads it later, at the first OpenMP construct; libgomp has read it already.
  if (setenv(kVariable, kValue, 0) == 0)
    g_priority_state = "OMP_MAX_TASK_PRIORITY=1000000 set by hytask_omp: priority clauses take effect";
}

}  // namespace

const char* task_priority_state() noexcept {
  if (omp_get_max_task_priority() == 0 && std::strstr(g_priority_state, "set by hytask_omp") != nullptr)
    return "OMP_MAX_TASK_PRIORITY=1000000 set by hytask_omp too late for GCC's libgomp (which "
           "reads it when it is loaded; hytask_omp built as a shared library cannot set it "
           "earlier): priority clauses are ignored; set OMP_MAX_TASK_PRIORITY in the environment";
  return g_priority_state;
}

}  // namespace hytask::omp::detail
