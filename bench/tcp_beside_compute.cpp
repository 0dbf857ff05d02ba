// How fast a core computes while its kernel moves a TCP stream through the node: the ceiling
// that the cluster in a box (scripts/cluster.sh, one core per node) puts on any runtime's
// "compute speed beside the exchange" (issue 19's cspeed; docs/benchmarks.md#tcp-floor).
//
// Two ranks, one per node. MPI only sets up one TCP connection between them and lines the
// phases up; no MPI call runs while anything is timed. Each rank sweeps a 6-neighbour Jacobi
// stencil over its own grid (jacobi3d's sweep, by default a rank's half of 256^3) and
// alternates, round by round, two phases of --sweeps sweeps each:
//   alone   nothing on the link
//   stream  at the start of each sweep both ranks hand one halo's bytes (a face of the
//           grid across x, jacobi3d's 1-D exchange; --bytes) to a thread that sends
//           them while the sweep runs, and a thread receives the other rank's: a progress
//           engine that costs nothing beyond the kernel's own work (the copies, the
//           packets' protocol work) and one wake per message. --saturate: send without
//           pause instead, the link full all the time.
// and prints, per rank, the median sweep time of each phase, speed_pct = alone / stream,
// the stream's rate, its threads' CPU time and the node's CPU time in softirq (the
// packets' protocol work, charged to whatever runs when they arrive) per second.
//
//   scripts/cluster.sh run --rate 420mbit --mtu 9000 -- build/bench/bench_tcp_beside_compute
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"

namespace {

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "bench_tcp_beside_compute: %s\n", why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();
}

struct options {
  int nx = 128, ny = 256, nz = 256;  // split along x, as jacobi3d --decomposition 1d
  int sweeps = 8, rounds = 6;
  std::size_t chunk = 512 * 1024;
  std::size_t bytes = 0;  // per sweep; 0: one face of the grid
  bool saturate = false;
};

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "bench_tcp_beside_compute",
      "[--size 128x256x256] [--sweeps 8] [--rounds 6] [--chunk 524288]\n"
      "                                [--bytes PER_SWEEP | --saturate]   (2 ranks, one per node of scripts/cluster.sh)",
      "How fast a core computes a Jacobi sweep while its kernel moves a TCP stream through the node,\n"
      "beside the same sweep alone; no MPI call runs while anything is timed. Prints, per rank, the\n"
      "median sweep times, speed_pct = alone / stream, the stream's rate and its CPU costs.");
  cli.custom("--size", "NXxNYxNZ", [&o](const std::string& v) {
    const std::vector<std::string> dims = hytask_cli::split(v, 'x');
    const std::string wants = "--size wants NXxNYxNZ, each at least 3, e.g. 128x256x256, not '" + v + "'";
    if (dims.size() != 3) throw hytask_cli::usage_error(wants);
    int* to[3] = {&o.nx, &o.ny, &o.nz};
    try {
      for (int d = 0; d < 3; ++d) *to[d] = static_cast<int>(hytask_cli::parse_integer("--size", dims[d], 3, 1 << 16));
    } catch (const hytask_cli::usage_error&) {
      throw hytask_cli::usage_error(wants);
    }
  }, "the grid of a rank, split along x as jacobi3d's 1-D decomposition\n"
     "(default 128x256x256)");
  cli.integer("--sweeps", o.sweeps, 1, 1000000, "sweeps per phase (default 8)");
  cli.integer("--rounds", o.rounds, 1, 1000000, "rounds of the two phases, alone and stream (default 6)");
  cli.integer("--chunk", o.chunk, 1, 1L << 30, "bytes per send() call (default 524288)");
  cli.integer("--bytes", o.bytes, 1, 1L << 30, "bytes handed to the stream per sweep (default: one face of the grid)");
  cli.flag("--saturate", o.saturate, "send without pause instead: the link full all the time");
  return cli.parse(argc, argv, print_help);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Softirq ticks of the CPUs this process may run on (the node's share), from /proc/stat.
long long softirq_ticks() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::ifstream in("/proc/stat");
  std::string line;
  long long sum = 0;
  while (std::getline(in, line)) {
    int cpu = -1;
    if (std::sscanf(line.c_str(), "cpu%d", &cpu) != 1 || cpu < 0 || !CPU_ISSET(cpu, &set)) continue;
    std::istringstream f(line);
    std::string name;
    long long v[7] = {};
    f >> name;
    for (auto& x : v) f >> x;
    sum += v[6];  // user nice system idle iowait irq softirq
  }
  return sum;
}

