// measures.cpp: see measures.h.
#include "measures.h"
#include "tiles.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace fugue::pairwise {

namespace {

std::string lit(double v, bool f32) {
  char buf[48];
  if (f32) std::snprintf(buf, sizeof buf, "%.9ef", static_cast<double>(static_cast<float>(v)));
  else std::snprintf(buf, sizeof buf, "%.17e", v);
  return buf;
}

using LD = long double;
using Rows = const std::vector<LD>&;

LD sum_of(Rows x, Rows y, LD (*term)(LD, LD)) {
  LD s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += term(x[i], y[i]);
  return s;
}

LD dot(Rows x, Rows y) { return sum_of(x, y, [](LD a, LD b) { return a * b; }); }
LD squares(Rows x, Rows y) { return sum_of(x, y, [](LD a, LD b) { return (a - b) * (a - b); }); }

// x_s y_s into accumulator 0 (the kernels of a dot product).
std::string dot_update(int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) {
  return acc + " += " + x + " * " + y + ";";
}
// x and y are plain names (the loop's loaded values): repeating them costs nothing.
std::string squares_update(int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) {
  return acc + " += (" + x + " - " + y + ") * (" + x + " - " + y + ");";
}
// Minkowski's term |x - y|^p of type `type` (float, double or their vectors): a small integer power by
// multiplications, many times cheaper than pow on GPUs (pow of doubles took 107 ms for 8192 x 8192 rows
// of 128 on the H200, against 1.1 ms for manhattan).
std::string minkowski_update(const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, const std::string& type) {
  if (p.p == std::floor(p.p) && p.p <= 8) {
    std::string power = "d";
    for (int q = 1; q < static_cast<int>(p.p); ++q) power += " * d";
    return "{ const " + type + " d = fabs(" + x + " - " + y + "); " + acc + " += " + power + "; }";
  }
  return acc + " += pow(fabs(" + x + " - " + y + "), (" + type + ")(" + lit(p.p, type.rfind("float", 0) == 0) + "));";
}
// The p-th root of Minkowski's sum: sqrt and cbrt by name for p = 2 and 3, each many times cheaper
// than pow with a constant exponent on GPUs (a root a pair: one for each element of D).
std::string minkowski_root(const std::string& sum, const Parameters& p, bool f32) {
  if (p.p == 1) return sum;
  if (p.p == 2) return "sqrt(" + sum + ")";
  if (p.p == 3) return "cbrt(" + sum + ")";
  return "pow(" + sum + ", " + lit(1 / p.p, f32) + ")";
}
// A quotient that is 0 for 0/0 (chi2, canberra), the terms of equal zero coordinates; any other
// division by 0 gives its infinity. A zero numerator adds 0 whatever the denominator, chosen by select:
// an `if` here became a branch a coordinate on NVIDIA's compiler.
std::string zero_safe(const std::string& num, const std::string& den, const std::string& acc, bool f32) {
  const std::string t = f32 ? "float" : "double";
  return "{ const " + t + " q_num = " + num + "; " + acc + " += select(q_num / (" + den + "), (" + t + ")0, (" + (f32 ? "int" : "long") +
         ")(q_num == 0)); }";
}
// zero_safe for vectors, branch-free: the lanes of 0/0 add 0.
std::string zero_safe_vector(const std::string& num, const std::string& den, const std::string& acc, const std::string& type) {
  return acc + " += select((" + num + ") / (" + den + "), (" + type + ")(0), (" + num + ") == 0 && (" + den + ") == 0);";
}
// The same in f32 by an approximate reciprocal (Parameters::reciprocal), a zero numerator adding 0 as in
// zero_safe. A denominator below the reciprocal's range gives inf or NaN, which the plan's guard
// computes again in f64, as a sum that overflows; above 2^126 NVIDIA's reciprocal gives 0 (canberra
// scales its denominator for that, chi2 needs not).
bool by_reciprocal(const Parameters& p, bool f32) { return !p.reciprocal.empty() && f32; }
std::string quotient_update(const std::string& num, const std::string& den, const std::string& acc, const Parameters& p, bool f32) {
  if (!by_reciprocal(p, f32)) return zero_safe(num, den, acc, f32);
  return "{ const float q_num = " + num + "; " + acc + " += select(q_num * " + p.reciprocal + "(" + den + "), 0.0f, (int)(q_num == 0)); }";
}
// Canberra's sum by the reciprocal is 8 times the measure's: its denominator |x| / 8 + |y| / 8 stays
// within the reciprocal's range (and f32's: 2e38 against 1.5e38 adds 1/7, where |x| + |y| overflows and
// would add 0).
std::string canberra_finish(const std::vector<std::string>& a, const Parameters& p, bool f32) {
  return by_reciprocal(p, f32) ? "(" + a[0] + " * 0.125f)" : a[0];
}
// The same in the references.
long double quotient(long double num, long double den) { return num == 0 && den == 0 ? 0 : num / den; }

}  // namespace

