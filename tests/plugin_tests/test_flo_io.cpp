// Tests for Middlebury .flo reading and writing in the stencil plugin (flow_files.h): round trips,
// every error of the reader and the writer, and the real ground truth of RubberWhale when the shared
// data is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "flow_arrays.h"
#include "flow_files.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue::stencil;
using namespace flow_test;
using fugue::test::TempDir;
using Shape = std::vector<int64_t>;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
}
std::string le_float(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return le32(bits);
}

// A .flo file: tag, width, height, then `pairs` (u, v) pairs of 0.5 * index, and `extra` bytes.
std::string flo_bytes(const std::string& tag, int32_t width, int32_t height, int64_t pairs, size_t extra = 0) {
  std::string s = tag + le32(static_cast<uint32_t>(width)) + le32(static_cast<uint32_t>(height));
  for (int64_t i = 0; i < 2 * pairs; ++i) s += le_float(0.5f * static_cast<float>(i));
  return s + std::string(extra, 'x');
}

// The whole file read into an f32 array of the shape it holds.
std::vector<float> load(const fs::path& file, const Shape& shape) {
  std::vector<float> values(static_cast<size_t>(sdk::elements(shape)));
  read_flo(file, values.data(), shape);
  return values;
}

// Reading `bytes` from a .flo file fails with a message that starts with `part` (the core, not the
// format, puts the path in front) and names no path.
void expect_read_error(const TempDir& dir, const std::string& bytes, const std::string& part) {
  const fs::path file = dir / "bad.flo";
  write_bytes(file, bytes);
  for (int whole = 0; whole < 2; ++whole) {
    const std::string e = whole ? invalid_argument([&] {
      std::vector<float> out(2);
      read_flo(file, out.data(), Shape{1, 1, 2});
    })
                                : invalid_argument([&] { read_flo_shape(file); });
    EXPECT_TRUE(starts_with(e, part)) << e;
    EXPECT_EQ(e.find(file.string()), std::string::npos) << e;
  }
}

}  // namespace

TEST(FloIo, RoundTripsF32Exactly) {
  TempDir dir;
  Array flow(FUGUE_DTYPE_F32, {3, 4, 2});
  float* f = flow.data<float>();
  for (int64_t i = 0; i < flow.elements(); ++i) f[i] = 0.25f * static_cast<float>(i) - 3.0f;
  f[5] = 1.7e9f;  // unknown flow is data
  f[6] = -0.0f;
  f[7] = std::numeric_limits<float>::quiet_NaN();
  f[8] = std::numeric_limits<float>::signaling_NaN();  // written bit for bit, not through a double
  const fs::path file = dir / "f.flo";
  write_flo(file, flow.host());

  const std::string raw = slurp(file);
  ASSERT_EQ(raw.size(), 12u + 8u * 12u);
  EXPECT_EQ(raw.substr(0, 4), "PIEH");
  float tag;
  std::memcpy(&tag, raw.data(), 4);
  EXPECT_EQ(tag, 202021.25f);
  EXPECT_EQ(raw.substr(4, 4), le32(4));  // width
  EXPECT_EQ(raw.substr(8, 4), le32(3));  // height
  EXPECT_EQ(raw.substr(12, 4), le_float(-3.0f));

  EXPECT_EQ(read_flo_shape(file), (Shape{3, 4, 2}));
  const std::vector<float> back = load(file, Shape{3, 4, 2});
  ASSERT_EQ(back.size() * 4, flow.bytes().size());
  EXPECT_EQ(std::memcmp(back.data(), flow.bytes().data(), flow.bytes().size()), 0);  // NaNs and -0 included
  // Written where it was asked, nothing beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(FloIo, F64IsWrittenAsF32) {
  TempDir dir;
  Array flow(FUGUE_DTYPE_F64, {2, 3, 2});
  for (int64_t i = 0; i < flow.elements(); ++i) flow.set(i, 0.1 * static_cast<double>(i) - 0.3);
  write_flo(dir / "d.flo", flow.host());
  ASSERT_EQ(read_flo_shape(dir / "d.flo"), (Shape{2, 3, 2}));
  const std::vector<float> back = load(dir / "d.flo", Shape{2, 3, 2});
  for (int64_t i = 0; i < flow.elements(); ++i)
    EXPECT_EQ(back[static_cast<size_t>(i)], static_cast<float>(flow.data<double>()[i])) << i;
}

