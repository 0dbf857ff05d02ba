// The runtime's life, misused as programs do, must end with a message that names the
// problem and the fix, and the program must end cleanly. One scenario per run:
//   outlive         a global_array and a tiled_matrix still alive at the runtime's end (held
//                   outside its scope): the end names them and where they were created, and
//                   releases their windows; afterwards local() reads this rank's last values,
//                   get() throws a usage_error, and the objects' destructors call no MPI
//   second_runtime  a second hytask::runtime after the first ended (which initialised and
//                   finalised MPI): a usage_error that says the first one finalised MPI
// Each rank prints "runtime_misuse <scenario>: rank <r>: ok" when its checks passed (MPI is
// finalised by then: there is no collective verdict); a failed check prints FAILED.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int failures = 0;
int g_rank = -1;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "runtime_misuse: rank %d: FAILED: %s\n", g_rank, what.c_str());
  ++failures;
}

int outlive(int argc, char** argv) {
  std::unique_ptr<hytask::global_array<int>> a;
  std::unique_ptr<hytask::tiled_matrix<double>> m;
  {
    hytask::runtime rt(argc, argv);
    g_rank = hytask::mpi::rank();
    a.reset(new hytask::global_array<int>(10));  // here: the line the messages name
    m.reset(new hytask::tiled_matrix<double>(6, 6, 3, 3));
    for (std::size_t k = 0; k < a->local().size(); ++k) a->local()[k] = static_cast<int>(a->local_begin() + k) * 3;
    hytask::wait_all();
  }  // the runtime ends here, the objects still alive
  for (std::size_t k = 0; k < a->local().size(); ++k)
    check(a->local()[k] == static_cast<int>(a->local_begin() + k) * 3,
          "local() after the runtime's end does not read the last values");
  try {
    (void)(*a)[0].get();
    check(false, "get() after the runtime's end did not throw");
  } catch (const hytask::usage_error& e) {
    check(std::string(e.what()).find("after the runtime's end") != std::string::npos,
          std::string("get() after the runtime's end: ") + e.what());
  }
  m.reset();  // no MPI call: MPI is finalised
  a.reset();
  return 0;
}

int second_runtime(int argc, char** argv) {
  {
    hytask::runtime rt(argc, argv);
    g_rank = hytask::mpi::rank();
  }
  try {
    hytask::runtime again(argc, argv);
    check(false, "a second runtime under MPI started");
  } catch (const hytask::usage_error& e) {
    const std::string what = e.what();
    check(what.find("the first one initialised MPI and finalised it") != std::string::npos &&
              what.find("MPI_Finalize") != std::string::npos,
          "the second runtime's message: " + what);
    if (g_rank == 0) std::fprintf(stderr, "caught: %s\n", what.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario == "outlive") outlive(argc, argv);
  else if (scenario == "second_runtime") second_runtime(argc, argv);
  else {
    std::fprintf(stderr, "usage: runtime_misuse outlive|second_runtime\n");
    return 2;
  }
  // On stderr, after the runtime's messages there.
  if (failures == 0) std::fprintf(stderr, "runtime_misuse %s: rank %d: ok\n", scenario.c_str(), g_rank);
  return failures == 0 ? 0 : 1;
}
