#include "tridiagonal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace fugue::sparse {

double Tridiagonal::norm() const {
  double bound = 0;
  const int64_t n = order();
  for (int64_t i = 0; i < n; ++i) {
    double row = std::abs(diagonal[i]);
    if (i > 0) row += std::abs(offdiagonal[i - 1]);
    if (i + 1 < n) row += std::abs(offdiagonal[i]);
    bound = std::max(bound, row);
  }
  return bound;
}

namespace {

// The smallest pivot magnitude: a zero pivot becomes -tiny, as LAPACK's stebz nudges it.
const double kTiny = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();

// Sturm counts of T - x I for a block of shifts in one pass: the signs of the LDL^T pivots. One
// shift alone waits on each pivot's division in turn; independent shifts keep the divider busy, so a
// block costs about what one shift does. Compilers do not vectorize the recurrence across shifts by
// themselves, so the lanes are GCC's and Clang's vector extension: kVectors vectors of Doubles.
template <typename Doubles, typename Masks, int kVectors>
inline __attribute__((always_inline)) void count_block(const Tridiagonal& t, const double* shifts, int64_t* counts) {
  constexpr int kWidth = sizeof(Doubles) / sizeof(double);
  const Doubles minus_tiny = Doubles{} - kTiny;
  Doubles x[kVectors], d[kVectors];
  Masks negative[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    std::memcpy(&x[v], shifts + v * kWidth, sizeof(Doubles));
    d[v] = Doubles{} + 1.0;
    negative[v] = Masks{};
  }
  const int64_t n = t.order();
  for (int64_t i = 0; i < n; ++i) {
    // Row 0: b2 = 0 and d = 1, so its pivot is a - x exactly, as the recurrence's start.
    const double a = t.diagonal[i], b2 = i > 0 ? t.offdiagonal[i - 1] * t.offdiagonal[i - 1] : 0.0;
    for (int v = 0; v < kVectors; ++v) {
      const Doubles pivot = (a - x[v]) - b2 / d[v];
      const Masks tiny = (pivot < kTiny) & (pivot > -kTiny);
      d[v] = (Doubles)(((Masks)pivot & ~tiny) | ((Masks)minus_tiny & tiny));
      negative[v] -= d[v] < 0;  // a true comparison is -1
    }
  }
  for (int v = 0; v < kVectors; ++v) std::memcpy(counts + v * kWidth, &negative[v], sizeof(Masks));
}

// Two doubles: the baseline of x86-64 and AArch64; eight shifts a block.
typedef double Doubles2 __attribute__((vector_size(16)));
typedef int64_t Masks2 __attribute__((vector_size(16)));
void count_8(const Tridiagonal& t, const double* shifts, int64_t* counts) { count_block<Doubles2, Masks2, 4>(t, shifts, counts); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Four doubles where the CPU has AVX2 (asked at run time, so the library still runs without it):
// sixteen shifts a block for about the price of eight.
typedef double Doubles4 __attribute__((vector_size(32)));
typedef int64_t Masks4 __attribute__((vector_size(32)));
__attribute__((target("avx2"))) void count_16(const Tridiagonal& t, const double* shifts, int64_t* counts) {
  count_block<Doubles4, Masks4, 4>(t, shifts, counts);
}
bool wide() {
  static const bool avx2 = [] {
    __builtin_cpu_init();  // the CPU model may not be read yet when a plugin's initializers run
    return __builtin_cpu_supports("avx2");
  }();
  return avx2;
}
#else
void count_16(const Tridiagonal&, const double*, int64_t*) {}
bool wide() { return false; }
#endif

}  // namespace

int64_t Tridiagonal::shifts_per_pass() { return wide() ? 16 : 8; }

int64_t Tridiagonal::count_below(double x) const {
  // One shift: the plain recurrence, as count_block computes each of its lanes.
  int64_t count = 0;
  double d = 1;
  for (int64_t i = 0; i < order(); ++i) {
    const double b2 = i > 0 ? offdiagonal[i - 1] * offdiagonal[i - 1] : 0.0;
    d = (diagonal[i] - x) - b2 / d;
    if (std::abs(d) < kTiny) d = -kTiny;
    if (d < 0) ++count;
  }
  return count;
}

void Tridiagonal::count_below(const double* shifts, int64_t* counts, int64_t how_many) const {
  const int64_t block = shifts_per_pass();
  for (int64_t first = 0; first < how_many; first += block) {
    const int64_t lanes = std::min(block, how_many - first);
    if (lanes == 1) {
      counts[first] = count_below(shifts[first]);
      continue;
    }
    double x[16];
    int64_t c[16];
    for (int64_t l = 0; l < block; ++l) x[l] = shifts[first + std::min(l, lanes - 1)];  // spare lanes repeat the last
    if (wide()) count_16(*this, x, c);
    else count_8(*this, x, c);
    std::copy(c, c + lanes, counts + first);
  }
}

double Tridiagonal::eigenvalue(int64_t j) const {
  if (j < 0 || j >= order()) throw std::logic_error("eigenvalue " + std::to_string(j) + " of a tridiagonal of order " + std::to_string(order()));
  return eigenvalues(j, 1)[0];
}

std::vector<double> Tridiagonal::eigenvalues(int64_t first, int64_t how_many) const {
  return eigenvalues(first, how_many, -std::numeric_limits<double>::infinity());
}

std::vector<double> Tridiagonal::eigenvalues(int64_t first, int64_t how_many, double above) const {
  const int64_t n = order(), end = first + how_many;
  if (first < 0 || how_many < 0 || end > n)
    throw std::logic_error("eigenvalues " + std::to_string(first) + " .. " + std::to_string(end - 1) + " of a tridiagonal of order " + std::to_string(n));
  std::vector<double> values(static_cast<size_t>(how_many), 0.0);
  if (how_many == 0) return values;
  // LAPACK's stebz: intervals [low, high) with below(low) <= j < below(high) for the indices j they
  // hold, cut until narrower than an ulp of the norm or two of their ends (no Sturm count is more
  // accurate than the norm's rounding); pieces that hold no wanted index are dropped. A pass counts
  // a block of shifts for about the price of one, so the block's lanes are shared out among the open
  // intervals: each is cut at one point or more (at 16 lanes, one open interval in 17 pieces).
  const double eps = std::numeric_limits<double>::epsilon(), bound = norm();
  const double slack = bound * 4 * eps + std::numeric_limits<double>::min(), width = eps * bound;
  struct Interval {
    double low, high;
    int64_t below_low, below_high;
  };
  std::vector<Interval> open = {{std::max(-bound - slack, above), bound + slack, above > -bound - slack ? first : 0, n}}, next;
  std::vector<double> shifts;
  std::vector<int64_t> counts;
  std::vector<int> cuts;
  auto settle = [&](const Interval& v, double value) {
    for (int64_t j = std::max(v.below_low, first); j < std::min(v.below_high, end); ++j) values[static_cast<size_t>(j - first)] = value;
  };
  for (int step = 0; step < 200 && !open.empty(); ++step) {
    next.clear();
    for (const Interval& v : open) {
      const double mid = 0.5 * (v.low + v.high);
      if (mid <= v.low || mid >= v.high || v.high - v.low <= std::max(width, 2 * eps * std::max(std::abs(v.low), std::abs(v.high))))
        settle(v, mid);
      else
        next.push_back(v);
    }
    // The lanes of the passes this round needs anyway, shared out among the intervals.
    const int64_t open_count = static_cast<int64_t>(next.size()), block = shifts_per_pass();
    const int64_t lanes = (open_count + block - 1) / block * block;
    shifts.clear();
    cuts.clear();
    for (int64_t i = 0; i < open_count; ++i) {
      const Interval& v = next[static_cast<size_t>(i)];
      // Cut points strictly inside and increasing; where rounding would repeat one, the midpoint alone.
      int points = static_cast<int>(lanes / open_count + (i < lanes % open_count ? 1 : 0));
      for (int k = 1; k <= points; ++k) {
        const double x = v.low + (v.high - v.low) * (static_cast<double>(k) / (points + 1));
        const double before = k == 1 ? v.low : shifts.back();
        if (!(x > before && x < v.high)) {
          shifts.resize(shifts.size() - (k - 1));
          points = 0;
          break;
        }
        shifts.push_back(x);
      }
      if (points == 0) shifts.push_back(0.5 * (v.low + v.high)), points = 1;
      cuts.push_back(points);
    }
    counts.resize(shifts.size());
    count_below(shifts.data(), counts.data(), static_cast<int64_t>(shifts.size()));
    open.clear();
    size_t at = 0;
    for (size_t i = 0; i < next.size(); ++i) {
      const Interval& v = next[i];
      double low = v.low;
      int64_t below_low = v.below_low;
      for (int k = 0; k <= cuts[i]; ++k) {
        const bool last = k == cuts[i];
        const double high = last ? v.high : shifts[at + k];
        // Clamped: rounding must not let a count leave its interval's or run backwards.
        const int64_t below_high = last ? v.below_high : std::min(std::max(counts[at + k], below_low), v.below_high);
        if (below_high > below_low && below_high > first && below_low < end) open.push_back({low, high, below_low, below_high});
        low = high;
        below_low = below_high;
      }
      at += static_cast<size_t>(cuts[i]);
    }
  }
  for (const Interval& v : open) settle(v, 0.5 * (v.low + v.high));  // not reached: 200 cuts narrow any interval enough
  return values;
}

std::vector<double> Tridiagonal::eigenvector(double value) const {
  const int64_t n = order();
  if (n == 1) return {1.0};
  // (T - value I) z = b solved by Gaussian elimination with partial pivoting (LAPACK's gttrf: an upper
  // factor with two superdiagonals), a zero pivot replaced by a tiny one; three rounds from a vector
  // of ones are plenty for a value accurate to the norm's rounding.
  const double eps = std::numeric_limits<double>::epsilon(), scale = std::max(norm(), std::numeric_limits<double>::min());
  std::vector<double> d(n), du(n), du2(n), dl(n);
  std::vector<int8_t> swapped(n);
  for (int64_t i = 0; i < n; ++i) {
    d[i] = diagonal[i] - value;
    du[i] = i + 1 < n ? offdiagonal[i] : 0.0;
    dl[i] = i + 1 < n ? offdiagonal[i] : 0.0;
    du2[i] = 0;
  }
  // Both branches of each row written as selections: which one a row takes follows no pattern a
  // branch predictor could learn.
  for (int64_t i = 0; i + 1 < n; ++i) {
    const double diagonal_i = d[i], below = dl[i], above = du[i], next = d[i + 1];
    const bool swap = std::abs(diagonal_i) < std::abs(below);  // swap rows i and i + 1, else eliminate below
    double pivot = swap ? below : diagonal_i;
    if (pivot == 0) pivot = eps * scale;  // only without a swap, where the column is zero
    const double f = (swap ? diagonal_i : below) / pivot;
    d[i] = pivot;
    dl[i] = f;
    du[i] = swap ? next : above;
    d[i + 1] = (swap ? above : next) - f * (swap ? next : above);
    if (i + 2 < n) {
      const double far = du[i + 1];
      du2[i] = swap ? far : 0.0;
      du[i + 1] = swap ? -f * far : far;
    }
    swapped[i] = swap;
  }
  if (d[n - 1] == 0) d[n - 1] = eps * scale;
  // The rounds below multiply by the pivots' reciprocals: a division in each row's chain of
  // dependences would take most of their time.
  std::vector<double> reciprocal(n);
  for (int64_t i = 0; i < n; ++i) reciprocal[i] = 1 / d[i];
  std::vector<double> z(n, 1.0);
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i + 1 < n; ++i) {  // L, the rows swapped as the factorization did
      const double upper = z[i], lower = z[i + 1];
      z[i] = swapped[i] ? lower : upper;
      z[i + 1] = (swapped[i] ? upper : lower) - dl[i] * z[i];
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // U
      double s = z[i];
      if (i + 1 < n) s -= du[i] * z[i + 1];
      if (i + 2 < n) s -= du2[i] * z[i + 2];
      z[i] = s * reciprocal[i];
    }
    double length = 0;
    for (double v : z) length = std::max(length, std::abs(v));
    for (double& v : z) v /= length;  // kept near 1 so that rounds cannot overflow
  }
  double length = 0;
  for (double v : z) length += v * v;
  length = std::sqrt(length);
  // The sign: the largest component positive, so that a vector does not flip between calls.
  const auto largest = std::max_element(z.begin(), z.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  if (*largest < 0) length = -length;
  for (double& v : z) v /= length;
  return z;
}

