// linalg.gemm in tiles (gemm_tiles.h: C in panels, each work-item a block of the panel in registers, the
// k axis staged in local memory). GPUs take them from the table's tile_order; a CPU's row keeps them
// off, so these tests ask for them through FUGUE_LINALG_TUNING, with blocks and stages small enough that
// the products cross several panels and chunks: every transposition, f32, f64 and c64, sizes that are
// not multiples of anything, beta C fused, alpha, C over its input, variable sizes; against BLAS and
// the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::LinalgTuning;
using test::shape_text;

// Panels of 12 x 12 (4 x 4 work-items of 3 x 3) and chunks of 4, read ahead or not; and the CPU row's
// blocks of 8 and chunks of 16.
const char* const kTileTunings[] = {"team_max=16,tile_order=1,tile_block=3,tile_depth=4", "team_max=16,tile_order=1,tile_block=3,tile_depth=4,tile_prefetch=1",
                                    "tile_order=1"};

}  // namespace

// explain names the tiles, their panels, grid, blocks and depth, and the order against the table's limit
// (batches of 200: smaller ones than the H100's 132 compute units spread, test_linalg_spread.cpp).
TEST(LinalgTiles, ExplainSaysTheTiles) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [200, 128, 128], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f32", "shape": [200, 8, 8], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "A"]}, {"op": "linalg.gemm", "out": ["D"], "in": ["B", "B"]}],
    "outputs": {"C": "C.npy", "D": "D.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: tiles: C in panels of 128 x 128, a 16 x 16 grid of work-items each 8 x 8 of it in registers, k staged 32 at "
                       "a time in local memory, the next read ahead (m, n >= 32); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: blocks of C of 4 x 4 per work-item"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=tile_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: tiles"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=tile_depth=12");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: \"tile_depth=12\": expected tile_depth=4, 8, 16 or 32"), std::string::npos) << r.out;
  for (const auto& [setting, message] : std::vector<std::pair<std::string, std::string>>{
           {"tile_prefetch=2", "\"tile_prefetch=2\": expected tile_prefetch=0 or 1"},
           {"tile_prefetch=", "\"tile_prefetch=\": expected tile_prefetch=0 or 1"},
           {"tile_block=0", "\"tile_block=0\": expected tile_block=1..16"},
           {"tile_order= 1", "\"tile_order= 1\": expected row=NAME or a field=N with N in 1..1024"}}) {
    r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING='" + setting + "'");
    EXPECT_EQ(r.code, 2) << setting << ": " << r.out;
    EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: " + message), std::string::npos) << setting << ": " << r.out;
  }
}

// f64 products on an NVIDIA GPU of compute capability 9.0 (the description's architecture, ABI 2.15)
// take the tensor cores from the table's mma_order; f32, smaller orders, other architectures, a
// description without one, and mma_order=0 take the tiles. (The tensor cores' results are checked on
// such a GPU: scripts/gpu_linalg_sweep.sh compares them with the reference first.)
TEST(LinalgTiles, ExplainSaysTheTensorCores) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [200, 128, 128], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [200, 64, 64], "from": {"random": {"seed": 2}}},
    "E": {"kind": "array", "dtype": "f64", "shape": [200, 48, 48], "from": {"random": {"seed": 3}}},
    "F": {"kind": "array", "dtype": "f32", "shape": [200, 128, 128], "from": {"random": {"seed": 4}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "A"], "attrs": {"trans_b": "T"}},
             {"op": "linalg.gemm", "out": ["D"], "in": ["B", "B"]},
             {"op": "linalg.gemm", "out": ["G"], "in": ["E", "E"]},
             {"op": "linalg.gemm", "out": ["H"], "in": ["F", "F"]}],
    "outputs": {"C": "C.npy", "D": "D.npy", "G": "G.npy", "H": "H.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string(), program = (dir / "p.json").string();
  auto r = test::run_fugue("explain --device-file " + h100 + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: tensor cores: C in panels of 128 x 128, 8 warps (2 x 4) each 64 x 32 of it as 4 x 4 tiles of mma.sync "
                       "m16n8k8 f64 (sm_90), k staged 16 at a time in local memory, the next read ahead (m, n >= 32); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: tensor cores: C in panels of 64 x 64, 4 warps (2 x 2) each 32 x 32 of it as 2 x 4 tiles"), std::string::npos) << r.out;
  const auto count = test::occurrences;
  EXPECT_EQ(count(r.out, "plan: tensor cores"), 3u) << r.out;  // not F (f32)
  EXPECT_EQ(count(r.out, "plan: tensor cores: C in panels of 64 x 64"), 2u) << r.out;  // B and E (48: one panel, part empty)
  EXPECT_EQ(count(r.out, "plan: tiles"), 1u) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=mma_order=64");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "plan: tensor cores"), 2u) << r.out;  // E's 48 below it
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=mma_panel=32");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "plan: tensor cores: C in panels of 32 x 32, 4 warps (2 x 2) each 16 x 16 of it as 1 x 2 tiles"), 3u) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=mma_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "plan: tensor cores"), 0u) << r.out;
  // An A100's architecture (no m16n8k8 in f64), a later one not measured yet, and a description that does not say.
  const std::string text = test::read_text(h100);
  for (const std::string& replacement : {std::string("\"architecture\": \"sm_80\""), std::string("\"architecture\": \"sm_100\""),
                                         std::string("\"architecture\": \"\"")}) {
    std::string other = text;
    other.replace(other.find("\"architecture\": \"sm_90\""), std::string("\"architecture\": \"sm_90\"").size(), replacement);
    test::write_text(dir / "other.json", other);
    r = test::run_fugue("explain --device-file " + (dir / "other.json").string() + " " + program);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(count(r.out, "plan: tensor cores"), 0u) << replacement << "\n" << r.out;
    EXPECT_EQ(count(r.out, "plan: tiles"), 4u) << replacement << "\n" << r.out;
  }
  r = test::run_fugue("explain --device-file " + h100 + " " + program, "FUGUE_LINALG_TUNING=mma_order=2000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: \"mma_order=2000\": expected row=NAME or a field=N with N in 1..1024"), std::string::npos) << r.out;
}

