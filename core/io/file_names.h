// file_names.h: what kind of file a path names, by its extension, case-insensitively (".NPY" is ".npy").
#pragma once
#include <filesystem>
#include <string>

namespace fugue {

// ".npy", ".png", ... in lower case; "" when there is none.
std::string lowercase_extension(const std::filesystem::path& path);

}  // namespace fugue