Tridiagonal Tridiagonal::without_first() const {
  Tridiagonal t;
  if (order() > 1) {
    t.diagonal.assign(diagonal.begin() + 1, diagonal.end());
    t.offdiagonal.assign(offdiagonal.begin() + 1, offdiagonal.end());
  }
  return t;
}

namespace {

Tridiagonal block_of(const Tridiagonal& t, int64_t begin, int64_t end) {
  Tridiagonal b;
  b.diagonal.assign(t.diagonal.begin() + begin, t.diagonal.begin() + end);
  b.offdiagonal.assign(t.offdiagonal.begin() + begin, t.offdiagonal.begin() + (end - 1));
  return b;
}

// The smallest `wanted` values of one unreduced block, as smallest_ritz_values says.
void block_values(const Tridiagonal& t, int64_t first, int64_t wanted, double tolerance, bool cullum_willoughby,
                  std::vector<RitzValue>& kept) {
  const Tridiagonal hat = t.without_first();
  const int64_t n = t.order(), end = first + n;
  int64_t found = 0, j = 0;
  double above = -std::numeric_limits<double>::infinity();
  while (j < n && found < wanted) {
    // The values still wanted, with the counts that judge them, each set found together. Copies and
    // spurious values use up indices: the first batch is what is wanted, later ones grow by the
    // indices each value kept has taken so far.
    const int64_t per_value = found > 0 ? (j + found - 1) / found : 1;
    const int64_t batch = std::min(n - j, (wanted - found) * per_value);
    // After a value, j is its cluster's end: count_below(value + tolerance) = j, where the search starts.
    const std::vector<double> values = t.eigenvalues(j, batch, above);
    std::vector<double> shifts(static_cast<size_t>(batch));
    std::vector<int64_t> cluster_end(static_cast<size_t>(batch)), hat_above(static_cast<size_t>(batch)), hat_below(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) shifts[i] = values[i] + tolerance;
    t.count_below(shifts.data(), cluster_end.data(), batch);
    const bool filter = cullum_willoughby && hat.order() > 0;
    if (filter) {
      hat.count_below(shifts.data(), hat_above.data(), batch);
      for (int64_t i = 0; i < batch; ++i) shifts[i] = values[i] - tolerance;
      hat.count_below(shifts.data(), hat_below.data(), batch);
    }
    int64_t k = j;
    const int64_t batch_end = j + batch;
    while (k < batch_end && found < wanted) {
      const size_t i = static_cast<size_t>(k - j);
      const double value = values[i];
      // The cluster: every eigenvalue of t within the tolerance above this one.
      const int64_t past = std::max(cluster_end[i], k + 1);
      const bool copies = past - k > 1;
      // Cullum-Willoughby: a value found once that T-hat also has is spurious.
      const bool spurious = filter && !copies && hat_above[i] > hat_below[i];
      if (!spurious) kept.push_back({value, copies, first, end}), ++found;
      above = cluster_end[i] == past ? value + tolerance : -std::numeric_limits<double>::infinity();
      k = past;
    }
    j = k;
  }
}

}  // namespace

