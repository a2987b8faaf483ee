#include "tridiagonal.h"

#include <algorithm>
#include <cmath>
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

int64_t Tridiagonal::count_below(double x) const {
  // The signs of the LDL^T pivots of T - x I; a zero pivot is nudged as LAPACK's stebz does.
  const double tiny = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
  int64_t count = 0;
  double d = 1;
  for (int64_t i = 0; i < order(); ++i) {
    const double b2 = i > 0 ? offdiagonal[i - 1] * offdiagonal[i - 1] : 0.0;
    d = diagonal[i] - x - (i > 0 ? b2 / d : 0.0);
    if (std::abs(d) < tiny) d = -tiny;
    if (d < 0) ++count;
  }
  return count;
}

double Tridiagonal::eigenvalue(int64_t j) const {
  if (j < 0 || j >= order()) throw std::logic_error("eigenvalue " + std::to_string(j) + " of a tridiagonal of order " + std::to_string(order()));
  const double bound = norm(), slack = bound * 4 * std::numeric_limits<double>::epsilon() + std::numeric_limits<double>::min();
  double low = -bound - slack, high = bound + slack;  // count_below(low) <= j < count_below(high)
  for (int step = 0; step < 200; ++step) {
    const double mid = 0.5 * (low + high);
    if (mid <= low || mid >= high || high - low <= 2 * std::numeric_limits<double>::epsilon() * std::max(std::abs(low), std::abs(high)))
      break;
    if (count_below(mid) > j) high = mid;
    else low = mid;
  }
  return 0.5 * (low + high);
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
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (std::abs(d[i]) >= std::abs(dl[i])) {  // no swap: eliminate below
      if (d[i] == 0) d[i] = eps * scale;
      const double f = dl[i] / d[i];
      dl[i] = f;
      d[i + 1] -= f * du[i];
    } else {  // swap rows i and i + 1
      const double f = d[i] / dl[i];
      d[i] = dl[i];
      dl[i] = f;
      const double t = du[i];
      du[i] = d[i + 1];
      d[i + 1] = t - f * d[i + 1];
      if (i + 2 < n) {
        du2[i] = du[i + 1];
        du[i + 1] = -f * du[i + 1];
      }
      swapped[i] = 1;
    }
  }
  if (d[n - 1] == 0) d[n - 1] = eps * scale;
  std::vector<double> z(n, 1.0);
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i + 1 < n; ++i) {  // L
      if (swapped[i]) {
        const double t = z[i];
        z[i] = z[i + 1];
        z[i + 1] = t - dl[i] * z[i];
      } else {
        z[i + 1] -= dl[i] * z[i];
      }
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // U
      double s = z[i];
      if (i + 1 < n) s -= du[i] * z[i + 1];
      if (i + 2 < n) s -= du2[i] * z[i + 2];
      z[i] = s / d[i];
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
  while (j < n && found < wanted) {
    const double value = t.eigenvalue(j);
    // The cluster: every eigenvalue of t within the tolerance above this one.
    const int64_t past = std::max(t.count_below(value + tolerance), j + 1);
    const bool copies = past - j > 1;
    bool spurious = false;
    if (cullum_willoughby && !copies && hat.order() > 0)
      spurious = hat.count_below(value + tolerance) > hat.count_below(value - tolerance);
    if (!spurious) kept.push_back({value, copies, first, end}), ++found;
    j = past;
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
        double dot = 0;
        for (size_t r = 0; r < z.size(); ++r) dot += z[r] * vectors[j][r];
        for (size_t r = 0; r < z.size(); ++r) z[r] -= dot * vectors[j][r];
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
