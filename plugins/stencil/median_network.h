// median_network.h: comparator networks that select the median of 9 or 25 values exactly, for the
// median filters: a sorting network (Batcher's odd-even merge sort) pruned to the comparators that
// lead to the middle position, so the emitted code is straight-line min/max without branches.
#pragma once
#include <vector>

namespace fugue::stencil {

// Compare-exchange of positions low < high: low gets the smaller value, high the larger. Either
// half may be unneeded further on, and is then not computed.
struct Comparator {
  int low, high;
  bool keep_min, keep_max;
};

// After these comparators, position count / 2 holds the median of `count` values (count odd).
std::vector<Comparator> median_network(int count);

}  // namespace fugue::stencil
