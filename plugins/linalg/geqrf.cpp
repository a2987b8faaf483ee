// geqrf.cpp: linalg.geqrf (see geqrf.h).
#include "geqrf.h"

#include <algorithm>
#include <string>
#include <vector>

#include "blocked_qr.h"
#include "householder.h"
#include "kernel_text.h"
#include "lanes.h"
#include "lanes_qr.h"
#include "matrices.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kQR = 1, kTau = 2, kInfo = 3, kN = 4;  // info and n: linalg.geqrf_vbatched's

// Whether a team factors in a local array of its own rather than in QR's storage: where the matrix fits,
// but not up to the row order (32 on NVIDIA GPUs), where teams share a work-group and the core holds QR in local memory already, so a
// second copy only costs room. On the H100 (geqrf of 20,000 16 x 16) the copy took 0.164 ms in f64 and
// 0.127 in f32 against 0.132 and 0.099 without; at 32 x 32 (teams of 32 share work-groups too) it was
// mixed, 0.136 against 0.143 ms in f64 and 0.084 against 0.068 in f32, and in a later call it lost at
// 20, 24 and 32 (f64 0.162 against 0.153 ms at 32, f32 0.083 against 0.050 at 24); at 64 x 64 (2,000, a
// work-group each) it saves 1.68 -> 0.63 ms in f64 and 1.00 -> 0.48 in f32.
bool own_local_array(const sdk::Call& call, int64_t m, int64_t n) {
  return std::max(m, n) > tuning_of(call).row_order && fits_local(call, m * n, call.operand(kA).dtype);
}

// One work-item per matrix with its loops kept (tuning.h's loop_plan, householder.h's loop_householder):
// the matrix and a row of sums in local memory.
bool loops(const sdk::Call& call, int64_t m, int64_t n) {
  return loop_plan(tuning_of(call), std::max(m, n)) && fits_local(call, m * n + 2 * n, call.operand(kA).dtype);
}

// A team owning a column each in registers (householder.h's column_householder), up to the table's
// qr_column_order (64 on NVIDIA GPUs, 32 for complex values); above it teams own columns in local memory.
bool in_columns(const sdk::Call& call, int64_t m, int64_t n) {
  return column_plan(tuning_of(call), std::max(m, n), Scalars(call.operand(kA).dtype).complex);
}

// Kernels over the whole batch, panel by panel (blocked_qr.h; not for variable sizes): above the table's
// qr_blocked_order, or where the loop plan would take the matrix but it does not fit local memory; and
// where the panel fits the device (very tall matrices stay in teams).
bool blocked(const sdk::Call& call, int64_t m, int64_t n, bool vbatched) {
  const fugue_type& a = call.operand(kA);
  const Tuning t = tuning_of(call);
  return !vbatched && blocked_plan(t.qr_blocked_order, t, std::max(m, n), fits_local(call, m * n + n, a.dtype)) &&
         blocked_qr_fits(call, t, m, n, a.dtype);
}

