// global_ptr, the global_array's iterators and the algorithms of hytask/global/algorithm.hpp,
// on arrays whose blocks are uneven (10 elements on 4 ranks: 3, 3, 3, 1; 3 elements on 4
// ranks: one rank owns none) and on a longer one. Every value is checked element by element
// against the value the element must hold; misuse must throw usage_error with its message.
//
//   global_algorithms
//
// Prints "global_algorithms: ok (<checks> checks)" on rank 0 when no rank found a wrong
// value; "FAILED" lines otherwise, and exits 1.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

static_assert(std::random_access_iterator<hytask::global_ptr<long>>);
static_assert(std::random_access_iterator<hytask::global_ptr<double>>);

namespace {

int g_rank = 0, g_size = 1;
long g_bad = 0, g_checks = 0;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    ++g_checks;                                                                   \
    if (!(cond) && g_bad++ < 30) {                                                \
      std::fprintf(stderr, "global_algorithms: rank %d: FAILED line %d: %s: ", g_rank, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                          \
      std::fprintf(stderr, "\n");                                                 \
    }                                                                             \
  } while (0)

long val(std::size_t i, int round) { return static_cast<long>(i) * 7 + 3 + 1000L * round; }

// The block distribution, computed here independently of the library.
std::size_t block_of(std::size_t n) { return n == 0 ? 1 : (n + g_size - 1) / static_cast<std::size_t>(g_size); }
int expected_owner(std::size_t i, std::size_t n) { return static_cast<int>(i / block_of(n)); }

// Every rank writes its block with val(i, round), then all meet.
void init(const hytask::global_array<long>& a, int round) {
  for (std::size_t k = 0; k < a.local().size(); ++k) a.lbegin()[k] = val(a.local_begin() + k, round);
  hytask::mpi::barrier();
}

// Every element, read by every rank through the iterators, against want(i).
template <class F>
void check_all(const hytask::global_array<long>& a, F want, const char* what) {
  if (a.size() > 1000) {  // long arrays: through copy, not a get per element
    std::vector<long> all(a.size());
    hytask::copy(a.begin(), a.end(), all.data());
    for (std::size_t i = 0; i < a.size(); ++i)
      CHECK(all[i] == want(i), "%s: element %zu is %ld, expected %ld", what, i, all[i], want(i));
    hytask::mpi::barrier();  // before any rank writes again
    return;
  }
  std::size_t i = 0;
  for (auto it = a.begin(); it != a.end(); ++it, ++i) {
    const long got = *it;
    CHECK(got == want(i), "%s: element %zu is %ld, expected %ld", what, i, got, want(i));
  }
  CHECK(i == a.size(), "%s: iterated %zu of %zu", what, i, a.size());
  hytask::mpi::barrier();  // before any rank writes again
}

void pointers(std::size_t n) {
  hytask::global_array<long> a(n);
  init(a, 0);
  const std::size_t b = block_of(n);
  CHECK(static_cast<std::size_t>(a.end() - a.begin()) == n, "n=%zu: end - begin", n);
  CHECK(a.lbegin() + a.local().size() == a.lend(), "n=%zu: lend", n);
  CHECK(a.local_first().index() == std::min(static_cast<std::size_t>(g_rank) * b, n), "n=%zu: local_first", n);
  hytask::global_ptr<long> p = a.begin();
  for (std::size_t i = 0; i < n; ++i, ++p) {
    const int want = expected_owner(i, n);
    CHECK(p.index() == i, "n=%zu: index %llu, expected %zu", n, static_cast<unsigned long long>(p.index()), i);
    CHECK(p.owner() == want, "n=%zu: element %zu: owner %d, expected %d", n, i, p.owner(), want);
    CHECK(p.is_local() == (want == g_rank), "n=%zu: element %zu: is_local", n, i);
    long* l = p.local();
    if (want == g_rank) {
      CHECK(l == a.lbegin() + (i - a.local_begin()), "n=%zu: element %zu: local() is not its address", n, i);
    } else {
      CHECK(l == nullptr, "n=%zu: element %zu: local() of another rank's element is not null", n, i);
    }
    CHECK((a.begin() + static_cast<std::ptrdiff_t>(i)) == p, "n=%zu: begin + %zu", n, i);
    CHECK(a.begin()[static_cast<std::ptrdiff_t>(i)].get() == val(i, 0), "n=%zu: begin[%zu]", n, i);
    CHECK(static_cast<long>(*p) == val(i, 0), "n=%zu: *p at %zu", n, i);
    CHECK((a.end() - p) == static_cast<std::ptrdiff_t>(n - i), "n=%zu: end - p at %zu", n, i);
  }
  CHECK(p == a.end(), "n=%zu: begin + n != end", n);
  // Back across every block boundary.
  for (std::size_t i = n; i-- > 0;) {
    hytask::global_ptr<long> q = --p;
    CHECK(q.index() == i && q.owner() == expected_owner(i, n) && static_cast<long>(*q) == val(i, 0),
          "n=%zu: -- to %zu", n, i);
  }
  if (n >= 5) {
    hytask::global_ptr<long> q = a.begin() + 2;
    hytask::global_ptr<long> r = q++;
    CHECK(r.index() == 2 && q.index() == 3, "postfix ++");
    CHECK(q > r && r < q && q >= r && r <= q && q != r, "ordering");
    r = q--;
    CHECK(r.index() == 3 && q.index() == 2, "postfix --");
    CHECK((4 + a.begin()).index() == 4 && (a.end() - 1).index() == n - 1, "n + p, p - n");
    q += 3;
    q -= 1;
    CHECK(q.index() == 4, "+= -=");
    // A standard algorithm over the proxies: reads element by element.
    CHECK(std::count_if(a.begin(), a.end(), [](long v) { return v % 7 == 3; }) == static_cast<std::ptrdiff_t>(n),
          "std::count_if over the global range");
  }
  hytask::mpi::barrier();
  if (n >= 5) {
    hytask::global_ptr<long> q = a.begin() + 4;
    if (g_rank == g_size - 1) (*q).put(-5);  // through the reference: a put
    hytask::mpi::barrier();
    CHECK(a[4].get() == -5, "put through *p");
  }
  hytask::wait_all();
  hytask::mpi::barrier();
}

void copies(std::size_t n) {
  hytask::global_array<long> a(n);
  init(a, 1);
  // Every sub-range (of short arrays; a sample of long ones), global → local.
  const std::size_t step = n > 40 ? n / 13 : 1;
  std::vector<long> buf(n + 1);
  for (std::size_t lo = 0; lo <= n; lo += step)
    for (std::size_t hi = lo; hi <= n; hi += step) {
      std::fill(buf.begin(), buf.end(), -1);
      long* end = hytask::copy(a.begin() + static_cast<std::ptrdiff_t>(lo), a.begin() + static_cast<std::ptrdiff_t>(hi), buf.data());
      CHECK(end == buf.data() + (hi - lo), "n=%zu: copy [%zu, %zu) returned the wrong end", n, lo, hi);
      for (std::size_t k = 0; k < hi - lo; ++k)
        CHECK(buf[k] == val(lo + k, 1), "n=%zu: copy [%zu, %zu): element %zu is %ld, expected %ld", n, lo, hi,
              lo + k, buf[k], val(lo + k, 1));
      CHECK(buf[hi - lo] == -1, "n=%zu: copy [%zu, %zu) wrote past its end", n, lo, hi);
    }
  hytask::mpi::barrier();
  // Local → global: rank r writes its stripe [r·n/P, (r+1)·n/P) (across block boundaries).
  const std::size_t s0 = static_cast<std::size_t>(g_rank) * n / static_cast<std::size_t>(g_size);
  const std::size_t s1 = static_cast<std::size_t>(g_rank + 1) * n / static_cast<std::size_t>(g_size);
  std::vector<long> mine(s1 - s0);
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = val(s0 + k, 2);
  auto end = hytask::copy(mine.data(), mine.data() + mine.size(), a.begin() + static_cast<std::ptrdiff_t>(s0));
  CHECK(end.index() == s1, "n=%zu: copy into the array returned the wrong end", n);
  hytask::mpi::barrier();
  check_all(a, [](std::size_t i) { return val(i, 2); }, "after every rank's stripe");
  for (std::size_t k = 0; k < a.local().size(); ++k)
    CHECK(a.lbegin()[k] == val(a.local_begin() + k, 2), "n=%zu: owner's element %zu", n, a.local_begin() + k);
  // One rank writes the whole array in one call.
  hytask::mpi::barrier();
  if (g_rank == g_size - 1) {
    std::vector<long> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = val(i, 3);
    hytask::copy(all.data(), all.data() + n, a.begin());
  }
  hytask::mpi::barrier();
  check_all(a, [](std::size_t i) { return val(i, 3); }, "after one rank's whole copy");
  // From a task (it suspends in the transfers).
  std::vector<long> in_task(n, -1);
  if (g_rank == 0) hytask::spawn([&] { hytask::copy(a.begin(), a.end(), in_task.data()); });
  hytask::wait_all();
  if (g_rank == 0)
    for (std::size_t i = 0; i < n; ++i) CHECK(in_task[i] == val(i, 3), "n=%zu: copy in a task: element %zu", n, i);
  hytask::mpi::barrier();
}

struct affine {
  long a = 1, b = 0;
  affine() = default;
  affine(long x, long y) : a(x), b(y) {}
  affine(long v) : a(v % 97 + 2), b(v % 89) {}  // implicit: op(V, T) converts
};
affine compose(affine x, affine y) { return affine{x.a * y.a % 1000003, (x.b * y.a + y.b) % 1000003}; }

void collectives(std::size_t n) {
  hytask::global_array<long> a(n), b(n);
  init(a, 0);
  const auto lo = static_cast<std::ptrdiff_t>(std::min<std::size_t>(1, n));
  const auto hi = static_cast<std::ptrdiff_t>(n > 1 ? n - 1 : n);
  hytask::fill(a.begin() + lo, a.begin() + hi, 42L);
  check_all(a, [&](std::size_t i) {
    return static_cast<std::ptrdiff_t>(i) >= lo && static_cast<std::ptrdiff_t>(i) < hi ? 42 : val(i, 0);
  }, "fill");
  init(a, 0);
  long calls = 0;
  auto f = hytask::for_each(a.begin() + lo, a.end(), [&calls](long& x) { x += 1; ++calls; });
  (void)f;
  std::size_t owned = 0;
  for (std::size_t i = static_cast<std::size_t>(lo); i < n; ++i) owned += expected_owner(i, n) == g_rank;
  CHECK(calls == static_cast<long>(owned), "n=%zu: for_each ran %ld times here, on %zu owned elements", n, calls, owned);
  check_all(a, [&](std::size_t i) { return val(i, 0) + (static_cast<std::ptrdiff_t>(i) >= lo ? 1 : 0); }, "for_each");
  init(a, 0);
  // In place, and into another array shifted by 2 (results put to other owners).
  hytask::transform(a.begin(), a.end(), a.begin(), [](long x) { return 2 * x; });
  check_all(a, [](std::size_t i) { return 2 * val(i, 0); }, "transform in place");
  init(b, 5);
  if (n >= 2) {
    auto e = hytask::transform(a.begin(), a.end() - 2, b.begin() + 2, [](long x) { return x + 1; });
    CHECK(e == b.end(), "n=%zu: transform's end", n);
    check_all(b, [](std::size_t i) { return i < 2 ? val(i, 5) : 2 * val(i - 2, 0) + 1; }, "transform shifted");
  }
  // Reductions over every sub-range of short arrays; the same on every rank.
  init(a, 0);
  const std::size_t step = n > 40 ? n / 7 : 1;
  for (std::size_t l = 0; l <= n; l += step)
    for (std::size_t h = l; h <= n; h += step) {
      const auto first = a.begin() + static_cast<std::ptrdiff_t>(l), last = a.begin() + static_cast<std::ptrdiff_t>(h);
      long want = 100;
      for (std::size_t i = l; i < h; ++i) want += val(i, 0);
      const long got = hytask::accumulate(first, last, 100L);
      CHECK(got == want, "n=%zu: accumulate [%zu, %zu) = %ld, expected %ld", n, l, h, got, want);
      // A non-commutative op (associative): the result depends on the order of the parts.
      // Each element stands for the map x → a·x + b (affine's converting constructor); op
      // composes maps.
      affine seq{1, 0};
      for (std::size_t i = l; i < h; ++i) seq = compose(seq, affine(val(i, 0)));
      const affine par = hytask::accumulate(first, last, affine{1, 0}, compose);
      CHECK(par.a == seq.a && par.b == seq.b, "n=%zu: ordered accumulate [%zu, %zu): (%ld, %ld), expected (%ld, %ld)",
            n, l, h, par.a, par.b, seq.a, seq.b);
      // min_element: the first of the smallest (values repeat with period 4 below).
      const auto m = hytask::min_element(first, last, [](long x, long y) { return x % 4 < y % 4; });
      std::size_t wi = h;
      for (std::size_t i = l; i < h; ++i)
        if (wi == h || val(i, 0) % 4 < val(wi, 0) % 4) wi = i;
      CHECK(m.index() == wi, "n=%zu: min_element [%zu, %zu) at %llu, expected %zu", n, l, h,
            static_cast<unsigned long long>(m.index()), wi);
      const auto mx = hytask::min_element(first, last, std::greater<>{});
      CHECK(mx.index() == (h > l ? h - 1 : h), "n=%zu: max via min_element [%zu, %zu) at %llu", n, l, h,
            static_cast<unsigned long long>(mx.index()));
    }
  hytask::mpi::barrier();
}

// copy_async: ordered by the global dependencies on the whole range.
void async_copies(std::size_t n) {
  hytask::global_array<long> a(n);
  init(a, 0);
  // Phase 0: each owner's task rewrites each of its elements (out); phase 1: every rank
  // copies the whole range, which must see phase 0's values.
  for (std::size_t i = 0; i < n; ++i)
    if (a[i].is_local()) hytask::spawn([r = a[i], i] { r.put(val(i, 7)); }, hytask::out(a[i]));
  hytask::fence();
  std::vector<long> buf(n, -1);
  hytask::copy_async(a.begin(), a.end(), buf.data());
  hytask::fence();
  // Phase 2: the last rank writes the range back shifted (out on the whole range); phase 3:
  // every rank reads each element with in() and checks it.
  std::vector<long> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = val(i, 8);
  if (g_rank == g_size - 1) hytask::copy_async(src.data(), src.data() + n, a.begin());
  hytask::fence();
  std::vector<long> seen(n, -1);
  for (std::size_t i = 0; i < n; ++i)
    hytask::spawn([r = a[i], &seen, i] { seen[i] = r.get(); }, hytask::in(a[i]));
  // copyin of a range, phase 3: the reader sees phase 2's values; phase 4's writer of the
  // range waits for the transfer (its values must not show).
  std::vector<long> got(n, -1), copied(n, -1);
  hytask::spawn([&got, &copied, n] { std::copy(copied.begin(), copied.end(), got.begin()); },
                hytask::copyin(a.begin(), a.end(), copied.data()));
  hytask::fence();
  if (g_rank == 0)
    for (std::size_t i = 0; i < n; ++i) hytask::spawn([r = a[i], i] { r.put(val(i, 9)); }, hytask::out(a[i]));
  hytask::wait_all();
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(buf[i] == val(i, 7), "n=%zu: copy_async (global → local): element %zu is %ld, expected %ld", n, i, buf[i], val(i, 7));
    CHECK(seen[i] == val(i, 8), "n=%zu: copy_async (local → global): element %zu is %ld, expected %ld", n, i, seen[i], val(i, 8));
    CHECK(got[i] == val(i, 8), "n=%zu: copyin of the range: element %zu is %ld, expected %ld", n, i, got[i], val(i, 8));
  }
  hytask::mpi::barrier();
}

