// The optical-flow programs of examples/optical_flow on a crop of Middlebury's RubberWhale (fewer
// iterations): each stays under a stated error against the ground truth, gives the same flow fused
// and with --no-fuse, and the single-level ones match the CPU reference run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "io/image_io.h"
#include "io/output_files.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

fs::path middlebury() { return test::source_root() / ".." / "shared" / "data" / "middlebury"; }

// rows x cols of `a` ([H, W] or [H, W, C]) from (top, left).
HostArray crop(const HostArray& a, int64_t top, int64_t left, int64_t rows, int64_t cols) {
  Shape shape = a.shape;
  const int64_t channels = shape.size() == 3 ? shape[2] : 1, width = shape[1];
  shape[0] = rows;
  shape[1] = cols;
  HostArray out(a.dtype, shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t k = 0; k < channels; ++k)
        out.set((r * cols + c) * channels + k, a.get(((top + r) * width + left + c) * channels + k));
  return out;
}

// A 128 x 160 crop of RubberWhale (both frames and the ground truth, some of it unknown), written once.
const fs::path& crop_folder() {
  static test::TempDir dir;
  static bool written = [] {
    const fs::path from = middlebury() / "RubberWhale";
    const int64_t top = 150, left = 210, rows = 128, cols = 160;
    save_gray_png(dir / "frame1.png", crop(load_gray_image(from / "frame10.png", std::nullopt), top, left, rows, cols));
    save_gray_png(dir / "frame2.png", crop(load_gray_image(from / "frame11.png", std::nullopt), top, left, rows, cols));
    // .flo is the stencil plugin's format: read and written through the registry, as programs do.
    const auto& formats = test::bundled_plugins();
    const auto reader = formats.reader_for(".flo");
    const HostArray truth = reader->read(from / "flow10.flo", reader->probe(from / "flow10.flo"));
    formats.writers_for(".flo").front()->write(dir / "truth.flo", crop(truth, top, left, rows, cols));
    return true;
  }();
  (void)written;
  return dir.path();
}

struct Case {
  std::string program;
  double max_aae, max_epe;  // the bound each must stay under on the crop (measured, with a margin)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.program; }

class OpticalFlow : public testing::TestWithParam<Case> {};

TEST_P(OpticalFlow, AccurateOnACropAndTheSameFusedAndUnfused) {
  if (!fs::exists(middlebury())) GTEST_SKIP() << "no Middlebury data at " << middlebury();
  const Case& c = GetParam();
  const bool lk = c.program.rfind("lk", 0) == 0;
  LoadOptions options;
  options.overrides = {{"frame1", (crop_folder() / "frame1.png").string()},
                       {"frame2", (crop_folder() / "frame2.png").string()},
                       {"truth", (crop_folder() / "truth.flo").string()},
                       {"iterations", lk ? "2" : "60"}};
  Program program = load_program(test::source_root() / "examples" / "optical_flow" / (c.program + ".json"),
                                 test::bundled_plugins(), options);
  auto fused = test::run_on_device(program);
  const double aae = fused.at("aae").get(0), epe = fused.at("epe").get(0);
  std::printf("%s on the crop: AAE %.3f degrees, EPE %.4f px\n", c.program.c_str(), aae, epe);
  EXPECT_LT(aae, c.max_aae) << c.program;
  EXPECT_LT(epe, c.max_epe) << c.program;

  PlanOptions unfused_options;
  unfused_options.fuse = false;
  unfused_options.eliminate_copies = false;
  auto unfused = test::run_on_device(program, std::nullopt, unfused_options);
  // The same arithmetic in other kernels: only contractions (a * b + c into one fma, which a GPU
  // compiler does within a kernel) round differently. The contracting iterations keep that at rounding
  // level; CG's path (and when it stops) follows every rounding of its dot products, so its flows agree
  // to its convergence instead.
  const bool cg = c.program.rfind("hs_cg", 0) == 0;
  std::string mismatch = test::compare_arrays(fused.at("flow"), unfused.at("flow"), cg ? 5e-2 : 1e-3);
  EXPECT_TRUE(mismatch.empty()) << c.program << " flow fused vs --no-fuse: " << mismatch;
  EXPECT_NEAR(fused.at("aae").get(0), unfused.at("aae").get(0), cg ? 0.1 : 1e-2);

  if (c.program.find("4level") == std::string::npos) {
    // Jacobi, block and red-black iterations contract, so f32 stays near the long-double reference;
    // CG's path depends on every rounding of its dot products, so it is held to its error instead.
    auto reference = test::run_reference(program);
    mismatch = test::compare_arrays(fused.at("flow"), reference.at("flow"), cg ? 5e-2 : 2e-3);
    EXPECT_TRUE(mismatch.empty()) << c.program << " flow vs the reference: " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, OpticalFlow,
                         // Measured on PoCL (60 iterations per level, 2 warps for LK), plus about 15 %.
                         testing::Values(Case{"hs_jacobi", 15.0, 0.53}, Case{"hs_block", 15.0, 0.53},
                                         Case{"hs_cg", 17.5, 0.60}, Case{"hs_redblack", 12.0, 0.43},
                                         Case{"lk", 9.7, 0.30}, Case{"hs_jacobi_4level", 12.0, 0.36},
                                         Case{"hs_block_4level", 12.0, 0.36}, Case{"hs_cg_4level", 13.0, 0.39},
                                         Case{"hs_redblack_4level", 9.8, 0.29}, Case{"lk_4level", 12.4, 0.41}),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.program; });

}  // namespace

