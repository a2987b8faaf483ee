// zip_archive.h: the ZIP container NumPy's .npz files are (numpy.savez stores its members,
// numpy.savez_compressed and scipy.sparse.save_npz deflate them; ZIP64 past 4 GiB). Reading takes
// stored and deflated members, checks each one's CRC-32 and refuses encrypted ones; writing stores.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fugue::sparse {

// Every member of the archive at `path`, by name, uncompressed. InvalidArgument naming the file (and the
// member) when it is not a ZIP archive NumPy could have written, or a member is damaged.
std::map<std::string, std::string> read_zip(const std::string& path);

// Writes `members` (name, bytes) stored, in the order given, as the archive `path`.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace fugue::sparse
