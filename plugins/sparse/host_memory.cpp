#include "host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

namespace {

// A cgroup's limit file: a number of bytes, or "max" (no limit) / absent (0 here: no limit).
uint64_t limit_in(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return 0;
  try {
    return std::stoull(word);
  } catch (const std::exception&) {
    return 0;
  }
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t saturating_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// Per entry: row, column and value (24 bytes), the reader's note of its line, the sorting order and
// a copy of the kept entries while duplicates are dropped (40 more). Per row: the lengths, a pointer
// array in i64, a permutation (sell), the row's slot in y and one on the device side of a CPU device
// (48). Per column: x (8).
constexpr uint64_t kPerEntry = 64, kPerRow = 48, kPerColumn = 8;

}  // namespace

uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && page > 0 ? saturating_mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page)) : UINT64_MAX;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    if (const uint64_t limit = limit_in(path); limit > 0) memory = std::min(memory, limit);
  return memory;
}

uint64_t matrix_host_bytes(int64_t rows, int64_t cols, int64_t entries) {
  const auto count = [](int64_t n) { return static_cast<uint64_t>(std::max<int64_t>(n, 0)); };
  return saturating_add(saturating_add(saturating_mul(count(entries), kPerEntry), saturating_mul(count(rows), kPerRow)),
                        saturating_mul(count(cols), kPerColumn));
}

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1000 && u + 1 < std::size(units)) v /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

void check_host_room(uint64_t needed, const std::string& what, uint64_t memory) {
  if (needed <= memory) return;
  throw sdk::InvalidArgument(what + " needs about " + bytes_text(needed) + " of host memory; this machine has " + bytes_text(memory) +
                             " (its memory, or its container's limit)");
}

}  // namespace fugue::sparse
