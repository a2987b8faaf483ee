// Tests for .npy reading and writing: exact round trips, and clear errors for every bad file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "errors.h"
#include "io/npy_io.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("fugue_npy_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
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

// A .npy file with the given header dict text, format version and data bytes, padded like NumPy.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

// The message of the UserError that `f` throws, or a failure.
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

}  // namespace

TEST(NpyIo, RoundTripEveryDtypeAndShape) {
  TempDir dir;
  const DType dtypes[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32, DType::C64, DType::C128};
  const Shape shapes[] = {{}, {0}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 1, 2}};
  for (DType dtype : dtypes) {
    for (const Shape& shape : shapes) {
      HostArray a(dtype, shape);
      // Every byte pattern, NaNs and extremes included, must survive exactly.
      for (size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
      const fs::path file = dir.path / ("a_" + std::string(dtype_name(dtype)) + ".npy");
      save_npy(file, a);

      const NpyHeader h = read_npy_header(file);
      EXPECT_EQ(h.dtype, dtype);
      EXPECT_EQ(h.shape, shape);
      EXPECT_FALSE(h.fortran_order);
      EXPECT_EQ(h.data_offset % 64, 0u);
      const std::string raw = slurp(file);
      EXPECT_EQ(raw[h.data_offset - 1], '\n');
      EXPECT_EQ(raw[6], 1);  // version 1.0
      EXPECT_EQ(raw.size(), h.data_offset + a.bytes.size());

      const HostArray b = load_npy(file, dtype, shape);
      EXPECT_EQ(b.dtype, dtype);
      EXPECT_EQ(b.shape, shape);
      EXPECT_EQ(b.bytes, a.bytes) << dtype_name(dtype) << " " << shape_string(shape);
    }
  }
}

TEST(NpyIo, HeaderTextMatchesNumpy) {
  TempDir dir;
  HostArray scalar(DType::F64, {});
  save_npy(dir.path / "s.npy", scalar);
  EXPECT_TRUE(contains(slurp(dir.path / "s.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"));
  HostArray vec(DType::U8, {5});
  save_npy(dir.path / "v.npy", vec);
  EXPECT_TRUE(contains(slurp(dir.path / "v.npy"), "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"));
  HostArray mat(DType::I32, {3, 4});
  save_npy(dir.path / "m.npy", mat);
  EXPECT_TRUE(contains(slurp(dir.path / "m.npy"), "'shape': (3, 4), }"));
  // Complex: NumPy's complex64 and complex128 descrs, (re, im) interleaved.
  HostArray c(DType::C64, {2});
  c.data<std::complex<float>>()[1] = {1.5f, -2.0f};
  save_npy(dir.path / "c.npy", c);
  EXPECT_TRUE(contains(slurp(dir.path / "c.npy"), "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"));
  EXPECT_EQ(load_npy(dir.path / "c.npy", DType::C64, Shape{2}).get_complex(1), std::complex<double>(1.5, -2.0));
  HostArray z(DType::C128, {});
  save_npy(dir.path / "z.npy", z);
  EXPECT_TRUE(contains(slurp(dir.path / "z.npy"), "{'descr': '<c16',"));
}

TEST(NpyIo, AcceptsHeaderVariations) {
  TempDir dir;
  const fs::path file = dir.path / "v.npy";
  const std::string data = float_bytes({1.5f, -2.f, 3.25f, 4.f, 5.f, 6.f});
  const std::string dicts[] = {
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
      "{ \"descr\" : \"<f4\" ,\n 'shape':(2,3,),'fortran_order':False, }",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (2L, 3L), }",
      "{'descr':'<f4','fortran_order':False,'shape':[2, 3]}",
  };
  for (const std::string& dict : dicts) {
    for (int major : {1, 2, 3}) {
      write_bytes(file, npy_bytes(dict, data, major));
      const HostArray a = load_npy(file, DType::F32, Shape{2, 3});
      EXPECT_EQ(a.bytes, std::vector<uint8_t>(data.begin(), data.end())) << dict << " v" << major;
    }
  }
  // One-byte types: byte order is meaningless, so '<u1' and '|u1' both read.
  for (const char* descr : {"|u1", "<u1"}) {
    write_bytes(file, npy_bytes(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (3,), }", "abc"));
    EXPECT_EQ(load_npy(file, DType::U8, Shape{3}).bytes, (std::vector<uint8_t>{'a', 'b', 'c'}));
  }
  // A scalar.
  write_bytes(file, npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': ()}", std::string(8, '\x01')));
  EXPECT_EQ(load_npy(file, std::nullopt, std::nullopt).shape, Shape{});
}

TEST(NpyIo, MissingFile) {
  TempDir dir;
  const fs::path file = dir.path / "missing.npy";
  const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "cannot open")) << msg;
}