TEST(FloIo, WritingReplacesAnExistingFile) {
  TempDir dir;
  write_bytes(dir / "f.flo", std::string(1000, 'z'));
  Array flow(FUGUE_DTYPE_F32, {1, 1, 2});
  write_flo(dir / "f.flo", flow.host());
  EXPECT_EQ(slurp(dir / "f.flo").size(), 20u);
}

TEST(FloIo, RejectsABadTag) {
  TempDir dir;
  expect_read_error(dir, flo_bytes("XXXX", 2, 2, 4),
                    "tag 'XXXX' (0x58585858) where PIEH was expected: not a Middlebury .flo file");
  // Unprintable bytes show as '?'; a .npy file is named for what it is not.
  expect_read_error(dir, std::string("\x93NUMPY\x01\x00", 8) + std::string(100, ' '),
                    "tag '?NUM' (0x934e554d) where PIEH was expected");
}

TEST(FloIo, RejectsAHeaderThatPromisesMoreThanTheFileHolds) {
  TempDir dir;
  // 4 x 3 pixels need 96 bytes of flow; 10 pairs are 80.
  expect_read_error(dir, flo_bytes("PIEH", 4, 3, 10), "truncated: 80 bytes of flow, 96 expected");
  // Large but legal dimensions over a short file: the same, without allocating terabytes.
  expect_read_error(dir, flo_bytes("PIEH", 1000000, 1000000, 1),
                    "truncated: 8 bytes of flow, 8000000000000 expected");
  // Short files: no room for the tag, or the header cut short.
  expect_read_error(dir, "PI", "2 bytes: too short for a Middlebury .flo file");
  expect_read_error(dir, "", "0 bytes: too short for a Middlebury .flo file");
  expect_read_error(dir, std::string("PIEH\x04\x00", 6), "truncated: it ends inside the 12-byte .flo header (6 bytes)");
}

TEST(FloIo, RejectsBytesAfterTheFlow) {
  TempDir dir;
  expect_read_error(dir, flo_bytes("PIEH", 4, 3, 12, 5), "5 bytes after the flow (96 bytes of flow");
}

TEST(FloIo, RejectsZeroNegativeAndAbsurdDimensions) {
  TempDir dir;
  expect_read_error(dir, flo_bytes("PIEH", 0, 3, 0), "the .flo header gives width 0 and height 3; each must be 1 to 1000000");
  expect_read_error(dir, flo_bytes("PIEH", 2, -1, 0), "the .flo header gives width 2 and height -1");
  expect_read_error(dir, flo_bytes("PIEH", -5, -5, 0), "the .flo header gives width -5 and height -5");
  expect_read_error(dir, flo_bytes("PIEH", 2000000, 1, 0), "the .flo header gives width 2000000 and height 1; each must be 1 to 1000000");
}

TEST(FloIo, DeclaredShapeIsCheckedBeforeReading) {
  TempDir dir;
  write_bytes(dir / "f.flo", flo_bytes("PIEH", 4, 3, 12));
  std::vector<float> out(24, -1.0f);
  const std::string e = invalid_argument([&] { read_flo(dir / "f.flo", out.data(), Shape{4, 3, 2}); });
  EXPECT_TRUE(starts_with(e, "holds flow of shape [3, 4, 2] (width 4, height 3)")) << e;
  EXPECT_CONTAINS(e, "the declaration says [4, 3, 2]");
  EXPECT_EQ(out[0], -1.0f);  // nothing read
  const std::vector<float> flow = load(dir / "f.flo", Shape{3, 4, 2});
  EXPECT_EQ(flow[0], 0.0f);
  EXPECT_EQ(flow[23], 11.5f);  // the last v
}

