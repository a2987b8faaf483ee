// arithmetic.cpp: the arithmetic operations, one row each, with the formulas their rows share.
#include "arithmetic.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dtypes.h"
#include "elementwise.h"
#include "opencl_c.h"

namespace fugue::array {

namespace {

using ref::Complex;
using ref::Real;

// x op y for op in + - *; integers wrap around.
Formula wrapping(char op) {
  return {[op](fugue_dtype t, const std::string& x, const std::string& y) {
            return opencl::wrapping(t, x, op, y);
          },
          [op](Real x, Real y) { return ref::arithmetic(x, op, y); },
          [op](int64_t x, int64_t y) { return ref::wrapping(x, op, y); },
          [op](Complex x, Complex y) { return ref::arithmetic(x, op, y); }};
}

Formula division() {
  return {opencl::divide, [](Real x, Real y) { return x / y; },
          [](int64_t x, int64_t y) { return ref::divide(x, y); },
          [](Complex x, Complex y) { return ref::divide(x, y); }};
}

// |x|: of the parts' dtype for complex x (the result rule component).
Formula magnitude() {
  return unary_formula(opencl::absolute, ::fabsl, ref::absolute,
                       [](Complex x) { return Complex(ref::magnitude(x)); });
}

Formula smaller() {
  return {opencl::minimum, [](Real x, Real y) { return std::fmin(x, y); },
          [](int64_t x, int64_t y) { return std::min(x, y); }};
}

Formula larger() {
  return {opencl::maximum, [](Real x, Real y) { return std::fmax(x, y); },
          [](int64_t x, int64_t y) { return std::max(x, y); }};
}

// An OpenCL C built-in function of floats, and its long double counterpart.
Formula float_function(const std::string& builtin, Real (*real)(Real)) {
  return unary_formula(
      [builtin](fugue_dtype, const std::string& x) { return builtin + "(" + x + ")"; }, real);
}

Formula float_function(const std::string& builtin, Real (*real)(Real, Real)) {
  Formula formula;
  formula.device = [builtin](fugue_dtype, const std::string& x, const std::string& y) {
    return builtin + "(" + x + ", " + y + ")";
  };
  formula.real = real;
  return formula;
}

// atan2(y, x): named after the point's coordinates, in C's order, rather than a and b.
MapSpec atan2() {
  MapSpec spec = binary_map(
      "atan2", "The angle of the point (x, y) from the positive x axis, in [-pi, pi] radians",
      kFloatDtypes, float_function("atan2", ::atan2l));
  spec.inputs = {{"y", "the ordinate (the numerator of the tangent)"},
                 {"x", "the abscissa (the denominator of the tangent)"}};
  return spec.with_tolerance(kFewUlps);
}

std::vector<MapSpec> binary_specs() {
  return {
      // Complex operands: a const beside them is a real number, x + 0i.
      binary_map("add", "a + b; integers wrap around", kAllDtypes, wrapping('+')),
      binary_map("sub", "a - b; integers wrap around", kAllDtypes, wrapping('-')),
      binary_map("mul", "a * b; integers wrap around; complex numbers multiply as such", kAllDtypes,
                 wrapping('*')),
      binary_map("div",
                 "a / b; integers truncate toward zero, x / 0 is 0 and MIN / -1 is MIN; complex "
                 "numbers divide by Smith's algorithm (no overflow for large parts), and by 0 part by part as NumPy "
                 "does (inf, or NaN for 0 / 0)",
                 kAllDtypes, division()),
      binary_map("minimum", "The smaller of a and b; floats ignore a NaN, as fmin", kRealDtypes,
                 smaller()),
      binary_map("maximum", "The larger of a and b; floats ignore a NaN, as fmax", kRealDtypes,
                 larger()),
      binary_map("pow", "a raised to the power b", kFloatDtypes, float_function("pow", ::powl))
          .with_tolerance(kFewUlps)
          .with_domain(0.5, 2),
      atan2(),
  };
}

std::vector<MapSpec> unary_specs() {
  // The test domains keep each function where it is defined and far from overflow.
  return {
      unary_map("neg", "-x; integers wrap around (-MIN is MIN, unsigned -x is 2^bits - x)",
                kAllDtypes,
                unary_formula(opencl::negate, std::negate<Real>(), ref::negate,
                              std::negate<Complex>())),
      unary_map("abs",
                "|x|; the absolute value of a signed integer's MIN is MIN; of complex x, the "
                "magnitude as the parts' dtype (c64 -> f32), scaled as hypot (no overflow)",
                kAllDtypes, magnitude())
          .with_result(component),
      unary_map("sqrt", "The square root of x", kFloatDtypes, float_function("sqrt", ::sqrtl))
          .with_tolerance(kFewUlps)
          .with_domain(0.1, 10),
      unary_map("rsqrt", "1 / sqrt(x)", kFloatDtypes,
                float_function("rsqrt", [](Real x) { return 1 / std::sqrt(x); }))
          .with_tolerance(kFewUlps)
          .with_domain(0.1, 10),
      unary_map("exp", "e raised to the power x", kFloatDtypes, float_function("exp", ::expl))
          .with_tolerance(kFewUlps)
          .with_domain(-5, 5),
      unary_map("log", "The natural logarithm of x", kFloatDtypes, float_function("log", ::logl))
          .with_tolerance(kFewUlps)
          .with_domain(0.1, 10),
      unary_map("sin", "The sine of x (radians)", kFloatDtypes, float_function("sin", ::sinl))
          .with_tolerance(kFewUlps),
      unary_map("cos", "The cosine of x (radians)", kFloatDtypes, float_function("cos", ::cosl))
          .with_tolerance(kFewUlps),
      // acos and asin are defined on [-1, 1] only.
      unary_map("acos", "The arc cosine of x, in [0, pi] radians", kFloatDtypes,
                float_function("acos", ::acosl))
          .with_tolerance(kFewUlps),
      unary_map("asin", "The arc sine of x, in [-pi/2, pi/2] radians", kFloatDtypes,
                float_function("asin", ::asinl))
          .with_tolerance(kFewUlps),
      unary_map("tanh", "The hyperbolic tangent of x", kFloatDtypes,
                float_function("tanh", ::tanhl))
          .with_tolerance(kFewUlps),
      unary_map("floor", "The largest integer not above x", kFloatDtypes,
                float_function("floor", ::floorl))
          .with_domain(-10, 10),
      unary_map("ceil", "The smallest integer not below x", kFloatDtypes,
                float_function("ceil", ::ceill))
          .with_domain(-10, 10),
      unary_map("copy", "x, unchanged", kAllDtypes,
                unary_formula([](fugue_dtype, const std::string& x) { return x; },
                              [](Real x) { return x; }, [](int64_t x) { return x; },
                              [](Complex x) { return x; }))
          .with_flops(0)
          .with_traits(FUGUE_OP_IDENTITY),
  };
}

}  // namespace

std::vector<std::unique_ptr<sdk::Operation>> arithmetic_operations() {
  auto ops = map_operations(binary_specs());
  for (auto& op : map_operations(unary_specs())) ops.push_back(std::move(op));
  return ops;
}

}  // namespace fugue::array
