// The linalg plugin's QR family against LAPACK (LAPACKE, the independent oracle): geqrf's R, reflectors
// and tau beside dgeqrf's (the same algorithm, so the same signs), backward errors ||A - Q R|| and
// orthogonality ||Q^T Q - I|| with orgqr's Q, geqrf and orgqr sharing a kernel, and gels beside dgels on
// sizes in every plan (registers, teams in local memory, the working matrix in the core's workspace).
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <iterator>
#include <tuple>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

std::string batch_shape(int64_t count, int64_t m, int64_t n) {
  return "[" + std::to_string(count) + ", " + std::to_string(m) + ", " + std::to_string(n) + "]";
}

std::string random_matrices(const char* dtype, int64_t count, int64_t m, int64_t n, uint64_t seed) {
  return R"({"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + batch_shape(count, m, n) +
         R"(, "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -1, "high": 1}}})";
}

}  // namespace

// geqrf (then orgqr when m >= n, in the same kernel) on random matrices of every plan, square, tall and
// wide: QR and tau within a bound of LAPACK's; ||A - Q R||_F / (max(m, n) eps ||A||_F) and
// ||Q^T Q - I||_F / (m eps) below 4, in f64 and f32.
TEST(Linalg, GeqrfOrgqrMatchLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // 460 x 440: over three quarters of PoCL's local memory in f64, so the team works in QR's own storage.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1},   {2, 2},   {3, 3},   {7, 7},   {8, 8},   {8, 5},
                                                           {5, 8},   {9, 9},   {16, 16}, {20, 7},  {7, 20},  {31, 31},
                                                           {32, 32}, {33, 33}, {64, 64}, {100, 60}, {460, 440}};
  // The device's table, then the blocked plan (blocked_qr.h) from order 9 in panels of 8 columns, then
  // a column per work-item in registers (GPUs' plan from order 9 to their row order) for the orders it takes.
  // Each plan takes each shape in one dtype, f64 and f32 by turns, and the next plan the other way round:
  // every shape meets both dtypes at half the builds (PoCL's builds are the suite's time).
  const char* const tunings[] = {"", "qr_blocked_order=8,blocked_panel=8", "loop_order=0,qr_column_order=64"};
  for (size_t p = 0; p < std::size(tunings); ++p)
  for (const char* dtype : {"f64", "f32"})
    for (size_t i = 0; i < shapes.size(); ++i) {
      if ((p + i + (std::string(dtype) == "f32" ? 1 : 0)) % 2) continue;
      const char* tuning = tunings[p];
      const auto& [m, n] = shapes[i];
      if (p == 2 && (std::max(m, n) <= 8 || std::max(m, n) > 33)) continue;  // 64's unrolled code takes PoCL long to build
      test::LinalgTuning scope(tuning);
      const bool blocked = p == 1 && std::max(m, n) > 8;
      const int64_t count = std::max(m, n) <= 16 ? 200 : std::max(m, n) <= 64 ? 20 : 1;
      const int64_t k = std::min(m, n);
      const bool square_or_tall = m >= n;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " +
                               std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      const std::string orgqr = square_or_tall ? R"(, {"op": "linalg.orgqr", "out": ["Q"], "in": ["QR", "tau"]})" : "";
      const std::string q_file = square_or_tall ? R"(, "Q": "Q.npy")" : "";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {"A": )" + random_matrices(dtype, count, m, n, seed + m * 1000 + n) +
                                                 R"(}, "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]})" + orgqr +
                                                 R"(], "outputs": {"QR": "QR.npy", "tau": "tau.npy", "A": "A.npy")" + q_file + "}}");
      int64_t launches = 0;
      auto out = test::run_on_device(program, std::nullopt, {}, &launches);
      // Where QR fits local memory: the largest crosses between them through global memory, two kernels.
      if (square_or_tall && m <= 100 && !blocked) {
        EXPECT_EQ(launches, 1) << "orgqr joins geqrf's kernel, " << what;
      }
      const HostArray &a = out.at("A"), &qr = out.at("QR"), &tau = out.at("tau");
      const bool f32 = std::string(dtype) == "f32";
      const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst_diff = 0, worst_backward = 0, worst_orthogonality = 0;
      for (int64_t e = 0; e < count; ++e) {
        std::vector<double> f(static_cast<size_t>(m * n)), t(static_cast<size_t>(k));
        for (int64_t i = 0; i < m * n; ++i) f[i] = a.get(e * m * n + i);
        ASSERT_EQ(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), f.data(),
                                 static_cast<lapack_int>(n), t.data()),
                  0);
        for (int64_t i = 0; i < m * n; ++i) worst_diff = std::max(worst_diff, std::fabs(qr.get(e * m * n + i) - f[i]));
        for (int64_t i = 0; i < k; ++i) worst_diff = std::max(worst_diff, std::fabs(tau.get(e * k + i) - t[i]));
        if (!square_or_tall) continue;
        const HostArray& q = out.at("Q");
        double residual = 0, norm = 0, orthogonality = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double product = 0;  // (Q R)(i, j)
            for (int64_t s = 0; s <= j; ++s) product += q.get(e * m * n + i * n + s) * qr.get(e * m * n + s * n + j);
            const double v = a.get(e * m * n + i * n + j);
            residual += (v - product) * (v - product);
            norm += v * v;
          }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double product = 0;  // (Q^T Q)(i, j)
            for (int64_t s = 0; s < m; ++s) product += q.get(e * m * n + s * n + i) * q.get(e * m * n + s * n + j);
            orthogonality += (product - (i == j)) * (product - (i == j));
          }
        worst_backward = std::max(worst_backward, std::sqrt(residual) / (static_cast<double>(std::max(m, n)) * eps * std::sqrt(norm)));
        worst_orthogonality = std::max(worst_orthogonality, std::sqrt(orthogonality) / (static_cast<double>(m) * eps));
      }
      EXPECT_LT(worst_diff, 1e2 * std::max(m, n) * eps) << "against LAPACK's dgeqrf, " << what;
      EXPECT_LT(worst_backward, 4.0) << "backward error ||A - QR||, " << what;
      EXPECT_LT(worst_orthogonality, 4.0) << "||Q^T Q - I||, " << what;
    }
}

