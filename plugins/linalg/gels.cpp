// gels.cpp: linalg.gels (see gels.h).
#include "gels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "geqrf.h"
#include "householder.h"
#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kB = 1, kX = 2, kInfo = 3;

// The sizes of a call: A m x n, B m x k, the working matrix [A | B] m x (n + k).
struct Sizes {
  int64_t m, n, k, team;
  Tuning tuning;
  bool loops = false;  // one system per work-item, [A | B] in local memory, its loops kept (tuning.h's loop_plan)
  bool in_columns = false;  // a team with a column of [A | B] in each work-item's registers (tuning.h's column_plan)
  int64_t columns() const { return n + k; }
  int64_t working() const { return m * (n + k); }
};

Sizes sizes_of(const sdk::Call& call) {
  const fugue_type &a = call.operand(kA), &b = call.operand(kB);
  Sizes s{rows_of(a), columns_of(a), columns_of(b), 0, tuning_of(call)};
  // Without a device (the reference) no plan is asked for. The loops keep a row of sums beside W.
  s.loops = call.raw()->device && loop_plan(s.tuning, std::max(s.m, s.columns())) && fits_local(call, s.working() + 2 * s.columns(), a.dtype);
  s.team = s.loops ? 1 : team_size(s.tuning, std::max(s.m, s.columns()));
  // The columns leave the factored [A | B] in local memory for the triangular solve.
  s.in_columns = call.raw()->device && !s.loops && column_plan(s.tuning, std::max(s.m, s.columns()), Scalars(a.dtype).complex) &&
              fits_local(call, s.working() + column_householder_locals(s.m), a.dtype);
  return s;
}

