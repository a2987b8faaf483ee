// complex.cpp: conj, real, imag and complex, one row each. conj, real and imag take complex dtypes
// only: on a real x they would be a copy (or zeros), which a program is better off saying.
#include "complex.h"

#include "dtypes.h"
#include "elementwise.h"
#include "opencl_c.h"

namespace fugue::array {

namespace {

using ref::Complex;

// A formula of x alone, complex in and out.
Formula complex_formula(std::function<std::string(fugue_dtype, const std::string&)> device,
                        std::function<Complex(Complex)> complex) {
  return unary_formula(std::move(device), {}, {}, std::move(complex));
}

// complex(re, im): named after the parts rather than a and b; the result's dtype from theirs.
MapSpec make_complex() {
  Formula formula;
  formula.device = [](fugue_dtype parts, const std::string& re, const std::string& im) {
    return opencl::make_complex(complex_of(parts), re, im);
  };
  formula.complex = [](Complex re, Complex im) { return Complex(re.real(), im.real()); };
  MapSpec spec = binary_map("complex", "re + im i: f32 parts give c64, f64 parts c128",
                            kFloatDtypes, std::move(formula))
                     .with_result(complex_of)
                     .with_flops(0);
  spec.inputs = {{"re", "the real parts"}, {"im", "the imaginary parts"}};
  return spec;
}

// `fugue conformance` derives its calls from real dtypes only, so operations of complex dtypes
// alone name theirs: each rank, and a large array.
const char* const kComplexCalls = R"([
  {"name": "degenerate", "shape": [1], "dtypes": ["c64", "c128"]},
  {"name": "odd", "shape": [7, 5], "dtypes": ["c64", "c128"]},
  {"name": "odd", "shape": [3, 5, 7], "dtypes": ["c64", "c128"]},
  {"name": "large", "shape": [1000003], "dtypes": ["c64", "c128"]}
])";

std::string real_part(fugue_dtype, const std::string& x) { return opencl::real_part(x); }
std::string imag_part(fugue_dtype, const std::string& x) { return opencl::imag_part(x); }

std::vector<MapSpec> specs() {
  return {
      unary_map("conj", "The complex conjugate re - im i of complex x", kComplexDtypes,
                complex_formula(opencl::conjugate, [](Complex x) { return std::conj(x); }))
          .with_test_cases(kComplexCalls),
      unary_map("real", "The real part of complex x, as the parts' dtype (c64 -> f32)",
                kComplexDtypes,
                complex_formula(real_part, [](Complex x) { return Complex(x.real()); }))
          .with_result(component)
          .with_flops(0)
          .with_test_cases(kComplexCalls),
      unary_map("imag", "The imaginary part of complex x, as the parts' dtype (c64 -> f32)",
                kComplexDtypes,
                complex_formula(imag_part, [](Complex x) { return Complex(x.imag()); }))
          .with_result(component)
          .with_flops(0)
          .with_test_cases(kComplexCalls),
      make_complex(),
  };
}

}  // namespace

std::vector<std::unique_ptr<sdk::Operation>> complex_operations() {
  return map_operations(specs());
}

}  // namespace fugue::array