class Geqrf final : public sdk::Operation {
 public:
  explicit Geqrf(bool vbatched) : vbatched_(vbatched) {
    name = vbatched ? "linalg.geqrf_vbatched" : "linalg.geqrf";
    doc = "Householder QR factorization of a batch of matrices [..., m, n], A = Q R as LAPACK's geqrf: QR holds R on "
          "and above the diagonal and the Householder vectors v_k below it (v_k(k) = 1 not stored); tau [..., min(m, "
          "n)] the reflectors' scalars, Q = H_0 H_1 ... with H_k = I - tau_k v_k v_k^H (linalg.orgqr forms Q). R's "
          "diagonal at step k is -sign(re alpha) * norm (real) as LAPACK's larfg and zlarfg make it, so R, tau and the "
          "reflectors are LAPACK's";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., m, n]"),
                sdk::out("QR", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "R and the reflectors, of A's shape and dtype"),
                sdk::out("tau", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the reflectors' scalars [..., min(m, n)]")};
    // Backward stable: errors of about n * eps relative to the matrix's norm.
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_cases = R"([
      {"name": "one 1x1", "inputs": {"A": {"kind": "array", "shape": [1, 1], "from": {"random": {"seed": 1}}}}},
      {"name": "batch of 3x3 in registers", "inputs": {"A": {"kind": "array", "shape": [37, 3, 3], "from": {"random": {"seed": 2}}}}},
      {"name": "8x5 in registers", "inputs": {"A": {"kind": "array", "shape": [2, 5, 8, 5], "from": {"random": {"seed": 3}}}}},
      {"name": "4x7 wide in registers", "inputs": {"A": {"kind": "array", "shape": [6, 4, 7], "from": {"random": {"seed": 4}}}}},
      {"name": "12x12 in teams", "inputs": {"A": {"kind": "array", "shape": [21, 12, 12], "from": {"random": {"seed": 5}}}}},
      {"name": "33x20 in teams", "inputs": {"A": {"kind": "array", "shape": [5, 33, 20], "from": {"random": {"seed": 6}}}}},
      {"name": "10x30 wide in teams", "inputs": {"A": {"kind": "array", "shape": [3, 10, 30], "from": {"random": {"seed": 7}}}}},
      {"name": "zero columns", "inputs": {"A": {"kind": "array", "shape": [2, 3, 3], "value": [[[0, 1, 2], [0, 3, 4], [0, 5, 6]], [[1, 2, 3], [0, 0, 4], [0, 0, 5]]]}}},
      {"name": "tiny and huge columns", "dtypes": ["f64", "c128"], "inputs": {"A": {"kind": "array", "shape": [1, 3, 2], "value": [[[1e-300, 1e300], [2e-300, 3e300], [-1e-300, 1e300]]]}}}
    ])";
    if (vbatched) {
      doc += ". Variable sizes: square matrices, matrix e being A[e, :n_e, :n_e] of the padded [..., N, N] batch (the padding never "
             "read); QR and tau are those of diag(A_e, I) (R = diag(R_e, I), tau 0 past n_e), so linalg.orgqr forms diag(Q_e, I) from "
             "them as they are; info (optional) per matrix: 0, or -1 for an order outside 0..N (that matrix factored as of order 0)";
      operands.push_back(sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                           "i32 per matrix [...]: 0, or -1 for an order outside 0..N"));
      operands.push_back(sdk::in("n", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32), "the order of each matrix [...], 0..N"));
      test_cases = R"([
      {"name": "orders 0 to 5 of 5x5, bad ones", "inputs": {"A": {"kind": "array", "shape": [9, 5, 5], "from": {"random": {"seed": 1}}},
                                                           "n": {"kind": "array", "dtype": "i32", "shape": [9], "value": [0, 1, 2, 3, 4, 5, 6, -1, 5]}}},
      {"name": "orders of 12x12 in teams", "inputs": {"A": {"kind": "array", "shape": [2, 3, 12, 12], "from": {"random": {"seed": 2}}},
                                                      "n": {"kind": "array", "dtype": "i32", "shape": [2, 3], "value": [[12, 7, 1], [9, 0, 11]]}}},
      {"name": "orders of 40x40 in teams", "inputs": {"A": {"kind": "array", "shape": [4, 40, 40], "from": {"random": {"seed": 3}}},
                                                      "n": {"kind": "array", "dtype": "i32", "shape": [4], "value": [40, 17, 33, 2]}}}
    ])";
    }
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& a = call.operand(kA);
    require_matrices(a, "A");
    if (vbatched_) {
      square_order(a, "A");
      require_orders(call.operand(kN), a, "n", "A");
      types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
    }
    std::vector<int64_t> steps = batch_shape(a);
    steps.push_back(std::min(rows_of(a), columns_of(a)));
    types[kQR] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, sdk::shape_of(a));
    types[kTau] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, steps);
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Tuning tu = tuning_of(call);
    const int64_t m = rows_of(a), n = columns_of(a);
    if (blocked(call, m, n, vbatched_)) return blocked_qr_plan(call, tu, m, n, a.dtype);
    const bool in_loops = loops(call, m, n), columns = !in_loops && in_columns(call, m, n);
    const bool own = in_loops || (!columns && own_local_array(call, m, n));
    const int64_t team = in_loops ? 1 : team_size(tu, std::max(m, n));
    sdk::Plan plan = team_plan(batch_count(a), team);
    plan.partitions = {matrix_batch(a), matrix_batch(call.operand(kQR)), vector_batch(call.operand(kTau))};
    if (vbatched_) {
      plan.partitions.push_back(value_batch(call.operand(kInfo)));
      plan.partitions.push_back(value_batch(call.operand(kN)));
    }
    const int64_t parts = Scalars(a.dtype).complex ? 2 : 1;
    plan.registers = team == 1 && !in_loops ? static_cast<uint32_t>(m * n + 12) : columns ? static_cast<uint32_t>(m * parts + 16) : 16;
    if (in_loops) plan.reads_once = uint64_t{1} << kA;  // copied into the matrix it factors
    if (columns)
      plan.local_mem_bytes = static_cast<uint64_t>(column_householder_locals(m)) * abi::dtype_size(a.dtype);
    else if (team > 1 || in_loops)
      plan.local_mem_bytes = static_cast<uint64_t>((own ? m * n : 0) + (in_loops ? 2 * n : kTeamHouseholderLocals)) * abi::dtype_size(a.dtype);
    plan.variant = columns ? column_variant_text(tu, std::max(m, n), team, Scalars(a.dtype).complex, "a column",
                                                 "each reflector formed by its column's owner and shared in local memory")
                   : in_loops ? loop_variant_text(tu, std::max(m, n), "the matrix in local memory, each reflection applied along its rows")
                            : variant_text(tu, std::max(m, n), team, false, team == 1 ? "" : own ? "the matrix in a local array of its own" : "in QR's storage");
    // Alone on a CPU, small real matrices take the lanes (lanes.h, lanes_qr.h); the plan above is what others join.
    if (const int64_t lanes = lanes_for(call, tu, m, n, a.dtype, vbatched_)) {
      plan.own_kernels_alone = true;
      plan.variant += "; " + lanes_text(tu, std::max(m, n), lanes);
    }
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& a = call.operand(kA);
    const int64_t m = rows_of(a), n = columns_of(a), all = m * n;
    const std::string N = std::to_string(n);
    auto flat = [&](const std::string& i, const std::string& j) { return "(" + i + ") * " + N + " + (" + j + ")"; };
    HouseholderWork w;
    w.m = m;
    w.columns = n;
    w.steps = std::min(m, n);
    w.keep_tau = [&](const std::string& k, const std::string& tau) { return em.write_at(kTau, k) + " = " + tau; };
    const Scalars sc(a.dtype);
    std::string code;
    const VariableOrder v = vbatched_ ? declare_order(em, kN, n, code) : VariableOrder{};
    // Element e of A as factored: diag(A_e, I) for variable sizes.
    auto load = [&](const std::string& e) {
      return embedded(v, em.read_at(kA, e), "(" + e + ") / " + N, "(" + e + ") % " + N, sc.literal(1), sc.literal(0));
    };
    if (vbatched_) code += "if (" + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(v, "0") + ";\n";
    if (em.local_size() == 1 && loops(call, m, n)) {
      // One work-item with its loops: W row-major in local memory, a row of sums beside it.
      const std::string local = em.local_array(a.dtype, all, "matrix"), sums = em.local_array(a.dtype, 2 * n, "row_sums"), e = em.name("e");
      w.read = w.write = [&](const std::string& i, const std::string& j) { return local + "[" + flat(i, j) + "]"; };
      code += "for (int " + e + " = 0; " + e + " < " + std::to_string(all) + "; ++" + e + ") " + local + "[" + e + "] = " + load(e) + ";\n";
      code += loop_householder(em, a.dtype, w, sums);
      code += "for (int " + e + " = 0; " + e + " < " + std::to_string(all) + "; ++" + e + ") " + em.write_at(kQR, e) + " = " + local + "[" + e + "];\n";
      em.append(code);
      return;
    }
    if (em.local_size() == 1) {
      // One work-item: the matrix in a private array, every index a constant.
      const std::string f = em.name("f");
      w.read = w.write = [&](const std::string& i, const std::string& j) { return f + "[" + flat(i, j) + "]"; };
      code += sc.type + " " + f + "[" + std::to_string(all) + "];\n";
      for (int64_t e = 0; e < all; ++e) code += f + "[" + std::to_string(e) + "] = " + load(std::to_string(e)) + ";\n";
      code += register_householder(em, a.dtype, w);
      for (int64_t e = 0; e < all; ++e) code += em.write_at(kQR, std::to_string(e)) + " = " + f + "[" + std::to_string(e) + "];\n";
      em.append(code);
      return;
    }
    if (in_columns(call, m, n)) {
      // A column per work-item (lanes past n idle: their column is never stored).
      const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), column = em.name("column");
      const std::string at = "min(" + lane + ", " + std::to_string(n - 1) + ")";
      code += sc.type + " " + column + "[" + std::to_string(m) + "];\n";
      for (int64_t i = 0; i < m; ++i) code += column + "[" + std::to_string(i) + "] = " + load(std::to_string(i) + " * " + N + " + " + at) + ";\n";
      code += column_householder(em, a.dtype, w, column, lane);
      code += "if (" + lane + " < " + N + ") {\n";
      for (int64_t i = 0; i < m; ++i)
        code += "  " + em.write_at(kQR, std::to_string(i) + " * " + N + " + " + lane) + " = " + column + "[" + std::to_string(i) + "];\n";
      em.append(code + "}\n");
      return;
    }
    // A team: in a local array of its own (see own_local_array), else in QR's storage.
    const bool in_local = own_local_array(call, m, n);
    const std::string local = in_local ? em.local_array(a.dtype, all, "matrix") : "";
    w.read = [&](const std::string& i, const std::string& j) { return in_local ? local + "[" + flat(i, j) + "]" : em.read_at(kQR, flat(i, j)); };
    w.write = [&](const std::string& i, const std::string& j) { return in_local ? local + "[" + flat(i, j) + "]" : em.write_at(kQR, flat(i, j)); };
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), q = em.name("q"), e = em.name("e"), A = std::to_string(all);
    const std::string into = in_local ? local + "[" + e + "]" : em.write_at(kQR, e);
    code += team_loop(q, lane, em.local_size(), e, all, A, "    " + into + " = " + load(e) + ";\n");
    code += em.barrier() + "\n";
    code += team_householder(em, a.dtype, w);
    if (in_local) code += team_loop(q, lane, em.local_size(), e, all, A, "    " + em.write_at(kQR, e) + " = " + local + "[" + e + "];\n");
    em.append(code);
  }

  // The blocked plan (blocked_qr.h), or the lanes where geqrf runs alone (lanes_qr.h); the others are emitted.
  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const fugue_type& a = call.operand(kA);
    const int64_t m = rows_of(a), n = columns_of(a);
    if (blocked(call, m, n, vbatched_))
      blocked_qr(call, s, kA, kQR, kTau);
    else
      lanes_qr(call, s, kA, kQR, kTau, lanes_for(call, tuning_of(call), m, n, a.dtype, vbatched_));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const double m = static_cast<double>(rows_of(a)), n = static_cast<double>(columns_of(a));
    const double count = static_cast<double>(batch_count(a));
    return {sizeof(fugue_cost), count * (2 * m * n + std::min(m, n)) * abi::dtype_size(a.dtype), count * geqrf_flops(m, n)};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]);
    sdk::HostView qr(arrays[kQR]), tau(arrays[kTau]);
    const fugue_type& t = call.operand(kA);
    const int64_t m = rows_of(t), n = columns_of(t), k = std::min(m, n), count = batch_count(t);
    std::vector<Complex> w(static_cast<size_t>(m * n)), taus(static_cast<size_t>(k));
    for (int64_t e = 0; e < count; ++e) {
      // Variable sizes: diag(A_e, I), A_e of order ne (0 for an order outside 0..n).
      const int64_t order = vbatched_ ? sdk::HostView(arrays[kN]).get_int(e) : n;
      const bool bad = order < 0 || order > n;
      const int64_t ne = bad ? 0 : order;
      for (int64_t i = 0; i < m * n; ++i)
        w[i] = !vbatched_ || (i / n < ne && i % n < ne) ? get_value(a, e * m * n + i) : Complex(i / n == i % n ? 1 : 0);
      if (vbatched_) sdk::HostView(arrays[kInfo]).set_int(e, bad ? -1 : 0);
      householder_reference(w, m, n, k, &taus);
      for (int64_t i = 0; i < m * n; ++i) set_value(qr, e * m * n + i, w[i]);
      for (int64_t i = 0; i < k; ++i) set_value(tau, e * k + i, taus[i]);
    }
  }
 private:
  bool vbatched_;
};

}  // namespace

double geqrf_flops(double m, double n) {
  // LAPACK's count: 2 m n^2 - 2 n^3 / 3 for m >= n, 2 n m^2 - 2 m^3 / 3 otherwise (multiplications and additions).
  return m >= n ? 2 * m * n * n - 2 * n * n * n / 3 : 2 * n * m * m - 2 * m * m * m / 3;
}

std::unique_ptr<sdk::Operation> geqrf_operation() { return std::make_unique<Geqrf>(false); }
std::unique_ptr<sdk::Operation> geqrf_vbatched_operation() { return std::make_unique<Geqrf>(true); }

}  // namespace fugue::linalg
