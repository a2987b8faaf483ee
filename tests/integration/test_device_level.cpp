// A device-level operation (its own kernel, through the core's services) runs inside a program.
#include <gtest/gtest.h>

#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;

TEST(DeviceLevel, PluginEnqueuedKernelMatchesReference) {
  auto doc = nlohmann::json::parse(R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [1001], "from": {"random": {"seed": 9}}}},
    "body": [{"op": "test.scale", "out": ["y"], "in": ["x"], "attrs": {"factor": 3}},
             {"op": "test.scale", "out": ["y"], "in": ["y"]},
             {"op": "array.sum", "out": ["s"], "in": ["y"]}],
    "outputs": {"y": "y.npy", "s": "s.npy"}})");
  Program program = parse_program(doc, "device_level.json", test::plugins_with_test_ops());
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  EXPECT_EQ(test::compare_arrays(device.at("y"), reference.at("y"), 1e-6), "");
  EXPECT_EQ(test::compare_arrays(device.at("s"), reference.at("s"), 1e-4), "");
}