namespace {

// The synthetic pair (a texture and its copy moved by (1.5, -0.75)) at 128 x 128: the 4-level flow
// recovers the shift.
TEST(OpticalFlowSynthetic, FourLevelsRecoverTheKnownShift) {
  test::TempDir dir;
  Program pair = load_program(test::source_root() / "examples" / "optical_flow" / "synthetic_pair.json",
                              test::bundled_plugins(), LoadOptions{{{"side", "128"}}});
  auto frames = test::run_on_device(pair);
  write_output_files(pair, dir.path(), [&](const std::string& symbol) { return frames.at(symbol); });
  for (const char* program : {"hs_block_4level", "lk_4level"}) {
    LoadOptions options{{{"frame1", (dir / "frame1.npy").string()},
                         {"frame2", (dir / "frame2.npy").string()},
                         {"truth", (dir / "truth.flo").string()}}};
    Program flow = load_program(test::source_root() / "examples" / "optical_flow" / (std::string(program) + ".json"),
                                test::bundled_plugins(), options);
    auto out = test::run_on_device(flow);
    std::printf("%s on the synthetic pair: AAE %.3f degrees, EPE %.4f px\n", program, out.at("aae").get(0),
                out.at("epe").get(0));
    EXPECT_LT(out.at("epe").get(0), 0.25) << program;  // measured 0.16 for both (borders dominate)
  }
}

}  // namespace

namespace {

// Identical frames: CG's first residual is 0, and it must stop before dividing by it (no NaN flow).
TEST(OpticalFlowCg, IdenticalFramesStopBeforeTheFirstIteration) {
  if (!fs::exists(middlebury())) GTEST_SKIP() << "no Middlebury data at " << middlebury();
  LoadOptions options{{{"frame1", (crop_folder() / "frame1.png").string()},
                       {"frame2", (crop_folder() / "frame1.png").string()},
                       {"truth", (crop_folder() / "truth.flo").string()}}};
  Program program = load_program(test::source_root() / "examples" / "optical_flow" / "hs_cg.json",
                                 test::bundled_plugins(), options);
  auto out = test::run_on_device(program);
  EXPECT_EQ(out.at("cg_iterations_0").get(0), -1);  // no iteration ran
  const HostArray& flow = out.at("flow");
  for (int64_t i = 0; i < flow.elements(); ++i) ASSERT_EQ(flow.get(i), 0.0) << "element " << i;
  EXPECT_TRUE(std::isfinite(out.at("aae").get(0)));
}

}  // namespace
