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

bool Coordinates::ordered() const {
  for (size_t k = 1; k < row.size(); ++k)
    if (row[k - 1] > row[k] || (row[k - 1] == row[k] && col[k - 1] >= col[k])) return false;
  return true;
}

std::vector<int64_t> Coordinates::row_major_order() const {
  const size_t n = value.size();
  std::vector<int64_t> order(n);
  auto by_column = [&](int64_t a, int64_t b) { return col[a] < col[b]; };
  // Far more rows than entries: a comparison sort, rather than counts for rows that hold nothing.
  if (rows < 0 || static_cast<uint64_t>(rows) > 4 * static_cast<uint64_t>(n) + 1024) {
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] != row[b] ? row[a] < row[b] : col[a] < col[b]; });
    return order;
  }
  // Counted by rows (each row's entries in the order given), then each row's columns sorted where they
  // are not in order already: linear in the entries for the rows a source gives in order.
  std::vector<int64_t> begin(static_cast<size_t>(rows) + 1, 0);
  for (int64_t r : row) ++begin[static_cast<size_t>(r) + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<int64_t> next(begin.begin(), begin.end() - 1);
  for (size_t k = 0; k < n; ++k) order[static_cast<size_t>(next[static_cast<size_t>(row[k])]++)] = static_cast<int64_t>(k);
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    const auto first = order.begin() + begin[r], last = order.begin() + begin[r + 1];
    if (!std::is_sorted(first, last, by_column)) std::stable_sort(first, last, by_column);
  }
  return order;
}

void Coordinates::sort_unique(const std::function<std::string(int64_t)>& where, int64_t base) {
  if (ordered()) return;  // most sources give their entries in order: one pass finds out
  const std::vector<int64_t> order = row_major_order();
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
  if (place.size() == value.size()) permute(place);
}

}  // namespace fugue::sparse
