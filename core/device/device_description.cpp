#include "device/device_description.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "errors.h"

namespace fugue {

namespace {

constexpr int kFormatVersion = 1;

}  // namespace

nlohmann::ordered_json describe_device(const DeviceInfo& d) {
  return {{"fugue_device", kFormatVersion},
          {"name", d.name},
          {"vendor", d.vendor},
          {"type", d.type_name()},
          {"platform", d.platform_name},
          {"platform_version", d.platform_version},
          {"driver_version", d.driver_version},
          {"device_version", d.device_version},
          {"compute_units", d.compute_units},
          {"max_work_group_size", d.max_work_group_size},
          {"global_memory", d.global_memory},
          {"max_allocation", d.max_allocation},
          {"local_memory", d.local_memory},
          {"fp64", d.fp64},
          {"int64_atomics", d.int64_atomics},
          {"subgroups", d.subgroups},
          {"subgroup_sizes", d.subgroup_sizes},
          {"native_vector_width_float", d.native_vector_width_float},
          {"native_vector_width_double", d.native_vector_width_double},
          {"architecture", d.architecture},
          {"extensions", d.extensions}};
}

DeviceInfo read_device_description(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw UserError(file.string() + ": not a device description file (" +
                    (std::filesystem::exists(file, ec) ? "not a regular file" : "no such file") +
                    "); `fugue devices --json FILE` writes one");
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw UserError(file.string() + ": cannot be read");
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  const std::string where = file.string() + ":";
  if (!doc.is_object()) throw UserError(where + " expected a device description (a JSON object from `fugue devices --json`)");
  const std::set<std::string> keys = {"fugue_device", "name", "vendor", "type", "platform", "platform_version",
                                      "driver_version", "device_version", "compute_units", "max_work_group_size",
                                      "global_memory", "max_allocation", "local_memory", "fp64", "int64_atomics",
                                      "subgroups", "extensions"};
  // Asked later than the first format: descriptions written before may lack them.
  const std::set<std::string> optional_keys = {"subgroup_sizes", "native_vector_width_float", "native_vector_width_double", "architecture"};
  for (const auto& [key, value] : doc.items())
    if (!keys.count(key) && !optional_keys.count(key)) throw UserError(where + "/" + key + ": unknown key");
  for (const auto& key : keys)
    if (!doc.contains(key)) throw UserError(where + "/" + key + ": missing");
  auto text_of = [&](const char* key) {
    if (!doc[key].is_string()) throw UserError(where + "/" + key + ": expected a string, found " + doc[key].dump());
    return doc[key].get<std::string>();
  };
  auto count_of = [&](const char* key, uint64_t low, uint64_t high) {
    const auto& v = doc[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() < low || v.get<uint64_t>() > high)
      throw UserError(where + "/" + key + ": expected an integer from " + std::to_string(low) + " to " +
                      std::to_string(high) + ", found " + v.dump());
    return v.get<uint64_t>();
  };
  auto flag_of = [&](const char* key) {
    if (!doc[key].is_boolean()) throw UserError(where + "/" + key + ": expected true or false, found " + doc[key].dump());
    return doc[key].get<bool>();
  };
  if (!doc["fugue_device"].is_number_integer() || doc["fugue_device"].get<int64_t>() != kFormatVersion)
    throw UserError(where + "/fugue_device: expected " + std::to_string(kFormatVersion) + " (this Fugue's description format), found " +
                    doc["fugue_device"].dump());
  DeviceInfo d;
  d.platform_index = d.device_index = -1;  // not an OpenCL device of this machine
  d.name = text_of("name");
  d.vendor = text_of("vendor");
  const std::string type = text_of("type");
  if (type != "gpu" && type != "cpu" && type != "other")
    throw UserError(where + "/type: expected \"gpu\", \"cpu\" or \"other\", found \"" + type + "\"");
  d.is_gpu = type == "gpu";
  d.is_cpu = type == "cpu";
  d.platform_name = text_of("platform");
  d.platform_version = text_of("platform_version");
  d.driver_version = text_of("driver_version");
  d.device_version = text_of("device_version");
  d.compute_units = static_cast<unsigned>(count_of("compute_units", 1, 1u << 20));
  d.max_work_group_size = static_cast<size_t>(count_of("max_work_group_size", 1, 1u << 20));
  const uint64_t most = std::numeric_limits<int64_t>::max();
  d.global_memory = count_of("global_memory", 1, most);
  d.max_allocation = count_of("max_allocation", 1, most);
  d.local_memory = count_of("local_memory", 0, most);
  if (d.max_allocation > d.global_memory)
    throw UserError(where + "/max_allocation: " + std::to_string(d.max_allocation) + " exceeds global_memory " +
                    std::to_string(d.global_memory));
  d.fp64 = flag_of("fp64");
  d.int64_atomics = flag_of("int64_atomics");
  d.subgroups = flag_of("subgroups");
  d.extensions = text_of("extensions");
  if (doc.contains("subgroup_sizes")) {  // optional: descriptions written before it was asked
    const auto& sizes = doc["subgroup_sizes"];
    if (!sizes.is_array() || sizes.size() > 16)
      throw UserError(where + "/subgroup_sizes: expected a list of at most 16 widths, found " + sizes.dump());
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!sizes[i].is_number_unsigned() || sizes[i].get<uint64_t>() < 1 || sizes[i].get<uint64_t>() > 1024)
        throw UserError(where + "/subgroup_sizes/" + std::to_string(i) + ": expected an integer from 1 to 1024, found " +
                        sizes[i].dump());
      d.subgroup_sizes.push_back(sizes[i].get<uint64_t>());
    }
  }
  // 0 where not given: unknown.
  for (const char* key : {"native_vector_width_float", "native_vector_width_double"}) {
    if (!doc.contains(key)) continue;
    const auto& width = doc[key];
    if (!width.is_number_unsigned() || width.get<uint64_t>() > 64 || (width.get<uint64_t>() & (width.get<uint64_t>() - 1)))
      throw UserError(where + "/" + key + ": expected 0 (unknown) or a power of two up to 64, found " + width.dump());
    (std::string(key) == "native_vector_width_float" ? d.native_vector_width_float : d.native_vector_width_double) =
        static_cast<unsigned>(width.get<uint64_t>());
  }
  if (doc.contains("architecture")) {  // optional: "" (unknown) where not given
    d.architecture = text_of("architecture");
    const bool plain = std::all_of(d.architecture.begin(), d.architecture.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (d.architecture.size() > 32 || !plain)
      throw UserError(where + "/architecture: expected an instruction set's name such as \"sm_90\" (letters, digits and _), or \"\", found " +
                      doc["architecture"].dump());
  }
  d.tuning_folder = tuning_folder_for(d);  // the described device's tables, where this machine has them
  return d;
}

}  // namespace fugue
