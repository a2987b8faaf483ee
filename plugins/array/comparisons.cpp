// comparisons.cpp: the comparisons, one row each of a C comparison operator.
#include "comparisons.h"

#include "elementwise.h"

namespace fugue::array {

namespace {

// out = (a op b) as u8 1 or 0; like C, every comparison with a NaN is false except !=.
MapSpec comparison(std::string name, std::string op, std::string doc) {
  Formula formula{[op](fugue_dtype, const std::string& x, const std::string& y) {
                    return "(" + x + " " + op + " " + y + ")";
                  },
                  [op](ref::Real x, ref::Real y) -> ref::Real { return ref::compare(x, op, y); },
                  [op](int64_t x, int64_t y) -> int64_t { return ref::compare(x, op, y); }};
  return binary_map(std::move(name), std::move(doc), kAllDtypes, std::move(formula))
      .with_result(FUGUE_DTYPE_U8);
}

}  // namespace

std::vector<std::unique_ptr<sdk::Operation>> comparison_operations() {
  return map_operations({
      comparison("lt", "<", "1 where a < b, else 0"),
      comparison("le", "<=", "1 where a <= b, else 0"),
      comparison("gt", ">", "1 where a > b, else 0"),
      comparison("ge", ">=", "1 where a >= b, else 0"),
      comparison("eq", "==", "1 where a == b, else 0"),
      comparison("ne", "!=", "1 where a != b (or either is NaN), else 0"),
  });
}

}  // namespace fugue::array