// gels beside LAPACK's dgels on random full-rank systems of every plan, with one and several right-hand
// sides; (500, 400, 2) needs more than three quarters of PoCL's local memory in f64, so it works in the
// core's workspace. A rank-deficient matrix (an exactly zero column) gets LAPACK's info and NaNs, beside
// regular ones that are unaffected. On a CPU the table takes the loop plan above order 8; loop_order=0
// runs the teams again for the middle sizes, and qr_column_order=32 beside it GPUs' columns up to 32.
TEST(Linalg, GelsMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> sizes = {{1, 1, 1},   {3, 2, 1},   {8, 4, 2},    {6, 6, 1},
                                                                    {20, 5, 1},  {40, 12, 3}, {64, 32, 1},  {100, 30, 2},
                                                                    {500, 400, 2}, {32, 24, 8}};
  // The third: a column of [A | B] per work-item in registers (GPUs' plan where max(m, n + k) is 9..32).
  for (const char* tuning : {"", "loop_order=0", "loop_order=0,qr_column_order=32"})
  for (const char* dtype : {"f64", "f32"})
    for (const auto& [m, n, k] : sizes) {
      if (*tuning && (m <= 8 || m > 100)) continue;
      if (std::string(tuning).find("qr_column_order") != std::string::npos && std::max(m, n + k) > 32) continue;
      test::LinalgTuning scope(tuning);
      const int64_t count = m <= 16 ? 200 : m <= 64 ? 20 : 1;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + ", k=" + std::to_string(k) +
                               " (seed " + std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {"A": )" + random_matrices(dtype, count, m, n, seed + m * 1000 + n) +
                                                 R"(, "B": )" + random_matrices(dtype, count, m, k, seed + 7 + m) + R"(},
        "body": [{"op": "linalg.gels", "out": ["X", "info"], "in": ["A", "B"]}],
        "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &a = out.at("A"), &b = out.at("B"), &x = out.at("X"), &info = out.at("info");
      const bool f32 = std::string(dtype) == "f32";
      const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst = 0;
      for (int64_t e = 0; e < count; ++e) {
        EXPECT_EQ(info.get(e), 0) << what << ", matrix " << e;
        std::vector<double> af(static_cast<size_t>(m * n)), bf(static_cast<size_t>(m * k));
        for (int64_t i = 0; i < m * n; ++i) af[i] = a.get(e * m * n + i);
        for (int64_t i = 0; i < m * k; ++i) bf[i] = b.get(e * m * k + i);
        ASSERT_EQ(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(m), static_cast<lapack_int>(n),
                                static_cast<lapack_int>(k), af.data(), static_cast<lapack_int>(n), bf.data(), static_cast<lapack_int>(k)),
                  0);
        // Least squares' condition: cond(A) + cond(A)^2 (residual's share), cond from the singular values.
        std::vector<double> sv(static_cast<size_t>(n)), copy(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m * n; ++i) copy[i] = a.get(e * m * n + i);
        ASSERT_EQ(LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(m), static_cast<lapack_int>(n), copy.data(),
                                 static_cast<lapack_int>(n), sv.data(), nullptr, static_cast<lapack_int>(m), nullptr, static_cast<lapack_int>(n)),
                  0);
        const double cond = sv.front() / sv.back();
        // The residual's share grows with tan(theta) = |r| / (|A| |x|) (Golub and Van Loan, 5.3.8): a
        // small solution of a large residual moves by more than cond^2 eps relative to itself.
        double r2 = 0, x2 = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t c = 0; c < k; ++c) {
            double r = b.get(e * m * k + i * k + c);
            for (int64_t j = 0; j < n; ++j) r -= a.get(e * m * n + i * n + j) * bf[j * k + c];
            r2 += r * r;
          }
        for (int64_t i = 0; i < n * k; ++i) x2 += bf[i] * bf[i];
        const double tan_theta = x2 > 0 ? std::sqrt(r2 / x2) / sv.front() : 0;
        worst = std::max(worst, test::relative_difference(x, e * n * k, std::vector<double>(bf.begin(), bf.begin() + n * k)) /
                                    (eps * (cond + cond * cond * std::max(1.0, tan_theta))));
      }
      // Relative to the largest element of the solution, in units of eps times the condition.
      EXPECT_LT(worst, 4.0 * m) << "against LAPACK's dgels, " << what;
    }

  // Matrix 1: column 4 zero (R(4, 4) = 0, info 5); matrix 2: column 0 zero (info 1); matrix 0 regular. The
  // table's plan, then the columns in registers (a zero column reflects nothing: tau 0, the others skip it).
  for (const char* tuning : {"", "loop_order=0,qr_column_order=32"}) {
  test::LinalgTuning scope(tuning);
  const int64_t m = 12, n = 10;
  const std::string values = test::matrix_values(3, m, n, [](int64_t e, int64_t i, int64_t j) {
    const bool zero = (e == 1 && j == 4) || (e == 2 && j == 0);
    return zero ? 0.0 : static_cast<double>((i * 37 + j * j * 11 + i * j * 7 + e * 3) % 23 - 11);
  });
  Program deficient = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [3, 12, 10], "value": )" + values + R"(},
    "B": {"kind": "array", "dtype": "f64", "shape": [3, 12, 1], "from": {"random": {"seed": 6}}}},
    "body": [{"op": "linalg.gels", "out": ["X", "info"], "in": ["A", "B"]}],
    "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
  auto out = test::run_on_device(deficient);
  EXPECT_EQ(out.at("info").get(0), 0);
  EXPECT_EQ(out.at("info").get(1), 5);
  EXPECT_EQ(out.at("info").get(2), 1);
  std::vector<double> af(static_cast<size_t>(m * n)), bf(static_cast<size_t>(m));
  for (int64_t i = 0; i < m * n; ++i) af[i] = out.at("A").get(i);
  for (int64_t i = 0; i < m; ++i) bf[i] = out.at("B").get(i);
  ASSERT_EQ(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', m, n, 1, af.data(), n, bf.data(), 1), 0);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(out.at("X").get(i), bf[i], 1e-10 * (1 + std::fabs(bf[i]))) << "the regular matrix, X(" << i << ")";
    EXPECT_TRUE(std::isnan(out.at("X").get(n + i)) && std::isnan(out.at("X").get(2 * n + i))) << "X of the deficient ones, row " << i;
  }
  test::expect_same(out, test::run_reference(deficient), 1e-10, std::string("gels against its reference, FUGUE_LINALG_TUNING=") + tuning);
  }
}

