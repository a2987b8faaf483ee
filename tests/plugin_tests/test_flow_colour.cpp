// Tests for the Middlebury colour coding of optical flow in the stencil plugin (flow_files.h): the
// wheel, single vectors (directions, magnitudes, unknown flow), whole pictures and PNG files, and
// programs run by `fugue` whose [H, W, 2] outputs become RGB pictures or .flo files through the
// plugin's formats while [H, W] outputs stay gray (the core's png format).
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "flow_arrays.h"
#include "flow_files.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue::stencil;
using namespace flow_test;
using fugue::test::TempDir;

namespace {

std::string show(const Rgb& c) {
  return "(" + std::to_string(c.r) + ", " + std::to_string(c.g) + ", " + std::to_string(c.b) + ")";
}
#define EXPECT_RGB(actual, r, g, b) EXPECT_EQ(show(actual), show(Rgb{r, g, b}))

// Fills a [H, W, 2] array with (u, v) pairs.
void fill(Array& a, const std::vector<float>& uv) {
  ASSERT_EQ(static_cast<int64_t>(uv.size()), a.elements());
  for (size_t i = 0; i < uv.size(); ++i) a.data<float>()[i] = uv[i];
}

Rgb pixel(const std::vector<uint8_t>& rgb, size_t i) { return Rgb{rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]}; }

// The pixels of an 8-bit PNG file, and its width, height and channels as stored.
struct Picture {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> rgb;  // converted to RGB
};
Picture load_picture(const fs::path& file) {
  Picture p;
  if (!stbi_info(file.c_str(), &p.width, &p.height, &p.channels)) {
    ADD_FAILURE() << file.string() << " is not a picture stb_image reads";
    return p;
  }
  int w = 0, h = 0, comp = 0;
  unsigned char* pixels = stbi_load(file.c_str(), &w, &h, &comp, 3);
  if (!pixels) {
    ADD_FAILURE() << file.string() << ": " << stbi_failure_reason();
    return p;
  }
  p.rgb.assign(pixels, pixels + 3 * static_cast<size_t>(w) * static_cast<size_t>(h));
  stbi_image_free(pixels);
  return p;
}

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
  const std::vector<uint8_t> rgb = flow_picture(Array(FUGUE_DTYPE_F32, {2, 3, 2}).host());
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
  Array flow(FUGUE_DTYPE_F32, {2, 2, 2});
  fill(flow, {4, 0, 2, 0, 5e9f, 0, nan, 1});
  const std::vector<uint8_t> rgb = flow_picture(flow.host());
  ASSERT_EQ(rgb.size(), 12u);
  EXPECT_RGB(pixel(rgb, 0), 255, 0, 0);
  EXPECT_RGB(pixel(rgb, 1), 255, 127, 127);
  EXPECT_RGB(pixel(rgb, 2), 0, 0, 0);
  EXPECT_RGB(pixel(rgb, 3), 0, 0, 0);
  // f64 gives the same picture.
  Array wide(FUGUE_DTYPE_F64, flow.shape());
  for (int64_t i = 0; i < flow.elements(); ++i) wide.set(i, flow.get(i));
  EXPECT_EQ(flow_picture(wide.host()), rgb);
  // All unknown: black, no division by zero.
  Array unknown(FUGUE_DTYPE_F32, {1, 2, 2});
  fill(unknown, {2e9f, 0, nan, nan});
  for (uint8_t c : flow_picture(unknown.host())) EXPECT_EQ(c, 0);
}

TEST(FlowColour, PictureRefusesWhatIsNotFlow) {
  const std::string what = "a flow picture needs f32 or f64 flow of shape [H, W, 2] with H, W > 0; this is ";
  std::string e = invalid_argument([] { flow_picture(Array(FUGUE_DTYPE_I32, {2, 2, 2}).host()); });
  EXPECT_EQ(e, what + "i32 [2, 2, 2]");
  TempDir dir;
  e = invalid_argument([&] { write_flow_png(dir / "x.png", Array(FUGUE_DTYPE_F32, {2, 2}).host()); });
  EXPECT_EQ(e, what + "f32 [2, 2]");
  e = invalid_argument([&] { write_flow_png(dir / "y.png", Array(FUGUE_DTYPE_F64, {2, 0, 2}).host()); });
  EXPECT_EQ(e, what + "f64 [2, 0, 2]");
  EXPECT_TRUE(fs::is_empty(dir.path()));
  // The same check on the type alone (the format's accepts), with the PNG encoder's int limits.
  e = invalid_argument(
      [] { check_flow_picture_type(sdk::Type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F32, {100000, 100000, 2}).view()); });
  EXPECT_EQ(e, "flow of shape [100000, 100000, 2] is too large for a picture");
  EXPECT_NO_THROW(check_flow_picture_type(sdk::Type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F64, {1000, 1000, 2}).view()));
}

