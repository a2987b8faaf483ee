// The sparse plugin's tridiagonal eigenproblem (plugins/sparse/tridiagonal.h): bisection against the
// closed form of the 1-D Laplacian's eigenvalues, inverse iteration against its eigenvectors, and the
// Cullum-Willoughby filter on matrices whose copies and spurious values are known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tridiagonal.h"

namespace fugue::sparse {
namespace {

constexpr double kPi = 3.14159265358979323846;

Tridiagonal laplacian(int64_t n) {  // 2 on the diagonal, -1 beside it: eigenvalues 2 - 2 cos(k pi / (n + 1))
  Tridiagonal t;
  t.diagonal.assign(static_cast<size_t>(n), 2.0);
  t.offdiagonal.assign(static_cast<size_t>(n - 1), -1.0);
  return t;
}

TEST(Tridiagonal, BisectionFindsTheLaplaciansEigenvalues) {
  for (int64_t n : {1, 2, 7, 100, 1000}) {
    const Tridiagonal t = laplacian(n);
    for (int64_t j : {int64_t{0}, n / 2, n - 1}) {
      const double want = 2 - 2 * std::cos(static_cast<double>(j + 1) * kPi / static_cast<double>(n + 1));
      EXPECT_NEAR(t.eigenvalue(j), want, 1e-14 * 4) << "n " << n << " j " << j;
    }
    EXPECT_EQ(t.count_below(-1), 0);
    EXPECT_EQ(t.count_below(5), n);
  }
}

// Every eigenvalue at once (the intervals cut at many points a pass), against the closed form.
TEST(Tridiagonal, AllEigenvaluesTogetherMatchTheClosedForm) {
  for (int64_t n : {1, 2, 3, 16, 17, 1000}) {
    const Tridiagonal t = laplacian(n);
    const std::vector<double> values = t.eigenvalues(0, n);
    ASSERT_EQ(static_cast<int64_t>(values.size()), n);
    for (int64_t j = 0; j < n; ++j) {
      const double want = 2 - 2 * std::cos(static_cast<double>(j + 1) * kPi / static_cast<double>(n + 1));
      EXPECT_NEAR(values[static_cast<size_t>(j)], want, 4 * 2.3e-16 * 4) << "n " << n << " j " << j;
    }
    // A middle run of them, alone and started from a point whose count is known.
    const int64_t first = n / 3, how_many = std::max<int64_t>(1, n / 3);
    const std::vector<double> middle = t.eigenvalues(first, how_many);
    const double above = first > 0 ? 0.5 * (values[static_cast<size_t>(first - 1)] + values[static_cast<size_t>(first)]) : -10;
    ASSERT_EQ(t.count_below(above), first);
    const std::vector<double> started = t.eigenvalues(first, how_many, above);
    for (int64_t j = 0; j < how_many; ++j) {
      EXPECT_NEAR(middle[static_cast<size_t>(j)], values[static_cast<size_t>(first + j)], 4 * 2.3e-16 * 4) << "n " << n << " j " << j;
      EXPECT_NEAR(started[static_cast<size_t>(j)], values[static_cast<size_t>(first + j)], 4 * 2.3e-16 * 4) << "n " << n << " j " << j;
    }
  }
  // An eigenvalue twice (two blocks of one matrix): both indices get it.
  Tridiagonal twice;
  twice.diagonal = {2, 2, 2, 2, 2, 2};
  twice.offdiagonal = {-1, -1, 0, -1, -1};
  const std::vector<double> doubled = twice.eigenvalues(0, 6);
  for (int64_t j = 0; j < 6; j += 2) {
    const double want = 2 - 2 * std::cos(static_cast<double>(j / 2 + 1) * kPi / 4);
    EXPECT_NEAR(doubled[static_cast<size_t>(j)], want, 1e-14);
    EXPECT_NEAR(doubled[static_cast<size_t>(j + 1)], want, 1e-14);
  }
}

// Counts of a block of shifts (8 or 16 lanes a pass, spare lanes repeating the last) equal one
// shift's count, bit for bit: random matrices, shifts at their own diagonal elements (zero pivots)
// and beyond the spectrum, and every block length around the pass's.
TEST(Tridiagonal, ShiftsCountedTogetherCountAsOneAlone) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t block = Tridiagonal::shifts_per_pass();
  EXPECT_TRUE(block == 8 || block == 16);
  for (int64_t n : {1, 2, 31, 300}) {
    Tridiagonal t;
    for (int64_t i = 0; i < n; ++i) t.diagonal.push_back(i % 5 == 0 ? 0.25 : u(random));
    for (int64_t i = 0; i + 1 < n; ++i) t.offdiagonal.push_back(i % 7 == 0 ? 0.0 : u(random));
    for (int64_t how_many : {int64_t{1}, int64_t{2}, block - 1, block, block + 1, 2 * block + 3}) {
      std::vector<double> shifts;
      for (int64_t k = 0; k < how_many; ++k) shifts.push_back(k % 3 == 0 ? 0.25 : k % 3 == 1 ? 3 * u(random) : -4.0);
      std::vector<int64_t> counts(static_cast<size_t>(how_many), -1);
      t.count_below(shifts.data(), counts.data(), how_many);
      for (int64_t k = 0; k < how_many; ++k)
        EXPECT_EQ(counts[static_cast<size_t>(k)], t.count_below(shifts[static_cast<size_t>(k)])) << "n " << n << " of " << how_many << " shift " << k;
    }
  }
}

TEST(Tridiagonal, InverseIterationGivesUnitEigenvectors) {
  const int64_t n = 200;
  const Tridiagonal t = laplacian(n);
  for (int64_t j : {0, 1, 57, 199}) {
    const std::vector<double> z = t.eigenvector(t.eigenvalue(j));
    // The closed form: sin((i + 1)(j + 1) pi / (n + 1)), normalised, the largest component positive.
    double length = 0, dot = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::sin(static_cast<double>((i + 1) * (j + 1)) * kPi / static_cast<double>(n + 1));
      length += want * want;
      dot += want * z[static_cast<size_t>(i)];
    }
    EXPECT_NEAR(std::abs(dot) / std::sqrt(length), 1.0, 1e-12) << "j " << j;
    double norm = 0;
    for (double v : z) norm += v * v;
    EXPECT_NEAR(norm, 1.0, 1e-13);
  }
}

