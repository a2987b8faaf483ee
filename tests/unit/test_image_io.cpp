// Tests for gray image reading and writing: PNG (8/16-bit, gray and colour) and PGM (P5, P2).
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "errors.h"
#include "io/image_io.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("fugue_image_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

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
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<float> values(const HostArray& a) {
  return std::vector<float>(a.data<float>(), a.data<float>() + a.elements());
}

// ---- A minimal 16-bit gray PNG encoder (stored deflate blocks), since stb_image_write has none.

uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}
std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
std::string chunk(const std::string& type, const std::string& data) {
  return be32(static_cast<uint32_t>(data.size())) + type + data + be32(crc32(type + data));
}
std::string png16(int w, int h, const std::vector<uint16_t>& pixels) {
  std::string raw;
  for (int y = 0; y < h; ++y) {
    raw += '\0';  // filter: none
    for (int x = 0; x < w; ++x) {
      raw += static_cast<char>(pixels[y * w + x] >> 8);
      raw += static_cast<char>(pixels[y * w + x] & 0xff);
    }
  }
  uint32_t a = 1, b = 0;
  for (unsigned char c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  std::string z = "\x78\x01";
  z += '\x01';  // final stored block
  const uint16_t len = static_cast<uint16_t>(raw.size());
  z += static_cast<char>(len & 0xff);
  z += static_cast<char>(len >> 8);
  z += static_cast<char>(~len & 0xff);
  z += static_cast<char>((~len >> 8) & 0xff);
  z += raw + be32((b << 16) | a);
  std::string ihdr = be32(w) + be32(h) + std::string("\x10\x00\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) + chunk("IEND", "");
}

}  // namespace

TEST(ImageIo, GrayPng) {
  TempDir dir;
  const fs::path file = dir.path / "gray.png";
  const unsigned char pixels[] = {0, 1, 2, 128, 254, 255};
  ASSERT_TRUE(stbi_write_png(file.string().c_str(), 3, 2, 1, pixels, 3));
  const HostArray a = load_gray_image(file, Shape{2, 3});
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  EXPECT_EQ(values(a), (std::vector<float>{0, 1, 2, 128, 254, 255}));
  EXPECT_EQ(load_gray_image(file, std::nullopt).shape, (Shape{2, 3}));
}

TEST(ImageIo, ColourPngBecomesGray) {
  TempDir dir;
  const fs::path file = dir.path / "rgb.PNG";  // the extension is matched in any case
  const unsigned char pixels[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 100, 100, 100};
  ASSERT_TRUE(stbi_write_png(file.string().c_str(), 2, 2, 3, pixels, 6));
  const HostArray a = load_gray_image(file, Shape{2, 2});
  // stb_image's luma: (77 r + 150 g + 29 b) >> 8.
  EXPECT_EQ(values(a), (std::vector<float>{(255 * 77) >> 8, (255 * 150) >> 8, (255 * 29) >> 8, 100}));

  const fs::path rgba = dir.path / "rgba.png";
  const unsigned char pixels4[] = {10, 10, 10, 0, 200, 200, 200, 255};
  ASSERT_TRUE(stbi_write_png(rgba.string().c_str(), 2, 1, 4, pixels4, 8));
  EXPECT_EQ(values(load_gray_image(rgba, Shape{1, 2})), (std::vector<float>{10, 200}));
}

TEST(ImageIo, SixteenBitPng) {
  TempDir dir;
  const fs::path file = dir.path / "deep.png";
  write_bytes(file, png16(2, 2, {0, 65535, 257, 32768}));
  const HostArray a = load_gray_image(file, Shape{2, 2});
  const std::vector<float> v = values(a);
  EXPECT_FLOAT_EQ(v[0], 0);
  EXPECT_FLOAT_EQ(v[1], 255);
  EXPECT_FLOAT_EQ(v[2], 1);
  EXPECT_NEAR(v[3], 127.5, 0.01);
}

TEST(ImageIo, PngErrors) {
  TempDir dir;
  const fs::path file = dir.path / "img.png";
  const unsigned char pixels[] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(stbi_write_png(file.string().c_str(), 3, 2, 1, pixels, 3));

  std::string msg = user_error([&] { load_gray_image(file, Shape{3, 2}); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "[2, 3]") && contains(msg, "[3, 2]")) << msg;
  msg = user_error([&] { load_gray_image(file, Shape{2, 3, 1}); });
  EXPECT_TRUE(contains(msg, "[2, 3, 1]")) << msg;

  const std::string png = slurp(file);
  const fs::path cut = dir.path / "cut.png";
  write_bytes(cut, png.substr(0, png.size() / 2));
  msg = user_error([&] { load_gray_image(cut, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, cut.string())) << msg;

  const fs::path text = dir.path / "text.png";
  write_bytes(text, "this is not an image");
  msg = user_error([&] { load_gray_image(text, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, text.string()) && contains(msg, "not a PNG")) << msg;

  // A header that claims a huge image in a tiny file is refused before decoding.
  const fs::path huge = dir.path / "huge.png";
  std::string h = png16(1, 1, {0});
  h.replace(16, 8, be32(1 << 20) + be32(1 << 20));
  write_bytes(huge, h);
  msg = user_error([&] { load_gray_image(huge, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, huge.string())) << msg;

  const fs::path missing = dir.path / "missing.png";
  msg = user_error([&] { load_gray_image(missing, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, missing.string()) && contains(msg, "cannot open")) << msg;

  const fs::path jpg = dir.path / "photo.jpg";
  msg = user_error([&] { load_gray_image(jpg, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, jpg.string()) && contains(msg, "'.jpg'")) << msg;
}

TEST(ImageIo, PgmBinary8Bit) {
  TempDir dir;
  const fs::path file = dir.path / "a.pgm";
  write_bytes(file, std::string("P5\n# a comment\n3 2\n255\n", 23) + std::string("\x00\x01\x02\x80\xfe\xff", 6));
  EXPECT_EQ(values(load_gray_image(file, Shape{2, 3})), (std::vector<float>{0, 1, 2, 128, 254, 255}));
  // maxval 15: scaled to 0..255.
  write_bytes(file, std::string("P5 2 1 15 ") + std::string("\x00\x0f", 2));
  EXPECT_EQ(values(load_gray_image(file, Shape{1, 2})), (std::vector<float>{0, 255}));
}

TEST(ImageIo, PgmBinary16Bit) {
  TempDir dir;
  const fs::path file = dir.path / "a.pgm";
  write_bytes(file, std::string("P5\n2 2\n65535\n") + std::string("\x00\x00\xff\xff\x01\x01\x80\x00", 8));
  const std::vector<float> v = values(load_gray_image(file, Shape{2, 2}));
  EXPECT_FLOAT_EQ(v[0], 0);
  EXPECT_FLOAT_EQ(v[1], 255);
  EXPECT_FLOAT_EQ(v[2], 1);  // 257 is big-endian 0x0101
  EXPECT_NEAR(v[3], 127.5, 0.01);
}

TEST(ImageIo, PgmPlain) {
  TempDir dir;
  const fs::path file = dir.path / "a.pgm";
  write_bytes(file, "P2\n# plain\n3 2 # dims\n100\n0 50 100\n# mid-data comment\n25\t75 10\n");
  EXPECT_EQ(values(load_gray_image(file, Shape{2, 3})),
            (std::vector<float>{0, 127.5f, 255, 63.75f, 191.25f, 25.5f}));
}

TEST(ImageIo, PgmErrors) {
  TempDir dir;
  const fs::path file = dir.path / "bad.pgm";
  auto expect_error = [&](const std::string& bytes, const std::optional<Shape>& shape, const std::string& part) {
    write_bytes(file, bytes);
    const std::string msg = user_error([&] { load_gray_image(file, shape); });
    EXPECT_TRUE(starts_with(msg, file.string())) << msg;
    EXPECT_TRUE(contains(msg, part)) << "expected '" << part << "' in: " << msg;
  };
  expect_error("P5\n3 2\n255\n\x01\x02\x03", std::nullopt, "is truncated: expected 6 data bytes, found 3");
  expect_error("P5\n3 2\n65535\n\x01\x02\x03\x04\x05\x06", std::nullopt, "expected 12 data bytes, found 6");
  expect_error("P5\n100000 100000\n255\n\x01", std::nullopt, "truncated");
  expect_error("P2\n3 2\n255\n1 2 3\n", std::nullopt, "truncated");
  expect_error("P2\n2 2\n255\n1 2 3    ", std::nullopt, "expected 4 pixel values, found 3");
  expect_error("P2\n2 1\n10\n1 11\n", std::nullopt, "more than the maxval 10");
  expect_error("P2\n2 1\n10\n1 x\n", std::nullopt, "found 'x'");
  expect_error("P5\n3 2\n255\n\x01\x02\x03\x04\x05\x06", Shape{3, 2}, "but the declaration says [3, 2]");
  expect_error("P6\n1 1\n255\n\x01\x02\x03", std::nullopt, "not a PGM");
  expect_error("hello", std::nullopt, "not a PGM");
  expect_error("P5\n3", std::nullopt, "truncated");
  expect_error("P5\n3 2\n0\n", std::nullopt, "maxval");
  expect_error("P5\n3 2\n70000\n", std::nullopt, "maxval");
  expect_error("P5\n99999999999 2\n255\n", std::nullopt, "too large");
}

TEST(ImageIo, SaveAndReload) {
  TempDir dir;
  HostArray image(DType::F32, {2, 3});
  const float in[] = {-5.f, 0.4f, 12.5f, 254.6f, 300.f, NAN};
  std::copy(in, in + 6, image.data<float>());
  const std::vector<float> expected{0, 0, 13, 255, 255, 0};

  const fs::path png = dir.path / "out.png";
  save_gray_png(png, image);
  EXPECT_EQ(values(load_gray_image(png, Shape{2, 3})), expected);

  const fs::path pgm = dir.path / "out.pgm";
  save_pgm(pgm, image);
  EXPECT_EQ(slurp(pgm).substr(0, 11), "P5\n3 2\n255\n");
  EXPECT_EQ(values(load_gray_image(pgm, Shape{2, 3})), expected);

  // Only the two files: nothing temporary is left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) (void)e, ++entries;
  EXPECT_EQ(entries, 2);
}

TEST(ImageIo, SaveRejectsNonImages) {
  TempDir dir;
  const fs::path png = dir.path / "x.png";
  std::string msg = user_error([&] { save_gray_png(png, HostArray(DType::F32, {2, 3, 3})); });
  EXPECT_TRUE(contains(msg, png.string()) && contains(msg, "[2, 3, 3]")) << msg;
  msg = user_error([&] { save_pgm(dir.path / "x.pgm", HostArray(DType::F32, {0, 3})); });
  EXPECT_TRUE(contains(msg, "[0, 3]")) << msg;
  EXPECT_FALSE(fs::exists(png));
}
