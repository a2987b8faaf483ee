// linalg.gemm of a single large product spread over work-groups (gemm_spread.h): C's tiles on GPUs, the
// vector plan's blocks on CPUs. A CPU's row keeps the tiles off (its vectors are faster there), so the
// products here ask for them through FUGUE_LINALG_TUNING: every transposition, f32, f64, c64 and c128,
// sizes that are not multiples of the tiles or blocks, alpha 0 over NaNs, C over its input; against BLAS
// and the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/npy_io.h"
#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

// explain: one product of 128 x 128 (k 100) on a described H100 spreads (4 tiles of 64); 2 or 200
// entries, an outer product (k 1), the CPU's row and spread_tiles=0 do not.
TEST(LinalgSpread, ExplainSaysWhereTilesSpread) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [1, 128, 100], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f32", "shape": [200, 128, 128], "from": {"random": {"seed": 2}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [1, 1000, 1], "from": {"random": {"seed": 3}}},
    "E": {"kind": "array", "dtype": "f32", "shape": [2, 128, 128], "from": {"random": {"seed": 4}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "A"], "attrs": {"trans_b": "T"}},
             {"op": "linalg.gemm", "out": ["D"], "in": ["B", "B"]},
             {"op": "linalg.gemm", "out": ["O"], "in": ["x", "x"], "attrs": {"trans_b": "T"}},
             {"op": "linalg.gemm", "out": ["F"], "in": ["E", "E"]}],
    "outputs": {"C": "C.npy", "D": "D.npy", "O": "O.npy", "F": "F.npy"}})");
  const std::string program = (dir / "p.json").string(), h100 = (test::source_root() / "devices" / "nvidia-h100.json").string(),
                    cpu = (test::source_root() / "devices" / "pocl-cpu.json").string();
  auto r = test::run_fugue("explain --device-file " + h100 + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: spread: C's 4 tiles of 64 x 64 over work-groups of 256, k staged 16 at a time, a kernel of its own (one product, "
                       "4 tiles of 64 >= 2, k >= 64); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 1u) << r.out;  // not the 2 or 200 entries, not the outer product
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=spread_tiles=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 0u) << r.out;
  // A CPU spreads the product's vector blocks instead (ExplainSaysWhereVectorsSpread).
  r = test::run_fugue("explain --device-file " + cpu + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread: "), 0u) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread vectors: "), 1u) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=spread_tiles=5");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 0u) << "4 tiles < 5\n" << r.out;
}

// Spread products against BLAS (f32, f64) and the reference (complex, conjugate transposes): one entry
// (fewer than this machine's compute units), several tiles, k past several stages.
TEST(LinalgSpread, GemmMatchesBlasAndTheReference) {
  test::TempDir dir;
  test::LinalgTuning scoped("spread_tiles=1");
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t m, n, k;
    const char *ta, *tb, *dtype;
  };
  const std::vector<Case> cases = {{70, 150, 65, "N", "N", "f64"}, {65, 64, 70, "T", "N", "f64"}, {100, 9, 80, "N", "T", "f32"},
                                   {1, 200, 64, "T", "T", "f32"},   {33, 70, 64, "C", "N", "c64"}, {70, 33, 66, "N", "C", "c128"}};
  for (const Case& c : cases) {
    const bool ta = c.ta[0] != 'N', tb = c.tb[0] != 'N', real = c.dtype[0] == 'f', f32 = std::string(c.dtype) == "f32";
    const std::string what = std::string(c.dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.ta + c.tb +
                             " (seed " + std::to_string(seed) + ")";
    const std::string text = test::gemm_program(std::string(c.dtype), 1, c.m, c.n, c.k, c.ta, c.tb, seed);
    test::write_text(dir / "spread.json", text);
    const auto plan = test::run_fugue("explain " + (dir / "spread.json").string());
    EXPECT_NE(plan.out.find("plan: spread"), std::string::npos) << what << "\n" << plan.out;
    Program program = test::load_text(dir, text);
    auto out = test::run_on_device(program);
    if (!real) {
      test::expect_same(out, test::run_reference(program), c.dtype == std::string("c64") ? 1e-5 : 1e-12, what);
      continue;
    }
    const double worst = test::gemm_error_against_blas(out.at("A"), out.at("B"), out.at("C"), out.at("D"), 1, c.m, c.n, c.k, ta, tb, 0.5, -2.0);
    const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    EXPECT_LT(worst, 4 * (c.k + 2) * eps * (c.k / 2.0 + 2)) << "against BLAS, " << what;
  }
}

