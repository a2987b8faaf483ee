// Every array operation against its CPU reference, on fresh random inputs: f32 and f64 (and i32
// where the op takes integers, c64 and c128 where it takes complex numbers), sizes 1, 7, 4096 and
// 1 000 003, and scalar/const operands. Then complex arithmetic against std::complex computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "program/dtype.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

struct Case {
  std::string op;
  DType dtype;
  int64_t size;
  std::string variant;  // "arrays", "scalar_first", "const_second"
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.op << " " << dtype_name(c.dtype) << " n=" << c.size << " " << c.variant;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.op + "_" + std::string(dtype_name(info.param.dtype)) + "_" + std::to_string(info.param.size) +
                  "_" + info.param.variant;
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

bool accepts(const fugue_operand_desc* d, DType t) { return d->dtypes & FUGUE_DTYPE_BIT(static_cast<int>(t)); }

// The dtype of a complex dtype's parts; a real dtype itself.
DType component(DType t) { return static_cast<DType>(dtype_info(t).component); }

// Like test::compare_arrays, |a - e| <= tol * max(1, |e|) per element, with complex elements compared
// as complex numbers (test::compare_arrays reads a complex element as its real part alone).
std::string compare_values(const HostArray& actual, const HostArray& expected, double tolerance) {
  if (!dtype_is_complex(expected.dtype) || actual.dtype != expected.dtype || actual.shape != expected.shape)
    return test::compare_arrays(actual, expected, tolerance);
  for (int64_t i = 0; i < expected.elements(); ++i) {
    const std::complex<double> a = actual.get_complex(i), e = expected.get_complex(i);
    const bool both_nan = (std::isnan(a.real()) || std::isnan(a.imag())) && (std::isnan(e.real()) || std::isnan(e.imag()));
    if (both_nan || a == e) continue;
    if (!(std::abs(a - e) <= tolerance * std::max(1.0, std::abs(e)))) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "element %lld: (%.17g, %.17g), expected (%.17g, %.17g) (tolerance %g)",
                    static_cast<long long>(i), a.real(), a.imag(), e.real(), e.imag(), tolerance);
      return buf;
    }
  }
  return {};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const auto& registry = test::bundled_plugins();
  for (const auto& plugin : registry.plugins()) {
    if (plugin->name != "array") continue;
    for (const auto* op : registry.operations_of(*plugin)) {
      // In-place operations take structured inputs (indices): test_in_place.cpp and conformance's
      // declared cases cover them.
      if (std::any_of(op->outputs().begin(), op->outputs().end(), [&](uint32_t o) { return op->reads(o); }))
        continue;
      // Operations that take user functions: test_functions.cpp and conformance's declared cases.
      if (std::any_of(op->inputs().begin(), op->inputs().end(),
                      [&](uint32_t i) { return op->operands()[i]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION); }))
        continue;
      const auto* first = op->operands()[op->inputs().front()];
      for (DType t : {DType::F32, DType::F64, DType::I32, DType::C64, DType::C128}) {
        if (!accepts(first, t) && op->name() != "array.select") continue;
        // Every input but a condition takes the dtype under test (array.compact's mask is real).
        const bool all_take = std::all_of(op->inputs().begin(), op->inputs().end(), [&](uint32_t i) {
          return std::string(op->operands()[i]->name) == "cond" || accepts(op->operands()[i], t);
        });
        if (!all_take) continue;
        for (int64_t n : {1, 7, 4096, 1000003}) out.push_back({op->name(), t, n, "arrays"});
      }
      // Scalar and const operands, where the signature takes them.
      bool binary = op->inputs().size() == 2 && (first->kinds & FUGUE_KIND_BIT(FUGUE_KIND_SCALAR)) &&
                    (op->operands()[op->inputs()[1]]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST));
      if (binary)
        for (DType t : {DType::F32, DType::F64, DType::C64, DType::C128}) {
          if (!accepts(first, t)) continue;
          out.push_back({op->name(), t, 4096, "scalar_first"});
          out.push_back({op->name(), t, 4096, "const_second"});
        }
    }
  }
  return out;
}

class ArrayOps : public testing::TestWithParam<Case> {};

