#include "device/device_manager.h"

#include <cctype>
#include <filesystem>

#include "io/cache_folder.h"

#include "fugue/cl_errors.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "errors.h"

namespace fugue {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  return s;
}
std::string choices(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const auto& d : devices) out += (out.empty() ? "" : "; ") + d.id() + " " + d.name + " (" + d.type_name() + ")";
  return out;
}
// The device's sub-group widths from the vendors' queries (OpenCL itself has none without a kernel).
template <class Has>
std::vector<uint64_t> subgroup_sizes_of(const cl::Device& device, Has has) {
  constexpr cl_device_info kWarpSizeNV = 0x4003, kWavefrontWidthAMD = 0x4043, kSubGroupSizesIntel = 0x4108;
  try {
    if (has("cl_nv_device_attribute_query")) {
      cl_uint width = 0;
      if (clGetDeviceInfo(device(), kWarpSizeNV, sizeof width, &width, nullptr) == CL_SUCCESS && width > 0) return {width};
    }
    if (has("cl_amd_device_attribute_query")) {
      cl_uint width = 0;
      if (clGetDeviceInfo(device(), kWavefrontWidthAMD, sizeof width, &width, nullptr) == CL_SUCCESS && width > 0) return {width};
    }
    if (has("cl_intel_required_subgroup_size")) {
      size_t bytes = 0;
      if (clGetDeviceInfo(device(), kSubGroupSizesIntel, 0, nullptr, &bytes) == CL_SUCCESS && bytes >= sizeof(size_t)) {
        std::vector<size_t> sizes(bytes / sizeof(size_t));
        if (clGetDeviceInfo(device(), kSubGroupSizesIntel, bytes, sizes.data(), nullptr) == CL_SUCCESS)
          return std::vector<uint64_t>(sizes.begin(), sizes.end());
      }
    }
  } catch (const std::exception&) {
  }
  return {};
}

// The instruction set (fugue_device_desc.architecture): "sm_XY" from an NVIDIA driver's compute
// capability, "" where the driver does not say.
template <typename Has>
std::string architecture_of(const cl::Device& device, Has has) {
  constexpr cl_device_info kComputeCapabilityMajorNV = 0x4000, kComputeCapabilityMinorNV = 0x4001;
  if (!has("cl_nv_device_attribute_query")) return "";
  cl_uint major = 0, minor = 0;
  if (clGetDeviceInfo(device(), kComputeCapabilityMajorNV, sizeof major, &major, nullptr) != CL_SUCCESS ||
      clGetDeviceInfo(device(), kComputeCapabilityMinorNV, sizeof minor, &minor, nullptr) != CL_SUCCESS || major == 0 || minor > 9)
    return "";
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

}  // namespace

std::string cl_error_name(cl_int code) {
  const std::string name = cl_error_code_name(code);
  if (name == "unknown OpenCL error") return "OpenCL error " + std::to_string(code);
  return name + " (" + std::to_string(code) + ")";
}

std::string cl_error_message(const std::string& what, cl_int code) {
  std::string msg = what + " failed: " + cl_error_name(code);
  if (code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
      code == CL_OUT_OF_HOST_MEMORY || code == CL_INVALID_BUFFER_SIZE)
    msg += ": the device ran out of memory; use smaller arrays or a device with more memory";
  else if (code == CL_PLATFORM_NOT_FOUND_KHR)
    msg += ": no OpenCL platform is installed; install one (e.g. apt-get install pocl-opencl-icd)";
  return msg;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<cl::Platform> platforms;
  cl_int err = CL_SUCCESS;
  try {
    err = cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    err = e.err();
  }
  if (err != CL_SUCCESS || platforms.empty())
    throw DeviceError("no OpenCL platform found: install an OpenCL driver (e.g. apt-get install "
                      "pocl-opencl-icd for the CPU) and check /etc/OpenCL/vendors");
  std::vector<DeviceInfo> out;
  for (size_t p = 0; p < platforms.size(); ++p) {
    std::vector<cl::Device> devices;
    try {
      platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;  // a platform without devices
    }
    for (size_t d = 0; d < devices.size(); ++d) {
      DeviceInfo info;
      info.platform_index = static_cast<int>(p);
      info.device_index = static_cast<int>(d);
      info.platform = platforms[p];
      info.device = devices[d];
      info.platform_name = trim(platforms[p].getInfo<CL_PLATFORM_NAME>());
      info.platform_version = trim(platforms[p].getInfo<CL_PLATFORM_VERSION>());
      info.name = trim(devices[d].getInfo<CL_DEVICE_NAME>());
      info.vendor = trim(devices[d].getInfo<CL_DEVICE_VENDOR>());
      info.driver_version = trim(devices[d].getInfo<CL_DRIVER_VERSION>());
      info.device_version = trim(devices[d].getInfo<CL_DEVICE_VERSION>());
      cl_device_type type = devices[d].getInfo<CL_DEVICE_TYPE>();
      info.is_gpu = type & CL_DEVICE_TYPE_GPU;
      info.is_cpu = type & CL_DEVICE_TYPE_CPU;
      info.compute_units = devices[d].getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
      info.max_work_group_size = devices[d].getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
      info.global_memory = devices[d].getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
      info.max_allocation = devices[d].getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
      info.local_memory = devices[d].getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
      info.fp64 = devices[d].getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>() != 0;
      info.extensions = devices[d].getInfo<CL_DEVICE_EXTENSIONS>();
      info.native_vector_width_float = devices[d].getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>();
      info.native_vector_width_double = info.fp64 ? devices[d].getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE>() : 0;
      const auto has = [&](const char* extension) {
        return (" " + info.extensions + " ").find(std::string(" ") + extension + " ") != std::string::npos;
      };
      info.int64_atomics = has("cl_khr_int64_base_atomics");
      info.subgroups = has("cl_khr_subgroups") || has("cl_intel_subgroups");
      info.subgroup_sizes = subgroup_sizes_of(devices[d], has);
      info.architecture = architecture_of(devices[d], has);
      info.tuning_folder = tuning_folder_for(info);
      out.push_back(std::move(info));
    }
  }
  if (out.empty()) throw DeviceError("OpenCL platforms were found, but no devices");
  return out;
}

