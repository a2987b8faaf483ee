#include "coordinates.h"

#include <algorithm>
#include <numeric>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::vector<int64_t> Coordinates::row_lengths() const {
  std::vector<int64_t> lengths(static_cast<size_t>(rows), 0);
  for (int64_t r : row) ++lengths[static_cast<size_t>(r)];
  return lengths;
}

void Coordinates::sort_unique(const std::function<std::string(int64_t)>& where, int64_t base) {
  std::vector<int64_t> order(value.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return row[a] != row[b] ? row[a] < row[b] : col[a] < col[b]; });
  for (size_t k = 1; k < order.size(); ++k)
    if (row[order[k]] == row[order[k - 1]] && col[order[k]] == col[order[k - 1]])
      throw sdk::InvalidArgument(where(std::max(order[k], order[k - 1])) + ": entry (" + std::to_string(row[order[k]] + base) + ", " +
                                 std::to_string(col[order[k]] + base) + ") is given twice (also at " +
                                 where(std::min(order[k], order[k - 1])) + ")");
  auto permute = [&](auto& v) {
    const auto copy = v;
    for (size_t k = 0; k < order.size(); ++k) v[k] = copy[static_cast<size_t>(order[k])];
  };
  permute(row);
  permute(col);
  permute(value);
}

}  // namespace fugue::sparse