const std::vector<Measure>& metrics() {
  static const std::vector<Measure> table = {
      {"euclidean", "sqrt(sum (x - y)^2)", 1, false, squares_update,
       [](const std::vector<std::string>& a, const Parameters&, bool) { return "sqrt(" + a[0] + ")"; },
       [](Rows x, Rows y, const Parameters&) { return std::sqrt(squares(x, y)); }},
      {"sqeuclidean", "sum (x - y)^2", 1, false, squares_update,
       [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) { return squares(x, y); }},
      {"manhattan", "sum |x - y| (SciPy's cityblock)", 1, false,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) { return acc + " += fabs(" + x + " - " + y + ");"; },
       [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) { return sum_of(x, y, [](LD a, LD b) { return std::fabs(a - b); }); }},
      {"chebyshev", "max |x - y|", 1, true,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) {
         return acc + " = fmax(" + acc + ", fabs(" + x + " - " + y + "));";
       },
       [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) {
         LD m = 0;
         for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
         return m;
       }},
      {"minkowski", "(sum |x - y|^p)^(1/p), p >= 1 (attribute p)", 1, false,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, bool f32) {
         return minkowski_update(x, y, acc, p, f32 ? "float" : "double");
       },
       [](const std::vector<std::string>& a, const Parameters& p, bool f32) { return minkowski_root(a[0], p, f32); },
       [](Rows x, Rows y, const Parameters& p) {
         LD s = 0;
         for (size_t i = 0; i < x.size(); ++i) s += std::pow(std::fabs(x[i] - y[i]), static_cast<LD>(p.p));
         return std::pow(s, 1 / static_cast<LD>(p.p));
       },
       true, true, -1, -1,
       // A finite sum of at least 2^-64: terms lost below FLT_MIN weigh less than k 2^-126 against it.
       [](const std::vector<std::string>& a, const std::string&) { return "(isfinite(" + a[0] + ") && " + a[0] + " >= 0x1p-64f)"; },
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, const std::string& type) {
         return minkowski_update(x, y, acc, p, type);
       }},
      {"chi2", "sum (x - y)^2 / (x + y), 0/0 taken as 0 (x + y = 0 otherwise gives inf: for histograms, non-negative data)", 1, false,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, bool f32) {
         // x + y beyond 2^126 puts |x| or |y| above 2^125, where a nonzero x - y is at least 2^102 and
         // its square overflows: the term is 0 (x = y) or not finite, with or without the reciprocal.
         return quotient_update("(" + x + " - " + y + ") * (" + x + " - " + y + ")", x + " + " + y, acc, p, f32);
       },
       [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) {
         return sum_of(x, y, [](LD a, LD b) { return quotient((a - b) * (a - b), a + b); });
       },
       false, true, -1, -1, nullptr,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, const std::string& type) {
         return zero_safe_vector("(" + x + " - " + y + ") * (" + x + " - " + y + ")", x + " + " + y, acc, type);
       },
       true},
      {"canberra", "sum |x - y| / (|x| + |y|), 0/0 taken as 0", 1, false,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, bool f32) {
         const std::string den = by_reciprocal(p, f32) ? "fabs(" + x + ") * 0.125f + fabs(" + y + ") * 0.125f" : "fabs(" + x + ") + fabs(" + y + ")";
         return quotient_update("fabs(" + x + " - " + y + ")", den, acc, p, f32);
       },
       canberra_finish,
       [](Rows x, Rows y, const Parameters&) {
         return sum_of(x, y, [](LD a, LD b) { return quotient(std::fabs(a - b), std::fabs(a) + std::fabs(b)); });
       },
       false, true, -1, -1, nullptr,
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, const std::string& type) {
         return zero_safe_vector("fabs(" + x + " - " + y + ")", "fabs(" + x + ") + fabs(" + y + ")", acc, type);
       },
       true},
      {"cosine", "1 - x.y / (|x| |y|), clipped to [0, 2] (NaN for a zero row, as SciPy's)", 3, false,
       [](int k, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) {
         return acc + " += " + (k == 0 ? x + " * " + y : k == 1 ? x + " * " + x : y + " * " + y) + ";";
       },
       [](const std::vector<std::string>& a, const Parameters&, bool f32) {
         // Clipped as SciPy's (rounding may leave a row's distance to itself below 0); NaN passes.
         const std::string d = "(" + lit(1, f32) + " - " + a[0] + " / (sqrt(" + a[1] + ") * sqrt(" + a[2] + ")))";
         return "(" + d + " != " + d + " ? " + d + " : clamp(" + d + ", " + lit(0, f32) + ", " + lit(2, f32) + "))";
       },
       [](Rows x, Rows y, const Parameters&) {
         const LD d = 1 - dot(x, y) / (std::sqrt(dot(x, x)) * std::sqrt(dot(y, y)));
         return std::isnan(d) ? d : std::min<LD>(std::max<LD>(d, 0), 2);
       },
       true, true, 1, 2,
       // Both norms finite (then so is every partial dot product, |x.y| <= |x| |y|) and at least 2^-64, and
       // the distance at least 2^-8: 1 - x.y / (|x| |y|) keeps f32's rounding of the sums (about sqrt(k)
       // 2^-24, absolute), which would swamp the small distances of near-duplicates and reorder them.
       [](const std::vector<std::string>& a, const std::string& value) {
         return "(isfinite(" + a[1] + ") && isfinite(" + a[2] + ") && " + a[1] + " >= 0x1p-64f && " + a[2] + " >= 0x1p-64f && " + value +
                " >= 0x1p-8f)";
       }},
  };
  return table;
}

