// The performance model of hybrid MPI + threads programs by Rabenseifner and Wellein,
// "Communication and Optimization Aspects of Parallel Programming Models on Hybrid
// Architectures" (section 7.2.1, equations (1)-(9)), as hytask-model applies it
// (docs/model.md).
//
// A masteronly run is split into three fractions of its time (eq. 1): communication while
// the other threads idle (f_comm), compute that needs this iteration's messages
// (f_comp,non) and compute that does not (f_comp,overlap). A scheme that lets m of the n
// threads of a node communicate while the n - m others compute the overlappable part runs
// in ε times less time than masteronly (eq. 3):
//
//   ε = 1 / (f_non + max(f_comm / m, f_overlap · n / (n − m)))
//
// The model assumes one core per thread, communication that speeds up linearly with m,
// compute that speeds up linearly with threads, and splitting the work costs nothing.
//
//   hytask::model::fractions f{.comm = 0.31, .non = 0.2, .overlap = 0.49};
//   double eps = hytask::model::epsilon(f, 8, 1);
//
// Every function checks its arguments and throws std::invalid_argument naming the one that
// is out of range: n ≥ 2, 1 ≤ m < n, fractions in [0, 1] that sum to 1 (within 1e-6).
#pragma once

namespace hytask::model {

// Fractions of the masteronly time T_masteronly; eq. (1): comm + non + overlap = 1.
struct fractions {
  double comm = 0;     // f_comm: the masteronly run communicates, the other threads idle
  double non = 0;      // f_comp,non: compute that cannot overlap communication
  double overlap = 0;  // f_comp,overlap: compute that could run while communicating
};

// Eq. (3): T_masteronly / T_scheme for m of n threads communicating while n − m compute the
// overlappable part; afterwards all n compute the rest. The funneled, serialized and
// overlap-funnel-reserve schemes are m = 1; multiple is any m.
double epsilon(const fractions& f, int n, int m);
// Eq. (8): as (3) when the communicating threads finish early and idle: the time is that of
// the compute alone.
double epsilon_compute_bound(const fractions& f, int n, int m);
// Eq. (5): the largest ε over f_comm for a given f_non, reached at f_comm_best.
double epsilon_max(double f_non, int n, int m);
// Eq. (6): the f_comm at which communication and overlapped compute end together (eq. 4),
// for a given f_non.
double f_comm_best(double f_non, int n, int m);
// Eq. (7): the bound of ε_max over every f_non, 1 + m (1 − 1/n).
double epsilon_bound(int n, int m);
// Eq. (9): ε as f_comm goes to 0 (all of 1 − f_non overlappable), the worst case.
double epsilon_min(double f_non, int n, int m);
// The break-even point: the f_comm at which ε = 1 for a given f_non, (m / n)(1 − f_non);
// above it reserving m threads pays.
double f_comm_equiv(double f_non, int n, int m);
// The m of 1..n−1 with the largest eq. (3) ε (the smallest m on ties).
int best_m(const fractions& f, int n);

// Not in the paper, stated with the same assumptions: tasks (hytask, or full load
// balancing in the paper's taxonomy), where m workers drive communication for f_comm / m and
// then join the overlappable compute, which all n workers share:
//   ε = 1 / (f_non + max(f_comm / m, (f_comm + n · f_overlap) / n))
// It is never below eq. (3) nor below 1: a task scheme loses no thread to communication.
double epsilon_tasks(const fractions& f, int n, int m);
// Perfect overlap at masteronly's communication speed, no thread lost:
// 1 / (f_non + max(f_comm, f_overlap)). Only more communicating threads (m > 1 in eq. 3 or
// in epsilon_tasks) can exceed it, by making the communication itself faster.
double epsilon_ideal(const fractions& f);

}  // namespace hytask::model
