// scalars.cpp: see scalars.h.
#include "scalars.h"

#include "matrices.h"

namespace fugue::linalg {

fugue_dtype part_dtype(fugue_dtype dtype) {
  return dtype == FUGUE_DTYPE_C64 ? FUGUE_DTYPE_F32 : dtype == FUGUE_DTYPE_C128 ? FUGUE_DTYPE_F64 : dtype;
}

Scalars::Scalars(fugue_dtype d)
    : dtype(d),
      complex(d == FUGUE_DTYPE_C64 || d == FUGUE_DTYPE_C128),
      type(abi::dtype_ctype(d)),
      real_type(abi::dtype_ctype(part_dtype(d))) {}

Complex get_value(const sdk::HostView& h, int64_t i) {
  const std::complex<double> z = h.get_complex(i);
  return {z.real(), z.imag()};
}

void set_value(sdk::HostView& h, int64_t i, const Complex& z) {
  const fugue_dtype d = h.type().dtype;
  if (d == FUGUE_DTYPE_C64 || d == FUGUE_DTYPE_C128) h.set_complex(i, {static_cast<double>(z.real()), static_cast<double>(z.imag())});
  else h.set(i, static_cast<double>(z.real()));
}

std::string Scalars::real(double value) const { return real_literal(part_dtype(dtype), value); }

std::string Scalars::literal(double value) const {
  return complex ? "((" + type + ")(" + real(value) + ", " + real(0) + "))" : real(value);
}

std::string Scalars::nan() const {
  const std::string n = part_dtype(dtype) == FUGUE_DTYPE_F64 ? "(double)NAN" : "NAN";
  return complex ? "((" + type + ")(" + n + ", " + n + "))" : n;
}

std::string Scalars::from_real(const std::string& x) const { return complex ? "((" + type + ")(" + x + ", " + real(0) + "))" : x; }

std::string Scalars::mul(const std::string& a, const std::string& b) const {
  if (!complex) return "(" + a + ") * (" + b + ")";
  return "((" + type + ")((" + a + ").x * (" + b + ").x - (" + a + ").y * (" + b + ").y, (" + a + ").x * (" + b + ").y + (" + a +
         ").y * (" + b + ").x))";
}

std::string Scalars::conj(const std::string& a) const {
  return complex ? "((" + type + ")((" + a + ").x, -(" + a + ").y))" : a;
}

std::string Scalars::div(const std::string& a, const std::string& b) const {
  if (!complex) return "(" + a + ") / (" + b + ")";
  const std::string d = "((" + b + ").x * (" + b + ").x + (" + b + ").y * (" + b + ").y)";
  return "((" + type + ")(((" + a + ").x * (" + b + ").x + (" + a + ").y * (" + b + ").y) / " + d + ", ((" + a + ").y * (" + b + ").x - (" + a +
         ").x * (" + b + ").y) / " + d + "))";
}

std::string Scalars::real_part(const std::string& a) const { return complex ? "(" + a + ").x" : a; }

std::string Scalars::abs2(const std::string& a) const {
  return complex ? "((" + a + ").x * (" + a + ").x + (" + a + ").y * (" + a + ").y)" : "(" + a + ") * (" + a + ")";
}

std::string Scalars::max_part(const std::string& a) const {
  return complex ? "fmax(fabs((" + a + ").x), fabs((" + a + ").y))" : "fabs(" + a + ")";
}

std::string Scalars::pivot_magnitude(const std::string& a) const {
  return complex ? "(fabs((" + a + ").x) + fabs((" + a + ").y))" : "fabs(" + a + ")";
}

std::string Scalars::is_zero(const std::string& a) const {
  return complex ? "((" + a + ").x == " + real(0) + " && (" + a + ").y == " + real(0) + ")" : "(" + a + ") == " + real(0);
}

std::string Scalars::declare_reciprocal(const std::string& name, const std::string& p) const {
  if (!complex) return "const " + type + " " + name + " = " + real(1) + " / " + p + ";\n";
  // 1 / p = conj(q) / (|q|^2 m) with q = p / m, m = max(|re|, |im|) (|q|^2 in [1, 2]); 0 for an infinite
  // p (as x / p), whose scaled q would be NaN.
  const std::string m = name + "_m", q = name + "_q", d = name + "_d";
  return "const " + real_type + " " + m + " = fmax(fabs((" + p + ").x), fabs((" + p + ").y));\n" + "const " + type + " " + q + " = (" + p + ") / " + m +
         ";\n" + "const " + real_type + " " + d + " = (" + q + ".x * " + q + ".x + " + q + ".y * " + q + ".y) * " + m + ";\n" + "const " + type + " " +
         name + " = isinf(" + m + ") ? " + literal(0) + " : (" + type + ")(" + q + ".x / " + d + ", -" + q + ".y / " + d + ");\n";
}

std::string Scalars::by_pivot(const std::string& x, const std::string& p, const std::string& rcp) const {
  if (!complex) return divided_by_pivot(dtype, x, p, rcp);
  const std::string scaled = mul(x, conj(rcp + "_q"));
  return "(!" + divides(p, rcp) + " ? " + mul(x, rcp) + " : (" + type + ")((" + scaled + ").x / " + rcp + "_d, (" + scaled + ").y / " + rcp + "_d))";
}

std::string Scalars::divides(const std::string& p, const std::string& rcp) const {
  return complex ? "(" + rcp + "_m < " + smallest_normal(part_dtype(dtype)) + ")" : "(fabs(" + p + ") < " + smallest_normal(dtype) + ")";
}

std::string Scalars::declare_reciprocal_carrier(const std::string& name) const {
  std::string code = type + " " + name + " = " + literal(0) + ";\n";
  if (complex) code += real_type + " " + name + "_m = " + real(0) + ", " + name + "_d = " + real(0) + ";\n" + type + " " + name + "_q = " + literal(0) + ";\n";
  return code;
}

std::string Scalars::copy_reciprocal(const std::string& to, const std::string& from) const {
  std::string code = to + " = " + from + ";\n";
  if (complex)
    for (const char* part : {"_m", "_q", "_d"}) code += to + part + " = " + from + part + ";\n";
  return code;
}

}  // namespace fugue::linalg
