// potrs.cpp: linalg.potrs (see potrs.h).
#include "potrs.h"

#include <string>
#include <vector>

#include "cholesky.h"
#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kL = 0, kB = 1, kX = 2;

class Potrs final : public sdk::Operation {
 public:
  Potrs() {
    name = "linalg.potrs";
    doc = "Solves A X = B for a batch of symmetric positive definite A given their Cholesky factors (linalg.potrf): L "
          "[..., n, n] with A = L L^T (lower, the default) or U with A = U^T U (lower false), only that triangle read; B "
          "[..., n, k]; X of B's shape";
    operands = {sdk::in("L", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "Cholesky factors [..., n, n]"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "right-hand sides [..., n, k]"),
                sdk::out("X", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the solutions, of B's shape")};
    attrs = {{"lower", FUGUE_ATTR_BOOL, false, 1, "", "true: L is lower, A = L L^T; false: upper, A = U^T U"}};
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    test_cases = R"([
      {"name": "3x3, one column", "inputs": {"L": {"kind": "array", "shape": [40, 3, 3], "from": {"spd": {"seed": 1}}},
                                              "B": {"kind": "array", "shape": [40, 3, 1], "from": {"random": {"seed": 2}}}}},
      {"name": "8x8 upper, 3 columns", "attrs": {"lower": false},
       "inputs": {"L": {"kind": "array", "shape": [7, 8, 8], "from": {"spd": {"seed": 3}}},
                  "B": {"kind": "array", "shape": [7, 8, 3], "from": {"random": {"seed": 4}}}}},
      {"name": "20x20 in teams", "inputs": {"L": {"kind": "array", "shape": [5, 20, 20], "from": {"spd": {"seed": 5}}},
                                             "B": {"kind": "array", "shape": [5, 20, 4], "from": {"random": {"seed": 6}}}}},
      {"name": "40x40 upper in teams", "attrs": {"lower": false},
       "inputs": {"L": {"kind": "array", "shape": [2, 40, 40], "from": {"spd": {"seed": 7}}},
                  "B": {"kind": "array", "shape": [2, 40, 2], "from": {"random": {"seed": 8}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &l = call.operand(kL), &b = call.operand(kB);
    square_order(l, "L");
    require_right_hand_sides(b, l, "B", "L");
    types[kX] = sdk::make_type(FUGUE_KIND_ARRAY, b.dtype, sdk::shape_of(b));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type &l = call.operand(kL), &b = call.operand(kB);
    const Tuning tu = tuning_of(call);
    const int64_t n = columns_of(l);
    // potrf's loop plan takes one work-item: so does the solve, which joins it.
    const bool loops = loop_plan(tu, n);
    const int64_t team = loops ? 1 : team_size(tu, n);
    sdk::Plan plan = team_plan(batch_count(l), team);
    plan.partitions = {matrix_batch(l), matrix_batch(b), matrix_batch(call.operand(kX))};
    plan.registers = static_cast<uint32_t>(team == 1 && !loops ? n + 8 : 12);
    if ((team > 1 || loops) && fits_local(call, n * columns_of(b), l.dtype))
      plan.local_mem_bytes = static_cast<uint64_t>(n * columns_of(b)) * abi::dtype_size(l.dtype);
    const std::string where = plan.local_mem_bytes ? "the solution in local memory" : "the solution in X's storage";
    plan.variant = loops ? loop_variant_text(tu, n, where) : variant_text(tu, n, team, false, team == 1 ? "" : where);
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &l = call.operand(kL), &b = call.operand(kB);
    const int64_t n = columns_of(l), k = columns_of(b);
    const bool lower = call.flag("lower");
    const std::string N = std::to_string(n), K = std::to_string(k);
    const ElementAt factor = [&](const std::string& i, const std::string& j) { return em.read_at(kL, "(" + i + ") * " + N + " + (" + j + ")"); };
    const Scalars sc(l.dtype);
    const ElementAt transposed = [&](const std::string& i, const std::string& j) { return sc.conj(factor(j, i)); };  // L^H
    // A = L L^T: L y = b, then L^T x = y; A = U^T U: U^T y = b, then U x = y.
    const Triangle first{lower ? factor : transposed, true, false}, second{lower ? transposed : factor, false, false};
    const ElementAt rhs = [&](const std::string& i, const std::string& j) { return em.read_at(kB, "(" + i + ") * " + K + " + (" + j + ")"); };
    const RightHandSides x{[&](const std::string& i, const std::string& j) { return em.read_at(kX, "(" + i + ") * " + K + " + (" + j + ")"); },
                           [&](const std::string& i, const std::string& j) { return em.write_at(kX, "(" + i + ") * " + K + " + (" + j + ")"); },
                           n, k};
    em.append(solve_all(em, l.dtype, rhs, x, {first, second}, "", fits_local(call, n * k, l.dtype), em.local_size() == 1 && !loop_plan(tuning_of(call), n)));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &l = call.operand(kL), &b = call.operand(kB);
    const double n = static_cast<double>(columns_of(l)), k = static_cast<double>(columns_of(b));
    const double count = static_cast<double>(batch_count(l)), size = abi::dtype_size(l.dtype);
    return {sizeof(fugue_cost), count * (n * n + 2 * n * k) * size, count * 2 * n * n * k};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView l(arrays[kL]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]);
    const fugue_type &lt = call.operand(kL), &bt = call.operand(kB);
    const int64_t n = columns_of(lt), k = columns_of(bt), count = batch_count(lt);
    const bool lower = call.flag("lower");
    std::vector<Complex> f(static_cast<size_t>(n * n)), y(static_cast<size_t>(n));
    for (int64_t e = 0; e < count; ++e) {
      // f: the lower factor (L, or U^H), only its lower triangle read.
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j)
          f[i * n + j] = lower ? get_value(l, e * n * n + i * n + j) : std::conj(get_value(l, e * n * n + j * n + i));
      for (int64_t c = 0; c < k; ++c) {
        for (int64_t i = 0; i < n; ++i) y[i] = get_value(b, e * n * k + i * k + c);
        cholesky_solve_reference(f, n, y);
        for (int64_t i = 0; i < n; ++i) set_value(x, e * n * k + i * k + c, y[i]);
      }
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> potrs_operation() { return std::make_unique<Potrs>(); }

}  // namespace fugue::linalg