// The sweep: b = mean of a's six neighbours, over the interior.
void sweep(const options& o, const std::vector<double>& a, std::vector<double>& b) {
  const std::size_t sx = static_cast<std::size_t>(o.ny) * static_cast<std::size_t>(o.nz);
  const std::size_t sy = static_cast<std::size_t>(o.nz);
  for (int x = 1; x < o.nx - 1; ++x)
    for (int y = 1; y < o.ny - 1; ++y) {
      const std::size_t row = static_cast<std::size_t>(x) * sx + static_cast<std::size_t>(y) * sy;
      for (int z = 1; z < o.nz - 1; ++z) {
        const std::size_t i = row + static_cast<std::size_t>(z);
        b[i] = (a[i - sx] + a[i + sx] + a[i - sy] + a[i + sy] + a[i - 1] + a[i + 1]) * (1.0 / 6);
      }
    }
}

// This node's address (the cluster's link), else loopback.
std::string my_ipv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail("getifaddrs failed");
  std::string found;
  for (ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || p->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ifa_addr)->sin_addr, buf, sizeof buf);
    if (std::string(buf).rfind("127.", 0) == 0) continue;
    found = buf;
    break;
  }
  freeifaddrs(list);
  return found.empty() ? "127.0.0.1" : found;  // one host without a network: a smoke test
}

