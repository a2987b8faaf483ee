// getrs.cpp: linalg.getrs (see getrs.h).
#include "getrs.h"

#include <string>
#include <vector>

#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kLU = 0, kIpiv = 1, kB = 2, kX = 3;

class Getrs final : public sdk::Operation {
 public:
  Getrs() {
    name = "linalg.getrs";
    doc = "Solves A X = B (trans \"N\"), A^T X = B (\"T\") or A^H X = B (\"C\") for a batch of matrices given their LU "
          "factors and pivots "
          "(linalg.getrf): LU [..., n, n], ipiv i32 [..., n] (1-based), B [..., n, k]; X of B's shape, NaN for a matrix "
          "whose pivots are not within 1..n";
    operands = {sdk::in("LU", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "LU factors [..., n, n] (linalg.getrf)"),
                sdk::in("ipiv", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32), "pivots [..., n], 1-based"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "right-hand sides [..., n, k]"),
                sdk::out("X", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the solutions, of B's shape")};
    attrs = {{"trans", FUGUE_ATTR_STRING, false, 0, "N", "\"N\": solve A X = B; \"T\": A^T X = B; \"C\": A^H X = B (A^T X = B for reals)"}};
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    test_cases = R"([
      {"name": "3x3, one column", "inputs": {"LU": {"kind": "array", "shape": [40, 3, 3], "from": {"spd": {"seed": 1}}},
                                               "ipiv": {"kind": "array", "dtype": "i32", "shape": [40, 3], "from": {"random": {"seed": 9, "low": 1, "high": 3}}},
                                               "B": {"kind": "array", "shape": [40, 3, 1], "from": {"random": {"seed": 2}}}}},
      {"name": "8x8 transposed, 3 columns", "attrs": {"trans": "T"},
       "inputs": {"LU": {"kind": "array", "shape": [7, 8, 8], "from": {"spd": {"seed": 3}}},
                  "ipiv": {"kind": "array", "dtype": "i32", "shape": [7, 8], "from": {"random": {"seed": 9, "low": 1, "high": 8}}},
                  "B": {"kind": "array", "shape": [7, 8, 3], "from": {"random": {"seed": 4}}}}},
      {"name": "20x20 in teams", "inputs": {"LU": {"kind": "array", "shape": [5, 20, 20], "from": {"spd": {"seed": 5}}},
                                             "ipiv": {"kind": "array", "dtype": "i32", "shape": [5, 20], "from": {"random": {"seed": 9, "low": 1, "high": 20}}},
                                             "B": {"kind": "array", "shape": [5, 20, 4], "from": {"random": {"seed": 6}}}}},
      {"name": "40x40 transposed in teams", "attrs": {"trans": "T"},
       "inputs": {"LU": {"kind": "array", "shape": [2, 40, 40], "from": {"spd": {"seed": 7}}},
                  "ipiv": {"kind": "array", "dtype": "i32", "shape": [2, 40], "from": {"random": {"seed": 9, "low": 1, "high": 40}}},
                  "B": {"kind": "array", "shape": [2, 40, 2], "from": {"random": {"seed": 8}}}}},
      {"name": "5x5 conjugate transposed", "attrs": {"trans": "C"},
       "inputs": {"LU": {"kind": "array", "shape": [9, 5, 5], "from": {"spd": {"seed": 10}}},
                  "ipiv": {"kind": "array", "dtype": "i32", "shape": [9, 5], "from": {"random": {"seed": 9, "low": 1, "high": 5}}},
                  "B": {"kind": "array", "shape": [9, 5, 2], "from": {"random": {"seed": 11}}}}},
      {"name": "24x24 conjugate transposed in teams", "attrs": {"trans": "C"},
       "inputs": {"LU": {"kind": "array", "shape": [3, 24, 24], "from": {"spd": {"seed": 14}}},
                  "ipiv": {"kind": "array", "dtype": "i32", "shape": [3, 24], "from": {"random": {"seed": 9, "low": 1, "high": 24}}},
                  "B": {"kind": "array", "shape": [3, 24, 3], "from": {"random": {"seed": 15}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &lu = call.operand(kLU), &ipiv = call.operand(kIpiv), &b = call.operand(kB);
    const int64_t n = square_order(lu, "LU");
    std::vector<int64_t> pivots = batch_shape(lu);
    pivots.push_back(n);
    if (sdk::shape_of(ipiv) != pivots)
      throw sdk::InvalidArgument("operand ipiv: expected the pivots of LU's matrices, " +
                                 sdk::type_string(sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, pivots)) + ", found " +
                                 sdk::type_string(ipiv));
    require_right_hand_sides(b, lu, "B", "LU");
    transpose_of(call, "trans");
    types[kX] = sdk::make_type(FUGUE_KIND_ARRAY, b.dtype, sdk::shape_of(b));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type &lu = call.operand(kLU), &b = call.operand(kB);
    const Tuning tu = tuning_of(call);
    const int64_t n = columns_of(lu);
    // getrf's loop plan takes one work-item: so does the solve, which joins it.
    const bool loops = loop_plan(tu, n);
    const int64_t team = loops ? 1 : team_size(tu, n);
    sdk::Plan plan = team_plan(batch_count(lu), team);
    plan.partitions = {matrix_batch(lu), vector_batch(call.operand(kIpiv)), matrix_batch(b), matrix_batch(call.operand(kX))};
    plan.registers = static_cast<uint32_t>(team == 1 && !loops ? n + 8 : 12);
    if ((team > 1 || loops) && fits_local(call, n * columns_of(b), lu.dtype))
      plan.local_mem_bytes = static_cast<uint64_t>(n * columns_of(b)) * abi::dtype_size(lu.dtype);
    const std::string where = plan.local_mem_bytes ? "the solution in local memory" : "the solution in X's storage";
    plan.variant = loops ? loop_variant_text(tu, n, where) : variant_text(tu, n, team, false, team == 1 ? "" : where);
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &lu = call.operand(kLU), &b = call.operand(kB);
    const int64_t n = columns_of(lu), k = columns_of(b);
    const char op = transpose_of(call, "trans");
    const bool transposed = op != 'N', conjugated = op == 'C';
    const Scalars sc(lu.dtype);
    const std::string N = std::to_string(n), K = std::to_string(k), t = sc.type;
    const ElementAt factor = [&](const std::string& i, const std::string& j) { return em.read_at(kLU, "(" + i + ") * " + N + " + (" + j + ")"); };
    const ElementAt transpose = [&](const std::string& i, const std::string& j) { return conjugated ? sc.conj(factor(j, i)) : factor(j, i); };
    // A = P L U. A X = B: X = U^-1 L^-1 P^T B (the swaps in order); A^T X = B: X = P L^-T U^-T B (U^T
    // first, the swaps in reverse order); A^H the same with the factors conjugated.
    const Triangle l{factor, true, true}, u{factor, false, false}, ut{transpose, true, false}, lt{transpose, false, true};
    const Triangle& first = transposed ? ut : l;
    const Triangle& second = transposed ? lt : u;
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const std::string row = em.name("row"), bad = em.name("bad"), s = em.name("s"), p = em.name("p"), c = em.name("c"), x = em.name("x"),
                      q = em.name("q"), e = em.name("e"), tmp = em.name("tmp"), i = em.name("i");
    std::map<std::string, std::string> vars = {{"bad", bad}, {"s", s}, {"p", p}, {"c", c}, {"x", x}, {"t", t}, {"N", N},
                                               {"K", K}, {"tmp", tmp}, {"i", i}, {"e", e}};
    // Every work-item checks every pivot (the same answer everywhere) before any is used.
    std::string code = fill("bool $bad = false;\nfor (int $s = 0; $s < $N; ++$s) {\n  const int $p = ", vars) +
                       em.read_at(kIpiv, s) + fill(";\n  $bad = $bad || $p < 1 || $p > $N;\n}\n", vars);
    if (em.local_size() == 1 && !loop_plan(tuning_of(call), n)) {
      code += fill("for (int $c = 0; $c < $K; ++$c) {\n$t $x[$N];\n", vars);
      for (int64_t r = 0; r < n; ++r)
        code += x + "[" + std::to_string(r) + "] = " + em.read_at(kB, std::to_string(r) + " * " + K + " + " + c) + ";\n";
      std::string swaps;
      for (int64_t o = 0; o < n; ++o) {
        const int64_t row = transposed ? n - 1 - o : o;
        swaps += "{\n  const int " + p + " = " + pivot_at(em, std::to_string(row), n) + ";\n";
        for (int64_t r = 0; r < n; ++r)
          if (r != row)
            swaps += fill("  if ($p == $r) { const $t $tmp = $x[$row]; $x[$row] = $x[$r]; $x[$r] = $tmp; }\n",
                          {{"p", p}, {"r", std::to_string(r)}, {"t", t}, {"tmp", tmp}, {"x", x}, {"row", std::to_string(row)}});
        swaps += "}\n";
      }
      if (!transposed) code += swaps;
      code += register_solve(sc, first, n, x) + register_solve(sc, second, n, x);
      if (transposed) code += swaps;
      for (int64_t r = 0; r < n; ++r)
        code += em.write_at(kX, std::to_string(r) + " * " + K + " + " + c) + " = " + bad + " ? " + sc.nan() + " : " + x + "[" +
                std::to_string(r) + "];\n";
      em.append(code + "}\n");
      return;
    }
    // The solution in a local array of its own where it fits (written out once at the end), else in X's storage.
    const bool in_local = fits_local(call, n * k, lu.dtype);
    const std::string w = in_local ? em.local_array(lu.dtype, n * k, "solution") : "";
    auto place = [&](const std::string& r, const std::string& j) { return "(" + r + ") * " + K + " + (" + j + ")"; };
    const RightHandSides rhs{[&](const std::string& r, const std::string& j) { return in_local ? w + "[" + place(r, j) + "]" : em.read_at(kX, place(r, j)); },
                             [&](const std::string& r, const std::string& j) { return in_local ? w + "[" + place(r, j) + "]" : em.write_at(kX, place(r, j)); },
                             n, k};
    const std::string work = in_local ? w + "[" + e + "]" : em.write_at(kX, e);
    // Each work-item swaps whole columns of X, in order: no barrier between the swaps.
    std::string swaps = team_loop(q, lane, em.local_size(), c, k, K,
                                  fill("    for (int $s = 0; $s < $N; ++$s) {\n", vars) +
                                      "      const int " + row + " = " + (transposed ? std::to_string(n - 1) + " - " + s : s) + ";\n" +
                                      "      const int " + p + " = " + pivot_at(em, row, n) + ";\n" +
                                      fill("      const $t $tmp = ", vars) + rhs.read(row, c) + ";\n      " +
                                      rhs.write(row, c) + " = " + rhs.read(p, c) + ";\n      " + rhs.write(p, c) + " = " +
                                      tmp + ";\n    }\n");
    swaps += sync;
    code += team_loop(q, lane, em.local_size(), e, n * k, std::to_string(n * k), "    " + work + " = " + em.read_at(kB, e) + ";\n");
    code += sync;
    if (!transposed) code += swaps;
    code += team_solve(em, sc, first, rhs) + team_solve(em, sc, second, rhs);
    if (transposed) code += swaps;
    // Out (NaN where a pivot was bad); each element is one work-item's, as in the copy before.
    code += team_loop(q, lane, em.local_size(), e, n * k, std::to_string(n * k),
                      "    " + em.write_at(kX, e) + " = " + bad + " ? " + sc.nan() + " : " + (in_local ? w + "[" + e + "]" : em.read_at(kX, e)) + ";\n");
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &lu = call.operand(kLU), &b = call.operand(kB);
    const double n = static_cast<double>(columns_of(lu)), k = static_cast<double>(columns_of(b));
    const double count = static_cast<double>(batch_count(lu)), size = abi::dtype_size(lu.dtype);
    return {sizeof(fugue_cost), count * ((n * n + 2 * n * k) * size + 4 * n), count * 2 * n * n * k};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView lu(arrays[kLU]), ipiv(arrays[kIpiv]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]);
    const fugue_type &lt = call.operand(kLU), &bt = call.operand(kB);
    const int64_t n = columns_of(lt), k = columns_of(bt), count = batch_count(lt);
    const char op = transpose_of(call, "trans");
    const bool transposed = op != 'N', conjugated = op == 'C';
    std::vector<Complex> y(static_cast<size_t>(n));
    std::vector<int64_t> pivots(static_cast<size_t>(n));
    for (int64_t e = 0; e < count; ++e) {
      auto f = [&](int64_t i, int64_t j) { return get_value(lu, e * n * n + i * n + j); };
      // The factors as the transposed solve reads them: conjugated for A^H.
      auto ft = [&](int64_t i, int64_t j) { return conjugated ? std::conj(f(j, i)) : f(j, i); };
      bool bad = false;
      for (int64_t s = 0; s < n; ++s) {
        pivots[s] = ipiv.get_int(e * n + s) - 1;
        bad = bad || pivots[s] < 0 || pivots[s] >= n;
      }
      for (int64_t c = 0; c < k; ++c) {
        for (int64_t i = 0; i < n; ++i) y[i] = get_value(b, e * n * k + i * k + c);
        if (!bad && !transposed) {
          for (int64_t s = 0; s < n; ++s) std::swap(y[s], y[pivots[s]]);
          for (int64_t i = 0; i < n; ++i)  // L, unit diagonal
            for (int64_t j = 0; j < i; ++j) y[i] -= f(i, j) * y[j];
          for (int64_t i = n - 1; i >= 0; --i) {  // U
            for (int64_t j = i + 1; j < n; ++j) y[i] -= f(i, j) * y[j];
            y[i] /= f(i, i);
          }
        } else if (!bad) {
          for (int64_t i = 0; i < n; ++i) {  // U^T (U^H)
            for (int64_t j = 0; j < i; ++j) y[i] -= ft(i, j) * y[j];
            y[i] /= ft(i, i);
          }
          for (int64_t i = n - 1; i >= 0; --i)  // L^T (L^H), unit diagonal
            for (int64_t j = i + 1; j < n; ++j) y[i] -= ft(i, j) * y[j];
          for (int64_t s = n - 1; s >= 0; --s) std::swap(y[s], y[pivots[s]]);
        }
        for (int64_t i = 0; i < n; ++i) set_value(x, e * n * k + i * k + c, bad ? Complex(std::nanl(""), std::nanl("")) : y[i]);
      }
    }
  }

 private:
  // Pivot `row` (an expression) as a 0-based row, kept inside the matrix (a bad pivot's solution is
  // replaced by NaN afterwards; clamping keeps its swaps in bounds meanwhile).
  static std::string pivot_at(const sdk::Emitter& em, const std::string& row, int64_t n) {
    return "clamp(" + em.read_at(kIpiv, row) + " - 1, 0, " + std::to_string(n - 1) + ")";
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> getrs_operation() { return std::make_unique<Getrs>(); }

}  // namespace fugue::linalg
