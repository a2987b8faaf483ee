// Complex programs end to end through `fugue run`: c64 and c128 inputs from .npy files, z = a * conj(b)
// + c and s = sum(z), checked against std::complex<long double> computed here; the outputs are NumPy's
// complex64/complex128 (their headers always, NumPy itself reading them where python3 has numpy).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <random>

#include "io/npy_io.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

using Complex = std::complex<long double>;

const Shape kShape = {101, 97};

// Fresh random a, b, c of `dtype`, parts in [-1, 1], written as .npy files into `dir`.
void write_inputs(const test::TempDir& dir, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> part(-1, 1);
  for (const char* name : {"a", "b", "c"}) {
    HostArray x(dtype, kShape);
    for (int64_t i = 0; i < x.elements(); ++i) {
      const double re = part(rng), im = part(rng);
      if (dtype == DType::C64) x.data<std::complex<float>>()[i] = {static_cast<float>(re), static_cast<float>(im)};
      else x.data<std::complex<double>>()[i] = {re, im};
    }
    save_npy(dir / (std::string(name) + ".npy"), x);
  }
}

// The program, reading its inputs from the .npy files beside it.
void write_program(const test::TempDir& dir, DType dtype) {
  const std::string t(dtype_name(dtype));
  test::write_text(dir / "prog.json", R"({"fugue": 1,
  "symbols": {
    "a": {"kind": "array", "dtype": ")" + t + R"(", "shape": [101, 97], "from": "a.npy"},
    "b": {"kind": "array", "dtype": ")" + t + R"(", "shape": [101, 97], "from": "b.npy"},
    "c": {"kind": "array", "dtype": ")" + t + R"(", "shape": [101, 97], "from": "c.npy"}
  },
  "body": [
    {"op": "array.conj", "out": ["cb"], "in": ["b"]},
    {"op": "array.mul", "out": ["t"], "in": ["a", "cb"]},
    {"op": "array.add", "out": ["z"], "in": ["t", "c"]},
    {"op": "array.sum", "out": ["s"], "in": ["z"]}
  ],
  "outputs": {"z": "z.npy", "s": "s.npy"}})");
}

Complex element(const HostArray& a, int64_t i) {
  const std::complex<double> v = a.get_complex(i);
  return {v.real(), v.imag()};
}

// The header of a .npy file, as text.
std::string npy_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(128, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes.substr(0, static_cast<size_t>(in.gcount()));
}