TEST(NpyIo, BadMagic) {
  TempDir dir;
  const fs::path file = dir.path / "bad.npy";
  write_bytes(file, "PK\x03\x04 this is a zip file, not an npy");
  const std::string msg = user_error([&] { read_npy_header(file); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "not a .npy file")) << msg;
  write_bytes(file, "");
  EXPECT_TRUE(contains(user_error([&] { read_npy_header(file); }), "not a .npy file"));
}

TEST(NpyIo, UnsupportedVersion) {
  TempDir dir;
  const fs::path file = dir.path / "v4.npy";
  write_bytes(file, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", float_bytes({1}), 4));
  const std::string msg = user_error([&] { read_npy_header(file); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "version 4.0")) << msg;
}

TEST(NpyIo, BigEndian) {
  TempDir dir;
  const fs::path file = dir.path / "be.npy";
  write_bytes(file, npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", float_bytes({1})));
  const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "big-endian data is not supported; save with little-endian byte order")) << msg;
}

TEST(NpyIo, FortranOrder) {
  TempDir dir;
  const fs::path file = dir.path / "f.npy";
  write_bytes(file, npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", float_bytes({1, 2})));
  const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "Fortran order")) << msg;
  EXPECT_TRUE(contains(msg, "C order")) << msg;
}

TEST(NpyIo, UnsupportedDtype) {
  TempDir dir;
  const fs::path file = dir.path / "f16.npy";
  write_bytes(file, npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", "abcd"));
  std::string msg = user_error([&] { read_npy_header(file); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "'<f2'")) << msg;
  EXPECT_TRUE(contains(msg, "<f4 (f32)")) << msg;
  EXPECT_TRUE(contains(msg, "|u1 (u8)")) << msg;

  write_bytes(file, npy_bytes("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }", "abcdefgh"));
  msg = user_error([&] { read_npy_header(file); });
  EXPECT_TRUE(contains(msg, "structured")) << msg;

  write_bytes(file, npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "a"));
  EXPECT_TRUE(contains(user_error([&] { read_npy_header(file); }), "'|b1'"));
}

TEST(NpyIo, MalformedHeader) {
  TempDir dir;
  const fs::path file = dir.path / "m.npy";
  const std::string bad[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4}",  // unbalanced
      "{'descr': '<f4', 'fortran_order': False}",                   // missing shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -4)}",
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3.5,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} junk",
      "['descr', '<f4']",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
      "{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}",
      "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
      "",
  };
  for (const std::string& dict : bad) {
    write_bytes(file, npy_bytes(dict, std::string(12, '\0')));
    const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
    EXPECT_TRUE(starts_with(msg, file.string())) << dict << " -> " << msg;
  }
  // A header length that runs past the end of the file.
  std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "");
  bytes[8] = '\xff';
  bytes[9] = '\x7f';
  write_bytes(file, bytes);
  EXPECT_TRUE(contains(user_error([&] { read_npy_header(file); }), "truncated"));
}

TEST(NpyIo, TruncatedData) {
  TempDir dir;
  const fs::path file = dir.path / "t.npy";
  write_bytes(file, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", float_bytes({1, 2, 3})));
  const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "is truncated: expected 4000000000000 data bytes, found 12")) << msg;
}

TEST(NpyIo, TrailingBytes) {
  TempDir dir;
  const fs::path file = dir.path / "t.npy";
  write_bytes(file, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", float_bytes({1, 2, 3})));
  const std::string msg = user_error([&] { load_npy(file, std::nullopt, std::nullopt); });
  EXPECT_TRUE(starts_with(msg, file.string())) << msg;
  EXPECT_TRUE(contains(msg, "has trailing bytes: expected 8 data bytes for f32 [2], found 12")) << msg;
}

TEST(NpyIo, ExpectationMismatch) {
  TempDir dir;
  const fs::path file = dir.path / "y.npy";
  HostArray a(DType::F64, {999});
  save_npy(file, a);
  std::string msg = user_error([&] { load_npy(file, DType::F32, Shape{1000}); });
  EXPECT_EQ(msg, file.string() + " holds f64 [999] but the declaration says f32 [1000]");
  msg = user_error([&] { load_npy(file, DType::F32, std::nullopt); });
  EXPECT_EQ(msg, file.string() + " holds f64 [999] but the declaration says f32");
  // The file holds more than declared: refused before reading it.
  msg = user_error([&] { load_npy(file, DType::F64, Shape{998}); });
  EXPECT_EQ(msg, file.string() + " holds f64 [999] but the declaration says f64 [998]");
  msg = user_error([&] { load_npy(file, std::nullopt, Shape{3, 333}); });
  EXPECT_EQ(msg, file.string() + " holds f64 [999] but the declaration says shape [3, 333]");
  EXPECT_EQ(load_npy(file, DType::F64, Shape{999}).elements(), 999);
}

TEST(NpyIo, SaveIntoMissingFolderIsUserError) {
  TempDir dir;
  HostArray a(DType::F32, {2});
  EXPECT_THROW(save_npy(dir.path / "nope" / "a.npy", a), UserError);
}
