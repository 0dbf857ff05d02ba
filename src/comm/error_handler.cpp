// The forwarding error handler (comm/error_handler.hpp): installed in place of the aborting
// ones, it returns during hytask's calls and aborts during the program's own.
#include "comm/error_handler.hpp"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"

namespace hytask::mpi::detail {

namespace {

thread_local bool t_calling = false;
thread_local unsigned long t_forwarded = 0;

// Process-wide and never destroyed: a communicator keeps the forwarding handler after the
// runtime ends, and the handler then needs to know what it replaced.
struct registry {
  std::mutex mutex;
  MPI_Errhandler forwarding = MPI_ERRHANDLER_NULL;
  std::unordered_map<MPI_Comm, MPI_Errhandler> previous;  // communicator -> the aborting
                                                          // handler it had
};

registry& reg() {
  static registry* r = new registry;
  return *r;
}

// The predefined handlers that end the job. Only those are replaced: MPI_ERRORS_RETURN
// already returns, and a program's own handler is called by MPI during hytask's calls too
// (MPI cannot call it for us from inside another handler); when it returns, the code
// becomes an exception as usual.
bool aborts(MPI_Errhandler h) {
#ifdef MPI_ERRORS_ABORT
  if (h == MPI_ERRORS_ABORT) return true;
#endif
  return h == MPI_ERRORS_ARE_FATAL;
}

void forward(MPI_Comm* comm, int* code, ...) {
  if (t_calling) {  // hytask's own call: the returned code becomes an exception
    ++t_forwarded;
    return;
  }
  // The program's own call: end the job as the replaced handler would have.
  registry& r = reg();
  MPI_Errhandler prev = MPI_ERRORS_ARE_FATAL;  // inherited by a communicator made from one
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.previous.find(*comm);
    if (it != r.previous.end()) prev = it->second;
  }
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(*code, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  const bool fatal = prev == MPI_ERRORS_ARE_FATAL;
  core::messagef(core::verbosity::error, "MPI error in a call of the program (%s): %s",
                 fatal ? "MPI_ERRORS_ARE_FATAL" : "MPI_ERRORS_ABORT", text);
  core::wait_until_stderr_read();
  MPI_Abort(fatal ? MPI_COMM_WORLD : *comm, *code);
}

// Replaces comm's handler by the forwarding one if it is one that aborts.
void install(registry& r, MPI_Comm comm) {
  if (r.forwarding == MPI_ERRHANDLER_NULL) MPI_Comm_create_errhandler(&forward, &r.forwarding);
  MPI_Errhandler current = MPI_ERRHANDLER_NULL;
  if (MPI_Comm_get_errhandler(comm, &current) != MPI_SUCCESS) return;
  if (aborts(current)) {
    r.previous[comm] = current;
    MPI_Comm_set_errhandler(comm, r.forwarding);
  }
  // Drop the reference get_errhandler gave us; predefined handlers are left alone (some
  // MPI versions refuse to free them).
  if (!aborts(current) && current != MPI_ERRORS_RETURN) MPI_Errhandler_free(&current);
}

}  // namespace

calling_mpi::calling_mpi() noexcept : outer_(!t_calling) { t_calling = true; }
calling_mpi::~calling_mpi() {
  if (outer_) t_calling = false;
}

bool in_hytask_call() noexcept { return t_calling; }

unsigned long forwarded_errors() noexcept { return t_forwarded; }

bool errors_abort(MPI_Comm comm) {
  calling_mpi guard;  // an invalid communicator must not end the job here
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  if (comm == MPI_COMM_NULL || MPI_Comm_get_errhandler(comm, &h) != MPI_SUCCESS) {
    h = MPI_ERRHANDLER_NULL;
    if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h) != MPI_SUCCESS) return true;
  }
  registry& r = reg();
  bool abort = aborts(h);
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    abort = abort || (h != MPI_ERRHANDLER_NULL && h == r.forwarding);
  }
  if (!aborts(h) && h != MPI_ERRORS_RETURN && h != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&h);
  return abort;
}

void forward_errors(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  // Most programs use one or two communicators: remember the last one on this thread.
  thread_local MPI_Comm last = MPI_COMM_NULL;
  if (comm == last) return;
  registry& r = reg();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    install(r, comm);
  }
  last = comm;
}

void forward_predefined_errors() {
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  install(r, MPI_COMM_WORLD);
  install(r, MPI_COMM_SELF);
}

void restore_predefined_errors() {
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    auto it = r.previous.find(c);
    if (it != r.previous.end()) MPI_Comm_set_errhandler(c, it->second);
  }
}

}  // namespace hytask::mpi::detail