TEST(FlowColour, PngFileHoldsThePicture) {
  TempDir dir;
  Array flow(FUGUE_DTYPE_F64, {2, 3, 2});
  const std::vector<float> uv{1, 0, -1, 0, 0, 1, 0, -1, 0, 0, 0, 3e9f};
  for (size_t i = 0; i < uv.size(); ++i) flow.set(static_cast<int64_t>(i), uv[i]);
  write_flow_png(dir / "flow.png", flow.host());
  const Picture p = load_picture(dir / "flow.png");
  EXPECT_EQ(p.width, 3);
  EXPECT_EQ(p.height, 2);
  EXPECT_EQ(p.channels, 3);  // RGB
  EXPECT_EQ(p.rgb, flow_picture(flow.host()));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// A program that reads a .flo file and writes its flow as a picture and as .flo files, and one of
// its channels as a gray picture: the plugin's flo format reads and writes the flow, its flow_picture
// format pictures it, and the core's png format (first for .png, but refusing [H, W, 2]) keeps [H, W]
// gray.
TEST(FlowColour, FlowOutputsArePicturesOrFloFilesAndImagesStayGray) {
  TempDir dir;
  Array flow(FUGUE_DTYPE_F32, {2, 3, 2});
  fill(flow, {1, 0, -1, 0, 0, 1, 0, -1, 0, 0, 0, 3e9f});
  write_flo(dir / "in.flo", flow.host());
  fugue::test::write_text(dir / "prog.json", R"({
  "fugue": 1,
  "symbols": {"uv": {"kind": "array", "dtype": "f32", "from": "in.flo"}},
  "body": [
    {"op": "stencil.channel", "out": ["u"], "in": ["uv"], "attrs": {"index": 0}},
    {"op": "stencil.channel", "out": ["v"], "in": ["uv"], "attrs": {"index": 1}},
    {"op": "stencil.stack", "out": ["f"], "in": ["u", "v"]},
    {"op": "stencil.stack", "out": ["f2"], "in": ["u", "v"]},
    {"op": "stencil.stack", "out": ["f3"], "in": ["u", "v"]}
  ],
  "outputs": {"f": "flow.png", "u": "gray.png", "f2": "sub/flow.flo", "f3": "UP.FLO"}
})");
  const auto r = fugue::test::run_fugue("run " + (dir / "prog.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;

  const Picture picture = load_picture(dir / "out" / "flow.png");
  EXPECT_EQ(picture.width, 3);
  EXPECT_EQ(picture.height, 2);
  EXPECT_EQ(picture.channels, 3);  // RGB
  const std::vector<uint8_t> expected = flow_picture(flow.host());
  EXPECT_EQ(picture.rgb, expected);
  EXPECT_RGB(pixel(expected, 0), 255, 0, 0);      // right, at the largest magnitude
  EXPECT_RGB(pixel(expected, 4), 255, 255, 255);  // zero
  EXPECT_RGB(pixel(expected, 5), 0, 0, 0);        // unknown

  const Picture gray = load_picture(dir / "out" / "gray.png");
  EXPECT_EQ(gray.channels, 1);  // [H, W] stays gray
  EXPECT_EQ(gray.width, 3);
  EXPECT_EQ(gray.height, 2);

  for (const char* name : {"sub/flow.flo", "UP.FLO"}) {
    const fs::path file = dir / "out" / name;
    ASSERT_TRUE(fs::exists(file)) << name << "\n" << r.out;
    EXPECT_EQ(read_flo_shape(file), (std::vector<int64_t>{2, 3, 2})) << name;
    Array back(FUGUE_DTYPE_F32, {2, 3, 2});
    read_flo(file, back.data<float>(), back.shape());
    EXPECT_EQ(back.bytes(), flow.bytes()) << name;
  }
}

// An output the plugin's flo format refuses ([H, W], not flow) fails when the program is loaded, with
// the format's reason, before anything runs or any file is written.
TEST(FlowColour, FloOutputOfAnotherShapeFailsBeforeAnyFileIsWritten) {
  TempDir dir;
  Array flow(FUGUE_DTYPE_F32, {2, 3, 2});
  write_flo(dir / "in.flo", flow.host());
  fugue::test::write_text(dir / "prog.json", R"({
  "fugue": 1,
  "symbols": {"uv": {"kind": "array", "dtype": "f32", "from": "in.flo"}},
  "body": [
    {"op": "stencil.channel", "out": ["g"], "in": ["uv"], "attrs": {"index": 0}},
    {"op": "stencil.channel", "out": ["v"], "in": ["uv"], "attrs": {"index": 1}},
    {"op": "stencil.stack", "out": ["f"], "in": ["g", "v"]}
  ],
  "outputs": {"f": "ok.flo", "g": "g.flo"}
})");
  for (const char* command : {"validate ", "run "}) {
    const auto r = fugue::test::run_fugue(command + (dir / "prog.json").string() +
                                          (command[0] == 'r' ? " --out " + (dir / "out").string() : ""));
    EXPECT_NE(r.code, 0) << command << r.out;
    EXPECT_CONTAINS(r.out, "/outputs/g");
    EXPECT_CONTAINS(r.out, "'g'");
    EXPECT_CONTAINS(r.out,
                    "a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1..1000000; this is f32 [2, 3]");
  }
  EXPECT_TRUE(!fs::exists(dir / "out") || fs::is_empty(dir / "out"));
}
