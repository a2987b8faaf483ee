// Tests for the Middlebury colour coding of optical flow: the wheel, single vectors (directions,
// magnitudes, unknown flow), whole pictures, and [H, W, 2] outputs written as RGB PNG pictures and
// .flo files while [H, W] outputs stay gray.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "errors.h"
#include "io/flo_io.h"
#include "io/flow_colour.h"
#include "io/output_files.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue;
using fugue::test::TempDir;

namespace {

std::string show(const Rgb& c) {
  return "(" + std::to_string(c.r) + ", " + std::to_string(c.g) + ", " + std::to_string(c.b) + ")";
}
#define EXPECT_RGB(actual, r, g, b) EXPECT_EQ(show(actual), show(Rgb{r, g, b}))

// A [H, W, 2] f32 array from (u, v) pairs.
HostArray flow_of(int64_t height, int64_t width, const std::vector<float>& uv) {
  HostArray a(DType::F32, {height, width, 2});
  EXPECT_EQ(static_cast<int64_t>(uv.size()), a.elements());
  for (size_t i = 0; i < uv.size(); ++i) a.data<float>()[i] = uv[i];
  return a;
}

Rgb pixel(const std::vector<uint8_t>& rgb, size_t i) { return Rgb{rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]}; }

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(FlowColour, WheelHas55HuesFromItsSixSegments) {
  const auto& w = flow_colour_wheel();
  ASSERT_EQ(w.size(), 55u);
  // The segments start at red (0), yellow (15), green (21), cyan (25), blue (36), magenta (49).
  EXPECT_RGB(w[0], 255, 0, 0);
  EXPECT_RGB(w[15], 255, 255, 0);
  EXPECT_RGB(w[21], 0, 255, 0);
  EXPECT_RGB(w[25], 0, 255, 255);
  EXPECT_RGB(w[36], 0, 0, 255);
  EXPECT_RGB(w[49], 255, 0, 255);
  // Steps inside a segment: 255 * i / length, rounded down.
  EXPECT_RGB(w[1], 255, 17, 0);     // RY 1/15
  EXPECT_RGB(w[16], 213, 255, 0);   // YG: 255 - floor(255/6)
  EXPECT_RGB(w[27], 0, 209, 255);   // CB: 255 - floor(2*255/11)
  EXPECT_RGB(w[40], 78, 0, 255);    // BM: floor(4*255/13)
  EXPECT_RGB(w[54], 255, 0, 43);    // MR: 255 - floor(5*255/6)
}

TEST(FlowColour, ZeroFlowIsWhite) {
  EXPECT_RGB(flow_colour(0, 0), 255, 255, 255);
  const std::vector<uint8_t> rgb = flow_picture(HostArray(DType::F32, {2, 3, 2}));
  ASSERT_EQ(rgb.size(), 18u);
  for (uint8_t c : rgb) EXPECT_EQ(c, 255);
}

TEST(FlowColour, DirectionsAtFullMagnitudePickTheirHues) {
  // Hue position = (atan2(-v, -u) / pi + 1) / 2 * 54 on the wheel; v points down.
  // Right (1, 0): atan2(-0, -1) = -pi -> position 0: red.
  EXPECT_RGB(flow_colour(1, 0), 255, 0, 0);
  // Left (-1, 0): atan2(-0, 1) = -0 -> position 27: wheel[27].
  EXPECT_RGB(flow_colour(-1, 0), 0, 209, 255);
  // Down (0, 1): -pi/2 -> position 13.5: halfway between wheel[13] (255, 221, 0) and wheel[14]
  // (255, 238, 0): green 229.5, rounded down.
  EXPECT_RGB(flow_colour(0, 1), 255, 229, 0);
  // Up (0, -1): pi/2 -> position 40.5: halfway between wheel[40] (78, 0, 255) and wheel[41]
  // (98, 0, 255): red 88 (87 if the halfway point rounds below).
  const Rgb up = flow_colour(0, -1);
  EXPECT_NEAR(up.r, 88, 1);
  EXPECT_EQ(up.g, 0);
  EXPECT_EQ(up.b, 255);
}

TEST(FlowColour, MagnitudeSetsSaturationAndBeyondOneDarkens) {
  // Half the largest: every channel halfway from white, 1 - 0.5 * (1 - c).
  EXPECT_RGB(flow_colour(0.5, 0), 255, 127, 127);
  const Rgb half_left = flow_colour(-0.5, 0);  // (0, 209, 255) halfway to white
  EXPECT_EQ(half_left.r, 127);
  EXPECT_NEAR(half_left.g, 232, 1);  // 255 * (1 - 0.5 * 46/255) = 232, to rounding
  EXPECT_EQ(half_left.b, 255);
  // Past the normalisation range: the hue at 75%.
  EXPECT_RGB(flow_colour(2, 0), 191, 0, 0);
  EXPECT_RGB(flow_colour(1e9, 0), 191, 0, 0);  // large, but not unknown
}

