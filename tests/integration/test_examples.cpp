// Every program in examples/ runs on the device and matches the CPU reference run, fused and unfused;
// the flagship's and the loop example's results are also checked against values computed here by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "io/generators.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> example_programs() {
  std::vector<std::string> files;
  // The optical-flow programs read real frames and run hundreds of iterations: test_optical_flow.cpp
  // runs them on a crop. The Lanczos programs stop when they converge, which rounding can move by a
  // check (the reference's sums are exact): test_lanczos.cpp and test_normalized_cuts.cpp check them
  // against NumPy and SciPy instead.
  const std::set<std::string> elsewhere = {"optical_flow", "lanczos", "normalized_cuts"};
  for (const auto& e : fs::recursive_directory_iterator(test::source_root() / "examples"))
    if (e.path().extension() == ".json" && !elsewhere.count(e.path().parent_path().filename().string()))
      files.push_back(fs::relative(e.path(), test::source_root() / "examples").string());
  std::sort(files.begin(), files.end());
  return files;
}

class Examples : public testing::TestWithParam<std::string> {};

TEST_P(Examples, DeviceMatchesReferenceFusedAndUnfused) {
  // Benchmark programs take their size from the const n (vectors), side (grids), rows (batches of rows)
  // or entries (batches of matrices), and their loops' length from rounds: keep them small and odd.
  LoadOptions options;
  if (GetParam().rfind("bench/", 0) == 0) {
    std::ifstream in(test::source_root() / "examples" / GetParam());
    auto symbols = nlohmann::json::parse(in).at("symbols");
    if (symbols.contains("n")) options.overrides.emplace_back("n", "40009");
    if (symbols.contains("side")) options.overrides.emplace_back("side", "67");
    if (symbols.contains("rows")) options.overrides.emplace_back("rows", "67");
    if (symbols.contains("entries")) options.overrides.emplace_back("entries", "67");
    if (symbols.contains("rounds")) options.overrides.emplace_back("rounds", "7");
  }
  Program program = load_program(test::source_root() / "examples" / GetParam(), test::plugins_with_test_ops(), options);
  ASSERT_FALSE(program.outputs.empty());
  auto fused = test::run_on_device(program);
  PlanOptions unfused_options;
  unfused_options.fuse = false;
  unfused_options.eliminate_copies = false;
  auto unfused = test::run_on_device(program, std::nullopt, unfused_options);
  auto reference = test::run_reference(program);
  for (const auto& [name, expected] : reference) {
    // f32 sums of up to 10^6 terms in a different order: relative 1e-4.
    std::string mismatch = test::compare_arrays(fused.at(name), expected, 1e-4);
    EXPECT_TRUE(mismatch.empty()) << GetParam() << " output " << name << ": " << mismatch;
    // Fusion changes where values live, never what is computed: the same to rounding.
    mismatch = test::compare_arrays(fused.at(name), unfused.at(name), 1e-5);
    EXPECT_TRUE(mismatch.empty()) << GetParam() << " output " << name << " fused vs --no-fuse: " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllExamples, Examples, testing::ValuesIn(example_programs()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (auto& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(Examples, FlagshipByHand) {
  Program program = load_program(test::source_root() / "examples" / "saxpy_loop.json", test::bundled_plugins());
  auto out = test::run_on_device(program);
  // z = y + 10 * (2.5 * x), x regenerated from the same seed, y = arange(0, 1e-6).
  HostArray x = make_random(DType::F32, {1000000}, 7, -1, 1);
  HostArray y = make_arange(DType::F32, {1000000}, 0, 0.000001);
  const HostArray& z = out.at("z");
  double sum = 0;
  for (int64_t i = 0; i < z.elements(); ++i) {
    float t = 2.5f * x.data<float>()[i], expect = y.data<float>()[i];
    for (int k = 0; k < 10; ++k) expect += t;
    ASSERT_NEAR(z.get(i), expect, 1e-5) << "element " << i;
    sum += expect;
  }
  EXPECT_NEAR(out.at("s").get(0), sum, 1e-4 * std::fabs(sum));
}

TEST(Examples, HalvingStopsAtTheRightIteration) {
  Program program = load_program(test::source_root() / "examples" / "halving_until_small.json", test::bundled_plugins());
  auto out = test::run_on_device(program);
  double largest = out.at("largest").get(0);
  int64_t iterations = static_cast<int64_t>(out.at("iterations").get(0)) + 1;
  EXPECT_LT(largest, 0.001);
  EXPECT_GE(largest * 2, 0.001);  // one halving earlier it was not yet small enough
  // max|x0| < 8, so 8 * 2^-k < 1e-3 needs k <= 13.
  EXPECT_LE(iterations, 13);
  EXPECT_GE(iterations, 10);
}

}  // namespace
