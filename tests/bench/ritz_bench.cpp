// A benchmark, outside CTest: sparse.ritz's small eigenproblem on the host (plugins/sparse/tridiagonal.h),
// as a Lanczos run with a convergence test every 20 steps calls it. The tridiagonal T comes from 1,500
// steps of Lanczos without reorthogonalization on a weighted 2-D grid's normalized Laplacian (97 x 131
// cells, random weights, a fixed seed), so that it holds ghost copies of the converged values, as real
// runs do. Each of the 74 calls takes T's leading n x n part (n = 20, 40, ..., 1,480) and finds its 9
// smallest values (Cullum-Willoughby, values within 1e3 ulp of |T| counted once) and their vectors, as
// sparse.ritz does. Prints the time of the values and of the vectors over the 74 calls (the fastest of
// five rounds), and the worst residual |T z - theta z| / |T|.
// Run: build/tests/fugue_ritz_bench
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "tridiagonal.h"

using fugue::sparse::Tridiagonal;

namespace {

// alpha and beta of `steps` Lanczos steps on I - D^-1/2 W D^-1/2, W the 4-neighbour grid's random weights.
Tridiagonal lanczos(int rows, int cols, int steps) {
  const int n = rows * cols;
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> weight(0.1, 1.0);
  std::vector<double> right(n, 0.0), down(n, 0.0), degree(n, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int i = r * cols + c;
      if (c + 1 < cols) right[i] = weight(random), degree[i] += right[i], degree[i + 1] += right[i];
      if (r + 1 < rows) down[i] = weight(random), degree[i] += down[i], degree[i + cols] += down[i];
    }
  std::vector<double> scale(n);
  for (int i = 0; i < n; ++i) scale[i] = 1 / std::sqrt(degree[i]);
  auto apply = [&](const std::vector<double>& x, std::vector<double>& y) {
    for (int i = 0; i < n; ++i) y[i] = x[i];
    for (int i = 0; i < n; ++i) {
      if (right[i] != 0) {
        const double w = right[i] * scale[i] * scale[i + 1];
        y[i] -= w * x[i + 1], y[i + 1] -= w * x[i];
      }
      if (down[i] != 0) {
        const double w = down[i] * scale[i] * scale[i + cols];
        y[i] -= w * x[i + cols], y[i + cols] -= w * x[i];
      }
    }
  };
  std::uniform_real_distribution<double> start(0, 1);
  std::vector<double> v(n), last(n, 0.0), w(n);
  double length = 0;
  for (double& x : v) x = start(random), length += x * x;
  for (double& x : v) x /= std::sqrt(length);
  Tridiagonal t;
  double beta = 0;
  for (int j = 0; j < steps; ++j) {
    apply(v, w);
    double alpha = 0;
    for (int i = 0; i < n; ++i) w[i] -= beta * last[i], alpha += v[i] * w[i];
    double norm = 0;
    for (int i = 0; i < n; ++i) w[i] -= alpha * v[i], norm += w[i] * w[i];
    t.diagonal.push_back(alpha);
    if (j + 1 < steps) t.offdiagonal.push_back(std::sqrt(norm));
    beta = std::sqrt(norm);
    for (int i = 0; i < n; ++i) last[i] = v[i], v[i] = w[i] / beta;
  }
  return t;
}

}  // namespace

int main() {
  const Tridiagonal whole = lanczos(97, 131, 1500);
  const double eps = std::numeric_limits<double>::epsilon();
  double best_values = 1e300, best_vectors = 1e300, worst_residual = 0;
  for (int round = 0; round < 5; ++round) {
    double values_s = 0, vectors_s = 0;
    for (int64_t n = 20; n <= 1480; n += 20) {
      Tridiagonal t;
      t.diagonal.assign(whole.diagonal.begin(), whole.diagonal.begin() + n);
      t.offdiagonal.assign(whole.offdiagonal.begin(), whole.offdiagonal.begin() + (n - 1));
      const double norm = t.norm();
      const auto t0 = std::chrono::steady_clock::now();
      const auto values = fugue::sparse::smallest_ritz_values(t, 9, 1e3 * eps * norm, true);
      const auto t1 = std::chrono::steady_clock::now();
      const auto vectors = fugue::sparse::ritz_vectors(t, values, 1e-3 * norm);
      const auto t2 = std::chrono::steady_clock::now();
      values_s += std::chrono::duration<double>(t1 - t0).count();
      vectors_s += std::chrono::duration<double>(t2 - t1).count();
      if (round > 0) continue;
      for (size_t k = 0; k < values.size(); ++k) {
        const std::vector<double>& z = vectors[k];
        double residual = 0;
        for (int64_t i = 0; i < n; ++i) {
          double y = (t.diagonal[i] - values[k].value) * z[i];
          if (i > 0) y += t.offdiagonal[i - 1] * z[i - 1];
          if (i + 1 < n) y += t.offdiagonal[i] * z[i + 1];
          residual += y * y;
        }
        worst_residual = std::max(worst_residual, std::sqrt(residual) / norm);
      }
    }
    best_values = std::min(best_values, values_s);
    best_vectors = std::min(best_vectors, vectors_s);
  }
  std::printf("74 calls (n = 20 .. 1480, 9 values): values %.1f ms, vectors %.1f ms (fastest of 5); worst residual %.2g |T|\n",
              best_values * 1e3, best_vectors * 1e3, worst_residual);
  return 0;
}
