// signature.h: what the array operations' signatures share: operand kinds, dtype sets, accuracy
// classes.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"

namespace fugue::array {

// Inputs that carry a dtype of their own.
inline constexpr uint32_t kArrayOrScalar =
    FUGUE_KIND_BIT(FUGUE_KIND_ARRAY) | FUGUE_KIND_BIT(FUGUE_KIND_SCALAR);
// Inputs that may also be a const, which takes the dtype of the operation's other inputs.
inline constexpr uint32_t kArrayScalarOrConst = kArrayOrScalar | FUGUE_KIND_BIT(FUGUE_KIND_CONST);

// Every dtype: what arithmetic, copies, selections and sums accept.
inline constexpr uint32_t kAllDtypes = FUGUE_DTYPES_ALL;
// Ordered values: what minimum, maximum, comparisons of order and min/max reductions accept.
inline constexpr uint32_t kRealDtypes = FUGUE_DTYPES_REAL;
inline constexpr uint32_t kFloatDtypes = FUGUE_DTYPES_FLOAT;
inline constexpr uint32_t kComplexDtypes = FUGUE_DTYPES_COMPLEX;

// Relative error bounds against the reference, for f32 and f64 results; c64 and c128 results are
// held to those of their parts' dtype (f32, f64), as the size of the complex error.
struct Tolerance {
  double f32, f64;
};
// At most one rounding: + - * /, min, max, comparisons, conversions, copies.
inline constexpr Tolerance kRounding{1e-6, 1e-13};
// OpenCL built-in functions (sqrt, exp, pow, ...), within a few ulp.
inline constexpr Tolerance kFewUlps{4e-6, 1e-12};
// Sums of many elements, accumulated in the input dtype in a different order than the reference.
inline constexpr Tolerance kSummation{1e-4, 1e-11};

inline void set_tolerance(sdk::Operation& op, Tolerance tolerance) {
  op.tolerance_f32 = tolerance.f32;
  op.tolerance_f64 = tolerance.f64;
}

}  // namespace fugue::array