// The example batch of cubic least-squares fits (examples/linalg/least_squares.json: 10,000 signals of 32
// samples, A the Vandermonde matrix [1, t, t^2, t^3] built in the program, y = A c_true + noise, c = gels(A,
// y), the residual norm of each fit) against NumPy, from the inputs the run writes out: A's columns are t's
// powers (relative 1e-14); y is A c_true within the noise's 0.05; info is 0 everywhere; c is
// numpy.linalg.lstsq's solution within the least-squares bound used against dgels above,
// max|c - c_np| < 4 m eps (cond + cond^2) max|c_np| per signal (cond from NumPy's singular values); and
// the residual norm is ||y - A c|| of the program's own c within 1e-12 (the norms are about 0.1).
TEST(Linalg, LeastSquaresExampleMatchesNumPy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with NumPy";
  test::TempDir dir;
  const std::string example = (test::source_root() / "examples" / "linalg" / "least_squares.json").string();
  auto r = test::run_fugue("run " + example + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1] + '/'
A, y, c_true, c, info, rnorm = (np.load(d + f + '.npy') for f in ('A', 'y', 'c_true', 'c', 'info', 'residual_norm'))
signals, m, n = A.shape
ok = c.shape == (signals, n, 1) and y.shape == (signals, m, 1) and info.shape == (signals,) and rnorm.shape == (signals, 1, 1)
t = A[..., 1]
ea = np.abs(A - t[..., None] ** np.arange(n)).max()
ey = np.abs(y - A @ c_true).max()
c_np = np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(A, y)])
s = np.linalg.svd(A, compute_uv=False)
cond = s[:, 0] / s[:, -1]
eps = np.finfo(np.float64).eps
ec = (np.abs(c - c_np).max(axis=(1, 2)) / (np.abs(c_np).max(axis=(1, 2)) * eps * (cond + cond ** 2))).max()
er = np.abs(rnorm[:, 0, 0] - np.linalg.norm((y - A @ c)[..., 0], axis=1)).max()
print(f'{signals} signals, cond up to {cond.max():.1f}: A {ea:.3e} y-Ac_true {ey:.4f} c {ec:.3f} (bound {4 * m}) '
      f'residual norm {er:.3e} info {info.max()} shapes {ok}')
