// host_memory.h: the host memory a matrix takes while it is read, laid out and stored, checked against
// what this machine (or its container) has before anything is allocated for it — a size from a file
// or a generator's parameters must be refused with its place, not end the process by running out.
#pragma once

#include <cstdint>
#include <string>

namespace fugue::sparse {

// This machine's memory in bytes: the physical memory, or the container's limit (cgroup v2 memory.max,
// v1 memory.limit_in_bytes) where that is lower.
uint64_t host_memory_bytes();

// Bytes a rows x cols matrix of `entries` entries takes at the peak of reading and laying it out: the
// entries with their sorting order, the per-row tables (lengths, pointers, permutations, the y of a
// product), the per-column x. An estimate from above; saturates instead of overflowing.
uint64_t matrix_host_bytes(int64_t rows, int64_t cols, int64_t entries);

// Throws InvalidArgument ("<what> needs about 103 GB of host memory; this machine has 24 GB ...")
// where `needed` is more than `memory` (host_memory_bytes() by default).
void check_host_room(uint64_t needed, const std::string& what, uint64_t memory = host_memory_bytes());

// "103 GB", "1.5 MB": a byte count for messages.
std::string bytes_text(uint64_t bytes);

}  // namespace fugue::sparse
