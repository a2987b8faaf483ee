// A program run again on inputs of a new size compiles nothing on a CPU device: its kernels take the
// extents as arguments (the GPU default bakes them in, which FUGUE_TUNING=extent_args=0 reproduces here).
#include <gtest/gtest.h>

#include "test_support.h"

using namespace fugue;

namespace {

// The "programs: N compiled" count of a run of `program` at side x side, with the disk cache `cache`.
int compiled(const std::string& program, int side, const test::TempDir& dir, const std::string& tuning = "") {
  auto r = test::run_fugue("run " + (test::source_root() / "examples" / program).string() + " --set side=" +
                               std::to_string(side) + " --stats --out " + (dir / "out").string(),
                           "FUGUE_PROGRAM_CACHE=on FUGUE_CACHE_DIR=" + (dir / "cache").string() + (tuning.empty() ? "" : " FUGUE_TUNING=" + tuning));
  EXPECT_EQ(r.code, 0) << r.out;
  const auto at = r.out.find("programs: ");
  if (at == std::string::npos) {
    ADD_FAILURE() << r.out;
    return -1;
  }
  return std::stoi(r.out.substr(at + 10));
}

}  // namespace

TEST(NewSizes, AStencilProgramOnANewSizeCompilesNothing) {
  test::TempDir dir;
  EXPECT_GT(compiled("bench/jacobi.json", 61, dir), 0);
  EXPECT_EQ(compiled("bench/jacobi.json", 83, dir), 0) << "the kernels of side 61 serve side 83";
  EXPECT_GT(compiled("bench/stencil5.json", 61, dir), 0);
  EXPECT_EQ(compiled("bench/stencil5.json", 40, dir), 0);
}

TEST(NewSizes, LiteralExtentsCompileAgain) {
  test::TempDir dir;
  EXPECT_GT(compiled("bench/stencil5.json", 61, dir, "extent_args=0"), 0);
  EXPECT_GT(compiled("bench/stencil5.json", 83, dir, "extent_args=0"), 0);
}
