// output_files.h: writes a program's outputs (.npy; .png/.pgm for 2-D f32 images; .flo, or a colour .png picture,
// for [H, W, 2] flow) into a folder.
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
