// device_description.h: what the planner needs to know of a device, as a JSON file: `fugue devices
// --json` saves one, and `fugue explain --device-file` plans for it without OpenCL (a laptop can see
// the plan an H100 would run). devices/ holds the descriptions that ship with the project.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "device/device_manager.h"

namespace fugue {

// The description of `device` (every DeviceInfo field but the OpenCL handles), keys in a fixed order.
nlohmann::ordered_json describe_device(const DeviceInfo& device);

// A device read back from its description: no OpenCL handles, so it plans and generates but cannot
// run. Throws UserError naming the file and the JSON pointer of whatever is missing or malformed.
DeviceInfo read_device_description(const std::filesystem::path& file);

}  // namespace fugue