sys.exit(0 if ok and ea < 1e-14 and ey <= 0.05 and ec < 4 * m and er < 1e-12 and not info.any() else 1)
)");
  auto check = test::run_command(python + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_EQ(check.code, 0) << check.out;
}

// Q written over QR (LAPACK's in-place orgqr): the same Q as into an array of its own where one
// work-item builds it in registers (up to 8 x 8); larger is refused with the statement's place and a way
// out, never a wrong Q.
TEST(Linalg, OrgqrOverItsInput) {
  test::TempDir dir;
  auto program = [](int64_t m, int64_t n, const char* q) {
    return R"({"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "f64", "shape": [9, )" + std::to_string(m) + ", " + std::to_string(n) +
           R"(], "from": {"random": {"seed": 4}}}},
      "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]},
               {"op": "linalg.orgqr", "out": [")" + q + R"("], "in": ["QR", "tau"]}],
      "outputs": {")" + q + R"(": "Q.npy"}})";
  };
  auto over = test::run_on_device(test::load_text(dir, program(5, 4, "QR")));
  auto own = test::run_on_device(test::load_text(dir, program(5, 4, "Q")));
  for (int64_t i = 0; i < 9 * 5 * 4; ++i) EXPECT_EQ(over.at("QR").get(i), own.at("Q").get(i)) << i;
  test::write_text(dir / "big.json", program(20, 12, "QR"));
  auto r = test::run_fugue("run " + (dir / "big.json").string() + " --out " + (dir / "o").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/body/1 linalg.orgqr QR = (QR, tau): Q is written over QR, which is supported where one work-item builds Q "
                       "in registers (orders up to 8, the table's register_order); this one is 20 x 12: give Q a name of its own"),
            std::string::npos)
      << r.out;
}

