// Device descriptions: what `fugue devices --json` saves reads back as the same device, and a bad file
// is refused with the file and the JSON pointer. No OpenCL here.
#include <gtest/gtest.h>

#include "device/device_description.h"
#include "errors.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

DeviceInfo sample() {
  DeviceInfo d;
  d.name = "Example GPU";
  d.vendor = "Example";
  d.platform_name = "Example OpenCL";
  d.platform_version = "OpenCL 3.0";
  d.driver_version = "1.2.3";
  d.device_version = "OpenCL 3.0";
  d.is_gpu = true;
  d.compute_units = 80;
  d.max_work_group_size = 1024;
  d.global_memory = uint64_t{40} << 30;
  d.max_allocation = uint64_t{10} << 30;
  d.local_memory = 65536;
  d.fp64 = true;
  d.int64_atomics = true;
  d.subgroups = false;
  d.subgroup_sizes = {32, 64};
  d.native_vector_width_float = 1;
  d.native_vector_width_double = 2;
  d.extensions = "cl_khr_fp64 cl_khr_int64_base_atomics";
  d.architecture = "sm_90";
  return d;
}

std::string error_for(const json& doc) {
  test::TempDir dir;
  test::write_text(dir / "d.json", doc.dump());
  try {
    read_device_description(dir / "d.json");
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

}  // namespace

TEST(DeviceDescription, RoundTripsEveryField) {
  test::TempDir dir;
  const DeviceInfo d = sample();
  test::write_text(dir / "d.json", describe_device(d).dump(2));
  const DeviceInfo r = read_device_description(dir / "d.json");
  EXPECT_EQ(describe_device(r).dump(), describe_device(d).dump());
  EXPECT_TRUE(r.is_gpu);
  EXPECT_FALSE(r.is_cpu);
  EXPECT_EQ(r.max_allocation, d.max_allocation);
  // What plugins see is the same too.
  EXPECT_EQ(r.description().local_mem_bytes, 65536u);
  EXPECT_EQ(r.description().features, d.description().features);
  ASSERT_EQ(r.description().num_subgroup_sizes, 2u);
  EXPECT_EQ(r.description().subgroup_sizes[0], 32u);
  EXPECT_EQ(r.description().native_vector_width_float, 1u);
  EXPECT_EQ(r.description().native_vector_width_double, 2u);
  EXPECT_STREQ(r.description().architecture, "sm_90");
}

TEST(DeviceDescription, TheShippedDescriptionsRead) {
  for (const char* name : {"nvidia-h100.json", "nvidia-h200.json", "pocl-cpu.json"}) {
    const DeviceInfo d = read_device_description(test::source_root() / "devices" / name);
    EXPECT_FALSE(d.name.empty()) << name;
    EXPECT_GT(d.compute_units, 0u) << name;
  }
}

TEST(DeviceDescription, BadFilesNameThePlace) {
  const json good = describe_device(sample());
  auto with = [&](const std::string& key, const json& value) {
    json d = good;
    d[key] = value;
    return error_for(d);
  };
  json missing = good;
  missing.erase("local_memory");
  EXPECT_NE(error_for(missing).find("d.json:/local_memory: missing"), std::string::npos) << error_for(missing);
  EXPECT_NE(with("colour", "red").find("d.json:/colour: unknown key"), std::string::npos);
  EXPECT_NE(with("compute_units", -1).find("d.json:/compute_units: expected an integer from 1"), std::string::npos);
  EXPECT_NE(with("fp64", 1).find("d.json:/fp64: expected true or false"), std::string::npos);
  EXPECT_NE(with("type", "fpga").find("d.json:/type: expected \"gpu\", \"cpu\" or \"other\""), std::string::npos);
  EXPECT_NE(with("fugue_device", 2).find("d.json:/fugue_device: expected 1"), std::string::npos);
  EXPECT_NE(with("max_allocation", uint64_t{50} << 30).find("d.json:/max_allocation: "), std::string::npos);
  EXPECT_NE(with("subgroup_sizes", 32).find("d.json:/subgroup_sizes: expected a list of at most 16 widths"), std::string::npos);
  EXPECT_NE(with("subgroup_sizes", json::array({32, 0})).find("d.json:/subgroup_sizes/1: expected an integer from 1 to 1024"),
            std::string::npos);
  EXPECT_NE(with("subgroup_sizes", json::array({"32"})).find("d.json:/subgroup_sizes/0: expected an integer"), std::string::npos);
  EXPECT_NE(with("architecture", 90).find("d.json:/architecture: expected a string"), std::string::npos);
  EXPECT_NE(with("architecture", "sm 90").find("d.json:/architecture: expected an instruction set's name such as \"sm_90\""), std::string::npos);
  json older = good;  // written before the keys existed: no widths, no architecture
  older.erase("subgroup_sizes");
  older.erase("architecture");
  EXPECT_EQ(error_for(older), "");
  test::TempDir dir;
  test::write_text(dir / "older.json", older.dump());
  EXPECT_STREQ(read_device_description(dir / "older.json").description().architecture, "");
  EXPECT_NE(error_for(json::array()).find("expected a device description"), std::string::npos);
  try {
    read_device_description("/no/such/device.json");
    FAIL() << "a missing file was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/device.json: not a device description file (no such file)"),
              std::string::npos)
        << e.what();
  }
}