TEST(Tridiagonal, RandomMatricesSatisfyTheirEigenpairs) {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> u(-1, 1);
  Tridiagonal t;
  for (int i = 0; i < 300; ++i) t.diagonal.push_back(u(random));
  for (int i = 0; i < 299; ++i) t.offdiagonal.push_back(u(random));
  double previous = -10;
  for (int64_t j = 0; j < 300; j += 13) {
    const double value = t.eigenvalue(j);
    EXPECT_GE(value, previous);
    previous = value;
    const std::vector<double> z = t.eigenvector(value);
    double residual = 0;  // |T z - value z|, infinity norm
    for (int64_t i = 0; i < 300; ++i) {
      double r = (t.diagonal[i] - value) * z[i];
      if (i > 0) r += t.offdiagonal[i - 1] * z[i - 1];
      if (i + 1 < 300) r += t.offdiagonal[i] * z[i + 1];
      residual = std::max(residual, std::abs(r));
    }
    EXPECT_LT(residual, 1e-12) << "j " << j;
  }
}

TEST(Tridiagonal, CopiesCountOnceAndSpuriousValuesAreDropped) {
  // diag(L, L) with L the Laplacian of order 3: every eigenvalue twice (beta = 0 between the blocks).
  Tridiagonal twice;
  twice.diagonal = {2, 2, 2, 2, 2, 2};
  twice.offdiagonal = {-1, -1, 0, -1, -1};
  const auto values = smallest_ritz_values(twice, 10, 1e-10, true);
  ASSERT_EQ(values.size(), 3u);
  for (const auto& v : values) EXPECT_TRUE(v.copies);
  EXPECT_NEAR(values[0].value, 2 - std::sqrt(2.0), 1e-14);
  // [[1, 1e-4], [1e-4, 3]]: 3 + 5e-9 is found once and T without its first row and column has 3, within
  // the tolerance: spurious.
  Tridiagonal spurious;
  spurious.diagonal = {1, 3};
  spurious.offdiagonal = {1e-4};
  const auto filtered = smallest_ritz_values(spurious, 2, 1e-6, true);
  ASSERT_EQ(filtered.size(), 1u);
  EXPECT_NEAR(filtered[0].value, 1, 1e-8);
  EXPECT_EQ(smallest_ritz_values(spurious, 2, 1e-6, false).size(), 2u);
  // A zero off-diagonal splits T (a run that found an invariant subspace): each block is filtered
  // alone, and the values of the later block are not spurious for being in T without its first row.
  Tridiagonal reducible;
  reducible.diagonal = {5, 1, 2, 3};
  reducible.offdiagonal = {0, 0.5, 0.5};
  const auto split = smallest_ritz_values(reducible, 4, 1e-10, true);
  ASSERT_EQ(split.size(), 4u);
  EXPECT_NEAR(split[0].value, 0.7752551286084110, 1e-14);  // NumPy's eigvalsh of the second block
  EXPECT_NEAR(split[3].value, 5, 1e-14);
  EXPECT_EQ(split[0].begin, 1);
  EXPECT_EQ(split[3].begin, 0);
  const auto z = ritz_vectors(reducible, split, 1e-3);
  EXPECT_EQ(z[0][0], 0.0);  // a vector of the second block is zero on the first
  EXPECT_NEAR(std::abs(z[3][0]), 1.0, 1e-15);
  // Fewer values than asked for: all there are.
  EXPECT_EQ(smallest_ritz_values(laplacian(4), 10, 1e-10, true).size(), 4u);
}

// Close values of one block (W21+, pairs 1e-10 apart): their vectors come out orthogonal.
TEST(Tridiagonal, VectorsOfCloseValuesAreOrthogonal) {
  Tridiagonal t;
  for (int k = 0; k < 21; ++k) t.diagonal.push_back(std::abs(k - 10));
  t.offdiagonal.assign(20, 1.0);
  const auto values = smallest_ritz_values(t, 21, 1e3 * 2.2e-16 * t.norm(), false);
  const auto z = ritz_vectors(t, values, 1e-3 * t.norm());
  for (size_t i = 0; i < z.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      double dot = 0;
      for (size_t r = 0; r < z[i].size(); ++r) dot += z[i][r] * z[j][r];
      EXPECT_LT(std::abs(dot), 1e-12) << i << " " << j;
    }
}

}  // namespace
}  // namespace fugue::sparse