// geqrf of scaled matrices, in every plan: squares that overflow (f32 1e20, f64 1e160), underflow (f32
// 1e-20, f64 1e-170) or columns of subnormal numbers (f64 1e-310, where 1 / (alpha - beta) overflows)
// give R scaled and the same tau as the matrix unscaled, never NaN; complex ones too (c64 1e20, where
// |alpha - beta|^2 overflows, and c128 1e-310). Blocked (blocked_qr.h) too, in panels of 8, and a column
// per work-item (GPUs' plan from order 9) at 12.
TEST(Linalg, GeqrfOfScaledMatrices) {
  test::TempDir dir;
  struct Case {
    const char* dtype;
    const char* scale;
    double value, tolerance;
  };
  for (const char* tuning : {"", "qr_blocked_order=8,blocked_panel=8", "loop_order=0,qr_column_order=32"})
  for (const Case& c : {Case{"f32", "1e20", 1e20, 1e-5}, Case{"f32", "1e-20", 1e-20, 1e-5}, Case{"f64", "1e160", 1e160, 1e-13},
                        Case{"f64", "1e-170", 1e-170, 1e-13}, Case{"f64", "1e-310", 1e-310, 1e-8}, Case{"c64", "1e20", 1e20, 1e-5},
                        Case{"c128", "1e-310", 1e-310, 1e-8}})
    for (const int64_t n : {5, 12, 40}) {
      if (std::string(tuning).rfind("loop_order", 0) == 0 && n != 12) continue;
      test::LinalgTuning scope(tuning);
      const std::string what = std::string(c.dtype) + " scale " + c.scale + " n=" + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning;
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "S": {"kind": "array", "dtype": ")" + std::string(c.dtype) + R"(", "shape": [6, )" + std::to_string(n) + ", " + std::to_string(n) +
                                                 R"(], "from": {"random": {"seed": 5, "low": -1, "high": 1}}}},
        "body": [{"op": "array.mul", "out": ["A"], "in": ["S", )" + c.scale + R"(]},
                 {"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]},
                 {"op": "linalg.geqrf", "out": ["QR1", "tau1"], "in": ["S"]}],
        "outputs": {"QR": "QR.npy", "tau": "tau.npy", "QR1": "QR1.npy", "tau1": "tau1.npy", "A": "A.npy", "S": "S.npy"}})");
      auto out = test::run_on_device(program);
      double worst_r = 0, worst_tau = 0, norm = 0;
      for (int64_t e = 0; e < 6; ++e)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = i; j < n; ++j) {  // R, where A's digits are S's times the scale
            const int64_t at = e * n * n + i * n + j;
            const std::complex<double> r = out.at("QR").get_complex(at), r1 = out.at("QR1").get_complex(at);
            ASSERT_TRUE(std::isfinite(r.real()) && std::isfinite(r.imag())) << what << ", element " << at;
            worst_r = std::max(worst_r, std::abs(r / c.value - r1));
            norm = std::max(norm, std::abs(r1));
          }
      for (int64_t i = 0; i < out.at("tau").elements(); ++i) {
        const std::complex<double> t = out.at("tau").get_complex(i);
        ASSERT_TRUE(std::isfinite(t.real()) && std::isfinite(t.imag())) << what << ", tau " << i;
        worst_tau = std::max(worst_tau, std::abs(t - out.at("tau1").get_complex(i)));
      }
      EXPECT_LT(worst_r, c.tolerance * norm) << "R of the scaled matrix, " << what;
      EXPECT_LT(worst_tau, c.tolerance * 10) << "tau of the scaled matrix, " << what;
    }
}

