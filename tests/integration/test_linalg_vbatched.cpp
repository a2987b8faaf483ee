// Variable sizes (linalg.potrf_vbatched, linalg.getrf_vbatched): batches of matrices of orders 0..N
// padded to N, in every plan (registers, rows, teams), against LAPACK on each matrix's leading block:
// the factor's block and info as dpotrf's / dgetrf's (getrf's pivots equal), the padding the identity's
// factor (so the fixed-size potrs and getrs solve with them as they are: right-hand sides zero below
// n_e give solutions zero there, the block's as dpotrs's / dgetrs's), info -1 for orders outside 0..N,
// and the other entries unaffected.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

std::string shape(int64_t count, int64_t m, int64_t n) {
  return "[" + std::to_string(count) + ", " + std::to_string(m) + ", " + std::to_string(n) + "]";
}

}  // namespace

TEST(Linalg, VariableSizesMatchLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* dtype : {"f64", "f32"})
    for (const int64_t N : {5, 12, 40}) {
      const int64_t count = 24, k = 2;
      std::mt19937_64 random(seed + N);
      std::vector<int64_t> order(static_cast<size_t>(count));
      for (int64_t e = 0; e < count; ++e) order[e] = static_cast<int64_t>(random() % static_cast<uint64_t>(N + 1));
      order[0] = N;
      order[1] = 0;
      order[2] = -3;     // illegal: info -1
      order[3] = N + 1;  // illegal
      std::string orders = "[";
      for (int64_t e = 0; e < count; ++e) orders += (e ? ", " : "") + std::to_string(order[e]);
      orders += "]";
      std::uniform_real_distribution<double> uniform(-1, 1);
      std::vector<double> b_values(static_cast<size_t>(count * N * k));
      for (double& v : b_values) v = uniform(random);
      const std::string b = test::matrix_values(count, N, k, [&](int64_t e, int64_t i, int64_t j) {
        return i < std::max<int64_t>(order[e], 0) && order[e] <= N ? b_values[(e * N + i) * k + j] : 0.0;
      });
      const std::string what = std::string(dtype) + " N=" + std::to_string(N) + " (seed " + std::to_string(seed) + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "S": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, N, N) + R"(, "from": {"spd": {"seed": )" +
                                                 std::to_string(seed) + R"(, "cond": 100}}},
        "G": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, N, N) + R"(, "from": {"random": {"seed": )" +
                                                 std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}},
        "n": {"kind": "array", "dtype": "i32", "shape": [)" + std::to_string(count) + R"(], "value": )" + orders + R"(},
        "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, N, k) + R"(, "value": )" + b + R"(}},
        "body": [{"op": "linalg.potrf_vbatched", "out": ["L", "pinfo"], "in": ["S", "n"]},
                 {"op": "linalg.potrs", "out": ["Y"], "in": ["L", "B"]},
                 {"op": "linalg.getrf_vbatched", "out": ["LU", "ipiv", "ginfo"], "in": ["G", "n"]},
                 {"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"]}],
        "outputs": {"S": "S.npy", "G": "G.npy", "L": "L.npy", "pinfo": "pinfo.npy", "Y": "Y.npy", "LU": "LU.npy", "ipiv": "ipiv.npy",
                    "ginfo": "ginfo.npy", "X": "X.npy"}})");
      auto out = test::run_on_device(program);
      test::expect_same(out, test::run_reference(program), std::string(dtype) == "f32" ? 2e-3 : 1e-9, "device against the reference, " + what);
      const double eps = std::string(dtype) == "f32" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst_l = 0, worst_lu = 0, worst_y = 0, worst_x = 0;
      for (int64_t e = 0; e < count; ++e) {
        const bool bad = order[e] < 0 || order[e] > N;
        const int64_t ne = bad ? 0 : order[e];
        const std::string entry = what + ", entry " + std::to_string(e) + " of order " + std::to_string(order[e]);
        EXPECT_EQ(out.at("pinfo").get(e), bad ? -1 : 0) << entry;
        EXPECT_EQ(out.at("ginfo").get(e), bad ? -1 : 0) << entry;
        // The padding: the identity's factor, pivots their own rows, solutions zero.
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < N; ++j)
            if (i >= ne || j >= ne) {
              const double identity = i == j ? 1 : 0;
              EXPECT_EQ(out.at("L").get((e * N + i) * N + j), identity) << entry << ", L(" << i << ", " << j << ")";
              EXPECT_EQ(out.at("LU").get((e * N + i) * N + j), identity) << entry << ", LU(" << i << ", " << j << ")";
            }
        for (int64_t i = ne; i < N; ++i) {
          EXPECT_EQ(out.at("ipiv").get(e * N + i), i + 1) << entry;
          for (int64_t j = 0; j < k; ++j) {
            EXPECT_EQ(out.at("Y").get((e * N + i) * k + j), 0) << entry;
            EXPECT_EQ(out.at("X").get((e * N + i) * k + j), 0) << entry;
          }
        }
        if (ne == 0) continue;
        // The leading blocks against LAPACK's.
        std::vector<double> s(static_cast<size_t>(ne * ne)), g(s.size()), y(static_cast<size_t>(ne * k)), x(y.size());
        for (int64_t i = 0; i < ne; ++i)
          for (int64_t j = 0; j < ne; ++j) {
            s[i * ne + j] = out.at("S").get((e * N + i) * N + j);
            g[i * ne + j] = out.at("G").get((e * N + i) * N + j);
          }
        for (int64_t i = 0; i < ne; ++i)
          for (int64_t j = 0; j < k; ++j) y[i * k + j] = x[i * k + j] = b_values[(e * N + i) * k + j];
        ASSERT_EQ(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', static_cast<lapack_int>(ne), s.data(), static_cast<lapack_int>(ne)), 0) << entry;
        ASSERT_EQ(LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', static_cast<lapack_int>(ne), static_cast<lapack_int>(k), s.data(), static_cast<lapack_int>(ne),
                                 y.data(), static_cast<lapack_int>(k)),
                  0);
        std::vector<lapack_int> ipiv(static_cast<size_t>(ne));
        double norm1 = 0;  // ||G_e||_1, for its condition number
        for (int64_t j = 0; j < ne; ++j) {
          double column = 0;
          for (int64_t i = 0; i < ne; ++i) column += std::fabs(g[i * ne + j]);
          norm1 = std::max(norm1, column);
        }
        ASSERT_EQ(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(ne), static_cast<lapack_int>(ne), g.data(), static_cast<lapack_int>(ne), ipiv.data()),
                  0);
        double rcond = 0;
        ASSERT_EQ(LAPACKE_dgecon(LAPACK_ROW_MAJOR, '1', static_cast<lapack_int>(ne), g.data(), static_cast<lapack_int>(ne), norm1, &rcond), 0);
        bool same = true;
        for (int64_t i = 0; i < ne; ++i) same = same && out.at("ipiv").get(e * N + i) == ipiv[i];
        if (std::string(dtype) == "f64") {
          EXPECT_TRUE(same) << "pivots unlike dgetrf's, " << entry;
        }
        ASSERT_EQ(LAPACKE_dgetrs(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(ne), static_cast<lapack_int>(k), g.data(), static_cast<lapack_int>(ne),
                                 ipiv.data(), x.data(), static_cast<lapack_int>(k)),
                  0);
        for (int64_t i = 0; i < ne; ++i) {
          for (int64_t j = 0; j <= i; ++j) worst_l = std::max(worst_l, std::fabs(out.at("L").get((e * N + i) * N + j) - s[i * ne + j]));
          for (int64_t j = 0; j < ne && same; ++j) worst_lu = std::max(worst_lu, std::fabs(out.at("LU").get((e * N + i) * N + j) - g[i * ne + j]));
          for (int64_t j = 0; j < k; ++j) {
            worst_y = std::max(worst_y, std::fabs(out.at("Y").get((e * N + i) * k + j) - y[i * k + j]) / (1 + std::fabs(y[i * k + j])));
            // Forward errors of about cond n eps: measured in units of it.
            if (same) {
              worst_x = std::max(worst_x, std::fabs(out.at("X").get((e * N + i) * k + j) - x[i * k + j]) / (1 + std::fabs(x[i * k + j])) * rcond);
            }
          }
        }
      }
      // Cond(S) = 100 (its leading blocks no worse); G's blocks are uniform random.
      EXPECT_LT(worst_l, 100 * N * eps) << "L against dpotrf's, " << what;
      EXPECT_LT(worst_y, 1000 * N * eps) << "potrs against dpotrs's, " << what;
      EXPECT_LT(worst_lu, 1e3 * N * eps) << "LU against dgetrf's, " << what;
      EXPECT_LT(worst_x, 100 * N * eps) << "getrs against dgetrs's, over cond(G_e), " << what;
    }
}