// One full-duplex connection: rank 1 listens on its node's address, rank 0 connects.
int connect_pair(int rank) {
  if (rank == 1) {
    const int l = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    inet_pton(AF_INET, my_ipv4().c_str(), &addr.sin_addr);
    if (l < 0 || bind(l, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(l, 1) != 0)
      fail(std::string("listen: ") + std::strerror(errno));
    socklen_t len = sizeof addr;
    getsockname(l, reinterpret_cast<sockaddr*>(&addr), &len);
    MPI_Send(&addr, sizeof addr, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    const int s = accept(l, nullptr, nullptr);
    if (s < 0) fail(std::string("accept: ") + std::strerror(errno));
    close(l);
    return s;
  }
  sockaddr_in addr{};
  MPI_Recv(&addr, sizeof addr, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    fail(std::string("connect: ") + std::strerror(errno));
  return s;
}

// The two directions of the stream: a sender that writes its credit of bytes (or without
// end while `on`), a receiver that reads whatever comes. Each keeps its own CPU time.
struct stream {
  int sock;
  std::size_t chunk;
  std::mutex mu;
  std::condition_variable cv;
  bool on = false, quit = false;
  std::size_t credit = 0;
  std::atomic<long long> received{0};
  std::atomic<double> send_cpu{0}, recv_cpu{0};
  std::thread sender, receiver;

  stream(int s, std::size_t c) : sock(s), chunk(c) {
    sender = std::thread([this] {
      std::vector<char> buf(chunk, 1);
      for (;;) {
        std::size_t n = buf.size();
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return on || credit > 0 || quit; });
          if (quit) break;
          if (!on) {
            n = std::min(n, credit);
            credit -= n;
          }
        }
        for (std::size_t at = 0; at < n;) {  // a signal may cut a blocking send short
          const ssize_t k = send(sock, buf.data() + at, n - at, MSG_NOSIGNAL);
          if (k < 0 && errno != EINTR) return;
          at += k > 0 ? static_cast<std::size_t>(k) : 0;
        }
        send_cpu = thread_cpu_s();
      }
      send_cpu = thread_cpu_s();
    });
    receiver = std::thread([this] {
      std::vector<char> buf(chunk);
      for (;;) {
        const ssize_t n = recv(sock, buf.data(), buf.size(), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        received += n;
        recv_cpu = thread_cpu_s();
      }
    });
  }
  void set(bool v) {
    std::lock_guard lk(mu);
    on = v;
    cv.notify_all();
  }
  void give(std::size_t bytes) {
    std::lock_guard lk(mu);
    credit += bytes;
    cv.notify_all();
  }
  // Waits until `bytes` have arrived in all (the other rank's credit, known here), or, with
  // bytes < 0 (a saturated stream), until nothing has arrived for `quiet` seconds.
  void drain(long long bytes, double quiet) const {
    const double start = now_s();
    long long last = received.load();
    double since = start;
    for (;;) {
      const long long r = received.load();
      if (bytes >= 0 ? r >= bytes : now_s() - since >= quiet) return;
      if (now_s() - start > 60)
        fail("the stream stalled: " + std::to_string(r) + " bytes received, " +
             std::to_string(bytes) + " expected");
      if (r != last) {
        last = r;
        since = now_s();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~stream() {
    {
      std::lock_guard lk(mu);
      quit = true;
      cv.notify_all();
    }
    sender.join();
    shutdown(sock, SHUT_RDWR);
    receiver.join();
    close(sock);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status =
          hytask_cli::parse_before_mpi("bench_tcp_beside_compute", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) fail("run with 2 ranks, one per node (scripts/cluster.sh run -- ...)");

  const std::size_t cells = static_cast<std::size_t>(o.nx) * static_cast<std::size_t>(o.ny) *
                            static_cast<std::size_t>(o.nz);
  std::vector<double> a(cells), b(cells);
  for (std::size_t i = 0; i < cells; ++i) a[i] = b[i] = static_cast<double>(i % 97);
  for (int i = 0; i < 2; ++i) sweep(o, a, b);  // first touch, warm caches

  stream st(connect_pair(rank), o.chunk);
  const std::size_t per_sweep =
      o.bytes ? o.bytes : static_cast<std::size_t>(o.ny) * static_cast<std::size_t>(o.nz) * sizeof(double);
  const long hz = sysconf(_SC_CLK_TCK);
  std::vector<double> alone, beside;
  double stream_s = 0, stream_bytes = 0, stream_cpu = 0, stream_softirq = 0;
  double alone_s = 0, alone_softirq = 0;
  long long paced = 0;  // bytes the other rank has sent so far (paced stream)
  for (int round = 0; round < o.rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const bool with_stream = (round + k) % 2 == 1;  // alternate which phase comes first
      MPI_Barrier(MPI_COMM_WORLD);
      if (with_stream && o.saturate) {
        st.set(true);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the link fills
      }
      const long long bytes0 = st.received.load();
      const double cpu0 = st.send_cpu.load() + st.recv_cpu.load();
      const long long irq0 = softirq_ticks();
      const double t0 = now_s();
      for (int s = 0; s < o.sweeps; ++s) {
        if (with_stream && !o.saturate) st.give(per_sweep);
        sweep(o, s % 2 ? b : a, s % 2 ? a : b);
      }
      const double t = now_s() - t0;
      const double irq = static_cast<double>(softirq_ticks() - irq0) / static_cast<double>(hz);
      (with_stream ? beside : alone).push_back(t / o.sweeps);
      if (with_stream) {
        stream_s += t;
        stream_bytes += static_cast<double>(st.received.load() - bytes0);
        stream_cpu += st.send_cpu.load() + st.recv_cpu.load() - cpu0;
        stream_softirq += irq;
        st.set(false);
        if (o.saturate) {
          st.drain(-1, 0.2);
        } else {
          paced += static_cast<long long>(o.sweeps) * static_cast<long long>(per_sweep);
          st.drain(paced, 0);
        }
      } else {
        alone_s += t;
        alone_softirq += irq;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  const double ma = median(alone), mb = median(beside);
  std::printf(
      "tcp_beside_compute rank=%d size=%dx%dx%d stream=%s sweeps=%d rounds=%d sweep_ms_alone=%.2f "
      "sweep_ms_stream=%.2f speed_pct=%.1f stream_mbit_s=%.0f stream_threads_cpu_pct=%.1f "
      "softirq_pct_stream=%.1f softirq_pct_alone=%.1f received_bytes=%lld\n",
      rank, o.nx, o.ny, o.nz,
      o.saturate ? "saturated" : (std::to_string(per_sweep) + "B/sweep").c_str(), o.sweeps, o.rounds, 1e3 * ma, 1e3 * mb, 100.0 * ma / mb,
      8e-6 * stream_bytes / stream_s, 100.0 * stream_cpu / stream_s,
      100.0 * stream_softirq / stream_s, 100.0 * alone_softirq / alone_s, st.received.load());
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
