// reduce.cpp: pairwise.reduce (see reduce.h).
#include "reduce.h"

#include <cstring>
#include <string>
#include <vector>

#include "measures.h"

namespace fugue::pairwise {

namespace {

constexpr uint32_t kX = 0, kY = 1, kE = 2, kCombine = 3, kR = 4, kD = 5;
constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr uint32_t kResults = kFloats | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64);

// The dtypes of the functions' results: e's (the combined values'), and D's.
struct Dtypes {
  fugue_dtype partial, result;
};

class Reduce final : public sdk::Operation {
 public:
  Reduce() {
    name = "pairwise.reduce";
    doc = "D[i, j] = r(e(x_i0, y_j0) (+) ... (+) e(x_ik-1, y_jk-1)) for the rows x_i of X [n, k] and y_j of Y [m, k], with user functions "
          "e (two elements), combine (+) (two partial results, associative; it must return e's dtype) and r (the combined value; left "
          "out, D is the combined value); the elements combined in order s = 0 .. k - 1";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), function = FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION);
    operands = {sdk::in("X", array, kFloats, "rows [n, k]"),
                sdk::in("Y", array, kFloats, "rows [m, k], X's dtype"),
                sdk::in("e", function, kResults, "e(x, y) of two elements"),
                sdk::in("combine", function, kResults, "(+)(a, b) of two partial results"),
                sdk::optional_in("r", function, kResults, 0, "r(c) of the combined value; left out, D is c"),
                sdk::out("D", array, kResults, "[n, m], of r's dtype (e's without r)")};
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_low = 0;
    test_high = 1;
    const std::string abs_diff =
        R"({"kind": "function", "params": ["x", "y"], "body": [{"op": "array.sub", "out": ["d"], "in": ["x", "y"]}, {"op": "array.abs", "out": ["a"], "in": ["d"]}], "result": "a"})";
    const std::string add = R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"})";
    const std::string max = R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.maximum", "out": ["s"], "in": ["a", "b"]}], "result": "s"})";
    const std::string root = R"({"kind": "function", "params": ["c"], "body": [{"op": "array.sqrt", "out": ["q"], "in": ["c"]}], "result": "q"})";
    const std::string product = R"({"kind": "function", "params": ["x", "y"], "body": [{"op": "array.mul", "out": ["p"], "in": ["x", "y"]}], "result": "p"})";
    test_cases = R"([
      {"name": "manhattan by hand", "inputs": {"X": {"shape": [13, 4]}, "Y": {"shape": [7, 4]}, "e": )" + abs_diff + R"(, "combine": )" + add + R"(}},
      {"name": "chebyshev by hand", "inputs": {"X": {"shape": [5, 9]}, "Y": {"shape": [6, 9]}, "e": )" + abs_diff + R"(, "combine": )" + max + R"(}},
      {"name": "the root of a dot product", "inputs": {"X": {"shape": [8, 3]}, "Y": {"shape": [8, 3]}, "e": )" + product + R"(, "combine": )" + add +
                 R"(, "r": )" + root + R"(}},
      {"name": "rows of one", "inputs": {"X": {"shape": [3, 1]}, "Y": {"shape": [2, 1]}, "e": )" + abs_diff + R"(, "combine": )" + add + R"(}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    require_rows(x, y, "X", "Y");
    const Dtypes d = dtypes(call);
    types[kD] = sdk::make_type(FUGUE_KIND_ARRAY, d.result, {x.shape[0], y.shape[0]});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    return pair_plan(call, "one element of D per work-item, its rows read from global memory");
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const Dtypes d = dtypes(call);
    const std::string K = std::to_string(x.shape[1]);
    const std::string i = em.name("i"), j = em.name("j"), s = em.name("s"), acc = em.name("acc");
    auto pair = [&](const std::string& at) {
      return em.call_function(kE, {x.dtype, x.dtype}, {em.read_at(kX, i + " * " + K + " + " + at), em.read_at(kY, j + " * " + K + " + " + at)});
    };
    std::string code = pair_of_element(em, y.shape[0], i, j);
    code += em.ctype(d.partial) + " " + acc + " = " + pair("0") + ";\n";
    code += "for (int " + s + " = 1; " + s + " < " + K + "; ++" + s + ") " + acc + " = " + em.call_function(kCombine, {d.partial, d.partial}, {acc, pair(s)}) + ";\n";
    const bool finish = call.operand(kR).kind == FUGUE_KIND_FUNCTION;
    code += em.write(kD) + " = " + (finish ? em.call_function(kR, {d.partial}, {acc}) : acc) + ";\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const double n = static_cast<double>(x.shape[0]), m = static_cast<double>(y.shape[0]), k = static_cast<double>(x.shape[1]);
    return {sizeof(fugue_cost), (n * k + m * k + n * m) * static_cast<double>(abi::dtype_size(x.dtype)), 3 * n * m * k};
  }

  // The functions evaluated on the host for every pair at once, step by step.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]), y(arrays[kY]);
    const fugue_type &xt = call.operand(kX), &yt = call.operand(kY);
    const int64_t n = xt.shape[0], k = xt.shape[1], m = yt.shape[0], pairs = n * m;
    const Dtypes d = dtypes(call);
    const size_t xs = abi::dtype_size(xt.dtype), ps = abi::dtype_size(d.partial);
    const uint8_t *xd = static_cast<const uint8_t*>(x.data()), *yd = static_cast<const uint8_t*>(y.data());
    std::vector<uint8_t> a(static_cast<size_t>(pairs) * xs), b(a.size()), acc(static_cast<size_t>(pairs) * ps), term(acc.size()), next(acc.size());
    for (int64_t s = 0; s < k; ++s) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          std::memcpy(&a[static_cast<size_t>(i * m + j) * xs], xd + static_cast<size_t>(i * k + s) * xs, xs);
          std::memcpy(&b[static_cast<size_t>(i * m + j) * xs], yd + static_cast<size_t>(j * k + s) * xs, xs);
        }
      call.evaluate(kE, {xt.dtype, xt.dtype}, {a.data(), b.data()}, static_cast<uint64_t>(pairs), (s == 0 ? acc : term).data());
      if (s == 0) continue;
      call.evaluate(kCombine, {d.partial, d.partial}, {acc.data(), term.data()}, static_cast<uint64_t>(pairs), next.data());
      acc.swap(next);
    }
    if (call.operand(kR).kind == FUGUE_KIND_FUNCTION) call.evaluate(kR, {d.partial}, {acc.data()}, static_cast<uint64_t>(pairs), arrays[kD].data);
    else std::memcpy(arrays[kD].data, acc.data(), acc.size());
  }

 private:
  static Dtypes dtypes(const sdk::Call& call) {
    const fugue_dtype t = call.operand(kX).dtype;
    auto arity = [&](uint32_t k, uint32_t want, const std::string& operand, const std::string& what) {
      if (call.function_arity(k) != want)
        throw sdk::InvalidArgument("operand " + operand + ": expected " + what + ", found a function of " + std::to_string(call.function_arity(k)));
    };
    arity(kE, 2, "e", "a function of two elements (x, y)");
    arity(kCombine, 2, "combine", "a function of two partial results (a, b)");
    Dtypes d;
    d.partial = call.function_result(kE, {t, t});
    if (!(kResults & FUGUE_DTYPE_BIT(d.partial)))
      throw sdk::InvalidArgument(std::string("operand e: expected a function returning f32, f64, i32 or i64, found one returning ") + sdk::dtype_name(d.partial));
    const fugue_dtype combined = call.function_result(kCombine, {d.partial, d.partial});
    if (combined != d.partial)
      throw sdk::InvalidArgument(std::string("operand combine: expected a function returning its arguments' dtype (") + sdk::dtype_name(d.partial) +
                                 "), found one returning " + sdk::dtype_name(combined) + " (cast inside it)");
    d.result = d.partial;
    const fugue_type& r = call.operand(kR);
    // Left out, r is the number 0 (optional_in's default); any other number is a mistake.
    if (r.kind == FUGUE_KIND_CONST && r.const_value != 0)
      throw sdk::InvalidArgument("operand r: expected a function of the combined value, or nothing; found the number " + std::to_string(r.const_value));
    if (r.kind == FUGUE_KIND_FUNCTION) {
      arity(kR, 1, "r", "a function of the combined value (c)");
      d.result = call.function_result(kR, {d.partial});
      if (!(kResults & FUGUE_DTYPE_BIT(d.result)))
        throw sdk::InvalidArgument(std::string("operand r: expected a function returning f32, f64, i32 or i64, found one returning ") + sdk::dtype_name(d.result));
    }
    return d;
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> reduce_operation() { return std::make_unique<Reduce>(); }

}  // namespace fugue::pairwise
