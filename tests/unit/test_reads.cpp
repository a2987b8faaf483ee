// The reads a chooser kind is told (ABI 2.16): how many times a program's operations read a symbol.
#include <gtest/gtest.h>

#include "load/reads.h"

namespace fugue::load {
namespace {

using nlohmann::json;

int64_t reads(const char* body, const std::string& name = "A") {
  return reads_in(json::parse(body), name, [](const std::string& n) -> std::optional<double> {
    if (n == "iterations") return 25;  // a const
    return std::nullopt;               // a scalar: known only at run time
  });
}

TEST(Reads, StatementsThatTakeTheSymbolCountOnceForEachIterationOfTheirLoops) {
  EXPECT_EQ(reads(R"([{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}])"), 1);
  EXPECT_EQ(reads(R"([{"op": "sparse.spmv", "out": ["y"], "in": ["B", "x"]}])"), 0);
  EXPECT_EQ(reads(R"([{"op": "array.add", "out": ["y"], "in": ["A", "A"]}])"), 2);
  EXPECT_EQ(reads(R"([{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
                      {"for": "i", "count": 100, "body": [
                        {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
                        {"for": "j", "count": "iterations", "body": [{"op": "sparse.spmm", "out": ["Y"], "in": ["A", "X"]}]}]}])"),
            1 + 100 * (1 + 25));
}

TEST(Reads, ABranchCountsItsLargerSideAndABreakIsIgnored) {
  EXPECT_EQ(reads(R"([{"for": "i", "count": 10, "body": [
                        {"if": {"lt": ["r", 1e-6]}, "then": [{"break": true}],
                         "else": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
                                  {"op": "sparse.spmv", "out": ["z"], "in": ["A", "y"]}]}]}])"),
            20);
}

TEST(Reads, ALoopCountedByAScalarMakesTheCountUnknownOnlyWhereItReadsTheSymbol) {
  EXPECT_EQ(reads(R"([{"for": "i", "count": "n", "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}])"), -1);
  EXPECT_EQ(reads(R"([{"for": "i", "count": "n", "body": [{"op": "array.add", "out": ["y"], "in": ["x", "x"]}]},
                      {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}])"),
            1);
  // No iteration: nothing is read, whatever the inner loop's count.
  EXPECT_EQ(reads(R"([{"for": "i", "count": 0, "body": [{"for": "j", "count": "n", "body": [
                        {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}]}])"),
            0);
}

TEST(Reads, CountsSaturateAndStatementsOfUnexpectedShapeCountNothing) {
  EXPECT_EQ(reads(R"([{"for": "i", "count": 1e12, "body": [{"for": "j", "count": 1e12, "body": [
                        {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}]}])"),
            int64_t{1} << 53);
  EXPECT_EQ(reads(R"([7, "text", {"for": "i", "count": -3, "body": [{"op": "x", "in": ["A"]}]}, {"op": "x", "in": "A"}])"), 0);
  EXPECT_EQ(reads(R"({"not": "a list"})"), 0);
}

}  // namespace
}  // namespace fugue::load