const std::vector<Measure>& kernels() {
  static const std::vector<Measure> table = {
      {"linear", "x.y", 1, false, dot_update, [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) { return dot(x, y); }},
      {"polynomial", "(gamma x.y + alpha)^degree", 1, false, dot_update,
       [](const std::vector<std::string>& a, const Parameters& p, bool f32) {
         return "pow(" + lit(p.gamma, f32) + " * " + a[0] + " + " + lit(p.alpha, f32) + ", " + lit(p.degree, f32) + ")";
       },
       [](Rows x, Rows y, const Parameters& p) { return std::pow(static_cast<LD>(p.gamma) * dot(x, y) + static_cast<LD>(p.alpha), static_cast<LD>(p.degree)); }},
      {"gaussian", "exp(-gamma |x - y|^2) (scikit-learn's rbf)", 1, false, squares_update,
       [](const std::vector<std::string>& a, const Parameters& p, bool f32) { return "exp(-" + lit(p.gamma, f32) + " * " + a[0] + ")"; },
       [](Rows x, Rows y, const Parameters& p) { return std::exp(-static_cast<LD>(p.gamma) * squares(x, y)); }},
      {"sigmoid", "tanh(gamma x.y + alpha)", 1, false, dot_update,
       [](const std::vector<std::string>& a, const Parameters& p, bool f32) { return "tanh(" + lit(p.gamma, f32) + " * " + a[0] + " + " + lit(p.alpha, f32) + ")"; },
       [](Rows x, Rows y, const Parameters& p) { return std::tanh(static_cast<LD>(p.gamma) * dot(x, y) + static_cast<LD>(p.alpha)); }},
      {"intersection", "sum min(x, y) (histogram intersection)", 1, false,
       // NaN propagates, as NumPy's minimum (fmin would drop it).
       [](int, const std::string& x, const std::string& y, const std::string& acc, const Parameters&, bool) {
         return acc + " += isnan(" + x + ") || isnan(" + y + ") ? " + x + " + " + y + " : fmin(" + x + ", " + y + ");";
       },
       [](const std::vector<std::string>& a, const Parameters&, bool) { return a[0]; },
       [](Rows x, Rows y, const Parameters&) { return sum_of(x, y, [](LD a, LD b) { return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b); }); }},
  };
  return table;
}