template <class F>
void expect_usage_error(F f, const std::string& needle, const char* what) {
  ++g_checks;
  try {
    f();
  } catch (const hytask::usage_error& e) {
    if (std::string(e.what()).find(needle) == std::string::npos && g_bad++ < 30)
      std::fprintf(stderr, "global_algorithms: rank %d: FAILED: %s: message \"%s\" lacks \"%s\"\n", g_rank, what,
                   e.what(), needle.c_str());
    else if (g_rank == 0)
      std::printf("misuse %s: %s\n", what, e.what());
    return;
  }
  if (g_bad++ < 30) std::fprintf(stderr, "global_algorithms: rank %d: FAILED: %s: no usage_error\n", g_rank, what);
}

void misuse() {
  hytask::global_array<long> a(10), b(10);
  std::vector<long> buf(20);
  expect_usage_error([&] { (void)(a.begin() == b.begin()); }, "pointers into different objects", "compare arrays");
  expect_usage_error([&] { (void)(a.end() - b.begin()); }, "different objects", "subtract arrays");
  expect_usage_error([&] { (void)(a.begin() < b.end()); }, "different objects", "order arrays");
  expect_usage_error([&] { hytask::copy(a.begin(), b.end(), buf.data()); }, "different objects", "copy across arrays");
  expect_usage_error([&] { (void)(a.begin() - 1); }, "index -1 outside", "before the begin");
  expect_usage_error([&] { (void)(a.end() + 1); }, "index 11 outside", "past the end");
  expect_usage_error([&] { (void)*a.end(); }, "index 10 outside", "dereference the end");
  expect_usage_error([&] { (void)a.end().owner(); }, "index 10 outside", "owner of the end");
  expect_usage_error([&] { (void)a.end().local(); }, "index 10 outside", "local() of the end");
  expect_usage_error([&] { (void)*hytask::global_ptr<long>{}; }, "null global_ptr", "dereference null");
  expect_usage_error([&] { hytask::copy(a.end(), a.begin(), buf.data()); }, "first <= last", "reversed range");
  expect_usage_error([&] { hytask::copy(buf.data(), buf.data() + 11, a.begin()); }, "index 11 outside",
                     "copy past the array's end");
  expect_usage_error([&] { hytask::fill(a.begin() + 5, a.begin() + 2, 0L); }, "first <= last", "fill reversed");
  CHECK(hytask::global_ptr<long>{} == hytask::global_ptr<long>{}, "null == null");
  CHECK(!(a.begin() == hytask::global_ptr<long>{}), "a pointer == null");
  CHECK(!hytask::global_ptr<long>{} && static_cast<bool>(a.begin()), "operator bool");
  hytask::mpi::barrier();
}

}  // namespace

int main() {
  hytask::runtime rt;
  g_rank = hytask::mpi::rank();
  g_size = hytask::mpi::size();
  for (std::size_t n : {10, 3, 7, 1, 0, 1000, 100003}) {
    if (n <= 1000) pointers(n);
    copies(n);
    if (n <= 1000) collectives(n);
    if (n <= 1000) async_copies(n);
  }
  misuse();
  long bad = 0;
  MPI_Allreduce(&g_bad, &bad, 1, MPI_LONG, MPI_SUM, hytask::mpi::comm_world());
  if (bad != 0) {
    if (g_rank == 0) std::fprintf(stderr, "global_algorithms: FAILED: %ld wrong results\n", bad);
    return 1;
  }
  if (g_rank == 0) std::printf("global_algorithms: ok (%ld checks on rank 0)\n", g_checks);
  return 0;
}
