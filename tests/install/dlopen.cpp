// Loads a library with dlopen, as a plugin host or a Python extension would, and says why
// it could not: every dependency must be linked in and its thread-locals must fit.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dlopen <library>\n");
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  std::printf("dlopen ok\n");
  return dlclose(library) == 0 ? 0 : 1;
}