Arithmetic arithmetic_of(const Measure& m, bool f32, bool doubles) {
  Arithmetic a;
  a.guarded = f32 && m.wide && doubles && m.trusted;
  a.in_f32 = f32 && (!(m.wide && doubles) || a.guarded);
  return a;
}

std::string pair_in_double(const Measure& m, const Parameters& p, int64_t k) {
  std::string code = "double pair_in_double(__global const float* X, __global const float* Y, long i, long j) {\n";
  std::vector<std::string> accs;
  for (int a = 0; a < m.accumulators; ++a) {
    accs.push_back("wide" + std::to_string(a));
    code += "  double " + accs.back() + " = 0;\n";
  }
  const std::string K = std::to_string(k) + "L";
  code += "  for (long s = 0; s < " + K + "; ++s) {\n    const double xs = X[i * " + K + " + s], ys = Y[j * " + K + " + s];\n";
  for (int a = 0; a < m.accumulators; ++a) code += "    " + m.update(a, "xs", "ys", accs[static_cast<size_t>(a)], p, false) + "\n";
  return code + "  }\n  return " + m.finish(accs, p, false) + ";\n}\n";
}

std::string pair_code(const sdk::Emitter& em, const Measure& m, const Parameters& p, bool f32, bool doubles, int64_t k,
                      const std::function<std::string(const std::string&)>& x_at, const std::function<std::string(const std::string&)>& y_at,
                      const std::string& value) {
  const bool in_f32 = f32 && !(m.wide && doubles);  // the arithmetic's type (Measure::wide)
  const std::string t = in_f32 ? "float" : "double", s = em.name("s"), xs = em.name("xs"), ys = em.name("ys");
  std::vector<std::string> acc;
  std::string code;
  for (int a = 0; a < m.accumulators; ++a) {
    acc.push_back(em.name("acc" + std::to_string(a)));
    code += t + " " + acc.back() + " = 0;\n";
  }
  code += "for (int " + s + " = 0; " + s + " < " + std::to_string(k) + "; ++" + s + ") {\n";
  code += "  const " + t + " " + xs + " = " + x_at(s) + ", " + ys + " = " + y_at(s) + ";\n";
  for (int a = 0; a < m.accumulators; ++a) code += "  " + m.update(a, xs, ys, acc[static_cast<size_t>(a)], p, in_f32) + "\n";
  const std::string result = f32 ? "float" : "double";
  return code + "}\nconst " + result + " " + value + " = (" + result + ")(" + m.finish(acc, p, in_f32) + ");\n";
}

sdk::Plan pair_plan(const sdk::Call& call, const std::string& variant) {
  const fugue_type &x = call.operand(0), &y = call.operand(1);
  sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, x.shape[0] * y.shape[0]);
  p.partitions[0] = sdk::partition(FUGUE_PARTITION_WHOLE, x.rank);  // rows read whole, by index
  p.partitions[1] = sdk::partition(FUGUE_PARTITION_WHOLE, y.rank);
  p.registers = 10;
  p.variant = variant;
  return p;
}

std::string pair_of_element(const sdk::Emitter& em, int64_t m, const std::string& i, const std::string& j) {
  const std::string e = em.name("e"), M = std::to_string(m) + "L";
  return "const long " + e + " = (long)(" + em.builtin(FUGUE_BUILTIN_INDEX) + "), " + i + " = " + e + " / " + M + ", " + j + " = " + e + " - " + i + " * " +
         M + ";\n";
}

