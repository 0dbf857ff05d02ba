// The equations of model.hpp; the paper's equation numbers beside each.
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hytask::model {

namespace {

void check_threads(int n, int m) {
  if (n < 2)
    throw std::invalid_argument("n = " + std::to_string(n) +
                                " threads: the model needs n >= 2 (m communicate, n - m compute)");
  if (m < 1 || m >= n)
    throw std::invalid_argument("m = " + std::to_string(m) + " communicating threads: needs 1 <= m < n = " +
                                std::to_string(n));
}

void check_fraction(double v, const char* what) {
  if (!(v >= 0.0 && v <= 1.0))  // also rejects NaN
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) + ": a fraction must be in [0, 1]");
}

void check(const fractions& f) {
  check_fraction(f.comm, "f_comm");
  check_fraction(f.non, "f_comp,non");
  check_fraction(f.overlap, "f_comp,overlap");
  const double sum = f.comm + f.non + f.overlap;
  if (std::abs(sum - 1.0) > 1e-6)
    throw std::invalid_argument("f_comm + f_comp,non + f_comp,overlap = " + std::to_string(sum) +
                                ": eq. (1) needs a sum of 1");
}

// (1 − 1/n) scaled by m: the recurring m(1 − 1/n) of eqs. (5) and (7).
double gain_term(int n, int m) { return m * (1.0 - 1.0 / n); }

}  // namespace

double epsilon(const fractions& f, int n, int m) {  // eq. (3)
  check(f);
  check_threads(n, m);
  return 1.0 / (f.non + std::max(f.comm / m, f.overlap * n / (n - m)));
}

double epsilon_compute_bound(const fractions& f, int n, int m) {  // eq. (8)
  check(f);
  check_threads(n, m);
  return 1.0 / (f.non + f.overlap * n / (n - m));
}

double epsilon_max(double f_non, int n, int m) {  // eq. (5)
  check_fraction(f_non, "f_comp,non");
  check_threads(n, m);
  return (1.0 + gain_term(n, m)) / (1.0 + f_non * gain_term(n, m));
}

double f_comm_best(double f_non, int n, int m) {  // eq. (6)
  check_fraction(f_non, "f_comp,non");
  check_threads(n, m);
  return (1.0 - f_non) / (1.0 + 1.0 / m - 1.0 / n);
}

double epsilon_bound(int n, int m) {  // eq. (7)
  check_threads(n, m);
  return 1.0 + gain_term(n, m);
}

double epsilon_min(double f_non, int n, int m) {  // eq. (9)
  check_fraction(f_non, "f_comp,non");
  check_threads(n, m);
  const double r = static_cast<double>(m) / n;
  return (1.0 - r) / (1.0 - f_non * r);
}

double f_comm_equiv(double f_non, int n, int m) {  // break-even, ε = 1
  check_fraction(f_non, "f_comp,non");
  check_threads(n, m);
  return static_cast<double>(m) / n * (1.0 - f_non);
}

int best_m(const fractions& f, int n) {
  check(f);
  check_threads(n, 1);
  int best = 1;
  double top = epsilon(f, n, 1);
  for (int m = 2; m < n; ++m) {
    const double e = epsilon(f, n, m);
    if (e > top * (1.0 + 1e-12)) {
      top = e;
      best = m;
    }
  }
  return best;
}

double epsilon_tasks(const fractions& f, int n, int m) {
  check(f);
  check_threads(n, m);
  return 1.0 / (f.non + std::max(f.comm / m, (f.comm + n * f.overlap) / n));
}

double epsilon_ideal(const fractions& f) {
  check(f);
  return 1.0 / (f.non + std::max(f.comm, f.overlap));
}

}  // namespace hytask::model