TEST_P(ArrayOps, MatchesReference) {
  const Case& c = GetParam();
  const auto& registry = test::bundled_plugins();
  auto op = registry.find(c.op);
  ASSERT_NE(op, nullptr);
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");

  const bool is_complex = dtype_is_complex(c.dtype);
  bool is_int = !dtype_is_float(c.dtype) && !is_complex;
  double low = is_int ? -100 : op->desc().test_low, high = is_int ? 100 : op->desc().test_high;
  json symbols = json::object(), in = json::array();
  for (size_t k = 0; k < op->inputs().size(); ++k) {
    const auto* d = op->operands()[op->inputs()[k]];
    std::string name = d->name;
    DType t = c.dtype;
    double lo = low, hi = high;
    if (name == "cond") t = DType::U8, lo = 0, hi = 1;  // a real mix of true and false
    json from = {{"random", {{"seed", seed + k}, {"low", lo}, {"high", hi}}}};
    if (c.variant == "const_second" && k == 1) {
      in.push_back(is_int ? 3.0 : 0.5 * (lo + hi) + 0.125);
      continue;
    }
    if (c.variant == "scalar_first" && k == 0) {
      symbols[name] = {{"kind", "scalar"}, {"dtype", dtype_name(t)}, {"value", is_int ? 5.0 : 0.25 * lo + 0.75 * hi}};
      // A complex scalar's value is a number (re + 0i): a random one has both parts.
      if (is_complex) symbols[name] = {{"kind", "scalar"}, {"dtype", dtype_name(t)}, {"from", from}};
    } else {
      symbols[name] = {{"kind", "array"}, {"dtype", dtype_name(t)}, {"shape", {c.size}}, {"from", from}};
    }
    in.push_back(name);
  }
  json attrs = json::object();
  for (const auto* a : op->attrs()) {
    if (!a->required && std::string(a->name) != "dtype") continue;
    // Complex converts to complex only (array.cast).
    if (a->type == FUGUE_ATTR_DTYPE && is_complex) attrs[a->name] = c.dtype == DType::C64 ? "c128" : "c64";
    else if (a->type == FUGUE_ATTR_DTYPE) attrs[a->name] = c.dtype == DType::F32 ? "f64" : "f32";
    else attrs[a->name] = is_int ? 3 : 1.25;
  }
  json outs = json::array(), outputs = json::object();
  for (uint32_t o : op->outputs()) {
    std::string name = std::string(op->operands()[o]->name) + "_result";
    outs.push_back(name);
    outputs[name] = name + ".npy";
  }
  json doc = {{"fugue", 1}, {"symbols", symbols},
              {"body", {{{"op", c.op}, {"in", in}, {"out", outs}, {"attrs", attrs}}}}, {"outputs", outputs}};
  Program program = parse_program(doc, "array_op_test.json", registry);
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  double tolerance = is_int ? 0.0 : (component(c.dtype) == DType::F32 ? op->desc().tolerance_f32 : op->desc().tolerance_f64);
  for (const auto& [name, expected] : reference) {
    std::string mismatch = compare_values(device.at(name), expected, tolerance);
    EXPECT_TRUE(mismatch.empty()) << c.op << " " << name << ": " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ArrayOps, testing::ValuesIn(cases()), case_name);

TEST(ArrayPlugin, HasEveryOperationTheIssueNames) {
  for (const char* name : {"add", "sub", "mul", "div", "minimum", "maximum", "pow", "atan2", "neg", "abs", "sqrt",
                           "rsqrt", "exp", "log", "sin", "cos", "acos", "asin", "tanh", "floor", "ceil", "lt", "le", "gt",
                           "ge", "eq", "ne", "select", "copy", "fill", "cast", "sum", "min", "max", "dot", "norm2"})
    EXPECT_NE(test::bundled_plugins().find(std::string("array.") + name), nullptr) << name;
}

// ---------------------------------------------------------------------------------------------
// Complex arithmetic, checked against std::complex<long double> computed here from the inputs the
// device saw (read back from the run), for c64 and c128.

using Complex = std::complex<long double>;

Complex element(const HostArray& a, int64_t i) {
  const std::complex<double> v = a.get_complex(i);
  return {v.real(), v.imag()};
}

// The relative error bound of one complex operation of a few roundings in `dtype`'s parts.
double complex_tolerance(DType t) { return component(t) == DType::F32 ? 2e-6 : 1e-14; }

json random_array(const std::string& dtype, int64_t n, uint64_t seed, double low, double high) {
  return {{"kind", "array"}, {"dtype", dtype}, {"shape", {n}}, {"from", {{"random", {{"seed", seed}, {"low", low}, {"high", high}}}}}};
}

// Runs `body` over `symbols` on the device; every symbol named in `outputs` comes back.
std::map<std::string, HostArray> run_complex(const json& symbols, const json& body, const std::vector<std::string>& outputs) {
  json outs = json::object();
  for (const auto& name : outputs) outs[name] = name + ".npy";
  json doc = {{"fugue", 1}, {"symbols", symbols}, {"body", body}, {"outputs", outs}};
  return test::run_on_device(parse_program(doc, "complex_test.json", test::bundled_plugins()));
}

// Empty when out[i] is within `tolerance` (relative to max(1, |expected|)) of f(i) for every i.
template <class F>
std::string check_each(const HostArray& out, DType dtype, double tolerance, F expected) {
  if (out.dtype != dtype) return "dtype " + std::string(dtype_name(out.dtype)) + ", expected " + std::string(dtype_name(dtype));
  for (int64_t i = 0; i < out.elements(); ++i) {
    const Complex e = expected(i), a = element(out, i);
    if (!(std::abs(a - e) <= tolerance * std::max<long double>(1, std::abs(e))))
      return "element " + std::to_string(i) + ": (" + std::to_string(static_cast<double>(a.real())) + ", " +
             std::to_string(static_cast<double>(a.imag())) + "), expected (" +
             std::to_string(static_cast<double>(e.real())) + ", " + std::to_string(static_cast<double>(e.imag())) + ")";
  }
  return {};
}

// One statement of a program body: {"op": "array.<op>", "in": in, "out": [out]}.
json call(const std::string& op, std::vector<json> in, const std::string& out, json attrs = json::object()) {
  return {{"op", "array." + op}, {"in", json(in)}, {"out", json::array({out})}, {"attrs", attrs}};
}

class ComplexOps : public testing::TestWithParam<DType> {};

TEST_P(ComplexOps, ArithmeticMatchesStdComplex) {
  const DType t = GetParam();
  const std::string dt(dtype_name(t));
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  const json symbols = {{"a", random_array(dt, 4099, seed, -1, 1)}, {"b", random_array(dt, 4099, seed + 1, -1, 1)}};
  const json body = {
      call("mul", {"a", "b"}, "mul"),
      call("div", {"a", "b"}, "div"),
      call("add", {"a", "b"}, "add"),
      call("sub", {"a", "b"}, "sub"),
      call("neg", {"a"}, "neg"),
      call("abs", {"a"}, "abs"),
      call("conj", {"a"}, "conj"),
      call("real", {"a"}, "re"),
      call("imag", {"a"}, "im"),
      call("mul", {"a", 2.5}, "scaled"),  // a real const is 2.5 + 0i
  };
  auto out = run_complex(symbols, body, {"a", "b", "mul", "div", "add", "sub", "neg", "abs", "conj", "re", "im", "scaled"});
  const HostArray &a = out.at("a"), &b = out.at("b");
  const DType real = component(t);
  const double tol = complex_tolerance(t);
  EXPECT_EQ(check_each(out.at("mul"), t, tol, [&](int64_t i) { return element(a, i) * element(b, i); }), "");
  EXPECT_EQ(check_each(out.at("div"), t, tol, [&](int64_t i) { return element(a, i) / element(b, i); }), "");
  EXPECT_EQ(check_each(out.at("add"), t, tol, [&](int64_t i) { return element(a, i) + element(b, i); }), "");
  EXPECT_EQ(check_each(out.at("sub"), t, tol, [&](int64_t i) { return element(a, i) - element(b, i); }), "");
  EXPECT_EQ(check_each(out.at("neg"), t, 0, [&](int64_t i) { return -element(a, i); }), "");
  EXPECT_EQ(check_each(out.at("abs"), real, tol, [&](int64_t i) { return Complex(std::abs(element(a, i))); }), "");
  EXPECT_EQ(check_each(out.at("conj"), t, 0, [&](int64_t i) { return std::conj(element(a, i)); }), "");
  EXPECT_EQ(check_each(out.at("re"), real, 0, [&](int64_t i) { return Complex(element(a, i).real()); }), "");
  EXPECT_EQ(check_each(out.at("im"), real, 0, [&](int64_t i) { return Complex(element(a, i).imag()); }), "");
  EXPECT_EQ(check_each(out.at("scaled"), t, tol, [&](int64_t i) { return element(a, i) * Complex(2.5L); }), "");
}

// Parts near the top of the dtype's range: |b|^2, which naive division and magnitude compute, is far
// beyond it (1e60 > FLT_MAX), while every quotient and magnitude is well inside it.
TEST_P(ComplexOps, DivisionAndMagnitudeOfLargePartsDoNotOverflow) {
  const DType t = GetParam();
  const std::string dt(dtype_name(t));
  const double big = component(t) == DType::F32 ? 1e30 : 1e300;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  const json symbols = {{"a", random_array(dt, 1001, seed, -big, big)}, {"b", random_array(dt, 1001, seed + 1, -big, big)},
                        {"small", random_array(dt, 1001, seed + 2, -1, 1)}};
  const json body = {
      call("div", {"a", "b"}, "q"),        // quotients near 1
      call("div", {"small", "b"}, "tiny"),  // near 1 / big
      call("abs", {"a"}, "m"),
  };
  auto out = run_complex(symbols, body, {"a", "b", "small", "q", "tiny", "m"});
  const HostArray &a = out.at("a"), &b = out.at("b"), &small = out.at("small");
  const double tol = complex_tolerance(t);
  EXPECT_EQ(check_each(out.at("q"), t, tol, [&](int64_t i) { return element(a, i) / element(b, i); }), "");
  EXPECT_EQ(check_each(out.at("m"), component(t), tol, [&](int64_t i) { return Complex(std::abs(element(a, i))); }), "");
  // Relative to the quotient itself, not to 1: these are all far below 1.
  const HostArray& tiny = out.at("tiny");
  for (int64_t i = 0; i < tiny.elements(); ++i) {
    const Complex e = element(small, i) / element(b, i), got = element(tiny, i);
    ASSERT_TRUE(std::isfinite(static_cast<double>(std::abs(got)))) << "element " << i;
    ASSERT_LE(std::abs(got - e), tol * std::abs(e)) << "element " << i;
  }
}

TEST_P(ComplexOps, ComplexRealImagAndCastBuildAndTakeApart) {
  const DType t = GetParam(), real = component(t);
  const std::string dt(dtype_name(t)), rt(dtype_name(real)), other = t == DType::C64 ? "c128" : "c64";
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  json symbols = {{"re", random_array(rt, 777, seed, -3, 3)}, {"im", random_array(rt, 777, seed + 1, -3, 3)},
                  {"k", random_array("i32", 777, seed + 2, -1000, 1000)}};
  const json body = {
      call("complex", {"re", "im"}, "z"),
      call("complex", {"re", 0}, "z0"),
      call("cast", {"re"}, "from_real", {{"dtype", dt}}),
      call("cast", {"k"}, "from_int", {{"dtype", dt}}),
      call("cast", {"z"}, "other", {{"dtype", other}}),
      call("real", {"z"}, "re_back"),
      call("imag", {"z"}, "im_back"),
  };
  auto out = run_complex(symbols, body, {"re", "im", "k", "z", "z0", "from_real", "from_int", "other", "re_back", "im_back"});
  const HostArray &re = out.at("re"), &im = out.at("im"), &k = out.at("k");
  auto parts = [&](int64_t i) { return Complex(re.get(i), im.get(i)); };
  EXPECT_EQ(check_each(out.at("z"), t, 0, parts), "");
  EXPECT_EQ(check_each(out.at("z0"), t, 0, [&](int64_t i) { return Complex(re.get(i)); }), "");
  EXPECT_EQ(check_each(out.at("from_real"), t, 0, [&](int64_t i) { return Complex(re.get(i)); }), "");
  EXPECT_EQ(check_each(out.at("from_int"), t, 0, [&](int64_t i) { return Complex(k.get(i)); }), "");
  EXPECT_EQ(check_each(out.at("re_back"), real, 0, [&](int64_t i) { return Complex(re.get(i)); }), "");
  EXPECT_EQ(check_each(out.at("im_back"), real, 0, [&](int64_t i) { return Complex(im.get(i)); }), "");
  // c64 -> c128 is exact; c128 -> c64 rounds each part to the nearest float.
  const DType other_t = t == DType::C64 ? DType::C128 : DType::C64;
  EXPECT_EQ(check_each(out.at("other"), other_t, 0,
                       [&](int64_t i) {
                         const Complex z = parts(i);
                         return other_t == DType::C64 ? Complex(static_cast<float>(z.real()), static_cast<float>(z.imag())) : z;
                       }),
            "");
}

TEST_P(ComplexOps, SumAndDotConjugatingTheFirstArgument) {
  const DType t = GetParam();
  const std::string dt(dtype_name(t));
  const int64_t n = 100003;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");
  const json symbols = {{"a", random_array(dt, n, seed, -1, 1)}, {"b", random_array(dt, n, seed + 1, -1, 1)}};
  const json body = {
      call("sum", {"a"}, "s"),
      call("dot", {"a", "b"}, "d"),
      call("dot", {"a", "a"}, "dd"),
  };
  auto out = run_complex(symbols, body, {"a", "b", "s", "d", "dd"});
  const HostArray &a = out.at("a"), &b = out.at("b");
  Complex sum = 0, dotc = 0, dotu = 0, norm2 = 0;
  long double sum_abs = 0, dot_abs = 0;  // the scale of the rounding errors, whatever cancels
  for (int64_t i = 0; i < n; ++i) {
    const Complex x = element(a, i), y = element(b, i);
    sum += x;
    dotc += std::conj(x) * y;
    dotu += x * y;
    norm2 += std::conj(x) * x;
    sum_abs += std::abs(x);
    dot_abs += std::abs(x) * std::abs(y);
  }
  const double tol = component(t) == DType::F32 ? 1e-5 : 1e-13;
  for (const char* name : {"s", "d", "dd"}) ASSERT_EQ(out.at(name).dtype, t) << name;
  EXPECT_LE(std::abs(element(out.at("s"), 0) - sum), tol * sum_abs);
  EXPECT_LE(std::abs(element(out.at("d"), 0) - dotc), tol * dot_abs);
  EXPECT_LE(std::abs(element(out.at("dd"), 0) - norm2), tol * norm2.real());
  EXPECT_NEAR(static_cast<double>(element(out.at("dd"), 0).imag()), 0.0, tol * static_cast<double>(norm2.real()));
  // Not the unconjugated sum, which random inputs put far from the conjugated one.
  EXPECT_LT(10 * std::abs(element(out.at("d"), 0) - dotc), std::abs(element(out.at("d"), 0) - dotu));
}

TEST(ArrayPlugin, OperationsWithoutAComplexMeaningRefuseIt) {
  test::TempDir dir;
  auto validate = [&](const std::string& statement) {
    const std::string program = R"({"fugue": 1, "symbols": {
      "z": {"kind": "array", "dtype": "c64", "shape": [5], "from": {"random": {"seed": 1}}},
      "f": {"kind": "array", "dtype": "f32", "shape": [5], "from": {"random": {"seed": 2}}}},
      "body": [)" + statement + R"(], "outputs": {}})";
    test::write_text(dir / "prog.json", program);
    return test::run_fugue("validate " + (dir / "prog.json").string());
  };
  auto r = validate(R"({"op": "array.sqrt", "out": ["t"], "in": ["z"]})");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("prog.json:/body/0/in/0: operand 'x' of array.sqrt: expected dtype f32, f64, found c64 'z'"),
            std::string::npos) << r.out;
  r = validate(R"({"op": "array.maximum", "out": ["t"], "in": ["f", "z"]})");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("operand 'b' of array.maximum: expected dtype f32, f64, i32, i64, u8, u32, found c64 'z'"),
            std::string::npos) << r.out;
  // Mixed real and complex arrays: no silent promotion.
  r = validate(R"({"op": "array.mul", "out": ["t"], "in": ["z", "f"]})");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("array.mul: operand b: expected c64 like operand a, found f32 array [5]"), std::string::npos) << r.out;
  // Complex to real says which operations give a real result.
  r = validate(R"({"op": "array.cast", "out": ["t"], "in": ["z"], "attrs": {"dtype": "f32"}})");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("array.real or array.abs"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(C64AndC128, ComplexOps, testing::Values(DType::C64, DType::C128),
                         [](const testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
