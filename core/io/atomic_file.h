// atomic_file.h: write a file so that readers see either the old contents or the complete new ones.
#pragma once
#include <filesystem>
#include <functional>
#include <ostream>

namespace fugue {

// Calls `write` on a binary stream to a temporary file in the same folder as `path` (so the rename
// stays on one file system), flushes it, and renames it over `path`. If `write` throws, the
// exception is rethrown; if the stream fails or the rename fails, UserError("cannot write <path>:
// <reason>") is thrown. Either way the temporary file is removed and an existing file at `path`
// is left unchanged. Missing parent folders are not created.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

// Throws the UserError write_file_atomically would throw for `path` before writing anything: the
// path names a folder, or no file can be created in its folder (missing, not writable, read-only).
// Tries by creating and removing a temporary file there; `path` itself is not touched.
void check_file_writable(const std::filesystem::path& path);

}  // namespace fugue
