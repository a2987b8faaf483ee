// scalars.h: OpenCL C arithmetic on the values of a real or complex dtype, so that one generator writes
// an operation for f32, f64, c64 and c128 alike. Complex values are float2/double2 (re in .x, im in .y);
// + and - act part by part on them already, so only products, reciprocals, conjugates and magnitudes
// differ. Arguments used more than once (complex products) should be identifiers or array elements,
// not expressions with a cost.
#pragma once
#include <complex>
#include <string>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

struct Scalars {
  explicit Scalars(fugue_dtype dtype);

  fugue_dtype dtype;
  bool complex;
  std::string type;       // "double", "float2", ...
  std::string real_type;  // the parts' type: "double", "float"

  // `value` as a literal of the type (complex: value + 0i); real(value) is one of the parts' type.
  std::string literal(double value) const;
  std::string real(double value) const;
  std::string nan() const;
  // A value of the type from an expression of the parts' type (x + 0i for complex).
  std::string from_real(const std::string& x) const;
  // a * b, and conj(a) (a for reals).
  std::string mul(const std::string& a, const std::string& b) const;
  std::string conj(const std::string& a) const;
  // The real part (a for reals).
  std::string real_part(const std::string& a) const;
  // |a|^2, of the parts' type (a * a for reals).
  std::string abs2(const std::string& a) const;
  // The larger magnitude of a's parts (|a| for reals): a scale for sums of squares.
  std::string max_part(const std::string& a) const;
  // LAPACK's magnitude for choosing pivots (i?amax): |a|, or |re| + |im| for complex numbers.
  std::string pivot_magnitude(const std::string& a) const;
  // a / b. Complex: a conj(b) / |b|^2, for divisors whose |b|^2 neither overflows nor underflows (a
  // triangular factor's diagonal); divisions by pivots use declare_reciprocal.
  std::string div(const std::string& a, const std::string& b) const;
  // Whether a is exactly zero (both parts for complex).
  std::string is_zero(const std::string& a) const;
  // Statements declaring `const type name = 1 / p` (complex: p scaled by its larger part m, so that
  // neither |p|^2 nor its inverse overflows where 1 / p does not; temporaries name_m, name_q, name_d,
  // which by_pivot reads too).
  std::string declare_reciprocal(const std::string& name, const std::string& p) const;
  // x / p for a pivot p whose reciprocal `rcp` declare_reciprocal made, as LAPACK's getf2 and zgetf2:
  // times the reciprocal unless p (complex: its larger part) is below the smallest normal number, where
  // the reciprocal would overflow; then divided (complex: x conj(q) / (|q|^2 m), q = p / m).
  std::string by_pivot(const std::string& x, const std::string& p, const std::string& rcp) const;
  // Whether by_pivot divides by p (an OpenCL C condition): p, or its larger part, below the smallest
  // normal number.
  std::string divides(const std::string& p, const std::string& rcp) const;
  // A reciprocal kept from one step to the next: declarations of `name` (and its temporaries) as zeros,
  // and statements copying `from`'s into them, so that by_pivot takes `name` as it takes `from`.
  std::string declare_reciprocal_carrier(const std::string& name) const;
  std::string copy_reciprocal(const std::string& to, const std::string& from) const;
};

// The dtypes the linalg operations that support complex numbers accept.
constexpr uint32_t kFloatDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) |
                                  FUGUE_DTYPE_BIT(FUGUE_DTYPE_C64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_C128);

// The parts' dtype of a complex one (the dtype itself for reals).
fugue_dtype part_dtype(fugue_dtype dtype);

// The references compute in complex extended precision whatever the dtype: element i of a host array
// (imaginary part 0 for reals), and storing one (its real part for reals; NaN stays NaN).
using Complex = std::complex<long double>;
Complex get_value(const sdk::HostView& h, int64_t i);
void set_value(sdk::HostView& h, int64_t i, const Complex& z);

}  // namespace fugue::linalg