TEST(FlowColour, UnknownFlowIsBlack) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(flow_is_unknown(1.5e9, 0));
  EXPECT_TRUE(flow_is_unknown(0, -2e9));
  EXPECT_TRUE(flow_is_unknown(nan, 0));
  EXPECT_TRUE(flow_is_unknown(0, inf));
  EXPECT_FALSE(flow_is_unknown(1e9, -1e9));
  EXPECT_RGB(flow_colour(1.5e9, 0), 0, 0, 0);
  EXPECT_RGB(flow_colour(0, -2e9), 0, 0, 0);
  EXPECT_RGB(flow_colour(nan, 1), 0, 0, 0);
  EXPECT_RGB(flow_colour(1, nan), 0, 0, 0);
}

TEST(FlowColour, PictureNormalisesByTheLargestKnownFlow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Unknown pixels do not count towards the largest magnitude (4 here).
  const HostArray flow = flow_of(2, 2, {4, 0, 2, 0, 5e9f, 0, nan, 1});
  const std::vector<uint8_t> rgb = flow_picture(flow);
  ASSERT_EQ(rgb.size(), 12u);
  EXPECT_RGB(pixel(rgb, 0), 255, 0, 0);
  EXPECT_RGB(pixel(rgb, 1), 255, 127, 127);
  EXPECT_RGB(pixel(rgb, 2), 0, 0, 0);
  EXPECT_RGB(pixel(rgb, 3), 0, 0, 0);
  // f64 gives the same picture.
  HostArray wide(DType::F64, flow.shape);
  for (int64_t i = 0; i < flow.elements(); ++i) wide.set(i, flow.get(i));
  EXPECT_EQ(flow_picture(wide), rgb);
  // All unknown: black, no division by zero.
  for (uint8_t c : flow_picture(flow_of(1, 2, {2e9f, 0, nan, nan}))) EXPECT_EQ(c, 0);
}

TEST(FlowColour, PictureRefusesWhatIsNotFlow) {
  std::string e;
  try {
    flow_picture(HostArray(DType::I32, {2, 2, 2}));
  } catch (const UserError& err) {
    e = err.what();
  }
  EXPECT_CONTAINS(e, "i32 [2, 2, 2]");
  EXPECT_CONTAINS(e, "[H, W, 2]");
  EXPECT_THROW(save_flow_png("x.png", HostArray(DType::F32, {2, 2})), UserError);
}

TEST(FlowColour, FlowOutputsArePicturesOrFloFilesAndImagesStayGray) {
  TempDir dir;
  const HostArray flow = flow_of(2, 3, {1, 0, -1, 0, 0, 1, 0, -1, 0, 0, 3e9f, 0});
  HostArray gray(DType::F32, {2, 3});
  for (int64_t i = 0; i < 6; ++i) gray.set(i, 40.0 * static_cast<double>(i));
  Program program;
  program.outputs = {{"f", "flow.png"}, {"g", "gray.png"}, {"f", "sub/flow.flo"}, {"f", "UP.FLO"}};
  write_output_files(program, dir.path(), [&](const std::string& name) { return name == "f" ? flow : gray; });

  int w = 0, h = 0, comp = 0;
  ASSERT_TRUE(stbi_info((dir / "flow.png").c_str(), &w, &h, &comp));
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(comp, 3);  // RGB
  unsigned char* pixels = stbi_load((dir / "flow.png").c_str(), &w, &h, &comp, 3);
  ASSERT_NE(pixels, nullptr);
  const std::vector<uint8_t> expected = flow_picture(flow);
  EXPECT_EQ(std::vector<uint8_t>(pixels, pixels + 18), expected);
  EXPECT_RGB(pixel(expected, 0), 255, 0, 0);  // right, at the largest magnitude
  EXPECT_RGB(pixel(expected, 4), 255, 255, 255);  // zero
  EXPECT_RGB(pixel(expected, 5), 0, 0, 0);  // unknown
  stbi_image_free(pixels);

  ASSERT_TRUE(stbi_info((dir / "gray.png").c_str(), &w, &h, &comp));
  EXPECT_EQ(comp, 1);  // [H, W] stays gray
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 2);

  for (const char* name : {"sub/flow.flo", "UP.FLO"}) {
    const HostArray back = load_flo(dir.path() / name, Shape{2, 3, 2});
    EXPECT_EQ(back.bytes, flow.bytes) << name;
  }
}

TEST(FlowColour, FloOutputOfAnotherShapeFailsBeforeAnyFileIsWritten) {
  TempDir dir;
  Program program;
  program.outputs = {{"f", "ok.flo"}, {"g", "g.flo"}};
  const HostArray flow = flow_of(1, 1, {1, 2});
  std::string e;
  try {
    write_output_files(program, dir.path(),
                       [&](const std::string& name) { return name == "f" ? flow : HostArray(DType::F32, {2, 3}); });
  } catch (const UserError& err) {
    e = err.what();
  }
  EXPECT_CONTAINS(e, "cannot write " + (dir / "g.flo").string() + ": 'g' is f32 [2, 3]");
  EXPECT_CONTAINS(e, "a .flo file needs f32 or f64 flow of shape [H, W, 2]");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}