std::vector<sdk::AttrSpec> measure_attrs(bool kernels) {
  std::vector<sdk::AttrSpec> attrs;
  if (kernels)
    attrs = {{"kind", FUGUE_ATTR_STRING, false, 0, "linear", "linear, polynomial, gaussian, sigmoid or intersection"},
             {"gamma", FUGUE_ATTR_NUMBER, false, 0, "", "polynomial, gaussian, sigmoid: the factor; 0 (the default): 1 / k, scikit-learn's"},
             {"alpha", FUGUE_ATTR_NUMBER, false, 1, "", "polynomial, sigmoid: the constant added (scikit-learn's coef0)"},
             {"degree", FUGUE_ATTR_NUMBER, false, 3, "", "polynomial: the power"}};
  else
    attrs = {{"metric", FUGUE_ATTR_STRING, false, 0, "euclidean", "euclidean, sqeuclidean, manhattan, chebyshev, minkowski, chi2, canberra or cosine"},
             {"p", FUGUE_ATTR_NUMBER, false, 2, "", "minkowski: the power, at least 1"}};
  attrs.push_back({"blocking", FUGUE_ATTR_STRING, false, 0, "",
                   "the tiles: \"ROWSxCOLS\" of D per 16 x 16 work-group (each 16 to 128 in steps of 16: the seed's 36 and sides of 112 and 128), \"none\" (an "
                   "element of D per work-item), or \"vectors\" (a block of D per work-item, the coordinates in vectors: CPUs' plan); default: the device's table (`fugue tune pairwise`, else the one built in)"});
  return attrs;
}

const Measure& measure_of(const sdk::Call& call, bool kernels) {
  return kernels ? find(pairwise::kernels(), call.string("kind"), "kind") : find(metrics(), call.string("metric"), "metric");
}

Parameters parameters_of(const sdk::Call& call, bool kernels, int64_t k) {
  measure_of(call, kernels);
  blocking_attribute(call);  // checked before anything is planned
  Parameters p;
  const fugue_dtype dtype = call.operand(0).dtype;  // f32 data's kernels are written with f32 literals
  if (kernels) {
    p.gamma = call.number_for("gamma", dtype);
    p.alpha = call.number_for("alpha", dtype);
    p.degree = call.number_for("degree", dtype);
    if (p.gamma < 0) throw sdk::InvalidArgument("attribute gamma: expected a finite number, at least 0, found " + sdk::number_text(p.gamma));
    if (p.degree < 0) throw sdk::InvalidArgument("attribute degree: expected a finite number, at least 0, found " + sdk::number_text(p.degree));
    if (p.gamma == 0) p.gamma = 1.0 / static_cast<double>(k);
  } else {
    p.p = call.number_for("p", dtype);
    if (p.p < 1) throw sdk::InvalidArgument("attribute p: expected a finite number, at least 1, found " + sdk::number_text(p.p));
  }
  return p;
}

void require_rows(const fugue_type& x, const fugue_type& y, const std::string& x_name, const std::string& y_name) {
  if (x.rank != 2 || sdk::elements(x) == 0 || x.shape[1] > INT32_MAX)
    throw sdk::InvalidArgument("operand " + x_name + ": expected rows [n, k] (two axes, none empty, k < 2^31), found " + sdk::type_string(x));
  if (y.rank != 2 || y.shape[1] != x.shape[1] || y.shape[0] == 0)
    throw sdk::InvalidArgument("operand " + y_name + ": expected rows of " + x_name + "'s length [m, " + std::to_string(x.shape[1]) + "], found " +
                               sdk::type_string(y));
  if (y.dtype != x.dtype)
    throw sdk::InvalidArgument("operand " + y_name + " is " + sdk::dtype_name(y.dtype) + ", " + x_name + " " + sdk::dtype_name(x.dtype) +
                               ": they must have one dtype");
}

const Measure& find(const std::vector<Measure>& table, const std::string& name, const std::string& attr) {
  std::string names;
  for (const Measure& m : table) {
    if (name == m.name) return m;
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  throw sdk::InvalidArgument("attribute " + attr + ": expected one of " + names + ", found \"" + name + "\"");
}

}  // namespace fugue::pairwise