// gebrd on random matrices, square and tall, one work-item a matrix and teams (loop_order=0). The reflectors' elements are not
// compared with dgebrd's one by one: they are not well conditioned (seed 5 moved them by 2.5 times a
// bound of 100 max(m, n) eps ||A||), while these are, and together they say the factorization is right:
// - the backward error ||A - Q B P^T||_F / (max(m, n) eps ||A||_F), Q and P formed in f64 from the
//   reflectors in QP and tauq, taup (LAPACK's storage), B from d and e;
// - orthogonality ||Q^T Q - I||_F / (m eps) and ||P^T P - I||_F / (n eps);
// - B's singular values (LAPACK's dbdsqr) against A's (dgesdd), over max(m, n) eps ||A||_F;
// - the first step, which depends on A alone, as LAPACK's: d[0] and tauq[0] over m eps.
// Each below 10 (the largest over five seeds: 1.7, 2.4, 1.3 and 1.0, at 2 x 2 where n eps is smallest).
TEST(Linalg, GebrdMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{2, 2}, {3, 2}, {8, 8}, {8, 5}, {12, 12}, {20, 7}, {33, 33}, {64, 40}, {100, 100}};
  // A CPU's table runs one work-item a matrix above order 8 (its loop plan); loop_order=0 the teams.
  for (const char* tuning : {"", "loop_order=0"})
  for (const char* dtype : {"f64", "f32"})
    for (const auto& [m, n] : shapes) {
      if (*tuning && (m <= 8 || m > 40)) continue;
      test::LinalgTuning scope(tuning);
      const int64_t count = m <= 16 ? 50 : 4;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " + std::to_string(seed) +
                               ", FUGUE_LINALG_TUNING=" + tuning + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {"A": )" + random_matrices(dtype, count, m, n, seed + m * 100 + n) + R"(},
        "body": [{"op": "linalg.gebrd", "out": ["QP", "d", "e", "tauq", "taup"], "in": ["A"]}],
        "outputs": {"QP": "QP.npy", "d": "d.npy", "e": "e.npy", "tauq": "tauq.npy", "taup": "taup.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      const double eps = std::string(dtype) == "f32" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      const auto at = [](int64_t rows, int64_t i, int64_t j) { return static_cast<size_t>(i * rows + j); };  // row-major, rows = row length
      double backward = 0, orthogonality = 0, singular = 0, first = 0;
      for (int64_t b = 0; b < count; ++b) {
        std::vector<double> a(static_cast<size_t>(m * n)), qp(a.size()), d(static_cast<size_t>(n)), e(static_cast<size_t>(std::max<int64_t>(n - 1, 1)));
        for (int64_t i = 0; i < m * n; ++i) a[i] = out.at("A").get(b * m * n + i), qp[i] = out.at("QP").get(b * m * n + i);
        for (int64_t i = 0; i < n; ++i) d[i] = out.at("d").get(b * n + i);
        for (int64_t i = 0; i + 1 < n; ++i) e[i] = out.at("e").get(b * (n - 1) + i);
        // Q's first n columns: H_0 ... H_{n-1} applied to I's, the last reflector first.
        std::vector<double> q(static_cast<size_t>(m * n), 0.0), p(static_cast<size_t>(n * n), 0.0);
        for (int64_t i = 0; i < n; ++i) q[at(n, i, i)] = 1, p[at(n, i, i)] = 1;
        for (int64_t k = n - 1; k >= 0; --k) {
          const double tau = out.at("tauq").get(b * n + k);
          for (int64_t c = 0; c < n; ++c) {
            double dot = q[at(n, k, c)];
            for (int64_t r = k + 1; r < m; ++r) dot += qp[at(n, r, k)] * q[at(n, r, c)];
            q[at(n, k, c)] -= tau * dot;
            for (int64_t r = k + 1; r < m; ++r) q[at(n, r, c)] -= tau * dot * qp[at(n, r, k)];
          }
        }
        // P = G_0 ... G_{n-2}, G_k's vector 1 at k + 1 and row k of QP after it.
        for (int64_t k = n - 2; k >= 0; --k) {
          const double tau = out.at("taup").get(b * n + k);
          for (int64_t c = 0; c < n; ++c) {
            double dot = p[at(n, k + 1, c)];
            for (int64_t r = k + 2; r < n; ++r) dot += qp[at(n, k, r)] * p[at(n, r, c)];
            p[at(n, k + 1, c)] -= tau * dot;
            for (int64_t r = k + 2; r < n; ++r) p[at(n, r, c)] -= tau * dot * qp[at(n, k, r)];
          }
        }
        double residual = 0, norm = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {  // (Q B P^T)(i, j) = sum_k Q(i, k) (d_k P(j, k) + e_k P(j, k + 1))
            double sum = 0;
            for (int64_t k = 0; k < n; ++k) sum += q[at(n, i, k)] * (d[k] * p[at(n, j, k)] + (k + 1 < n ? e[k] * p[at(n, j, k + 1)] : 0.0));
            residual += (a[at(n, i, j)] - sum) * (a[at(n, i, j)] - sum);
            norm += a[at(n, i, j)] * a[at(n, i, j)];
          }
        backward = std::max(backward, std::sqrt(residual / norm) / (std::max(m, n) * eps));
        double qq = 0, pp = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sq = 0, sp = 0;
            for (int64_t r = 0; r < m; ++r) sq += q[at(n, r, i)] * q[at(n, r, j)];
            for (int64_t r = 0; r < n; ++r) sp += p[at(n, r, i)] * p[at(n, r, j)];
            qq += (sq - (i == j)) * (sq - (i == j));
            pp += (sp - (i == j)) * (sp - (i == j));
          }
        orthogonality = std::max({orthogonality, std::sqrt(qq) / (m * eps), std::sqrt(pp) / (n * eps)});
        // Singular values: B's by dbdsqr on (d, e) (no vectors, so column-major's leading dimensions of 1), A's by dgesdd.
        std::vector<double> sb = d, eb = e, sa(static_cast<size_t>(n)), copy = a;
        ASSERT_EQ(LAPACKE_dbdsqr(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), 0, 0, 0, sb.data(), eb.data(), nullptr, 1, nullptr, 1, nullptr, 1), 0)
            << what;
        ASSERT_EQ(LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(m), static_cast<lapack_int>(n), copy.data(), static_cast<lapack_int>(n),
                                 sa.data(), nullptr, static_cast<lapack_int>(m), nullptr, static_cast<lapack_int>(n)),
                  0)
            << what;
        for (int64_t i = 0; i < n; ++i) singular = std::max(singular, std::fabs(sb[i] - sa[i]) / (std::max(m, n) * eps * std::sqrt(norm)));
        // The first step as LAPACK's.
        std::vector<double> f = a, ld(static_cast<size_t>(n)), le(static_cast<size_t>(n)), tq(static_cast<size_t>(n)), tp(static_cast<size_t>(n));
        ASSERT_EQ(LAPACKE_dgebrd(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), f.data(), static_cast<lapack_int>(n), ld.data(),
                                 le.data(), tq.data(), tp.data()),
                  0);
        first = std::max({first, std::fabs(d[0] - ld[0]) / (m * eps * std::fabs(ld[0])), std::fabs(out.at("tauq").get(b * n) - tq[0]) / (m * eps)});
      }
      EXPECT_LT(backward, 10) << "||A - Q B P^T||_F / (max(m, n) eps ||A||_F), " << what;
      EXPECT_LT(orthogonality, 10) << "||Q^T Q - I||_F / (m eps), ||P^T P - I||_F / (n eps), " << what;
      EXPECT_LT(singular, 10) << "B's singular values against A's (LAPACK), over max(m, n) eps ||A||_F, " << what;
      EXPECT_LT(first, 10) << "d[0] and tauq[0] against LAPACK's dgebrd, " << what;
      std::printf("gebrd %s: backward %.2f, orthogonality %.2f, singular values %.2f, first step %.2f\n", what.c_str(), backward, orthogonality, singular, first);
    }
}