// Products in tiles against BLAS (f32, f64) and the reference (c64 with conjugate transposes), beta C
// joining the product's kernel.
TEST(LinalgTiles, GemmMatchesBlasAndTheReference) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t m, n, k;
    const char *ta, *tb, *dtype;
  };
  const std::vector<Case> cases = {{13, 11, 9, "N", "N", "f64"},  {30, 25, 17, "T", "N", "f64"}, {25, 30, 4, "N", "T", "f32"},
                                   {40, 37, 33, "T", "T", "f32"}, {1, 29, 5, "N", "N", "f64"},   {16, 16, 64, "N", "N", "f32"},
                                   {20, 14, 10, "C", "N", "c64"}, {14, 20, 7, "N", "C", "c64"},  {17, 17, 17, "C", "T", "c128"}};
  for (const char* tuning : kTileTunings) {
    LinalgTuning scoped(tuning);
    for (const Case& c : cases) {
      const bool ta = c.ta[0] != 'N', tb = c.tb[0] != 'N', real = c.dtype[0] == 'f', f32 = std::string(c.dtype) == "f32";
      const int64_t count = 3;
      const std::string what = std::string(tuning) + ", " + c.dtype + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                               std::to_string(c.k) + " " + c.ta + c.tb + " (seed " + std::to_string(seed) + ")";
      Program program = test::load_text(dir, test::gemm_program(std::string(c.dtype), count, c.m, c.n, c.k, c.ta, c.tb, seed));
      int64_t launches = 0;
      auto out = test::run_on_device(program, std::nullopt, {}, &launches);
      EXPECT_EQ(launches, 1) << "beta C joins the product's kernel, " << what;
      if (!real) {
        test::expect_same(out, test::run_reference(program), c.dtype == std::string("c64") ? 1e-5 : 1e-12, what);
        continue;
      }
      const double worst = test::gemm_error_against_blas(out.at("A"), out.at("B"), out.at("C"), out.at("D"), count, c.m, c.n, c.k, ta, tb, 0.5, -2.0);
      const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      EXPECT_LT(worst, 4 * (c.k + 2) * eps * (c.k / 2.0 + 2)) << "against BLAS, " << what;
    }
  }
}

// C written over A: one panel reads all of A and B before writing; several panels take the blocks plan
// in the tiles' team (of 16 here: 40 x 40 is 100 blocks, 7 a work-item).
TEST(LinalgTiles, GemmOverItsInput) {
  test::TempDir dir;
  LinalgTuning scoped(kTileTunings[1]);
  for (const int64_t n : {10, 30, 40}) {
    const std::string what = "C over A, n=" + std::to_string(n);
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + ", " + std::to_string(n) +
                                               R"(], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
      "B": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + ", " + std::to_string(n) +
                                               R"(], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
      "body": [{"op": "array.copy", "out": ["A0"], "in": ["A"]},
               {"op": "linalg.gemm", "out": ["A"], "in": ["A", "B"], "attrs": {"trans_a": "T"}}],
      "outputs": {"A": "C.npy", "A0": "A0.npy", "B": "B.npy"}})");
    auto out = test::run_on_device(program);
    const HostArray &c = out.at("A"), &a = out.at("A0"), &b = out.at("B");
    double worst = 0;
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t k = 0; k < n; ++k) sum += a.get(e * n * n + k * n + i) * b.get(e * n * n + k * n + j);
          worst = std::max(worst, std::fabs(c.get(e * n * n + i * n + j) - sum));
        }
    EXPECT_LT(worst, 1e-12 * n) << what;
  }
}

// Variable sizes in tiles: each product's m, n and k within the padded ones, the padding never read
//, C's padding zero, bad sizes reported in info; against the reference.
TEST(LinalgTiles, VariableSizesMatchTheReference) {
  test::TempDir dir;
  LinalgTuning scoped(kTileTunings[0]);
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [5, 30, 20], "from": {"random": {"seed": 3, "low": -1, "high": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [5, 20, 26], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
    "sizes": {"kind": "array", "dtype": "i32", "shape": [5, 3], "value": [[30, 26, 20], [13, 25, 7], [0, 4, 4], [29, 1, 19], [31, 2, 2]]}},
    "body": [{"op": "linalg.gemm_vbatched", "out": ["C", "info"], "in": ["A", "B", "sizes"]}],
    "outputs": {"C": "C.npy", "info": "info.npy"}})");
  test::expect_same(test::run_on_device(program), test::run_reference(program), 1e-12, "variable sizes in tiles");
}
