// output_files.h: writes a program's outputs into a folder, each with the format the loader chose
// for it (io/file_format.h).
// Every value is fetched before the first file is written, and each file is written atomically,
// so a failed run leaves no partial output.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "program/host_array.h"
#include "program/program.h"

namespace fugue {

void write_output_files(const Program& program, const std::filesystem::path& folder,
                        const std::function<HostArray(const std::string& symbol)>& value_of);

}  // namespace fugue
