// zip_archive.h: the ZIP container NumPy's .npz files are (numpy.savez stores its members,
// numpy.savez_compressed and scipy.sparse.save_npz deflate them; ZIP64 past 4 GiB). Reading takes
// stored and deflated members, checks each one's CRC-32 and refuses encrypted ones; writing stores.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fugue::sparse {

class ZipArchive {
 public:
  // Reads the file at `path` and its central directory; InvalidArgument (its message without the path,
  // which the caller names) when it is not a ZIP archive NumPy could have written.
  explicit ZipArchive(const std::string& path);
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  // The member `name`, uncompressed, its CRC-32 checked; InvalidArgument naming the member when it is
  // damaged (inflated a piece at a time: a size the directory claims is not allocated before the data
  // gives it).
  std::string member(const std::string& name) const;

 private:
  struct Entry {
    uint64_t method = 0, crc = 0, packed = 0, unpacked = 0, data = 0;
  };
  std::string file_;
  std::map<std::string, Entry> entries_;
};

// Writes `members` (name, bytes) stored, in the order given, as the archive `path`.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace fugue::sparse
