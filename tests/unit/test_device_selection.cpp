#include <gtest/gtest.h>

#include "device/device_manager.h"
#include "errors.h"

using namespace fugue;

namespace {
DeviceInfo fake(int p, int d, const std::string& name, const std::string& platform, bool gpu) {
  DeviceInfo i;
  i.platform_index = p;
  i.device_index = d;
  i.name = name;
  i.platform_name = platform;
  i.is_gpu = gpu;
  i.is_cpu = !gpu;
  return i;
}
std::vector<DeviceInfo> machine() {
  return {fake(0, 0, "pthread-AMD EPYC", "Portable Computing Language", false),
          fake(1, 0, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA", true),
          fake(1, 1, "NVIDIA A100", "NVIDIA CUDA", true)};
}
}  // namespace

TEST(DeviceSelection, DefaultIsFirstGpu) { EXPECT_EQ(select_device(machine(), "").name, "NVIDIA H100 80GB HBM3"); }

TEST(DeviceSelection, DefaultWithoutGpuIsFirstDevice) {
  auto cpus = std::vector<DeviceInfo>{machine()[0]};
  EXPECT_EQ(select_device(cpus, "").name, "pthread-AMD EPYC");
}

TEST(DeviceSelection, ByIndexTypeAndName) {
  auto m = machine();
  EXPECT_EQ(select_device(m, "1:1").name, "NVIDIA A100");
  EXPECT_EQ(select_device(m, "0:0").name, "pthread-AMD EPYC");
  EXPECT_EQ(select_device(m, "cpu").name, "pthread-AMD EPYC");
  EXPECT_EQ(select_device(m, "GPU").name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(select_device(m, "a100").name, "NVIDIA A100");
  EXPECT_EQ(select_device(m, "portable").name, "pthread-AMD EPYC");  // platform name
}

TEST(DeviceSelection, NoMatchNamesTheChoices) {
  auto m = machine();
  try {
    select_device(m, "2:0");
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("1:1 NVIDIA A100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_device(m, "radeon"), UserError);
  auto cpus = std::vector<DeviceInfo>{m[0]};
  EXPECT_THROW(select_device(cpus, "gpu"), UserError);
}

TEST(DeviceSelection, EnvironmentIsTheFallback) {
  setenv("FUGUE_DEVICE", "cpu", 1);
  EXPECT_EQ(device_spec(""), "cpu");
  EXPECT_EQ(device_spec("0:1"), "0:1");
  unsetenv("FUGUE_DEVICE");
  EXPECT_EQ(device_spec(""), "");
}

TEST(DeviceSelection, RealDevicesOpen) {
  auto devices = list_devices();
  ASSERT_FALSE(devices.empty());
  const DeviceInfo& chosen = select_device(devices, "0:0");
  Device device(chosen);
  EXPECT_FALSE(device.info.name.empty());
  EXPECT_GT(device.info.compute_units, 0u);
}
