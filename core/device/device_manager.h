// device_manager.h: lists OpenCL platforms and devices and picks one from a user's selection.
#pragma once
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "fugue_plugin.h"

namespace fugue {

struct DeviceInfo {
  int platform_index = 0;
  int device_index = 0;
  std::string platform_name;
  std::string platform_version;
  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string device_version;
  bool is_gpu = false;
  bool is_cpu = false;
  unsigned compute_units = 0;
  size_t max_work_group_size = 0;
  uint64_t global_memory = 0;
  uint64_t max_allocation = 0;
  uint64_t local_memory = 0;  // per work-group
  bool fp64 = false;
  bool int64_atomics = false;
  bool subgroups = false;
  // The widths in which the device runs work-items together (NVIDIA's warp, AMD's wavefront, Intel's
  // sub-group sizes), preferred first; empty when the device does not say.
  std::vector<uint64_t> subgroup_sizes;
  std::string extensions;  // space-separated
  // Values of f32 and f64 the device's arithmetic takes at once (a CPU's SIMD lanes; 1 on GPUs), 0 when unknown.
  unsigned native_vector_width_float = 0;
  unsigned native_vector_width_double = 0;
  // The instruction set where the driver says it ("sm_90" on an NVIDIA GPU of compute capability 9.0), else "".
  std::string architecture;
  std::string tuning_folder;  // where `fugue tune` keeps this device's tables ("" without a cache folder)
  cl::Platform platform;
  cl::Device device;

  std::string id() const { return std::to_string(platform_index) + ":" + std::to_string(device_index); }
  std::string type_name() const { return is_gpu ? "gpu" : is_cpu ? "cpu" : "other"; }
  // What plugins see of the device (fugue_call.device); its strings point into this object.
  fugue_device_desc description() const;
};

// The folder of `info`'s tuning tables: the cache folder's tuning/<device name, driver version, compute units>;
// "" when there is no cache folder.
std::string tuning_folder_for(const DeviceInfo& info);

// Every device of every platform. Throws DeviceError when there is no OpenCL platform at all.
std::vector<DeviceInfo> list_devices();

// Picks a device. `spec`: "" (default: the first GPU, else the first device), "P:D", "gpu", "cpu",
// or a case-insensitive substring of the device or platform name. Throws UserError naming the
// choices when nothing matches.
const DeviceInfo& select_device(const std::vector<DeviceInfo>& devices, const std::string& spec);

// Several devices: "P:D,P:D" (each entry as select_device takes it, none twice), "gpu:all", "cpu:all"
// or "all"; any other spec selects one device as select_device does.
std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, const std::string& spec);

// The spec to use: --device if given, else $FUGUE_DEVICE, else "".
std::string device_spec(const std::string& option);

// A selected device with its context and an in-order profiling queue.
struct Device {
  DeviceInfo info;
  cl::Context context;
  cl::CommandQueue queue;

  explicit Device(const DeviceInfo& info);
};

// "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code.
std::string cl_error_name(cl_int code);
// DeviceError text for a failed OpenCL call, with advice for the common codes.
std::string cl_error_message(const std::string& what, cl_int code);

}  // namespace fugue
