// coordinates.h: a sparse matrix as its entries in row-major order (row, then column), the form every
// layout is built from and turned back into: Matrix Market files, the references, the conversions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fugue::sparse {

// The most rows or columns a matrix read from a file may have: every layout holds arrays of rows
// (row_ptr, ell's columns) with i32 extents.
constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;

struct Coordinates {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> row, col;  // one per entry, sorted by (row, col), no position twice
  std::vector<double> value;
  // Where the entries came from, for messages once they are read (a value the declared dtype cannot
  // hold): per entry its place in the source (a line, an element; kept in step by sort_unique),
  // `place_name` naming one ("line 12"), and the source's first index (Matrix Market's 1, NumPy's 0).
  // No places for generated matrices.
  std::vector<int64_t> place;
  std::function<std::string(int64_t)> place_name;
  int64_t base = 1;

  int64_t entries() const { return static_cast<int64_t>(value.size()); }
  void add(int64_t r, int64_t c, double v) {
    row.push_back(r);
    col.push_back(c);
    value.push_back(v);
  }
  // Entries per row (`rows` of them).
  std::vector<int64_t> row_lengths() const;
  // Whether the entries are in (row, col) order with no position twice, as sort_unique leaves them.
  bool ordered() const;
  // The entries' indices in (row, col) order, those at one position in the order given (a stable sort).
  // Every row must be in [0, rows), as the sources check before they add an entry.
  std::vector<int64_t> row_major_order() const;
  // Sorts by (row, col); a position given twice throws InvalidArgument naming both entries by
  // `where(k)` (k: the entry's index before sorting: "line 12") and the position counted from `base`
  // (Matrix Market's 1, NumPy's 0).
  void sort_unique(const std::function<std::string(int64_t)>& where, int64_t base = 1);
};

}  // namespace fugue::sparse