// `command` run by the shell, stdout and stderr together.
test::CliResult shell(const std::string& command) {
  test::CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class ComplexProgram : public testing::TestWithParam<DType> {};

TEST_P(ComplexProgram, ProductWithConjugatePlusSumFromNpyFiles) {
  const DType dtype = GetParam();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  test::TempDir dir;
  write_inputs(dir, dtype, seed);
  write_program(dir, dtype);
  auto r = test::run_fugue("run " + (dir / "prog.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;

  const HostArray a = load_npy(dir / "a.npy", dtype, kShape), b = load_npy(dir / "b.npy", dtype, kShape),
                  c = load_npy(dir / "c.npy", dtype, kShape);
  const HostArray z = load_npy(dir / "out" / "z.npy", dtype, kShape);
  const HostArray s = load_npy(dir / "out" / "s.npy", dtype, Shape{});
  // A few roundings per element; the sum's error grows with the magnitudes summed, whatever cancels.
  const bool single = dtype == DType::C64;
  const double element_tol = single ? 2e-6 : 1e-14, sum_tol = single ? 1e-5 : 1e-13;
  Complex sum = 0;
  long double magnitudes = 0;
  for (int64_t i = 0; i < z.elements(); ++i) {
    const Complex expected = element(a, i) * std::conj(element(b, i)) + element(c, i);
    ASSERT_LE(std::abs(element(z, i) - expected), element_tol * std::max<long double>(1, std::abs(expected)))
        << "z element " << i;
    sum += expected;
    magnitudes += std::abs(expected);
  }
  EXPECT_LE(std::abs(element(s, 0) - sum), sum_tol * magnitudes) << "s";

  // NumPy's descr of complex64 and complex128, in the outputs' headers.
  const std::string descr = single ? "'descr': '<c8'" : "'descr': '<c16'";
  EXPECT_NE(npy_header(dir / "out" / "z.npy").find(descr), std::string::npos) << npy_header(dir / "out" / "z.npy");
  EXPECT_NE(npy_header(dir / "out" / "s.npy").find(descr), std::string::npos) << npy_header(dir / "out" / "s.npy");
}

INSTANTIATE_TEST_SUITE_P(C64AndC128, ComplexProgram, testing::Values(DType::C64, DType::C128),
                         [](const testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

// NumPy itself reads the c64 outputs as complex64, with the values it computes from the same inputs.
TEST(ComplexProgramNumPy, ReadsTheOutputsAsComplex64) {
  if (shell("python3 -c 'import numpy'").code != 0) GTEST_SKIP() << "python3 with numpy is not installed";
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  test::TempDir dir;
  write_inputs(dir, DType::C64, seed);
  write_program(dir, DType::C64);
  auto r = test::run_fugue("run " + (dir / "prog.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys
import numpy as np
d = sys.argv[1]
a, b, c = (np.load(f"{d}/{n}.npy") for n in "abc")
z, s = np.load(f"{d}/out/z.npy"), np.load(f"{d}/out/s.npy")
assert a.dtype == np.complex64 and a.shape == (101, 97), (a.dtype, a.shape)
assert z.dtype == np.complex64 and z.shape == (101, 97), (z.dtype, z.shape)
assert s.dtype == np.complex64 and s.shape == (), (s.dtype, s.shape)
expected = a.astype(np.complex128) * np.conj(b.astype(np.complex128)) + c
error = np.abs(z - expected) / np.maximum(1, np.abs(expected))
assert error.max() < 2e-6, error.max()
assert abs(s - expected.sum()) < 1e-5 * np.abs(expected).sum(), (s, expected.sum())
print("numpy agrees")
)");
  auto check = shell("python3 " + (dir / "check.py").string() + " " + dir.path().string());
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("numpy agrees"), std::string::npos) << check.out;
}

// A complex scalar written inline as an [re, im] pair, like an array's elements.
TEST(ComplexProgram, ScalarTakesAnInlinePair) {
  auto doc = nlohmann::json::parse(R"({"fugue": 1, "symbols": {
    "z": {"kind": "scalar", "dtype": "c128", "value": [1.5, -2]},
    "a": {"kind": "array", "dtype": "c128", "shape": [3], "value": [[1, 1], [2, 0], [0, 3]]}},
    "body": [{"op": "array.mul", "out": ["y"], "in": ["a", "z"]}], "outputs": {"y": "y.npy"}})");
  Program program = parse_program(doc, "scalar.json", test::bundled_plugins());
  const std::complex<double> z(1.5, -2), a[3] = {{1, 1}, {2, 0}, {0, 3}};
  for (const auto& result : {test::run_on_device(program), test::run_reference(program)})
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(result.at("y").get_complex(i), a[i] * z) << i;
}

// Division by zero gives what NumPy gives: each part divided by +0 (inf, or NaN for 0 / 0), whatever
// the zero's signs; device and reference alike.
TEST(ComplexProgram, DivisionByZeroIsPartByPartAsNumPy) {
  auto doc = nlohmann::json::parse(R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "c64", "shape": [4], "value": [[1, 1], [-1, 2], [0, 0], [1, 0]]},
    "z": {"kind": "array", "dtype": "c64", "shape": [4], "value": [[0, 0], [-0.0, 0], [0, -0.0], [-0.0, -0.0]]}},
    "body": [{"op": "array.div", "out": ["q"], "in": ["a", "z"]}], "outputs": {"q": "q.npy"}})");
  Program program = parse_program(doc, "div.json", test::bundled_plugins());
  const double inf = INFINITY;
  // numpy: np.array([1+1j, -1+2j, 0j, 1+0j], np.complex64) / 0 (any signs)
  const std::complex<double> expected[4] = {{inf, inf}, {-inf, inf}, {NAN, NAN}, {inf, NAN}};
  for (const auto& result : {test::run_on_device(program), test::run_reference(program)})
    for (int64_t i = 0; i < 4; ++i) {
      const std::complex<double> got = result.at("q").get_complex(i), e = expected[i];
      for (auto [g, x] : {std::pair{got.real(), e.real()}, std::pair{got.imag(), e.imag()}})
        EXPECT_TRUE(std::isnan(x) ? std::isnan(g) : g == x) << "element " << i << ": " << got << ", NumPy " << e;
    }
}

}  // namespace
