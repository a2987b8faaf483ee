// `fugue explain` plans and generates without building, for a device of this machine or a saved
// description of one: the description `fugue devices --json` writes gives the same plan as the device.
#include <gtest/gtest.h>

#include "test_support.h"

using namespace fugue;

TEST(Explain, SavedDescriptionPlansLikeTheDeviceItself) {
  test::TempDir dir;
  auto saved = test::run_fugue("devices --json " + (dir / "here.json").string());
  ASSERT_EQ(saved.code, 0) << saved.out;
  for (const char* program : {"jacobi.json", "bench/stencil5.json", "optical_flow/hs_redblack.json"}) {
    const std::string file = (test::source_root() / "examples" / program).string();
    auto here = test::run_fugue("explain " + file);
    auto described = test::run_fugue("explain --device-file " + (dir / "here.json").string() + " " + file);
    auto built = test::run_fugue("explain --compile " + file);
    ASSERT_EQ(here.code, 0) << here.out;
    ASSERT_EQ(described.code, 0) << described.out;
    ASSERT_EQ(built.code, 0) << built.out;
    EXPECT_EQ(described.out, here.out) << program;
    EXPECT_NE(here.out.find("Generated OpenCL"), std::string::npos);
  }
}

TEST(Explain, DevicesJsonToStdoutIsADescription) {
  auto r = test::run_fugue("devices --json -");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"fugue_device\": 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"max_work_group_size\""), std::string::npos) << r.out;
}
