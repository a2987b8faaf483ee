// The sparse plugin's entries (plugins/sparse/coordinates.h), without a device: the (row, col) order
// that every layout is built from, by counting rows or by comparison, and its checks; the host memory
// a matrix needs (host_memory.h), checked before it is made.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <tuple>

#include "coordinates.h"
#include "host_memory.h"
#include "test_support.h"

namespace fugue::sparse {
namespace {

// `entries` random positions in rows x cols, some of them given twice, in no order.
Coordinates scattered(int64_t rows, int64_t cols, int64_t entries, uint64_t seed) {
  std::mt19937_64 random(seed);
  Coordinates m;
  m.rows = rows, m.cols = cols;
  for (int64_t e = 0; e < entries; ++e) {
    // A few rows hold most entries (a long row's columns come in any order), the others one or two.
    const int64_t r = random() % 4 == 0 ? static_cast<int64_t>(random() % static_cast<uint64_t>(std::min<int64_t>(rows, 3))) : static_cast<int64_t>(random() % static_cast<uint64_t>(rows));
    m.add(r, static_cast<int64_t>(random() % static_cast<uint64_t>(cols)), static_cast<double>(e));
  }
  return m;
}

std::vector<int64_t> compared_order(const Coordinates& m) {
  std::vector<int64_t> order(m.value.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return m.row[a] != m.row[b] ? m.row[a] < m.row[b] : m.col[a] < m.col[b]; });
  return order;
}

TEST(Coordinates, RowMajorOrderIsAStableSortByRowAndColumn) {
  const uint64_t seed = fugue::test::fresh_seed();
  // Rows counted (few rows beside the entries) and rows compared (far more rows than entries).
  for (const auto& [rows, cols, entries] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {50, 40, 3000}, {1000, 7, 500}, {int64_t{1} << 40, 9, 200}, {3, 3, 0}, {1, 1, 1}}) {
    const Coordinates m = scattered(std::min<int64_t>(rows, int64_t{1} << 40), cols, entries, seed);
    EXPECT_EQ(m.row_major_order(), compared_order(m)) << rows << " x " << cols << ", " << entries << " entries, seed " << seed;
  }
}

TEST(Coordinates, OrderedMeansSortedWithNoPositionTwice) {
  Coordinates m;
  m.rows = 3, m.cols = 3;
  EXPECT_TRUE(m.ordered());  // no entries
  m.add(0, 1, 1), m.add(0, 2, 1), m.add(2, 0, 1);
  EXPECT_TRUE(m.ordered());
  m.add(2, 0, 5);  // the same position again
  EXPECT_FALSE(m.ordered());
  Coordinates back;
  back.rows = 3, back.cols = 3;
  back.add(1, 0, 1), back.add(0, 2, 1);
  EXPECT_FALSE(back.ordered());
  Coordinates columns_back;
  columns_back.rows = 1, columns_back.cols = 3;
  columns_back.add(0, 2, 1), columns_back.add(0, 1, 1);
  EXPECT_FALSE(columns_back.ordered());
}

TEST(Coordinates, SortUniqueSortsAndNamesAPositionGivenTwice) {
  Coordinates m = scattered(30, 30, 400, 7);
  // Keep the first of each position, as a source that gives no position twice.
  const std::vector<int64_t> order = compared_order(m);
  Coordinates distinct;
  distinct.rows = distinct.cols = 30;
  for (size_t k = 0; k < order.size(); ++k)
    if (k == 0 || m.row[order[k]] != m.row[order[k - 1]] || m.col[order[k]] != m.col[order[k - 1]])
      distinct.add(m.row[order[k]], m.col[order[k]], m.value[order[k]]);
  std::reverse(distinct.row.begin(), distinct.row.end());
  std::reverse(distinct.col.begin(), distinct.col.end());
  std::reverse(distinct.value.begin(), distinct.value.end());
  Coordinates sorted = distinct;
  sorted.sort_unique([](int64_t k) { return "entry " + std::to_string(k); }, 0);
  EXPECT_TRUE(sorted.ordered());
  // Each value stays with its position.
  std::vector<std::tuple<int64_t, int64_t, double>> want, got;
  for (int64_t e = 0; e < distinct.entries(); ++e) want.push_back({distinct.row[e], distinct.col[e], distinct.value[e]});
  for (int64_t e = 0; e < sorted.entries(); ++e) got.push_back({sorted.row[e], sorted.col[e], sorted.value[e]});
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);

  Coordinates twice;
  twice.rows = twice.cols = 4;
  twice.add(3, 1, 1), twice.add(0, 2, 2), twice.add(3, 1, 3);
  try {
    twice.sort_unique([](int64_t k) { return "line " + std::to_string(k + 10); });
    FAIL() << "a position given twice was accepted";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "line 12: entry (4, 2) is given twice (also at line 10)");
  }
}

// Entries, rows and columns each cost their bytes; counts from a file saturate instead of wrapping;
// a matrix beyond the memory is refused with the place given and both sizes.
TEST(HostMemory, AMatrixBeyondTheMemoryIsRefusedWithItsPlace) {
  EXPECT_EQ(matrix_host_bytes(10, 20, 5), 5u * 64 + 10u * 48 + 20u * 8);
  EXPECT_EQ(matrix_host_bytes(-1, 0, 0), 0u);
  EXPECT_EQ(matrix_host_bytes(INT64_MAX, INT64_MAX, INT64_MAX), UINT64_MAX);
  EXPECT_NO_THROW(check_host_room(100, "m", 100));
  try {
    check_host_room(120'000'000'000, "line 2: a matrix", 24'000'000'000);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "line 2: a matrix needs about 120 GB of host memory; this machine has 24 GB (its memory, or its container's limit)");
  }
  EXPECT_EQ(bytes_text(999), "999 bytes");
  EXPECT_EQ(bytes_text(1500), "1.5 KB");
  EXPECT_EQ(bytes_text(UINT64_MAX), "18 EB");
  EXPECT_GT(host_memory_bytes(), uint64_t{1} << 26);  // any machine that runs the tests has more than 64 MB
}

}  // namespace
}  // namespace fugue::sparse
