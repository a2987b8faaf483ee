// trsm.cpp: linalg.trsm and linalg.trsv (see trsm.h).
#include "trsm.h"

#include <complex>
#include <string>
#include <vector>

#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kB = 1, kX = 2;

// One class for both: trsv is trsm on the left with a vector per matrix.
class TriangularSolve final : public sdk::Operation {
 public:
  explicit TriangularSolve(bool vector) : vector_(vector) {
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    name = vector ? "linalg.trsv" : "linalg.trsm";
    doc = vector ? "Solves op(A) x = b for a batch of triangular matrices A [..., n, n] (lower or upper, only that "
                   "triangle read; unit: ones on the diagonal, not read), op(A) = A, A^T or A^H (trans \"N\", \"T\" or \"C\"); "
                   "b and x [..., n]"
                 : "Solves op(A) X = alpha B (side \"L\", B [..., n, k]) or X op(A) = alpha B (side \"R\", B [..., m, n]) "
                   "for a batch of triangular matrices A [..., n, n] (lower or upper, only that triangle read; unit: ones on "
                   "the diagonal, not read), op(A) = A, A^T or A^H (trans \"N\", \"T\" or \"C\"); X of B's shape";
    operands = {sdk::in("A", array, kFloatDtypes, "triangular matrices [..., n, n]"),
                sdk::in(vector ? "b" : "B", array, kFloatDtypes, vector ? "right-hand sides [..., n]" : "right-hand sides"),
                sdk::out(vector ? "x" : "X", array, kFloatDtypes, "the solutions, of B's shape")};
    attrs = {{"lower", FUGUE_ATTR_BOOL, false, 1, "", "true: A is lower triangular; false: upper"},
             {"trans", FUGUE_ATTR_STRING, false, 0, "N", "\"N\": solve with A; \"T\": with A^T; \"C\": with A^H"},
             {"unit", FUGUE_ATTR_BOOL, false, 0, "", "true: A's diagonal is ones (not read)"}};
    if (!vector) {
      attrs.push_back({"side", FUGUE_ATTR_STRING, false, 0, "L", "\"L\": op(A) X = alpha B; \"R\": X op(A) = alpha B"});
      attrs.push_back({"alpha", FUGUE_ATTR_NUMBER, false, 1, "", "the factor of B"});
    }
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    // A from the spd generator: its triangles are well conditioned (a dominant diagonal).
    test_cases = vector ? R"([
      {"name": "3x3 lower", "inputs": {"A": {"kind": "array", "shape": [40, 3, 3], "from": {"spd": {"seed": 1}}},
                                        "b": {"kind": "array", "shape": [40, 3], "from": {"random": {"seed": 2}}}}},
      {"name": "12x12 upper transposed unit", "attrs": {"lower": false, "trans": "T", "unit": true},
       "inputs": {"A": {"kind": "array", "shape": [6, 12, 12], "from": {"spd": {"seed": 3}}},
                  "b": {"kind": "array", "shape": [6, 12], "from": {"random": {"seed": 4}}}}}
    ])"
                        : R"([
      {"name": "8x8 left, 3 columns", "attrs": {"alpha": 2},
       "inputs": {"A": {"kind": "array", "shape": [7, 8, 8], "from": {"spd": {"seed": 1}}},
                  "B": {"kind": "array", "shape": [7, 8, 3], "from": {"random": {"seed": 2}}}}},
      {"name": "5x5 right upper transposed", "attrs": {"side": "R", "lower": false, "trans": "T"},
       "inputs": {"A": {"kind": "array", "shape": [9, 5, 5], "from": {"spd": {"seed": 3}}},
                  "B": {"kind": "array", "shape": [9, 4, 5], "from": {"random": {"seed": 4}}}}},
      {"name": "20x20 right unit in teams", "attrs": {"side": "R", "unit": true},
       "inputs": {"A": {"kind": "array", "shape": [3, 20, 20], "from": {"spd": {"seed": 5}}},
                  "B": {"kind": "array", "shape": [3, 6, 20], "from": {"random": {"seed": 6}}}}},
      {"name": "6x6 right lower conjugate transposed", "attrs": {"side": "R", "trans": "C"},
       "inputs": {"A": {"kind": "array", "shape": [4, 6, 6], "from": {"spd": {"seed": 9}}},
                  "B": {"kind": "array", "shape": [4, 3, 6], "from": {"random": {"seed": 10}}}}},
      {"name": "20x20 left upper conjugate transposed in teams", "attrs": {"lower": false, "trans": "C"},
       "inputs": {"A": {"kind": "array", "shape": [3, 20, 20], "from": {"spd": {"seed": 11}}},
                  "B": {"kind": "array", "shape": [3, 20, 2], "from": {"random": {"seed": 12}}}}},
      {"name": "40x40 left transposed in teams", "attrs": {"trans": "T", "alpha": -1},
       "inputs": {"A": {"kind": "array", "shape": [2, 40, 40], "from": {"spd": {"seed": 7}}},
                  "B": {"kind": "array", "shape": [2, 40, 2], "from": {"random": {"seed": 8}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const int64_t n = square_order(a, "A");
    transpose_of(call, "trans");
    if (!vector_) call.number_for("alpha", a.dtype);  // a literal in the kernel
    if (vector_) {
      std::vector<int64_t> expected = batch_shape(a);
      expected.push_back(n);
      if (sdk::shape_of(b) != expected)
        throw sdk::InvalidArgument("operand b: expected a vector for each matrix of A, " +
                                   sdk::type_string(sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, expected)) + ", found " +
                                   sdk::type_string(b));
      if (b.dtype != a.dtype)
        throw sdk::InvalidArgument(std::string("operand b is ") + abi::dtype_name(b.dtype) + ", A " + abi::dtype_name(a.dtype) +
                                   ": they must have one dtype");
    } else if (one_of(call, "side", "L", "op(A) X = alpha B", "R", "X op(A) = alpha B") == "L") {
      require_right_hand_sides(b, a, "B", "A");
    } else {
      // X op(A) = alpha B: B [..., m, n], n columns.
      require_matrices(b, "B");
      if (b.rank != a.rank || batch_shape(b) != batch_shape(a) || columns_of(b) != n)
        throw sdk::InvalidArgument("operand B: with side \"R\" expected [..., m, " + std::to_string(n) +
                                   "] with A's batch axes (X op(A) = alpha B), found " + sdk::type_string(b));
      if (b.dtype != a.dtype)
        throw sdk::InvalidArgument(std::string("operand B is ") + abi::dtype_name(b.dtype) + ", A " + abi::dtype_name(a.dtype) +
                                   ": they must have one dtype");
    }
    types[kX] = sdk::make_type(FUGUE_KIND_ARRAY, b.dtype, sdk::shape_of(b));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Tuning tu = tuning_of(call);
    const int64_t n = columns_of(a);
    // potrf's and getrf's loop plans take one work-item: so does the solve, which joins them.
    const bool loops = loop_plan(tu, n);
    const int64_t team = loops ? 1 : team_size(tu, n);
    sdk::Plan plan = team_plan(batch_count(a), team);
    const sdk::Partition rhs = vector_ ? vector_batch(call.operand(kB)) : matrix_batch(call.operand(kB));
    plan.partitions = {matrix_batch(a), rhs, rhs};
    plan.registers = static_cast<uint32_t>(team == 1 && !loops ? n + 8 : 12);
    const int64_t rhs_elements = sdk::elements(call.operand(kB)) / batch_count(a);
    if ((team > 1 || loops) && fits_local(call, rhs_elements, a.dtype))
      plan.local_mem_bytes = static_cast<uint64_t>(rhs_elements) * abi::dtype_size(a.dtype);
    const std::string where = plan.local_mem_bytes ? "the solution in local memory" : "the solution in X's storage";
    plan.variant = loops ? loop_variant_text(tu, n, where) : variant_text(tu, n, team, false, team == 1 ? "" : where);
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const int64_t n = columns_of(a);
    const bool right = right_side(call), lower = call.flag("lower");
    const char op = transpose_of(call, "trans");
    const bool transposed = op != 'N', conjugated = op == 'C';
    const Scalars sc(a.dtype);
    // Right: X op(A) = alpha B is op(A)^T X^T = alpha B^T; the right-hand sides are X's rows.
    const int64_t columns = vector_ ? 1 : right ? rows_of(b) : columns_of(b);
    const std::string N = std::to_string(n), W = std::to_string(vector_ ? 1 : columns_of(b));
    auto at = [&](const std::string& i, const std::string& j) { return "(" + i + ") * " + W + " + (" + j + ")"; };
    auto place = [&](const std::string& i, const std::string& j) { return right ? at(j, i) : at(i, j); };
    const ElementAt rhs = [&](const std::string& i, const std::string& j) { return em.read_at(kB, place(i, j)); };
    const RightHandSides x{[&](const std::string& i, const std::string& j) { return em.read_at(kX, place(i, j)); },
                           [&](const std::string& i, const std::string& j) { return em.write_at(kX, place(i, j)); }, n, columns};
    // The triangle solved with: op(A) on the left, op(A)^T on the right (a plain transpose: conj(A) for "C").
    const bool flip = transposed != right;
    const ElementAt element = [&](const std::string& i, const std::string& j) {
      const std::string v = em.read_at(kA, flip ? "(" + j + ") * " + N + " + (" + i + ")" : "(" + i + ") * " + N + " + (" + j + ")");
      return conjugated ? sc.conj(v) : v;
    };
    const Triangle t{element, flip ? !lower : lower, call.flag("unit")};
    const double alpha = vector_ ? 1.0 : call.number("alpha");
    // A real alpha scales both parts of a complex value (scalar times vector).
    em.append(solve_all(em, a.dtype, rhs, x, {t}, alpha == 1 ? "" : sc.real(alpha), fits_local(call, n * columns, a.dtype),
                        em.local_size() == 1 && !loop_plan(tuning_of(call), n)));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const double n = static_cast<double>(columns_of(a)), rhs = static_cast<double>(sdk::elements(b)) / batch_count(a);
    const double count = static_cast<double>(batch_count(a)), size = abi::dtype_size(a.dtype);
    return {sizeof(fugue_cost), count * (n * (n + 1) / 2 + 2 * rhs) * size, (Scalars(a.dtype).complex ? 4 : 1) * count * n * rhs};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]);
    const fugue_type &at = call.operand(kA), &bt = call.operand(kB);
    const int64_t n = columns_of(at), count = batch_count(at), per_entry = sdk::elements(bt) / count;
    const char op = transpose_of(call, "trans");
    const bool right = right_side(call), transposed = op != 'N', conjugated = op == 'C', lower = call.flag("lower"),
               unit = call.flag("unit");
    const int64_t columns = per_entry / n, width = vector_ ? 1 : columns_of(bt);
    const long double alpha = vector_ ? 1.0L : call.number("alpha");
    std::vector<Complex> t(static_cast<size_t>(n * n)), y(static_cast<size_t>(n));
    for (int64_t e = 0; e < count; ++e) {
      // t = op(A) (left) or op(A)^T (right), its other triangle zero, then solved column by column.
      const bool flip = transposed != right;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const int64_t r = flip ? j : i, c = flip ? i : j;  // the element of A
          const bool inside = lower ? c <= r : c >= r;
          const Complex v = get_value(a, e * n * n + r * n + c);
          t[i * n + j] = r == c && unit ? Complex(1) : inside ? (conjugated ? std::conj(v) : v) : Complex(0);
        }
      const bool solve_lower = flip ? !lower : lower;
      for (int64_t c = 0; c < columns; ++c) {
        auto place = [&](int64_t i) { return e * per_entry + (right ? c * width + i : i * width + c); };
        for (int64_t i = 0; i < n; ++i) y[i] = alpha * get_value(b, place(i));
        for (int64_t s = 0; s < n; ++s) {
          const int64_t i = solve_lower ? s : n - 1 - s;
          for (int64_t j = 0; j < n; ++j)
            if (j != i && (solve_lower ? j < i : j > i)) y[i] -= t[i * n + j] * y[j];
          y[i] /= t[i * n + i];
        }
        for (int64_t i = 0; i < n; ++i) set_value(x, place(i), y[i]);
      }
    }
  }

 private:
  bool right_side(const sdk::Call& call) const { return !vector_ && call.string("side") == "R"; }
  bool vector_;
};

}  // namespace

std::unique_ptr<sdk::Operation> trsm_operation() { return std::make_unique<TriangularSolve>(false); }
std::unique_ptr<sdk::Operation> trsv_operation() { return std::make_unique<TriangularSolve>(true); }

}  // namespace fugue::linalg
