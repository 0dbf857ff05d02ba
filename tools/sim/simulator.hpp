// A discrete-event simulation of a whole hytask program at scale: every simulated rank runs
// the real global-dependency engine and owner code (src/global/engine.hpp, home.hpp) behind
// a model of the rest of the runtime — the core's dependency tracker (accesses ordered by
// key on each rank), copyin transfer tasks deduplicated per phase, the phase window, worker
// 0 as main (it discovers, and runs tasks while fence or wait_all blocks it), the
// communication class (tasks the engine says another rank waits for run first), and the
// default progress policy (an idle worker handles a message at once, a busy rank at its next
// task switch or after the backstop period), and the transport's rounds (every buffer of a
// round acknowledged once handled; a rank joins the round's collective once its own are).
// Messages, acknowledgements, the owners' pushed tiles and the collectives cross a LogGP
// network (network.hpp); tasks take the measured time of their kernel. docs/scale.md states
// the model and its validation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "network.hpp"
#include "program.hpp"

namespace hytask::sim {

struct params {
  int workers = 1;            // per rank, main included
  int host_cores = 0;         // > 0: every rank on one machine of this many cores, rank r's
                              // workers on core r mod host_cores, sharing it (processor sharing)
  unsigned window = 8;        // active phases (HYTASK_GLOBAL_WINDOW)
  double spawn = 2e-6;        // main's time per task it spawns (transfer tasks included)
  double task_overhead = 0.5e-6;  // a worker's time per task beyond the kernel
  double post = 1e-6;         // a transfer task's run: post the receive
  double backstop = 500e-6;   // a busy rank's messages wait at most this long
  loggp net;
  // Tiles above this go by rendezvous: the owner's request waits for the accessor's poll
  // (or its posted receive); with sender_polls (TCP's pipelined protocol) the accessor's
  // go-ahead then waits for the owner's poll; otherwise the accessor reads (RDMA get).
  std::uint64_t eager_bytes = 65536;
  bool sender_polls = true;
  // A tile crosses in pieces of this many bytes, each but the last taken by a poll of the
  // receiver and followed by a poll of the sender (TCP: what the socket buffers hold); 0:
  // in one piece (RDMA).
  std::uint64_t pipeline_bytes = 0;
  std::vector<double> kernel_seconds;  // per kernel of the model
  double copy_bytes_per_second = 8e9;  // a copyin of a tile of this rank (memcpy)
};

// Why a worker had nothing to run, judged when it went idle.
//   data       a transfer task has posted its receive; the owner's tile is not in yet
//   release    a task's phase is matched; it waits for an owner's release (B record)
//   matching   a task waits for its phase's matching round
//   local      tasks wait for predecessors of this rank that other workers run
//   discovery  main has not spawned the next tasks yet (or the phase window holds it)
//   end        nothing left on this rank
enum class idle_reason : std::uint8_t { data, release, matching, local, discovery, end, count };
const char* name(idle_reason r);

struct rank_result {
  double busy = 0;  // seconds of workers in tasks
  double idle[static_cast<int>(idle_reason::count)] = {};
  std::uint64_t tasks = 0, transfers = 0;
  std::uint64_t messages = 0, bytes = 0;  // protocol buffers, acknowledgements and pushed tiles sent
  std::uint64_t peak_live_tasks = 0;
};

struct result {
  double seconds = 0;  // the program's run, from the first spawn to wait_all's return
  std::uint64_t tasks = 0, events = 0, rounds = 0;
  std::vector<rank_result> ranks;
};

// Runs the model's program on model.ranks() simulated ranks. Throws std::runtime_error when
// the simulated program cannot finish (names what each rank waits for).
result simulate(const app_model& model, const params& p);

}  // namespace hytask::sim
