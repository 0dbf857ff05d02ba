#include "kernels.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "../../apps/cholesky/cholesky.hpp"
#include "../../apps/qr/qr.hpp"
#include "blas_report.hpp"

namespace hytask::sim {

namespace {

using clock_type = std::chrono::steady_clock;

struct tiles {
  explicit tiles(int nb, std::uint64_t seed) : n(static_cast<std::size_t>(nb) * static_cast<std::size_t>(nb)) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (auto* v : {&a, &b, &c, &spd, &t, &t2, &work})
      v->resize(n);
    for (auto* v : {&a, &b, &c}) for (double& x : *v) x = u(rng);
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < nb; ++i) {
        const double x = i == j ? nb : (i > j ? u(rng) : 0.0);
        spd[static_cast<std::size_t>(i + j * nb)] = x;
      }
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < j; ++i) spd[static_cast<std::size_t>(i + j * nb)] = spd[static_cast<std::size_t>(j + i * nb)];
  }
  std::size_t n;
  std::vector<double> a, b, c, spd, t, t2, work;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<double> measure_kernels(const std::string& app, int nb, int ib, int threads, int reps) {
  hytask_apps::blas_single_threaded();
  const int count = app == "cholesky" ? 4 : 5;
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(count));
  std::mutex mu;
  std::barrier sync(threads);
  auto body = [&](int id) {
    tiles x(nb, 1234 + static_cast<std::uint64_t>(id));
    const std::size_t bytes = x.n * sizeof(double);
    // Each kernel on fresh inputs: copies (not timed) of the pristine tiles.
    auto fresh = [&](std::vector<double>& to, const std::vector<double>& from) { std::memcpy(to.data(), from.data(), bytes); };
    std::vector<double> w1(x.n), w2(x.n), w3(x.n);
    std::vector<double> flush(std::size_t{8} << 20);  // 64 MiB: more than the caches hold
    auto evict = [&] {
      for (std::size_t i = 0; i < flush.size(); i += 8) flush[i] += 1.0;
    };
    if (app == "qr") {  // reflectors and T factors to apply
      fresh(w1, x.a);
      qr::geqrt(w1.data(), nb, x.t.data(), ib, nb, nb, ib);
      fresh(w2, x.a);
      fresh(w3, x.b);
      qr::tsqrt(w2.data(), nb, w3.data(), nb, x.t2.data(), ib, nb, nb, ib);
    }
    for (int k = 0; k < count; ++k) {
      std::vector<double> mine;
      for (int rep = 0; rep < reps + 1; ++rep) {  // the first run warms up
        sync.arrive_and_wait();
        double seconds = 0;
        auto timed = [&](auto&& f) {
          evict();  // the tiles come from memory, as a large matrix's do
          const auto t0 = clock_type::now();
          f();
          seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
        };
        if (app == "cholesky") {
          switch (k) {
            case 0: fresh(x.work, x.spd); timed([&] { chol::potrf(x.work.data(), nb, nb); }); break;
            case 1: fresh(x.work, x.a); timed([&] { chol::trsm(x.spd.data(), nb, x.work.data(), nb, nb, nb); }); break;
            case 2: fresh(x.work, x.spd); timed([&] { chol::syrk(x.a.data(), nb, x.work.data(), nb, nb, nb); }); break;
            default: fresh(x.work, x.c); timed([&] { chol::gemm(x.a.data(), nb, x.b.data(), nb, x.work.data(), nb, nb, nb, nb); }); break;
          }
        } else {
          switch (k) {
            case 0: fresh(x.work, x.a); timed([&] { qr::geqrt(x.work.data(), nb, x.t.data(), ib, nb, nb, ib); }); break;
            case 1: fresh(x.work, x.c);
              timed([&] { qr::gemqrt('T', w1.data(), nb, x.t.data(), ib, x.work.data(), nb, nb, nb, nb, ib); });
              break;
            case 2: fresh(x.work, x.a); fresh(x.c, x.b);
              timed([&] { qr::tsqrt(x.work.data(), nb, x.c.data(), nb, x.t2.data(), ib, nb, nb, ib); });
              break;
            case 3: fresh(x.work, x.a); fresh(x.c, x.b);
              timed([&] { qr::tsmqr('T', w3.data(), nb, x.t2.data(), ib, x.work.data(), nb, x.c.data(), nb, nb, nb, nb, ib); });
              break;
            default: timed([&] { std::memcpy(x.work.data(), x.a.data(), bytes); }); break;
          }
        }
        if (rep > 0) mine.push_back(seconds);
      }
      std::lock_guard lk(mu);
      samples[static_cast<std::size_t>(k)].insert(samples[static_cast<std::size_t>(k)].end(), mine.begin(), mine.end());
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(body, i);
  body(0);
  for (auto& t : pool) t.join();
  std::vector<double> out;
  for (auto& s : samples) out.push_back(median(s));
  return out;
}

void override_kernels(const std::vector<std::string>& names, const std::string& spec, std::vector<double>& seconds) {
  std::size_t at = 0;
  while (at < spec.size()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    auto it = std::find(names.begin(), names.end(), name);
    if (eq == std::string::npos || it == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("--kernel-seconds: '" + item + "' is not NAME=SECONDS with NAME one of " + known);
    }
    char* stop = nullptr;
    const double v = std::strtod(item.c_str() + eq + 1, &stop);
    if (stop == item.c_str() + eq + 1 || *stop != '\0' || !(v > 0))
      throw std::invalid_argument("--kernel-seconds: '" + item + "': the time must be a positive number of seconds");
    seconds[static_cast<std::size_t>(it - names.begin())] = v;
    at = end + 1;
  }
}

std::string blas_core() {
  const hytask_apps::blas_facts f = hytask_apps::probe_blas();
  return !f.openblas ? "unknown (not OpenBLAS)" : f.corename.empty() ? "unknown" : f.corename;
}

}  // namespace hytask::sim