std::vector<RitzValue> smallest_ritz_values(const Tridiagonal& t, int64_t wanted, double tolerance, bool cullum_willoughby) {
  std::vector<RitzValue> all;
  int64_t begin = 0;
  for (int64_t i = 0; i < t.order(); ++i)
    if (i + 1 == t.order() || std::abs(t.offdiagonal[i]) <= tolerance) {
      block_values(block_of(t, begin, i + 1), begin, wanted, tolerance, cullum_willoughby, all);
      begin = i + 1;
    }
  std::stable_sort(all.begin(), all.end(), [](const RitzValue& a, const RitzValue& b) { return a.value < b.value; });
  // Equal values of different blocks are one eigenvalue found twice: counted once, as copies.
  std::vector<RitzValue> kept;
  for (const RitzValue& v : all) {
    if (!kept.empty() && v.value - kept.back().value <= tolerance) {
      kept.back().copies = true;
      continue;
    }
    if (static_cast<int64_t>(kept.size()) == wanted) break;
    kept.push_back(v);
  }
  return kept;
}

std::vector<std::vector<double>> ritz_vectors(const Tridiagonal& t, const std::vector<RitzValue>& values, double gap) {
  std::vector<std::vector<double>> vectors;
  for (size_t i = 0; i < values.size(); ++i) {
    const RitzValue& v = values[i];
    const std::vector<double> local = block_of(t, v.begin, v.end).eigenvector(v.value);
    std::vector<double> z(static_cast<size_t>(t.order()), 0.0);
    std::copy(local.begin(), local.end(), z.begin() + v.begin);
    // Close values of one block: inverse iteration lands on nearly the same vector; Gram-Schmidt
    // against the earlier ones (twice, for accuracy) as LAPACK's stein does.
    bool changed = false;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t j = 0; j < i; ++j) {
        if (values[j].begin != v.begin || std::abs(values[j].value - v.value) > gap) continue;
        // Four partial sums: one would wait on each addition in turn.
        double partial[4] = {0, 0, 0, 0};
        size_t r = 0;
        for (; r + 4 <= z.size(); r += 4)
          for (size_t k = 0; k < 4; ++k) partial[k] += z[r + k] * vectors[j][r + k];
        for (; r < z.size(); ++r) partial[0] += z[r] * vectors[j][r];
        const double dot = (partial[0] + partial[1]) + (partial[2] + partial[3]);
        for (size_t k = 0; k < z.size(); ++k) z[k] -= dot * vectors[j][k];
        changed = true;
      }
    if (changed) {
      double length = 0;
      for (double x : z) length += x * x;
      length = std::sqrt(length);
      if (length > 0)
        for (double& x : z) x /= length;
    }
    vectors.push_back(std::move(z));
  }
  return vectors;
}

}  // namespace fugue::sparse