class Gels final : public sdk::Operation {
 public:
  Gels() {
    name = "linalg.gels";
    doc = "Least squares through QR for a batch of overdetermined systems as LAPACK's gels (Q^H B for complex "
          "dtypes): X [..., n, k] minimizing "
          "||A X - B||_2 for A [..., m, n] (m >= n, full column rank) and B [..., m, k]; info (optional) per matrix: 0, "
          "or i when R(i, i) is exactly zero (A rank deficient; its X is then NaN)";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., m, n], m >= n"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "right-hand sides [..., m, k]"),
                sdk::out("X", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the solutions [..., n, k]"),
                sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                  "i32 per matrix [...]: 0, or the first i with R(i, i) exactly zero")};
    // Errors of about cond(A) * eps (the random test matrices are well conditioned).
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    test_cases = R"([
      {"name": "3x2 in registers", "inputs": {"A": {"kind": "array", "shape": [30, 3, 2], "from": {"random": {"seed": 1}}},
                                               "B": {"kind": "array", "shape": [30, 3, 1], "from": {"random": {"seed": 2}}}}},
      {"name": "8x4, 2 columns, in registers", "inputs": {"A": {"kind": "array", "shape": [4, 8, 4], "from": {"random": {"seed": 3}}},
                                                           "B": {"kind": "array", "shape": [4, 8, 2], "from": {"random": {"seed": 4}}}}},
      {"name": "square 6x6", "inputs": {"A": {"kind": "array", "shape": [5, 6, 6], "from": {"random": {"seed": 5}}},
                                         "B": {"kind": "array", "shape": [5, 6, 1], "from": {"random": {"seed": 6}}}}},
      {"name": "40x12 in teams", "inputs": {"A": {"kind": "array", "shape": [6, 40, 12], "from": {"random": {"seed": 7}}},
                                            "B": {"kind": "array", "shape": [6, 40, 3], "from": {"random": {"seed": 8}}}}},
      {"name": "rank deficient", "inputs": {"A": {"kind": "array", "shape": [3, 3, 2], "value": [[[1, 0], [2, 0], [3, 0]], [[1, 0], [0, 1], [1, 1]], [[0, 1], [0, 2], [0, 3]]]},
                                             "B": {"kind": "array", "shape": [3, 3, 1], "value": [[[1], [2], [3]], [[1], [2], [3]], [[1], [2], [3]]]}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    require_matrices(a, "A");
    if (rows_of(a) < columns_of(a))
      throw sdk::InvalidArgument("operand A: least squares needs at least as many rows as columns (m >= n), found " +
                                 sdk::type_string(a) + " (an underdetermined system has no unique solution)");
    if (b.rank != a.rank || batch_shape(b) != batch_shape(a) || rows_of(b) != rows_of(a) || columns_of(b) < 1)
      throw sdk::InvalidArgument("operand B: expected right-hand sides with A's batch and " + std::to_string(rows_of(a)) +
                                 " rows [..., m, k], found " + sdk::type_string(b) + " (one vector: shape [..., m, 1])");
    if (b.dtype != a.dtype)
      throw sdk::InvalidArgument("operand B is " + std::string(abi::dtype_name(b.dtype)) + ", A " + abi::dtype_name(a.dtype) +
                                 ": they must have one dtype");
    std::vector<int64_t> x = batch_shape(a);
    x.push_back(columns_of(a));
    x.push_back(columns_of(b));
    types[kX] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, x);
    types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Sizes s = sizes_of(call);
    sdk::Plan plan = team_plan(batch_count(a), s.team);
    plan.partitions = {matrix_batch(a), matrix_batch(call.operand(kB)), matrix_batch(call.operand(kX)),
                       value_batch(call.operand(kInfo))};
    if (s.loops) {
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(s.working() + 2 * s.columns()) * abi::dtype_size(a.dtype);
      plan.reads_once = uint64_t{1} << kA | uint64_t{1} << kB;  // copied into [A | B] first
      plan.variant = loop_variant_text(s.tuning, std::max(s.m, s.columns()), "[A | B] in local memory, each reflection applied along its rows");
      return plan;
    }
    if (s.in_columns) {
      plan.registers = static_cast<uint32_t>(s.m * (Scalars(a.dtype).complex ? 2 : 1) + 16);
      plan.local_mem_bytes = static_cast<uint64_t>(s.working() + column_householder_locals(s.m)) * abi::dtype_size(a.dtype);
      plan.variant = column_variant_text(s.tuning, std::max(s.m, s.columns()), s.team, Scalars(a.dtype).complex, "a column of [A | B]",
                                         "then R X = Q^H B from local memory");
      return plan;
    }
    plan.registers = s.team == 1 ? static_cast<uint32_t>(s.working() + 12) : 16;
    if (s.team > 1) {
      const bool local = fits_local(call, s.working(), a.dtype);
      plan.local_mem_bytes = static_cast<uint64_t>((local ? s.working() : 0) + kTeamHouseholderLocals) * abi::dtype_size(a.dtype);
      if (!local) plan.workspaces = {{a.dtype, s.working()}};
    }
    plan.variant = variant_text(s.tuning, std::max(s.m, s.columns()), s.team, false,
                                s.team == 1 ? "" : plan.workspaces.empty() ? "[A | B] in local memory" : "[A | B] in the core's workspace");
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan& plan, const sdk::Emitter& em) const override {
    const fugue_type& a = call.operand(kA);
    const Sizes s = sizes_of(call);
    const Scalars sc(a.dtype);
    const std::string t = sc.type, C = std::to_string(s.columns()), N = std::to_string(s.n), K = std::to_string(s.k);
    const std::string nan = sc.nan();
    const bool one = em.local_size() == 1 && !s.loops;
    // W: a private array (one work-item in registers), a local array (the loops, or a team) or the workspace.
    const std::string w = one ? em.name("w") : plan.workspaces.empty() ? em.local_array(a.dtype, s.working(), "matrix") : em.workspace(0);
    const ElementAt W = [&](const std::string& i, const std::string& j) { return w + "[(" + i + ") * " + C + " + (" + j + ")]"; };
    HouseholderWork h{s.m, s.columns(), s.n, W, W, nullptr};
    const std::string info = em.name("info"), i = em.name("i"), c = em.name("c"), e = em.name("e"), q = em.name("q"),
                      j = em.name("j"), d = em.name("d");
    // [A | B] into W.
    const std::string load = "    const int " + i + " = " + e + " / " + C + ", " + c + " = " + e + " % " + C + ";\n    " + W(i, c) +
                             " = " + c + " < " + N + " ? " + em.read_at(kA, i + " * " + N + " + " + c) + " : " +
                             em.read_at(kB, i + " * " + K + " + (" + c + " - " + N + ")") + ";\n";
    // info: the first exactly zero diagonal element of R (every work-item finds it alike).
    const std::string rank = "int " + info + " = 0;\nfor (int " + i + " = " + N + " - 1; " + i + " >= 0; --" + i + ") if (" +
                             sc.is_zero(W(i, i)) + ") " + info + " = " + i + " + 1;\n";
    const std::string store = "    const int " + i + " = " + e + " / " + K + ", " + c + " = " + e + " % " + K + ";\n    " +
                              em.write_at(kX, e) + " = " + info + " == 0 ? " + W(i, N + " + " + c) + " : " + nan + ";\n";
    std::string code;
    if (s.loops) {
      // The loops of the register plan below, kept: W in local memory, a row of sums beside it.
      const std::string sums = em.local_array(a.dtype, 2 * s.columns(), "row_sums");
      code += "for (int " + e + " = 0; " + e + " < " + std::to_string(s.working()) + "; ++" + e + ") {\n" + load + "}\n";
      code += loop_householder(em, a.dtype, h, sums) + rank;
      code += "if (" + info + " == 0)\n  for (int " + c + " = " + N + "; " + c + " < " + C + "; ++" + c + ")\n";
      code += "    for (int " + i + " = " + N + " - 1; " + i + " >= 0; --" + i + ") {\n";
      code += "      " + t + " " + d + " = " + W(i, c) + ";\n";
      code += "      for (int " + j + " = " + i + " + 1; " + j + " < " + N + "; ++" + j + ") " + d + " -= " + sc.mul(W(i, j), W(j, c)) + ";\n";
      code += "      " + W(i, c) + " = " + sc.div(d, W(i, i)) + ";\n    }\n";
      code += "for (int " + e + " = 0; " + e + " < " + std::to_string(s.n * s.k) + "; ++" + e + ") {\n" + store + "}\n";
      code += em.write_at(kInfo, "0") + " = " + info + ";\n";
    } else if (one) {
      code += t + " " + w + "[" + std::to_string(s.working()) + "];\n";
      code += "#pragma unroll\nfor (int " + e + " = 0; " + e + " < " + std::to_string(s.working()) + "; ++" + e + ") {\n" + load + "}\n";
      code += register_householder(em, a.dtype, h) + rank;
      // R X = (Q^T B)(0:n) by back substitution, column by column, unrolled.
      code += "if (" + info + " == 0) {\n#pragma unroll\nfor (int " + c + " = " + N + "; " + c + " < " + C + "; ++" + c + ")\n";
      code += "  #pragma unroll\n  for (int " + i + " = " + N + " - 1; " + i + " >= 0; --" + i + ") {\n";
      code += "    " + t + " " + d + " = " + W(i, c) + ";\n";
      code += "    #pragma unroll\n    for (int " + j + " = " + i + " + 1; " + j + " < " + N + "; ++" + j + ") " + d + " -= " +
              sc.mul(W(i, j), W(j, c)) + ";\n";
      code += "    " + W(i, c) + " = " + sc.div(d, W(i, i)) + ";\n  }\n}\n";
      code += "#pragma unroll\nfor (int " + e + " = 0; " + e + " < " + std::to_string(s.n * s.k) + "; ++" + e + ") {\n" + store + "}\n";
      code += em.write_at(kInfo, "0") + " = " + info + ";\n";
    } else {
      const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
      if (s.in_columns) {
        // Column `lane` of [A | B] in registers (lanes past its columns idle), factored, then into W.
        const std::string column = em.name("column"), at = "min(" + lane + ", " + C + " - 1)";
        code += t + " " + column + "[" + std::to_string(s.m) + "];\n";
        for (int64_t r = 0; r < s.m; ++r) {
          const std::string R = std::to_string(r);
          code += column + "[" + R + "] = " + at + " < " + N + " ? " + em.read_at(kA, R + " * " + N + " + " + at) + " : " +
                  em.read_at(kB, R + " * " + K + " + (" + at + " - " + N + ")") + ";\n";
        }
        code += column_householder(em, a.dtype, h, column, lane);
        code += "if (" + lane + " < " + C + ") {\n";
        for (int64_t r = 0; r < s.m; ++r) code += "  " + W(std::to_string(r), lane) + " = " + column + "[" + std::to_string(r) + "];\n";
        code += "}\n" + em.barrier() + "\n";
      } else {
        code += team_loop(q, lane, em.local_size(), e, s.working(), std::to_string(s.working()), load) + em.barrier() + "\n";
        code += team_householder(em, a.dtype, h);
      }
      code += rank;
      const ElementAt rhs = [&](const std::string& r, const std::string& col) { return W(r, N + " + " + col); };
      code += team_solve(em, sc, Triangle{W, false, false}, RightHandSides{rhs, rhs, s.n, s.k});
      code += team_loop(q, lane, em.local_size(), e, s.n * s.k, std::to_string(s.n * s.k), store);
      code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
    }
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    const double count = static_cast<double>(batch_count(call.operand(kA)));
    // The factorization, Q^T B (4 m n k - 2 n^2 k) and the triangular solve (n^2 k).
    return {sizeof(fugue_cost), count * (m * n + m * k + n * k) * abi::dtype_size(call.operand(kA).dtype),
            count * (geqrf_flops(m, n) + 4 * m * n * k - n * n * k)};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]), info(arrays[kInfo]);
    const Sizes s = sizes_of(call);
    const int64_t count = batch_count(call.operand(kA)), C = s.columns();
    std::vector<Complex> w(static_cast<size_t>(s.working()));
    for (int64_t e = 0; e < count; ++e) {
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t c = 0; c < C; ++c)
          w[i * C + c] = c < s.n ? get_value(a, e * s.m * s.n + i * s.n + c) : get_value(b, e * s.m * s.k + i * s.k + c - s.n);
      householder_reference(w, s.m, C, s.n, nullptr);
      int64_t failed = 0;
      for (int64_t i = s.n - 1; i >= 0; --i)
        if (w[i * C + i] == Complex(0)) failed = i + 1;
      for (int64_t c = 0; c < s.k; ++c)
        for (int64_t i = s.n - 1; i >= 0; --i) {
          Complex d = w[i * C + s.n + c];
          for (int64_t j = i + 1; j < s.n; ++j) d -= w[i * C + j] * w[j * C + s.n + c];
          w[i * C + s.n + c] = failed ? 0 : d / w[i * C + i];
        }
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t c = 0; c < s.k; ++c)
          set_value(x, e * s.n * s.k + i * s.k + c, failed ? Complex(std::nanl(""), std::nanl("")) : w[i * C + s.n + c]);
      info.set_int(e, failed);
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> gels_operation() { return std::make_unique<Gels>(); }

}  // namespace fugue::linalg