TEST(FloIo, MissingFileAndFolder) {
  TempDir dir;
  std::string e = invalid_argument([&] { read_flo_shape(dir / "none.flo"); });
  EXPECT_EQ(e, "cannot open (" + std::string(std::strerror(ENOENT)) + ")");
  fs::create_directories(dir / "sub.flo");
  e = invalid_argument([&] { read_flo_shape(dir / "sub.flo"); });
  EXPECT_EQ(e, "cannot open: it is a folder");
  // Writing over a folder, or into one that does not exist.
  Array flow(FUGUE_DTYPE_F32, {1, 1, 2});
  e = invalid_argument([&] { write_flo(dir / "sub.flo", flow.host()); });
  EXPECT_EQ(e, "cannot write: it is a folder");
  e = invalid_argument([&] { write_flo(dir / "no" / "f.flo", flow.host()); });
  EXPECT_EQ(e, "cannot write (" + std::string(std::strerror(ENOENT)) + ")");
}

TEST(FloIo, WriterRefusesWhatIsNotFlow) {
  TempDir dir;
  const std::string what = "a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1..1000000; this is ";
  std::string e = invalid_argument([&] { write_flo(dir / "a.flo", Array(FUGUE_DTYPE_F32, {3, 4}).host()); });
  EXPECT_EQ(e, what + "f32 [3, 4]");
  e = invalid_argument([&] { write_flo(dir / "b.flo", Array(FUGUE_DTYPE_I32, {3, 4, 2}).host()); });
  EXPECT_EQ(e, what + "i32 [3, 4, 2]");
  e = invalid_argument([&] { write_flo(dir / "c.flo", Array(FUGUE_DTYPE_F32, {3, 4, 3}).host()); });
  EXPECT_EQ(e, what + "f32 [3, 4, 3]");
  e = invalid_argument([&] { write_flo(dir / "d.flo", Array(FUGUE_DTYPE_F32, {0, 4, 2}).host()); });
  EXPECT_EQ(e, what + "f32 [0, 4, 2]");
  EXPECT_TRUE(fs::is_empty(dir.path()));
  // The same check, on the type alone (what the format's accepts answers); the largest legal extents pass.
  e = invalid_argument([&] { check_flo_type(sdk::Type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F32, {1000001, 1, 2}).view()); });
  EXPECT_EQ(e, what + "f32 [1000001, 1, 2]");
  EXPECT_NO_THROW(check_flo_type(sdk::Type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F64, {1000000, 1000000, 2}).view()));
  e = invalid_argument([&] { check_flo_type(sdk::Type(FUGUE_KIND_SCALAR, FUGUE_DTYPE_F32).view()); });
  EXPECT_EQ(e, what + "f32 scalar");
}

TEST(FloIo, ReadsTheMiddleburyGroundTruth) {
  const fs::path folder = fugue::test::source_root() / ".." / "shared" / "data" / "middlebury";
  const fs::path file = folder / "RubberWhale" / "flow10.flo";
  if (!fs::exists(file)) GTEST_SKIP() << "no Middlebury data at " << folder.string() << " (" << file.string() << " is absent)";
  EXPECT_EQ(read_flo_shape(file), (Shape{388, 584, 2}));
  Array flow(FUGUE_DTYPE_F32, {388, 584, 2});
  read_flo(file, flow.data<float>(), flow.shape());
  int64_t unknown = 0, known = 0;
  double largest = 0;
  const float* f = flow.data<float>();
  for (int64_t i = 0; i < flow.elements(); i += 2) {
    if (std::fabs(f[i]) > 1e9f || std::fabs(f[i + 1]) > 1e9f) {
      ++unknown;
    } else {
      ++known;
      largest = std::max(largest, std::hypot(static_cast<double>(f[i]), static_cast<double>(f[i + 1])));
    }
  }
  EXPECT_GT(unknown, 0);
  EXPECT_GT(known, unknown);
  EXPECT_GT(largest, 0.5);  // RubberWhale moves by a few pixels at most
  EXPECT_LT(largest, 20.0);
  // Written again, it is the same file byte for byte.
  fugue::test::TempDir dir;
  write_flo(dir / "copy.flo", flow.host());
  EXPECT_EQ(slurp(dir / "copy.flo"), slurp(file));
}
