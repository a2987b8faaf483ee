// comparisons.cpp: the comparisons, one row each of a C comparison operator.
#include "comparisons.h"

#include "dtypes.h"
#include "elementwise.h"
#include "opencl_c.h"

namespace fugue::array {

namespace {

// out = (a op b) as u8 1 or 0; like C, every comparison with a NaN is false except !=.
MapSpec comparison(std::string name, std::string op, std::string doc) {
  Formula formula{[op](fugue_dtype, const std::string& x, const std::string& y) {
                    return "(" + x + " " + op + " " + y + ")";
                  },
                  [op](ref::Real x, ref::Real y) -> ref::Real { return ref::compare(x, op, y); },
                  [op](int64_t x, int64_t y) -> int64_t { return ref::compare(x, op, y); }};
  return binary_map(std::move(name), std::move(doc), kRealDtypes, std::move(formula))
      .with_result(FUGUE_DTYPE_U8);
}

// eq and ne also compare complex numbers, part by part: equal when both parts are; complex numbers
// have no order.
MapSpec equality(std::string name, std::string op, std::string doc) {
  MapSpec spec = comparison(std::move(name), op, std::move(doc));
  const bool equal = op == "==";
  const auto real_device = spec.formula.device;
  spec.formula.device = [=](fugue_dtype dtype, const std::string& x, const std::string& y) {
    if (!is_complex(dtype)) return real_device(dtype, x, y);
    return "(" + opencl::real_part(x) + " " + op + " " + opencl::real_part(y) +
           (equal ? " && " : " || ") + opencl::imag_part(x) + " " + op + " " +
           opencl::imag_part(y) + ")";
  };
  spec.formula.complex = [equal](ref::Complex x, ref::Complex y) {
    return ref::Complex((x == y) == equal ? 1 : 0);
  };
  spec.dtypes = kAllDtypes;
  return spec;
}

}  // namespace

std::vector<std::unique_ptr<sdk::Operation>> comparison_operations() {
  return map_operations({
      comparison("lt", "<", "1 where a < b, else 0"),
      comparison("le", "<=", "1 where a <= b, else 0"),
      comparison("gt", ">", "1 where a > b, else 0"),
      comparison("ge", ">=", "1 where a >= b, else 0"),
      equality("eq", "==", "1 where a == b (complex: both parts equal), else 0"),
      equality("ne", "!=",
               "1 where a != b (or either is NaN; complex: either part differs), else 0"),
  });
}

}  // namespace fugue::array