// C named as its input A (the core gives the kernel a buffer of its own here; were it A's, the product
// would be formed apart and copied over), and alpha 0: zeros whatever A holds (NaNs); in tiles and, on
// CPUs, in vector blocks (110^3 multiply-adds: above 2^20).
TEST(LinalgSpread, OverItsInputAndAlphaZero) {
  test::TempDir dir;
  for (const char* tuning : {"spread_tiles=1", "spread_tiles=0,spread_vectors=1"}) {
    test::LinalgTuning scoped(tuning);
    const std::string text = R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [1, 110, 110], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [1, 110, 110], "from": {"random": {"seed": 2, "low": -1, "high": 1}}},
    "M": {"kind": "array", "dtype": "f64", "shape": [1, 110, 110], "from": {"random": {"seed": 3, "low": -2, "high": -1}}}},
    "body": [{"op": "array.sqrt", "out": ["N"], "in": ["M"]},
             {"op": "array.copy", "out": ["A0"], "in": ["A"]},
             {"op": "linalg.gemm", "out": ["A"], "in": ["A", "B"], "attrs": {"trans_a": "T"}},
             {"op": "linalg.gemm", "out": ["Z"], "in": ["N", "N"], "attrs": {"alpha": 0}}],
    "outputs": {"A": "C.npy", "A0": "A0.npy", "B": "B.npy", "Z": "Z.npy"}})";
    test::write_text(dir / "over.json", text);
    const auto plan = test::run_fugue("explain " + (dir / "over.json").string());
    const bool vectors = plan.out.find("plan: spread vectors") != std::string::npos;
    if (std::string(tuning) == "spread_tiles=1") EXPECT_EQ(test::occurrences(plan.out, "plan: spread: C's"), 2u) << plan.out;
    else if (!vectors) continue;  // no vectors on this device: the tiles' case covered it
    else EXPECT_EQ(test::occurrences(plan.out, "plan: spread vectors"), 2u) << plan.out;
    Program program = test::load_text(dir, text);
    auto out = test::run_on_device(program);
    const HostArray &c = out.at("A"), &a = out.at("A0"), &b = out.at("B"), &z = out.at("Z");
    double worst = 0;
    for (int64_t i = 0; i < 110; ++i)
      for (int64_t j = 0; j < 110; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 110; ++k) sum += a.get(k * 110 + i) * b.get(k * 110 + j);
        worst = std::max(worst, std::fabs(c.get(i * 110 + j) - sum));
      }
    EXPECT_LT(worst, 1e-12 * 110) << tuning;
    for (int64_t e = 0; e < 110 * 110; ++e) ASSERT_EQ(z.get(e), 0.0) << "element " << e << ", " << tuning;
  }
}

// explain on a described CPU (2 compute units, vectors of 8 f64): one product of 9 x 700 x 300 spreads its
// 88 blocks of 9 x 8 in 8 runs; two entries, an outer product (k 1), a product below 2^20 multiply-adds,
// complex values (no vectors) and spread_vectors=0 keep the team, and a GPU takes its tiles instead.
TEST(LinalgSpread, ExplainSaysWhereVectorsSpread) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [1, 300, 9], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [1, 300, 700], "from": {"random": {"seed": 2}}},
    "E": {"kind": "array", "dtype": "f64", "shape": [2, 128, 128], "from": {"random": {"seed": 3}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [1, 2000, 1], "from": {"random": {"seed": 4}}},
    "S": {"kind": "array", "dtype": "f64", "shape": [1, 64, 64], "from": {"random": {"seed": 5}}},
    "Z": {"kind": "array", "dtype": "c128", "shape": [1, 128, 128], "from": {"random": {"seed": 6}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"], "attrs": {"trans_a": "T"}},
             {"op": "linalg.gemm", "out": ["F"], "in": ["E", "E"]},
             {"op": "linalg.gemm", "out": ["O"], "in": ["x", "x"], "attrs": {"trans_b": "T"}},
             {"op": "linalg.gemm", "out": ["T"], "in": ["S", "S"]},
             {"op": "linalg.gemm", "out": ["W"], "in": ["Z", "Z"]}],
    "outputs": {"C": "C.npy", "F": "F.npy", "O": "O.npy", "T": "T.npy", "W": "W.npy"}})");
  const std::string program = (dir / "p.json").string(), h100 = (test::source_root() / "devices" / "nvidia-h100.json").string(),
                    cpu = (test::source_root() / "devices" / "pocl-cpu.json").string();
  auto r = test::run_fugue("explain --device-file " + cpu + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: spread vectors: C's 88 blocks of 9 x 8 (a double8 a row) in runs of 11 over 8 work-groups of one work-item, k in "
                       "order, a kernel of its own (one product, m n k 1890000 >= 1 x 2^20, k >= 2, 2 compute units); CPU table"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 1u) << r.out;
  r = test::run_fugue("explain --device-file " + cpu + " " + program, "FUGUE_LINALG_TUNING=spread_vectors=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 0u) << r.out;
  r = test::run_fugue("explain --device-file " + cpu + " " + program, "FUGUE_LINALG_TUNING=spread_vectors=2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread"), 0u) << "1,890,000 < 2 x 2^20\n" << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::occurrences(r.out, "plan: spread vectors"), 0u) << r.out;
  EXPECT_NE(r.out.find("plan: spread: C's 11 tiles of 64 x 64"), std::string::npos) << r.out;
}

