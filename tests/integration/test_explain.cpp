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
    ASSERT_EQ(here.code, 0) << here.out;
    ASSERT_EQ(described.code, 0) << described.out;
    // Built on the device too, for the first (the optical flow's kernels take PoCL minutes to build).
    if (std::string(program) == "jacobi.json") {
      auto built = test::run_fugue("explain --compile " + file);
      ASSERT_EQ(built.code, 0) << built.out;
    }
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

// The linalg plugin's plans say which variant each operation chose and why (fugue_plan.variant, ABI
// 2.5): by the order against the device's row of the plugin's table (the H100's description shipped in
// devices/, no OpenCL needed), with FUGUE_LINALG_TUNING overriding a row; a bad override is an error
// naming the variable.
// A described device on which an operation's launch cannot fit (work-groups of one work-item, a team
// of 16 asked): the error names the statement and the operation.
TEST(Explain, ALaunchThatCannotFitNamesItsStatement) {
  test::TempDir dir;
  auto description = nlohmann::json::parse(test::read_text(test::source_root() / "devices" / "nvidia-h100.json"));
  description["max_work_group_size"] = 1;
  test::write_text(dir / "small.json", description.dump());
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "B": {"kind": "array", "dtype": "f64", "shape": [100, 12, 12], "from": {"spd": {"seed": 1}}}},
    "body": [{"op": "array.mul", "out": ["C"], "in": ["B", 2]}, {"op": "linalg.potrf", "out": ["LB"], "in": ["C"]}],
    "outputs": {"LB": "LB.npy"}})");
  auto r = test::run_fugue("explain --device-file " + (dir / "small.json").string() + " " + (dir / "p.json").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("p.json:/body/"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no work-group size fits both the operation's range"), std::string::npos) << r.out;
}

TEST(Explain, LinalgPlansSayTheirVariantAndTableRow) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [100, 4, 4], "from": {"spd": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [100, 12, 12], "from": {"spd": {"seed": 1}}},
    "C": {"kind": "array", "dtype": "f64", "shape": [10, 40, 40], "from": {"spd": {"seed": 1}}}},
    "body": [{"op": "linalg.potrf", "out": ["LA"], "in": ["A"]},
             {"op": "linalg.potrf", "out": ["LB"], "in": ["B"]},
             {"op": "linalg.potrf", "out": ["LC"], "in": ["C"]}],
    "outputs": {"LA": "LA.npy", "LB": "LB.npy", "LC": "LC.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: registers: one matrix per work-item, every loop unrolled (order 4 <= 8); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: rows: a row per work-item, teams of 16 (order 12 in 9..32); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 8 x 8 work-items per matrix, each a 5 x 5 block of it cyclically in registers (order 40 in 33..128); "
                       "NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=grid_order=16");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: team: 64 work-items per matrix owning columns (order 40 > 32), the matrix in local memory; NVIDIA GPU table, "
                       "FUGUE_LINALG_TUNING=grid_order=16"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=register_order=12,team_max=32");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: registers: one matrix per work-item, every loop unrolled (order 12 <= 12); NVIDIA GPU table, "
                       "FUGUE_LINALG_TUNING=register_order=12,team_max=32"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: grid: 8 x 4 work-items per matrix, each a 5 x 10 block of it cyclically in registers (order 40 in 33..128)"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=register_order=0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/body/0: linalg.potrf: FUGUE_LINALG_TUNING: \"register_order=0\": expected row=NAME or a field=N with N in 1..1024"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=team_max=16,row_order=32");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("expected register_order <= row_order <= team_max (a row per work-item of a team), found 8, 32 and 16"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=row=tpu");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no table row \"tpu\" (rows: NVIDIA GPU, GPU, CPU, default, lower case)"), std::string::npos) << r.out;
}
