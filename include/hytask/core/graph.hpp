// graph: a task graph declared once and run many times.
//
// ```cpp context=tasks
// hytask::runtime rt(argc, argv);
// std::vector<double> a(n), b(n);
// hytask::graph g;
// g.add([&] { produce(a); }, hytask::out(a));
// g.add({.name = "consume"}, [&] { consume(a, b); }, hytask::in(a), hytask::out(b));
// for (int it = 0; it < 100; ++it) g.run();  // the dependencies were found once, by add
// ```
//
// add() records a task and its accesses; it runs nothing. The dependencies among the
// graph's tasks are found there, once, by the same rules as spawn's (hytask/core/access.hpp),
// in the order of the add calls. run() runs every task of the graph in that order of
// dependencies and returns when they have completed, like a spawn of each of them followed
// by wait_all — but a run declares nothing: a task is created only when its predecessors in
// the graph have completed, on the worker that completed the last of them, and runs there
// next; tasks without predecessors in the graph are created in ranges by the workers that
// run them, and independent ones (neither predecessors nor successors in the graph, nor a
// name or a priority) are not created at all: their bodies are called one after the other
// by range tasks, as a loop's iterations are, each still with its own this_task::id,
// children, exception and cancellation. So the cost of tracking dependencies is paid once
// per graph, not once per run, and a graph with millions of tasks holds records only for
// the tasks that are ready or running.
//
// The bodies are called once per run, so they must be callable again: state that changes
// between runs (a time step, a pointer to this run's buffers) is read by the body, not
// captured by value at add. Accesses are fixed at add: a graph whose tasks touch different
// memory each run is several graphs.
//
// run():
//   - is called from main or from a task; a task suspends there, main runs tasks;
//   - first waits for the earlier tasks of the caller that access memory the graph
//     accesses (it is ordered after them as a spawn would be), then runs the graph;
//   - ends with wait_all(): it returns when the graph's tasks and every other task the
//     caller spawned have completed, and rethrows the first exception, as wait_all does.
//     The successors in the graph of a task that threw are skipped.
//
// Tasks of the graph may spawn tasks and use every blocking call; only the graph's own
// tasks are recorded. Accesses are in/out/inout and hytask::regions lists: events, MPI
// requests and versioned objects need spawn. add() after seal() or the first run() is an
// error; so is calling add() while another thread adds or runs.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "hytask/core/access.hpp"
#include "hytask/core/task_options.hpp"

namespace hytask {

namespace detail {

struct graph_data;

// A recorded body: called with `obj` on every run, destroyed with the graph (destroy runs
// its destructor, null when it has none to run; its memory is the graph's).
struct graph_body {
  void* obj;
  void (*call)(void*);
  void (*destroy)(void*);
};

// Memory for the next body, in the graph's own storage, after the checks of add (a usage
// error if the graph cannot be added to).
void* graph_body_memory(graph_data* g, std::size_t bytes, std::size_t align);

// add's steps: begin (takes the body), the accesses, end; abort if an access threw.
std::size_t graph_begin(graph_data* g, const task_options& opts, graph_body body);
void graph_region(graph_data* g, const region_access& a);
void graph_end(graph_data* g);
void graph_abort(graph_data* g);

template <class A>
inline constexpr bool graph_recordable =
    std::is_same_v<A, region_access> || std::is_same_v<A, region_list>;

inline void graph_access(graph_data* g, const region_access& a) { graph_region(g, a); }
inline void graph_access(graph_data* g, const region_list& l) {
  for (const region_access& a : l.list) graph_region(g, a);
}

}  // namespace detail

class graph {
 public:
  graph();
  ~graph();
  graph(graph&& other) noexcept;
  graph& operator=(graph&& other) noexcept;
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

  // Records a task (not run now); returns its position in the graph, from 0. Needs a
  // runtime, and a call from main or from a task.
  template <class F, class... A>
    requires(!std::is_same_v<std::decay_t<F>, task_options>)
  std::size_t add(F&& f, const A&... accesses) {
    return add(task_options{}, std::forward<F>(f), accesses...);
  }
  template <class F, class... A>
  std::size_t add(const task_options& opts, F&& f, const A&... accesses) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>,
                  "hytask::graph::add: the task body must be callable with no arguments");
    static_assert((detail::graph_recordable<A> && ...),
                  "hytask::graph::add: a graph records in/out/inout accesses and "
                  "hytask::regions lists only; a task that waits for an event, an MPI request "
                  "or a versioned object must be spawned with hytask::spawn");
    void* memory = detail::graph_body_memory(d_, sizeof(Fn), alignof(Fn));
    detail::graph_body body{::new (memory) Fn(std::forward<F>(f)),
                            [](void* p) { (*static_cast<Fn*>(p))(); }, nullptr};
    if constexpr (!std::is_trivially_destructible_v<Fn>)
      body.destroy = [](void* p) { static_cast<Fn*>(p)->~Fn(); };
    const std::size_t index = detail::graph_begin(d_, opts, body);
    try {
      (detail::graph_access(d_, accesses), ...);
    } catch (...) {
      detail::graph_abort(d_);
      throw;
    }
    detail::graph_end(d_);
    return index;
  }

  // Runs the graph and waits for it (see the top of this header).
  void run();
  // Ends the recording: builds what runs use and frees the tracker. The first run() does it
  // when the program has not; call it to keep that work out of the first run's time.
  void seal();

  std::size_t size() const noexcept;   // tasks recorded
  std::size_t edges() const noexcept;  // dependencies among them (an edge per access pair)

 private:
  detail::graph_data* d_;
};

}  // namespace hytask
