// posv.cpp: linalg.posv (see posv.h).
#include "posv.h"

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "cholesky.h"
#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kB = 1, kX = 2, kInfo = 3;

// Whether a team keeps the factor and the solution in local memory (else the factor goes to a workspace).
bool in_local(const sdk::Call& call) {
  const int64_t n = columns_of(call.operand(kA)), k = columns_of(call.operand(kB));
  return fits_local(call, n * n + n * k, call.operand(kA).dtype);
}

// The rows plan's local memory, in values: potrf's column, the factor's rows a spare element apart (for
// the backward solve) and a slot per solved row of right-hand sides.
int64_t rows_locals(int64_t n, int64_t k) { return n + n * (n + 1) + n * k; }

// Whether a team takes potrf's rows plan (tuning.h's row_plan), with a row of B in each work-item's
// registers too (k up to row_order), where its local arrays fit.
bool in_rows(const sdk::Call& call) {
  const int64_t n = columns_of(call.operand(kA)), k = columns_of(call.operand(kB));
  const Tuning t = tuning_of(call);
  return row_plan(t, n) && k <= t.row_order && fits_local(call, rows_locals(n, k), call.operand(kA).dtype);
}

class Posv final : public sdk::Operation {
 public:
  Posv() {
    name = "linalg.posv";
    doc = "Solves A X = B for a batch of symmetric positive definite matrices A [..., n, n] through their Cholesky "
          "factors (LAPACK's posv; the factor stays inside the kernel), from A's lower triangle (upper with lower "
          "false); B [..., n, k], X of B's shape; info (optional) per matrix as potrf's: 0, or k when the leading "
          "minor of order k is not positive definite (that X is then NaN)";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "symmetric (Hermitian) positive definite matrices [..., n, n]"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "right-hand sides [..., n, k]"),
                sdk::out("X", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the solutions, of B's shape"),
                sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                  "i32 per matrix [...]: 0 or the order of the first leading minor that is not positive definite")};
    attrs = {{"lower", FUGUE_ATTR_BOOL, false, 1, "", "true: factor A's lower triangle; false: its upper"}};
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    test_cases = R"([
      {"name": "3x3, one column, in registers", "inputs": {"A": {"kind": "array", "shape": [40, 3, 3], "from": {"spd": {"seed": 1}}},
                                                            "B": {"kind": "array", "shape": [40, 3, 1], "from": {"random": {"seed": 2}}}}},
      {"name": "8x8 upper, 3 columns", "attrs": {"lower": false},
       "inputs": {"A": {"kind": "array", "shape": [7, 8, 8], "from": {"spd": {"seed": 3}}},
                  "B": {"kind": "array", "shape": [7, 8, 3], "from": {"random": {"seed": 4}}}}},
      {"name": "20x20 in teams", "inputs": {"A": {"kind": "array", "shape": [5, 20, 20], "from": {"spd": {"seed": 5}}},
                                             "B": {"kind": "array", "shape": [5, 20, 4], "from": {"random": {"seed": 6}}}}},
      {"name": "40x40 upper in teams", "attrs": {"lower": false},
       "inputs": {"A": {"kind": "array", "shape": [2, 40, 40], "from": {"spd": {"seed": 7}}},
                  "B": {"kind": "array", "shape": [2, 40, 2], "from": {"random": {"seed": 8}}}}},
      {"name": "not positive definite", "inputs": {"A": {"kind": "array", "shape": [2, 2, 2], "value": [[[4, 2], [2, 1]], [[4, 2], [2, 5]]]},
                                                    "B": {"kind": "array", "shape": [2, 2, 1], "value": [[[1], [2]], [[1], [2]]]}}},
      {"name": "not positive definite in teams", "inputs": {"A": {"kind": "array", "shape": [2, 12, 12], "from": {"random": {"seed": 9}}},
                                                             "B": {"kind": "array", "shape": [2, 12, 1], "from": {"random": {"seed": 10}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override { infer_solve(call, types, kA, kB, kX, kInfo); }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const Tuning tu = tuning_of(call);
    const int64_t n = columns_of(a), k = columns_of(b);
    if (loops(call)) {
      sdk::Plan plan = team_plan(batch_count(a), 1);
      plan.partitions = {matrix_batch(a), matrix_batch(b), matrix_batch(call.operand(kX)), value_batch(call.operand(kInfo))};
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(n * n + n * k) * abi::dtype_size(a.dtype);
      plan.reads_once = uint64_t{1} << kA;  // copied into the factor first (B is read by the solves)
      plan.variant = loop_variant_text(tu, n, "the factor and the solution in local memory, factored as U = L^H along its rows");
      return plan;
    }
    const int64_t team = team_size(tu, n);
    sdk::Plan plan = team_plan(batch_count(a), team);
    plan.partitions = {matrix_batch(a), matrix_batch(b), matrix_batch(call.operand(kX)), value_batch(call.operand(kInfo))};
    plan.registers = static_cast<uint32_t>(team == 1 ? n * n + n + 8 : 16);
    if (team > 1 && in_rows(call)) {
      plan.registers = static_cast<uint32_t>((n + k) * (Scalars(a.dtype).complex ? 2 : 1) + 8);
      plan.local_mem_bytes = static_cast<uint64_t>(rows_locals(n, k)) * abi::dtype_size(a.dtype);
      plan.walks_rows = true;  // B's rows and X's (and A's where lower), every work-item its own
      plan.variant = variant_text(tu, n, team, true, "B's row in registers beside A's, both solves by rows");
      return plan;
    }
    if (team > 1) {
      if (in_local(call)) plan.local_mem_bytes = static_cast<uint64_t>(n * n + n * k) * abi::dtype_size(a.dtype);
      else plan.workspaces = {{a.dtype, n * n}};
    }
    plan.variant = variant_text(tu, n, team, false,
                                team == 1 ? "" : plan.workspaces.empty() ? "the factor and the solution in local memory" : "the factor in the core's workspace");
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan& plan, const sdk::Emitter& em) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const fugue_dtype dtype = a.dtype;
    const int64_t n = columns_of(a), k = columns_of(b);
    const bool lower = call.flag("lower");
    const std::string t = abi::dtype_ctype(dtype), N = std::to_string(n), K = std::to_string(k), zero = Scalars(dtype).literal(0);
    const Scalars sc(dtype);
    const std::string nan = sc.nan();
    const std::string info = em.name("info"), r = em.name("r"), c = em.name("c"), e = em.name("e"), q = em.name("q");
    // The factor L~ is lower whichever triangle A is read from (upper: A^T's lower), A = L~ L~^T.
    const std::string a_rc = lower ? em.read_at(kA, r + " * " + N + " + " + c) : sc.conj(em.read_at(kA, c + " * " + N + " + " + r));
    const ElementAt rhs = [&](const std::string& i, const std::string& j) { return em.read_at(kB, "(" + i + ") * " + K + " + (" + j + ")"); };
    const ElementAt x_r = [&](const std::string& i, const std::string& j) { return em.read_at(kX, "(" + i + ") * " + K + " + (" + j + ")"); };
    const ElementAt x_w = [&](const std::string& i, const std::string& j) { return em.write_at(kX, "(" + i + ") * " + K + " + (" + j + ")"); };
    std::string code;
    if (loops(call)) {
      // potrf's loop plan (cholesky.h's loop_cholesky) on U = L~^H, then U^H y = b and U x = y.
      const std::string w = em.local_array(dtype, n * n, "factor");
      const ElementAt U = [&](const std::string& i, const std::string& j) { return w + "[(" + i + ") * " + N + " + (" + j + ")]"; };
      const ElementAt Uh = [&](const std::string& i, const std::string& j) { return sc.conj(U(j, i)); };
      const auto a_at = [&](const std::string& row, const std::string& col) { return em.read_at(kA, row + " * " + N + " + " + col); };
      code += loop_cholesky(sc, n, lower, a_at, U, [&](const char* stem) { return em.name(stem); }, info);
      code += solve_all(em, dtype, rhs, RightHandSides{x_r, x_w, n, k}, {Triangle{Uh, true, false}, Triangle{U, false, false}}, "", true, false);
      code += "if (" + info + " != 0)\n  for (int " + e + " = 0; " + e + " < " + std::to_string(n * k) + "; ++" + e + ") " + em.write_at(kX, e) +
              " = " + nan + ";\n";
      code += em.write_at(kInfo, "0") + " = " + info + ";\n";
      em.append(code);
      return;
    }
    if (em.local_size() > 1 && in_rows(call)) {
      em.append(rows_solve(em, dtype, n, k, lower));
      return;
    }
    if (em.local_size() == 1) {
      const std::string f = em.name("f"), x = em.name("x");
      const ElementAt F = [&](const std::string& i, const std::string& j) { return f + "[(" + i + ") * " + N + " + (" + j + ")]"; };
      const ElementAt Ft = [&](const std::string& i, const std::string& j) { return sc.conj(F(j, i)); };
      code += t + " " + f + "[" + std::to_string(n * n) + "];\n";
      code += "#pragma unroll\nfor (int " + r + " = 0; " + r + " < " + N + "; ++" + r + ")\n  #pragma unroll\n  for (int " + c + " = 0; " +
              c + " <= " + r + "; ++" + c + ") " + F(r, c) + " = " + a_rc + ";\n";
      code += register_cholesky(sc, n, f, info);
      code += "for (int " + c + " = 0; " + c + " < " + K + "; ++" + c + ") {\n" + t + " " + x + "[" + N + "];\n";
      for (int64_t i = 0; i < n; ++i) code += x + "[" + std::to_string(i) + "] = " + rhs(std::to_string(i), c) + ";\n";
      code += register_solve(sc, Triangle{F, true, false}, n, x) + register_solve(sc, Triangle{Ft, false, false}, n, x);
      for (int64_t i = 0; i < n; ++i)
        code += x_w(std::to_string(i), c) + " = " + info + " == 0 ? " + x + "[" + std::to_string(i) + "] : " + nan + ";\n";
      code += "}\n" + em.write_at(kInfo, "0") + " = " + info + ";\n";
      em.append(code);
      return;
    }
    const bool local = plan.workspaces.empty();
    const std::string w = local ? em.local_array(dtype, n * n, "factor") : em.workspace(0);
    auto W = [&](const std::string& index) { return w + "[" + index + "]"; };
    const ElementAt L = [&](const std::string& i, const std::string& j) { return W("(" + i + ") * " + N + " + (" + j + ")"); };
    const ElementAt Lt = [&](const std::string& i, const std::string& j) { return sc.conj(L(j, i)); };
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    code += team_loop(q, lane, em.local_size(), e, n * n, std::to_string(n * n),
                      "    const int " + r + " = " + e + " / " + N + ", " + c + " = " + e + " % " + N + ";\n    " + W(e) + " = " + c +
                          " <= " + r + " ? " + a_rc + " : " + zero + ";\n");
    code += em.barrier() + "\n" + team_cholesky(em, sc, n, W, W, info);
    code += solve_all(em, dtype, rhs, RightHandSides{x_r, x_w, n, k}, {Triangle{L, true, false}, Triangle{Lt, false, false}}, "", local, false);
    // Not positive definite: NaN (each element by the work-item that wrote it last).
    code += team_loop(q, lane, em.local_size(), e, n * k, std::to_string(n * k),
                      "    if (" + info + " != 0) " + em.write_at(kX, e) + " = " + nan + ";\n");
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
    em.append(code);
  }

  // potrf's rows plan (cholesky.h's rows_cholesky), each work-item row i of L and of B in its registers
  // (rows past n idle), then L y = b and L^H x = y by rows, one barrier a step: at step p row p divides
  // its right-hand sides by L(p, p) and leaves them in local memory (slot p, written once per solve), and
  // the rows still to solve update theirs from them. Forward, row i's update needs L(i, p), its own;
  // backward, it needs conj(L(p, i)), row p's, so the rows leave L in local memory between the solves.
  static std::string rows_solve(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, int64_t k, bool lower) {
    const Scalars sc(dtype);
    const std::string t = sc.type, N = std::to_string(n), K = std::to_string(k), zero = sc.literal(0), sync = em.barrier() + "\n";
    const std::string row = em.builtin(FUGUE_BUILTIN_LOCAL_ID), last = std::to_string(n - 1);
    const std::string a = em.name("a"), x = em.name("x"), info = em.name("info"), inv = em.name("inv"), l = em.name("l");
    auto el = [&](int64_t j) { return a + "[" + std::to_string(j) + "]"; };
    auto xe = [&](int64_t c) { return x + "[" + std::to_string(c) + "]"; };
    std::string code = t + " " + a + "[" + N + "], " + x + "[" + K + "];\n";
    for (int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      code += el(j) + " = " + row + " < " + N + " && " + J + " <= " + row + " ? " +
              (lower ? em.read_at(kA, "min(" + row + ", " + last + ") * " + N + " + " + J)
                     : sc.conj(em.read_at(kA, J + " * " + N + " + min(" + row + ", " + last + ")"))) +
              " : " + zero + ";\n";
    }
    code += row_into_registers(em, kB, row, n, k, x, 0, zero);
    code += rows_cholesky(em, sc, n, a, row, info);
    const std::string slots = em.local_array(dtype, n * k, "solved"), factor = em.local_array(dtype, n * (n + 1), "factor");
    auto slot = [&](int64_t p, int64_t c) { return slots + "[" + std::to_string(p * k + c) + "]"; };
    // Row p's step: x(p) /= L(p, p), left in slot p.
    auto solve_row = [&](int64_t p, bool publish) {
      std::string s = "if (" + row + " == " + std::to_string(p) + ") {\n  const " + sc.real_type + " " + inv + " = " + sc.real(1) +
                      " / " + sc.real_part(el(p)) + ";\n";
      for (int64_t c = 0; c < k; ++c) s += "  " + xe(c) + " *= " + inv + ";\n" + (publish ? "  " + slot(p, c) + " = " + xe(c) + ";\n" : "");
      return s + "}\n";
    };
    for (int64_t p = 0; p < n; ++p) {
      code += solve_row(p, p + 1 < n) + (p + 1 < n ? sync : "");
      if (p + 1 == n) break;
      code += "if (" + row + " > " + std::to_string(p) + " && " + row + " < " + N + ") {\n";
      for (int64_t c = 0; c < k; ++c) code += "  " + xe(c) + " -= " + sc.mul(el(p), slot(p, c)) + ";\n";
      code += "}\n";
    }
    // L's rows a spare element apart: row p's elements, read by consecutive rows, in consecutive banks.
    code += "if (" + row + " < " + N + ") {\n";
    for (int64_t j = 0; j < n; ++j) code += "  " + factor + "[" + row + " * " + std::to_string(n + 1) + " + " + std::to_string(j) + "] = " + el(j) + ";\n";
    code += "}\n" + sync;
    for (int64_t p = n - 1; p >= 0; --p) {
      code += solve_row(p, p > 0) + (p > 0 ? sync : "");
      if (p == 0) break;
      code += "if (" + row + " < " + std::to_string(p) + ") {\n  const " + t + " " + l + " = " +
              sc.conj(factor + "[" + std::to_string(p * (n + 1)) + " + " + row + "]") + ";\n";
      for (int64_t c = 0; c < k; ++c) code += "  " + xe(c) + " -= " + sc.mul(l, slot(p, c)) + ";\n";
      code += "}\n";
    }
    // Not positive definite: NaN (info is the same in every work-item: each read the same pivots).
    code += "if (" + row + " < " + N + ") {\n";
    for (int64_t c = 0; c < k; ++c)
      code += "  " + em.write_at(kX, row + " * " + K + " + " + std::to_string(c)) + " = " + info + " == 0 ? " + xe(c) + " : " + sc.nan() + ";\n";
    code += "}\nif (" + row + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
    return code;
  }

  // One matrix per work-item with its loops kept (a CPU's plan, tuning.h's loop_plan), where the factor
  // and the solution fit local memory.
  static bool loops(const sdk::Call& call) {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const int64_t n = columns_of(a);
    return loop_plan(tuning_of(call), n) && fits_local(call, n * n + n * columns_of(b), a.dtype);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(columns_of(call.operand(kA))), k = static_cast<double>(columns_of(call.operand(kB)));
    const double count = static_cast<double>(batch_count(call.operand(kA))), size = abi::dtype_size(call.operand(kA).dtype);
    return {sizeof(fugue_cost), count * ((n * n + 2 * n * k) * size + 4), count * (n * n * n / 3 + 2 * n * n * k)};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]), info(arrays[kInfo]);
    const int64_t n = columns_of(call.operand(kA)), k = columns_of(call.operand(kB)), count = batch_count(call.operand(kA));
    const bool lower = call.flag("lower");
    const long double nan = std::numeric_limits<long double>::quiet_NaN();
    std::vector<Complex> f(static_cast<size_t>(n * n)), y(static_cast<size_t>(n));
    for (int64_t m = 0; m < count; ++m) {
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c)
          f[r * n + c] = c > r ? Complex(0) : lower ? get_value(a, m * n * n + r * n + c) : std::conj(get_value(a, m * n * n + c * n + r));
      const int64_t failed = cholesky_reference(f, n);
      for (int64_t c = 0; c < k; ++c) {
        for (int64_t i = 0; i < n; ++i) y[i] = get_value(b, m * n * k + i * k + c);
        if (!failed) cholesky_solve_reference(f, n, y);
        for (int64_t i = 0; i < n; ++i) set_value(x, m * n * k + i * k + c, failed ? Complex(nan, nan) : y[i]);
      }
      info.set_int(m, failed);
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> posv_operation() { return std::make_unique<Posv>(); }

}  // namespace fugue::linalg
