// ThreadSanitizer settings of the comm tests (tsan.mpi.*), compiled into them.
//
// The MPI library is not built with TSan, so TSan cannot see how it synchronises: its
// processes share memory segments (Open MPI's vader, MPICH's nemesis) guarded by atomics
// that TSan does not observe, and it takes locks in orders that only matter among its own
// threads. Reports with a frame inside MPI are therefore noise about MPI, not findings about
// hytask, and are suppressed by module name; a race between two accesses made by hytask or
// by the test is still reported. DEVELOPERS.md lists
// these suppressions and why each is needed.
extern "C" {
const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0";
}
const char* __tsan_default_suppressions() {
  // Reports with a frame in one of these libraries (by module name).
  return
      // Open MPI: the library, its runtime layers, its dlopen()ed components (mca_*.so)
      "race:libmpi.so\n"
      "race:libopen-pal.so\n"
      "race:libopen-rte.so\n"
      "race:mca_\n"
      "race:libpmix.so\n"
      "deadlock:libmpi.so\n"
      "deadlock:libopen-pal.so\n"
      "deadlock:mca_\n"
      // MPICH and the transports it uses (UCX, libfabric)
      "race:libmpich.so\n"
      "race:libuc\n"
      "race:libfabric.so\n"
      "deadlock:libmpich.so\n"
      "deadlock:libuc\n"
      "mutex:libucm.so\n";
}
}