// geqrf's plans on an H100 by order: registers to 8, a column per work-item in registers from 9 to the
// table's qr_column_order (64, complex values 32; tall and wide matrices by their larger side), teams
// owning columns in local memory (up to 64, blocked above); gels's [A | B] alike; qr_column_order=0 gives the teams back, and
// more than 64 is refused; teams of at most team_max bound it. The tests' setting gives PoCL the columns.
TEST(Linalg, GeqrfTakesColumnsInRegistersOnGpus) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 16, 16], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "c64", "shape": [10, 32, 20], "from": {"random": {"seed": 1}}},
    "C": {"kind": "array", "dtype": "f32", "shape": [10, 40, 40], "from": {"random": {"seed": 1}}},
    "D": {"kind": "array", "dtype": "f64", "shape": [10, 20, 5], "from": {"random": {"seed": 1}}},
    "E": {"kind": "array", "dtype": "f64", "shape": [10, 20, 2], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "linalg.geqrf", "out": ["QA", "ta"], "in": ["A"]},
             {"op": "linalg.geqrf", "out": ["QB", "tb"], "in": ["B"]},
             {"op": "linalg.geqrf", "out": ["QC", "tc"], "in": ["C"]},
             {"op": "linalg.gels", "out": ["X"], "in": ["D", "E"]}],
    "outputs": {"QA": "QA.npy", "QB": "QB.npy", "QC": "QC.npy", "X": "X.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  const std::string columns = "plan: columns: a column per work-item in registers, teams of ";
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(columns + "16 (order 16 in 9..64)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(columns + "32 (order 32 in 9..32)"), std::string::npos) << "complex values: half the order\n" << r.out;
  EXPECT_NE(r.out.find(columns + "64 (order 40 in 9..64)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: columns: a column of [A | B] per work-item in registers, teams of 32 (order 20 in 9..64), then R X = Q^H B"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=qr_column_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: columns:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: team: 16 work-items per matrix owning columns (order 16 > 8), in QR's storage"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: team: 64 work-items per matrix owning columns (order 40 > 8), the matrix in a local array of its own"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=qr_column_order=512");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: expected qr_column_order <= 64 (a column of the matrix in each work-item's registers), found 512"),
            std::string::npos)
      << r.out;
  // Teams of at most 32 take the columns up to 32 only (every column needs its work-item).
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=team_max=32");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(columns + "16 (order 16 in 9..32)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: team: 32 work-items per matrix owning columns (order 40 > 8)"), std::string::npos) << r.out;
  // The tests' setting on this machine's CPU (whose row has no columns) takes the GPUs' plan, as they mean it to.
  const std::string pocl = (test::source_root() / "devices" / "pocl-cpu.json").string();
  r = test::run_fugue("explain --device-file " + pocl + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=loop_order=0,qr_column_order=32");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(columns + "16 (order 16 in 9..32)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: columns: a column of [A | B] per work-item in registers, teams of 32 (order 20 in 9..32)"), std::string::npos)
      << r.out;
}

// geqrf alone on this CPU (PoCL) takes the lanes (lanes_qr.h): explain says so and lanes_order=0 turns
// them off; QR and tau match LAPACK's dgeqrf on batches that leave the last work-item spare lanes (203
// matrices), square, tall and wide, f64 and f32 by turns.
TEST(Linalg, GeqrfLanesMatchLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const int64_t count = 203;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {2, 2}, {3, 5}, {5, 3}, {7, 7}, {8, 8}, {16, 16}, {16, 9}, {9, 16}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& [m, n] = shapes[i];
    const char* dtype = i % 2 ? "f32" : "f64";
    const bool f32 = i % 2;
    const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
    const std::string file = (dir / "lanes.json").string();
    test::write_text(dir / "lanes.json", R"({"fugue": 1, "symbols": {"A": )" + random_matrices(dtype, count, m, n, seed + m * 1000 + n) + R"(},
      "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]}], "outputs": {"QR": "QR.npy", "tau": "tau.npy", "A": "A.npy"}})");
    if (i == 0) {
      auto r = test::run_fugue("explain " + file);
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_NE(r.out.find("alone: lanes, "), std::string::npos) << r.out;
      r = test::run_fugue("explain " + file, "FUGUE_LINALG_TUNING=lanes_order=0");
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_EQ(r.out.find("alone: lanes"), std::string::npos) << r.out;
    }
    Program program = test::load_text(dir, test::read_text(dir / "lanes.json"));
    int64_t launches = 0;
    auto out = test::run_on_device(program, std::nullopt, {}, &launches);
    const HostArray &a = out.at("A"), &qr = out.at("QR"), &tau = out.at("tau");
    const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    const int64_t k = std::min(m, n);
    double worst = 0;
    for (int64_t e = 0; e < count; ++e) {
      std::vector<double> f(static_cast<size_t>(m * n)), t(static_cast<size_t>(k));
      for (int64_t x = 0; x < m * n; ++x) f[x] = a.get(e * m * n + x);
      ASSERT_EQ(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), f.data(), static_cast<lapack_int>(n), t.data()), 0);
      for (int64_t x = 0; x < m * n; ++x) worst = std::max(worst, std::fabs(qr.get(e * m * n + x) - f[x]));
      for (int64_t x = 0; x < k; ++x) worst = std::max(worst, std::fabs(tau.get(e * k + x) - t[x]));
    }
    EXPECT_LT(worst, 1e2 * std::max(m, n) * eps) << "against LAPACK's dgeqrf, " << what;
  }
}
