// Tests for Middlebury .flo reading and writing: round trips, every error of the reader and the
// writer, and the real ground truth of RubberWhale when the shared data is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "errors.h"
#include "io/flo_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue;
using fugue::test::TempDir;

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

template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected UserError, nothing thrown";
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// Reading `bytes` from a .flo file fails with a message starting with the path and holding `part`.
void expect_read_error(const TempDir& dir, const std::string& bytes, const std::string& part) {
  const fs::path file = dir / "bad.flo";
  write_bytes(file, bytes);
  for (int whole = 0; whole < 2; ++whole) {
    const std::string e = whole ? user_error([&] { load_flo(file, std::nullopt); })
                                : user_error([&] { read_flo_shape(file); });
    EXPECT_TRUE(starts_with(e, file.string() + ": ")) << e;
    EXPECT_CONTAINS(e, part);
  }
}

}  // namespace

TEST(FloIo, RoundTripsF32Exactly) {
  TempDir dir;
  HostArray flow(DType::F32, {3, 4, 2});
  float* f = flow.data<float>();
  for (int64_t i = 0; i < flow.elements(); ++i) f[i] = 0.25f * static_cast<float>(i) - 3.0f;
  f[5] = 1.7e9f;  // unknown flow is data
  f[6] = -0.0f;
  f[7] = std::numeric_limits<float>::quiet_NaN();
  const fs::path file = dir / "f.flo";
  save_flo(file, flow);

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
  const HostArray back = load_flo(file, Shape{3, 4, 2});
  EXPECT_EQ(back.dtype, DType::F32);
  EXPECT_EQ(back.shape, (Shape{3, 4, 2}));
  EXPECT_EQ(back.bytes, flow.bytes);  // bit for bit, NaN and -0 included
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(FloIo, F64IsWrittenAsF32) {
  TempDir dir;
  HostArray flow(DType::F64, {2, 3, 2});
  for (int64_t i = 0; i < flow.elements(); ++i) flow.set(i, 0.1 * static_cast<double>(i) - 0.3);
  save_flo(dir / "d.flo", flow);
  const HostArray back = load_flo(dir / "d.flo", std::nullopt);
  ASSERT_EQ(back.dtype, DType::F32);
  ASSERT_EQ(back.shape, (Shape{2, 3, 2}));
  for (int64_t i = 0; i < flow.elements(); ++i)
    EXPECT_EQ(back.data<float>()[i], static_cast<float>(flow.data<double>()[i])) << i;
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
  expect_read_error(dir, flo_bytes("PIEH", -5, -5, 0), "width -5 and height -5");
  expect_read_error(dir, flo_bytes("PIEH", 2000000, 1, 0), "width 2000000 and height 1; each must be 1 to 1000000");
}

TEST(FloIo, DeclaredShapeIsCheckedBeforeReading) {
  TempDir dir;
  write_bytes(dir / "f.flo", flo_bytes("PIEH", 4, 3, 12));
  const std::string e = user_error([&] { load_flo(dir / "f.flo", Shape{4, 3, 2}); });
  EXPECT_TRUE(starts_with(e, (dir / "f.flo").string())) << e;
  EXPECT_CONTAINS(e, "shape [3, 4, 2] (width 4, height 3)");
  EXPECT_CONTAINS(e, "the declaration says [4, 3, 2]");
  const HostArray flow = load_flo(dir / "f.flo", Shape{3, 4, 2});
  EXPECT_EQ(flow.data<float>()[0], 0.0f);
  EXPECT_EQ(flow.data<float>()[23], 11.5f);  // the last v
}

TEST(FloIo, MissingFileAndFolder) {
  TempDir dir;
  std::string e = user_error([&] { read_flo_shape(dir / "none.flo"); });
  EXPECT_TRUE(starts_with(e, (dir / "none.flo").string() + ": cannot open")) << e;
  fs::create_directories(dir / "sub.flo");
  e = user_error([&] { read_flo_shape(dir / "sub.flo"); });
  EXPECT_CONTAINS(e, "it is a folder");
}

TEST(FloIo, WriterRefusesWhatIsNotFlow) {
  TempDir dir;
  std::string e = user_error([&] { save_flo(dir / "a.flo", HostArray(DType::F32, {3, 4})); });
  EXPECT_TRUE(starts_with(e, "cannot write " + (dir / "a.flo").string() + ": ")) << e;
  EXPECT_CONTAINS(e, "the array is f32 [3, 4]; a .flo file holds f32 or f64 flow of shape [H, W, 2]");
  e = user_error([&] { save_flo(dir / "b.flo", HostArray(DType::I32, {3, 4, 2})); });
  EXPECT_CONTAINS(e, "the array is i32 [3, 4, 2]");
  e = user_error([&] { save_flo(dir / "c.flo", HostArray(DType::F32, {3, 4, 3})); });
  EXPECT_CONTAINS(e, "f32 [3, 4, 3]");
  e = user_error([&] { save_flo(dir / "d.flo", HostArray(DType::F32, {0, 4, 2})); });
  EXPECT_CONTAINS(e, "f32 [0, 4, 2]");
  EXPECT_FALSE(fs::exists(dir / "a.flo"));
}

TEST(FloIo, ReadsTheMiddleburyGroundTruth) {
  const fs::path folder = fugue::test::source_root() / ".." / "shared" / "data" / "middlebury";
  const fs::path file = folder / "RubberWhale" / "flow10.flo";
  if (!fs::exists(file)) GTEST_SKIP() << "no Middlebury data at " << folder.string() << " (" << file.string() << " is absent)";
  EXPECT_EQ(read_flo_shape(file), (Shape{388, 584, 2}));
  const HostArray flow = load_flo(file, Shape{388, 584, 2});
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
  TempDir dir;
  save_flo(dir / "copy.flo", flow);
  EXPECT_EQ(slurp(dir / "copy.flo"), slurp(file));
}
