// Inputs that used to crash or hang the loader: deep nesting, special files, NUL characters, huge
// names, corrupted pictures. Each is refused with the place, before anything recurses or blocks.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "errors.h"
#include "io/image_io.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using fugue::test::TempDir;

namespace {

std::string load_error(const std::filesystem::path& file) {
  try {
    load_program(file, test::bundled_plugins());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

std::string load_text_error(const TempDir& dir, const std::string& text) {
  test::write_text(dir / "prog.json", text);
  return load_error(dir / "prog.json");
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(LoaderLimits, DeeplyNestedJsonIsRefusedBeforeItIsParsed) {
  TempDir dir;
  const int depth = 100000;
  std::string value = std::string(depth, '[') + std::string(depth, ']');
  std::string e = load_text_error(dir, R"({"fugue": 1, "symbols": {}, "body": [], "doc": )" + value + "}");
  EXPECT_CONTAINS(e, "prog.json: values nested deeper than 256 levels at line 1, column ");
  // A bracket inside a string does not count.
  e = load_text_error(dir, R"({"fugue": 1, "symbols": {}, "body": [], "doc": ")" + std::string(5000, '[') + R"("})");
  EXPECT_EQ(e, "");
  // The same limit holds for documents handed over already parsed.
  nlohmann::json doc = {{"fugue", 1}, {"symbols", nlohmann::json::object()}, {"body", nlohmann::json::array()}};
  nlohmann::json deep = 1;
  for (int i = 0; i < 300; ++i) deep = nlohmann::json::array({deep});
  doc["doc"] = deep;
  try {
    parse_program(doc, "p.json", test::bundled_plugins());
    ADD_FAILURE() << "a document nested 300 levels deep was accepted";
  } catch (const UserError& error) {
    EXPECT_CONTAINS(error.what(), "values nested deeper than 256 levels");
  }
}

TEST(LoaderLimits, LoopsNestedTooDeepAreRefusedWithThePlace) {
  TempDir dir;
  std::string body = R"({"op": "array.add", "out": ["y"], "in": ["x", 1]})";
  for (int i = 0; i < 80; ++i) body = R"({"for": "i)" + std::to_string(i) + R"(", "count": 1, "body": [)" + body + "]}";
  std::string e = load_text_error(dir, R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32", "shape": [4],
    "from": {"zeros": {}}}}, "body": [)" + body + "]}");
  EXPECT_CONTAINS(e, "prog.json:/body/0/body/0/body/0");
  EXPECT_CONTAINS(e, "loops and branches nested deeper than 64 levels");
}

TEST(LoaderLimits, SpecialFilesAreRefusedInsteadOfBlocking) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  EXPECT_CONTAINS(load_error(dir / "fifo.json"), "fifo.json: not a regular file (a FIFO)");
  ASSERT_EQ(mkfifo((dir / "in.npy").c_str(), 0600), 0);
  std::string e = load_text_error(dir, R"({"fugue": 1, "symbols": {"x": {"kind": "array", "from": "in.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/x/from: '");
  EXPECT_CONTAINS(e, "in.npy' is not a regular file (a FIFO)");
  std::filesystem::create_directory(dir / "folder.npy");
  e = load_text_error(dir, R"({"fugue": 1, "symbols": {"x": {"kind": "array", "from": "folder.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "is not a regular file (a folder)");
}

TEST(LoaderLimits, NulCharactersInStringsAreRefused) {
  TempDir dir;
  std::string e = load_text_error(
      dir, R"({"fugue": 1, "symbols": {"x": {"kind": "array", "from": "/etc/passwd\u0000.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/x/from: expected a string without NUL characters");
  e = load_text_error(dir, R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32", "shape": [2],
    "from": {"zeros": {}}}}, "body": [], "outputs": {"x": "x.npy\u0000.png"}})");
  EXPECT_CONTAINS(e, "prog.json:/outputs/x: expected a string without NUL characters");
}

TEST(LoaderLimits, HugeNamesAreRefusedQuickly) {
  TempDir dir;
  const std::string name(50000, 'a');
  std::string e = load_text_error(dir, R"({"fugue": 1, "symbols": {")" + name +
                                           R"(": {"kind": "const", "value": 1}}, "body": []})");
  EXPECT_CONTAINS(e, "expected a symbol name of at most 256 letters, digits and _");
}

TEST(LoaderLimits, PngWithABadCrcIsRefused) {
  TempDir dir;
  HostArray image(DType::F32, {3, 4});
  for (int64_t i = 0; i < image.elements(); ++i) image.set(i, static_cast<double>(10 * i));
  save_gray_png(dir / "ok.png", image);
  EXPECT_EQ(load_gray_image(dir / "ok.png", std::nullopt).bytes, image.bytes);
  // Flip one bit of the image data (inside IDAT), leaving its CRC as it was.
  std::ifstream in(dir / "ok.png", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t idat = bytes.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  bytes[idat + 6] ^= 0x01;
  test::write_text(dir / "bad.png", bytes);
  try {
    load_gray_image(dir / "bad.png", std::nullopt);
    ADD_FAILURE() << "a PNG with a bad CRC was read";
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "bad.png is corrupt: the CRC of the 'IDAT' chunk");
  }
}

// Loop counts and comparisons take real numbers only: not a plugin kind, not a complex scalar.
TEST(LoaderLimits, CountsAndComparandsAreRealNumbers) {
  TempDir dir;
  std::string e = load_text_error(dir, R"({"fugue": 1, "symbols": {"z": {"kind": "scalar", "dtype": "c64", "value": [2, 5]}},
    "body": [{"for": "i", "count": "z", "body": []}]})");
  EXPECT_CONTAINS(e, "prog.json:/body/0/count: expected a const or a real scalar, found scalar 'z' (complex)");
  e = load_text_error(dir, R"({"fugue": 1, "symbols": {"R": {"kind": "stencil", "points": [{"offset": [0], "weight": 1}]}},
    "body": [{"if": {"lt": ["R", 1]}, "then": []}]})");
  EXPECT_CONTAINS(e, "prog.json:/body/0/if/lt/0: expected a real scalar or a const, found stencil 'R'");
}