const DeviceInfo& select_device(const std::vector<DeviceInfo>& devices, const std::string& spec_in) {
  if (devices.empty()) throw DeviceError("no OpenCL device available");
  std::string spec = lower(trim(spec_in));
  if (spec.empty()) {
    for (const auto& d : devices)
      if (d.is_gpu) return d;
    return devices.front();
  }
  if (spec == "gpu" || spec == "cpu") {
    for (const auto& d : devices)
      if ((spec == "gpu" && d.is_gpu) || (spec == "cpu" && d.is_cpu)) return d;
    throw UserError("device '" + spec_in + "': no " + spec + " device; devices: " + choices(devices));
  }
  auto colon = spec.find(':');
  if (colon != std::string::npos && colon > 0 &&
      std::all_of(spec.begin(), spec.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ':'; }) &&
      spec.find(':', colon + 1) == std::string::npos && colon + 1 < spec.size()) {
    // Indices too long for an int match no device.
    auto index = [](const std::string& digits) { return digits.size() > 6 ? -1 : std::stoi(digits); };
    int p = index(spec.substr(0, colon)), d = index(spec.substr(colon + 1));
    for (const auto& info : devices)
      if (info.platform_index == p && info.device_index == d) return info;
    throw UserError("device '" + spec_in + "': no device " + spec + "; devices: " + choices(devices));
  }
  for (const auto& d : devices)
    if (lower(d.name).find(spec) != std::string::npos) return d;
  for (const auto& d : devices)
    if (lower(d.platform_name).find(spec) != std::string::npos) return d;
  throw UserError("device '" + spec_in + "' matches no device (give P:D, gpu, cpu or part of a name); devices: " +
                  choices(devices));
}

std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, const std::string& spec_in) {
  const std::string spec = lower(trim(spec_in));
  if (spec == "gpu:all" || spec == "cpu:all" || spec == "all") {
    std::vector<DeviceInfo> out;
    for (const auto& d : devices)
      if (spec == "all" || (spec == "gpu:all" && d.is_gpu) || (spec == "cpu:all" && d.is_cpu)) out.push_back(d);
    if (out.empty())
      throw UserError("device '" + spec_in + "': no " + spec.substr(0, 3) + " device; devices: " + choices(devices));
    return out;
  }
  if (spec.find(',') == std::string::npos) return {select_device(devices, spec_in)};
  std::vector<DeviceInfo> out;
  size_t start = 0;
  while (start <= spec_in.size()) {
    const size_t comma = spec_in.find(',', start);
    const std::string one = spec_in.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (trim(one).empty()) throw UserError("device '" + spec_in + "': an empty entry in the list (give P:D,P:D)");
    const DeviceInfo& d = select_device(devices, one);
    for (const auto& chosen : out)
      if (chosen.id() == d.id())
        throw UserError("device '" + spec_in + "': " + d.id() + " (" + d.name + ") is named twice");
    out.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string device_spec(const std::string& option) {
  if (!option.empty()) return option;
  const char* env = std::getenv("FUGUE_DEVICE");
  return env ? env : "";
}

Device::Device(const DeviceInfo& info_) : info(info_) {
  try {
    context = cl::Context(info.device);
    queue = cl::CommandQueue(context, info.device, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message(std::string("opening device ") + info.name + " (" + e.what() + ")", e.err()));
  }
}

std::string tuning_folder_for(const DeviceInfo& info) {
  const std::filesystem::path cache = cache_folder();
  if (cache.empty()) return {};
  // The device's name, driver and compute units: one machine's 2-core CPU and another's 64-core one
  // under the same driver keep tables of their own.
  std::string key = info.name + " " + info.driver_version + " " + std::to_string(info.compute_units) + "cu";
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return (cache / "tuning" / key).string();
}

fugue_device_desc DeviceInfo::description() const {
  fugue_device_desc d{};
  d.struct_size = sizeof d;
  d.type = is_gpu ? FUGUE_DEVICE_GPU : is_cpu ? FUGUE_DEVICE_CPU : FUGUE_DEVICE_OTHER;
  d.name = name.c_str();
  d.vendor = vendor.c_str();
  d.driver_version = driver_version.c_str();
  d.compute_units = compute_units;
  d.features = (fp64 ? FUGUE_DEVICE_FP64 : 0u) | (int64_atomics ? FUGUE_DEVICE_INT64_ATOMICS : 0u) |
               (subgroups ? FUGUE_DEVICE_SUBGROUPS : 0u);
  d.max_work_group_size = max_work_group_size;
  d.local_mem_bytes = local_memory;
  d.global_mem_bytes = global_memory;
  d.max_alloc_bytes = max_allocation;
  d.num_subgroup_sizes = static_cast<uint32_t>(subgroup_sizes.size());
  d.subgroup_sizes = subgroup_sizes.empty() ? nullptr : subgroup_sizes.data();
  d.extensions = extensions.c_str();
  d.tuning_folder = tuning_folder.c_str();
  d.native_vector_width_float = native_vector_width_float;
  d.native_vector_width_double = native_vector_width_double;
  d.architecture = architecture.c_str();
  return d;
}

}  // namespace fugue
