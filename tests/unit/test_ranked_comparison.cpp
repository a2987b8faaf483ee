// The conformance suite's ranked comparison: near ties may swap, nothing else may.
#include <gtest/gtest.h>

#include "ranked_comparison.h"

namespace {

using fugue::HostArray;

HostArray rows(fugue::DType dtype, std::vector<double> values, int64_t count) {
  HostArray a(dtype, {static_cast<int64_t>(values.size()) / count, count});
  for (size_t i = 0; i < values.size(); ++i) a.set(static_cast<int64_t>(i), values[i]);
  return a;
}

const double kTolerance = 1e-4;

}  // namespace

TEST(RankedComparison, NearTiesMaySwapAndTheTailMayChangeButNothingElse) {
  using fugue::conformance::compare_ranked;
  using fugue::DType;
  // Row 0: 1.0, 2.0, 2.00001 (a near tie), 3.0; row 1: 0.5, 0.7, 0.9, 1.1.
  const HostArray value = rows(DType::F64, {1.0, 2.0, 2.00001, 3.0, 0.5, 0.7, 0.9, 1.1}, 4);
  const HostArray index = rows(DType::I64, {4, 7, 2, 9, 1, 2, 3, 5}, 4);
  EXPECT_EQ(compare_ranked(index, index, value, kTolerance), "");
  EXPECT_EQ(compare_ranked(rows(DType::I64, {4, 2, 7, 9, 1, 2, 3, 5}, 4), index, value, kTolerance), "");
  // Swapping candidates that do not tie is an error, naming the element.
  const std::string swapped = compare_ranked(rows(DType::I64, {7, 4, 2, 9, 1, 2, 3, 5}, 4), index, value, kTolerance);
  EXPECT_NE(swapped.find("element 0: 7, expected 4"), std::string::npos) << swapped;
  // A candidate the reference left out may appear only where it ties with the row's last value.
  const HostArray tail_value = rows(DType::F64, {1.0, 2.0, 3.0, 3.00001, 0.5, 0.7, 0.9, 1.1}, 4);
  EXPECT_EQ(compare_ranked(rows(DType::I64, {4, 7, 2, 11, 1, 2, 3, 5}, 4), index, tail_value, kTolerance), "");
  EXPECT_NE(compare_ranked(rows(DType::I64, {4, 7, 11, 9, 1, 2, 3, 5}, 4), index, value, kTolerance), "");
  EXPECT_NE(compare_ranked(rows(DType::I64, {4, 7, 2, 9, 1, 2, 8, 5}, 4), index, value, kTolerance), "");
  // The last place's value ties with itself: any candidate left out may take it (its distance is not
  // in the outputs to check).
  EXPECT_EQ(compare_ranked(rows(DType::I64, {4, 7, 2, 9, 1, 2, 3, 8}, 4), index, value, kTolerance), "");
  // No index twice in a row, even between ties.
  const std::string repeated = compare_ranked(rows(DType::I64, {4, 7, 7, 9, 1, 2, 3, 5}, 4), index, value, kTolerance);
  EXPECT_NE(repeated.find("repeated"), std::string::npos) << repeated;
  EXPECT_NE(compare_ranked(rows(DType::I64, {4, 7, 2, 9}, 4), index, value, kTolerance), "");
}
