// gemv.cpp: linalg.gemv (see gemv.h).
#include "gemv.h"

#include <string>
#include <vector>

#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kX = 1, kY = 2;
// Rows a work-item keeps in registers when y is written over x (the program names one array for both).
constexpr int64_t kMaxTripsInPlace = 4;

struct Sizes {
  int64_t rows, columns;  // of op(A)
  bool transposed, conjugated;
  Tuning tuning;
  int64_t team;  // one work-item per matrix up to the row's register_order rows, else one per row
};

Sizes sizes_of(const sdk::Call& call) {
  const fugue_type& a = call.operand(kA);
  Sizes s;
  const char op = transpose_of(call, "trans");
  s.transposed = op != 'N';
  s.conjugated = op == 'C';
  s.rows = s.transposed ? columns_of(a) : rows_of(a);
  s.columns = s.transposed ? rows_of(a) : columns_of(a);
  s.tuning = tuning_of(call);
  s.team = team_size(s.tuning, s.rows);
  return s;
}

class Gemv final : public sdk::Operation {
 public:
  Gemv() {
    name = "linalg.gemv";
    doc = "Batched matrix-vector products y = alpha op(A) x: A [..., m, n], x [..., n] and y [..., m] (trans \"N\"), or x "
          "[..., m] and y [..., n] (trans \"T\", or \"C\" for A's conjugate transpose), the batch axes equal";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., m, n]"),
                sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "vectors [..., n] (trans \"T\": [..., m])"),
                sdk::out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the products [..., m] (trans \"T\": [..., n])")};
    attrs = {{"trans", FUGUE_ATTR_STRING, false, 0, "N", "\"N\": A as stored; \"T\": A transposed; \"C\": conjugate transposed (\"T\" for reals)"},
             {"alpha", FUGUE_ATTR_NUMBER, false, 1, "", "the (real) factor of the product"}};
    tolerance_f32 = 1e-4;
    tolerance_f64 = 1e-12;
    test_cases = R"([
      {"name": "3x5", "inputs": {"A": {"kind": "array", "shape": [30, 3, 5], "from": {"random": {"seed": 1}}},
                                  "x": {"kind": "array", "shape": [30, 5], "from": {"random": {"seed": 2}}}}},
      {"name": "20x7 transposed, alpha", "attrs": {"trans": "T", "alpha": -2},
       "inputs": {"A": {"kind": "array", "shape": [2, 4, 20, 7], "from": {"random": {"seed": 3}}},
                  "x": {"kind": "array", "shape": [2, 4, 20], "from": {"random": {"seed": 4}}}}},
      {"name": "70x33 in teams", "inputs": {"A": {"kind": "array", "shape": [3, 70, 33], "from": {"random": {"seed": 5}}},
                                             "x": {"kind": "array", "shape": [3, 33], "from": {"random": {"seed": 6}}}}},
      {"name": "6x4 conjugate transposed", "attrs": {"trans": "C", "alpha": 0.5},
       "inputs": {"A": {"kind": "array", "shape": [11, 6, 4], "from": {"random": {"seed": 7}}},
                  "x": {"kind": "array", "shape": [11, 6], "from": {"random": {"seed": 8}}}}},
      {"name": "40x20 conjugate transposed in teams", "attrs": {"trans": "C"},
       "inputs": {"A": {"kind": "array", "shape": [2, 40, 20], "from": {"random": {"seed": 9}}},
                  "x": {"kind": "array", "shape": [2, 40], "from": {"random": {"seed": 10}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &a = call.operand(kA), &x = call.operand(kX);
    require_matrices(a, "A");
    call.number_for("alpha", a.dtype);  // a literal in the kernel
    const std::string trans(1, transpose_of(call, "trans"));
    const Sizes s = sizes_of(call);
    std::vector<int64_t> expected = batch_shape(a), out = batch_shape(a);
    expected.push_back(s.columns);
    out.push_back(s.rows);
    if (sdk::shape_of(x) != expected)
      throw sdk::InvalidArgument("operand x: expected " + sdk::type_string(sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, expected)) +
                                 " (a vector for each matrix of A, " + std::to_string(s.columns) + " long with trans \"" + trans +
                                 "\"), found " + sdk::type_string(x));
    if (x.dtype != a.dtype)
      throw sdk::InvalidArgument(std::string("operand x is ") + abi::dtype_name(x.dtype) + ", A " + abi::dtype_name(a.dtype) +
                                 ": they must have one dtype");
    types[kY] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, out);
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    sdk::Plan plan = team_plan(batch_count(call.operand(kA)), s.team);
    plan.partitions = {matrix_batch(call.operand(kA)), vector_batch(call.operand(kX)), vector_batch(call.operand(kY))};
    plan.registers = 8;
    plan.variant = (s.team == 1 ? std::string("one work-item per matrix") : "a team of " + std::to_string(s.team) + " per matrix, a row each") +
                   " (" + std::to_string(s.rows) + " rows of op(A), one work-item up to " + std::to_string(s.tuning.register_order) + "); " + s.tuning.row;
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const Sizes s = sizes_of(call);
    const fugue_dtype dtype = call.operand(kA).dtype;
    const Scalars sc(dtype);
    const std::string t = sc.type, lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    const std::string q = em.name("q"), i = em.name("i"), j = em.name("j"), sum = em.name("sum"), lda = std::to_string(columns_of(call.operand(kA)));
    const double alpha = call.number("alpha");
    const std::string stored = em.read_at(kA, s.transposed ? "(" + j + ") * " + lda + " + " + i : "(" + i + ") * " + lda + " + " + j);
    const std::string a_ij = s.conjugated ? sc.conj(stored) : stored;
    const std::string dot = "    " + t + " " + sum + " = " + sc.literal(0) + ";\n    for (int " + j + " = 0; " + j + " < " + std::to_string(s.columns) +
                            "; ++" + j + ") " + sum + " += " + sc.mul(a_ij, em.read_at(kX, j)) + ";\n";
    const std::string value = alpha == 1 ? sum : sc.real(alpha) + " * " + sum;  // a real times a complex: both parts
    const int64_t trips = (s.rows + s.team - 1) / s.team;
    // y written over x: every row computed before any is written, the work-item's rows in registers.
    const bool over_input = em.write_at(kY, "0") == em.read_at(kX, "0");
    if (!over_input) {
      em.append(team_loop(q, lane, s.team, i, s.rows, std::to_string(s.rows), dot + "    " + em.write_at(kY, i) + " = " + value + ";\n"));
      return;
    }
    if (trips > kMaxTripsInPlace)
      throw sdk::Unsupported("y is written over its input x, which is supported up to " + std::to_string(kMaxTripsInPlace * 256) +
                             " rows; this product has " + std::to_string(s.rows) + ": give y a name of its own");
    const std::string kept = em.name("kept");
    auto rows_loop = [&](const std::string& body) {
      return "for (int " + q + " = 0; " + q + " < " + std::to_string(trips) + "; ++" + q + ") {\n  const int " + i + " = " + q + " * " +
             std::to_string(s.team) + " + " + lane + ";\n  if (" + i + " < " + std::to_string(s.rows) + ") {\n" + body + "  }\n}\n";
    };
    em.append(t + " " + kept + "[" + std::to_string(trips) + "];\n" + rows_loop(dot + "    " + kept + "[" + q + "] = " + value + ";\n") +
              em.barrier() + "\n" + rows_loop("    " + em.write_at(kY, i) + " = " + kept + "[" + q + "];\n"));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    const double count = static_cast<double>(batch_count(call.operand(kA))), size = abi::dtype_size(call.operand(kA).dtype);
    const double m = static_cast<double>(s.rows), n = static_cast<double>(s.columns);
    return {sizeof(fugue_cost), count * (m * n + m + n) * size, count * 2 * m * n};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]), x(arrays[kX]);
    sdk::HostView y(arrays[kY]);
    const Sizes s = sizes_of(call);
    const int64_t count = batch_count(call.operand(kA)), lda = columns_of(call.operand(kA));
    const long double alpha = call.number("alpha");
    for (int64_t e = 0; e < count; ++e)
      for (int64_t i = 0; i < s.rows; ++i) {
        Complex sum = 0;
        for (int64_t j = 0; j < s.columns; ++j) {
          const Complex a_ij = get_value(a, e * s.rows * s.columns + (s.transposed ? j * lda + i : i * lda + j));
          sum += (s.conjugated ? std::conj(a_ij) : a_ij) * get_value(x, e * s.columns + j);
        }
        set_value(y, e * s.rows + i, alpha * sum);
      }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> gemv_operation() { return std::make_unique<Gemv>(); }

}  // namespace fugue::linalg