namespace {

// Whether the device `fugue run` takes by default is a CPU (as `fugue devices` describes it).
bool default_device_is_a_cpu(const test::TempDir& dir) {
  const auto r = test::run_fugue("devices --json " + (dir / "device.json").string());
  return r.code == 0 && test::read_text(dir / "device.json").find("\"type\": \"cpu\"") != std::string::npos;
}

}  // namespace

// Spread vector blocks on this device against BLAS (f32, f64): every transposition, rows and columns
// left over, one row, a vector narrower than the native width, a 9-row block (the Ritz vectors' shape);
// beta C after the product, a kernel of its own then. `fugue run --stats` names the kernel that ran. A
// case with fewer than two blocks a compute unit keeps its team (many cores): it is checked all the
// same, and at least one case spreads.
TEST(LinalgSpread, VectorsMatchBlas) {
  test::TempDir dir;
  if (!default_device_is_a_cpu(dir)) GTEST_SKIP() << "not a CPU device";
  test::LinalgTuning scoped("spread_vectors=1");
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t m, n, k;
    const char *ta, *tb, *dtype;
  };
  const std::vector<Case> cases = {{9, 700, 300, "T", "N", "f64"},  {100, 130, 90, "N", "T", "f64"}, {64, 64, 256, "T", "T", "f32"},
                                   {33, 250, 130, "C", "N", "f32"}, {1, 2000, 600, "N", "N", "f64"}, {130, 9, 1000, "N", "C", "f64"},
                                   {2000, 3, 200, "T", "N", "f32"}};  // vectors of 4 floats
  size_t spread = 0;
  for (const Case& c : cases) {
    const bool ta = c.ta[0] != 'N', tb = c.tb[0] != 'N', f32 = std::string(c.dtype) == "f32";
    const std::string what = std::string(c.dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.ta + c.tb +
                             " (seed " + std::to_string(seed) + ")";
    test::write_text(dir / "spread.json", test::gemm_program(std::string(c.dtype), 1, c.m, c.n, c.k, c.ta, c.tb, seed));
    const auto plan = test::run_fugue("explain " + (dir / "spread.json").string());
    ASSERT_EQ(plan.code, 0) << plan.out;
    const bool spreads = plan.out.find("plan: spread vectors") != std::string::npos;
    spread += spreads;
    const auto r = test::run_fugue("run " + (dir / "spread.json").string() + " --out " + (dir / "o").string() + " --stats");
    ASSERT_EQ(r.code, 0) << what << "\n" << r.out;
    EXPECT_EQ(r.out.find("linalg.gemm: spread vectors") != std::string::npos, spreads) << what << "\n" << r.out;
    auto load = [&](const char* name) { return fugue::load_npy(dir / "o" / (std::string(name) + ".npy"), std::nullopt, std::nullopt); };
    const double worst = test::gemm_error_against_blas(load("A"), load("B"), load("C"), load("D"), 1, c.m, c.n, c.k, ta, tb, 0.5, -2.0);
    const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    EXPECT_LT(worst, 4 * (c.k + 2) * eps) << "against BLAS, " << what;
  }
  EXPECT_GT(spread, 0u) << "no case spread on this CPU";
}
