// orgqr.cpp: linalg.orgqr (see orgqr.h).
#include "orgqr.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kQR = 0, kTau = 1, kQ = 2;

class Orgqr final : public sdk::Operation {
 public:
  Orgqr() {
    name = "linalg.orgqr";
    doc = "Forms Q [..., m, n] (m >= n, orthonormal columns) of a batch of QR factorizations as LAPACK's orgqr: the "
          "first n columns of H_0 H_1 ... H_k-1, H_i = I - tau_i v_i v_i^H with v_i below QR's diagonal in column i "
          "(v_i(i) = 1); tau [..., k], k <= n (linalg.geqrf's outputs)";
    operands = {sdk::in("QR", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "reflectors below the diagonal [..., m, n], m >= n"),
                sdk::in("tau", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the reflectors' scalars [..., k], k <= n"),
                sdk::out("Q", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "Q, of QR's shape and dtype")};
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_cases = R"([
      {"name": "one 1x1", "inputs": {"QR": {"kind": "array", "shape": [1, 1], "from": {"random": {"seed": 1}}},
                                      "tau": {"kind": "array", "shape": [1], "from": {"random": {"seed": 2}}}}},
      {"name": "8x5 in registers", "inputs": {"QR": {"kind": "array", "shape": [4, 8, 5], "from": {"random": {"seed": 3}}},
                                               "tau": {"kind": "array", "shape": [4, 5], "from": {"random": {"seed": 4}}}}},
      {"name": "6x6, 4 reflectors", "inputs": {"QR": {"kind": "array", "shape": [9, 6, 6], "from": {"random": {"seed": 5}}},
                                                "tau": {"kind": "array", "shape": [9, 4], "from": {"random": {"seed": 6}}}}},
      {"name": "33x20 in teams", "inputs": {"QR": {"kind": "array", "shape": [5, 33, 20], "from": {"random": {"seed": 7}}},
                                             "tau": {"kind": "array", "shape": [5, 20], "from": {"random": {"seed": 8}}}}},
      {"name": "12x12, 7 reflectors", "inputs": {"QR": {"kind": "array", "shape": [3, 12, 12], "from": {"random": {"seed": 9}}},
                                                  "tau": {"kind": "array", "shape": [3, 7], "from": {"random": {"seed": 10}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &qr = call.operand(kQR), &tau = call.operand(kTau);
    require_matrices(qr, "QR");
    const int64_t m = rows_of(qr), n = columns_of(qr);
    if (m < n)
      throw sdk::InvalidArgument("operand QR: Q has orthonormal columns only when m >= n; found " + sdk::type_string(qr) +
                                 " (for a wide A, form Q from the QR factorization of A's first m columns)");
    std::vector<int64_t> expected = batch_shape(qr);
    if (tau.rank != qr.rank - 1 || std::vector<int64_t>(tau.shape, tau.shape + tau.rank - 1) != expected ||
        tau.shape[tau.rank - 1] > n)
      throw sdk::InvalidArgument("operand tau: expected [batch of QR..., k] with k <= " + std::to_string(n) + ", found " +
                                 sdk::type_string(tau));
    if (tau.dtype != qr.dtype)
      throw sdk::InvalidArgument("operand tau is " + std::string(abi::dtype_name(tau.dtype)) + ", QR " + abi::dtype_name(qr.dtype) +
                                 ": they must have one dtype");
    types[kQ] = sdk::make_type(FUGUE_KIND_ARRAY, qr.dtype, sdk::shape_of(qr));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& qr = call.operand(kQR);
    const Tuning tu = tuning_of(call);
    const int64_t m = rows_of(qr), n = columns_of(qr);
    // geqrf's loop plan takes one work-item: so does orgqr, which joins it.
    const bool loops = loop_plan(tu, std::max(m, n));
    const int64_t team = loops ? 1 : team_size(tu, std::max(m, n));
    sdk::Plan plan = team_plan(batch_count(qr), team);
    plan.partitions = {matrix_batch(qr), vector_batch(call.operand(kTau)), matrix_batch(call.operand(kQ))};
    plan.registers = team == 1 && !loops ? static_cast<uint32_t>(m * n + 8) : 12;
    plan.variant = loops ? loop_variant_text(tu, std::max(m, n), "Q's columns in turn, in Q's storage")
                         : variant_text(tu, std::max(m, n), team, false, team == 1 ? "" : "a column of Q per work-item, in Q's storage");
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &qr = call.operand(kQR), &tau = call.operand(kTau);
    const int64_t m = rows_of(qr), n = columns_of(qr), k = tau.shape[tau.rank - 1];
    // One work-item in registers (every loop unrolled), or a team (of one, with its loops, in a loop plan).
    const bool one = em.local_size() == 1 && !loop_plan(tuning_of(call), std::max(m, n));
    // Q written over QR (LAPACK's in-place use): a team, or one work-item walking the columns in a loop
    // plan, writes column j of Q while reflector j stored there is still to be read; one work-item
    // building Q in registers first may.
    if (!one && em.write_at(kQ, "0") == em.read_at(kQR, "0"))
      throw sdk::Unsupported("Q is written over QR, which is supported where one work-item builds Q in registers (orders up to " +
                             std::to_string(tuning_of(call).register_order) + ", the table's register_order); this one is " +
                             std::to_string(m) + " x " + std::to_string(n) + ": give Q a name of its own");
    const std::string N = std::to_string(n);
    auto flat = [&](const std::string& i, const std::string& j) { return "(" + i + ") * " + N + " + (" + j + ")"; };
    const Scalars sc(qr.dtype);
    std::map<std::string, std::string> v = {{"t", sc.type}, {"M", std::to_string(m)}, {"K", std::to_string(k)},
                                            {"zero", sc.literal(0)}, {"one", sc.literal(1)},
                                            {"unroll", one ? "#pragma unroll" : ""}};
    for (const char* s : {"j", "r", "s", "i", "d", "ti", "q", "f"}) v[s] = em.name(s);
    const std::string j = v["j"], r = v["r"], i = v["i"], f = v["f"];
    // One work-item: Q in a private array (every index a constant once unrolled); a team: in Q's storage.
    auto Q = [&](const std::string& row) { return one ? f + "[" + flat(row, j) + "]" : em.write_at(kQ, flat(row, j)); };
    auto Qr = [&](const std::string& row) { return one ? f + "[" + flat(row, j) + "]" : em.read_at(kQ, flat(row, j)); };
    v["Qrj"] = Q(r);
    v["Qrj_r"] = Qr(r);
    v["Qij"] = Q(i);
    v["Qij_r"] = Qr(i);
    v["Vri"] = em.read_at(kQR, flat(r, i));
    v["tau_i"] = em.read_at(kTau, i);
    // H_i's products (complex: v^H q, tau times it, and v times that).
    v["dot"] = sc.mul(sc.conj(v["Vri"]), v["Qrj_r"]);
    v["scaled"] = sc.mul(v["ti"], v["d"]);
    v["minus"] = sc.mul(v["d"], v["Vri"]);
    // Column j: e_j, then H_i for i = min(j, k - 1) down to 0 (the same trip count in every work-item).
    const std::string body = fill("    $unroll\n    for (int $r = 0; $r < $M; ++$r) $Qrj = $r == $j ? $one : $zero;\n"
                                  "    $unroll\n    for (int $s = 0; $s < $K; ++$s) {\n"
                                  "      const int $i = $K - 1 - $s;\n"
                                  "      if ($i <= $j) {\n"
                                  "        const $t $ti = $tau_i;\n"
                                  "        $t $d = $Qij_r;\n"
                                  "        $unroll\n        for (int $r = $i + 1; $r < $M; ++$r) $d += $dot;\n"
                                  "        $d = $scaled;\n"
                                  "        $Qij -= $d;\n"
                                  "        $unroll\n        for (int $r = $i + 1; $r < $M; ++$r) $Qrj -= $minus;\n"
                                  "      }\n"
                                  "    }\n",
                                  v);
    std::string code;
    if (one) {
      code += v["t"] + " " + f + "[" + std::to_string(m * n) + "];\n";
      code += "#pragma unroll\nfor (int " + j + " = 0; " + j + " < " + N + "; ++" + j + ") {\n" + body + "}\n";
      for (int64_t e = 0; e < m * n; ++e) code += em.write_at(kQ, std::to_string(e)) + " = " + f + "[" + std::to_string(e) + "];\n";
    } else {
      code += team_loop(v["q"], em.builtin(FUGUE_BUILTIN_LOCAL_ID), em.local_size(), j, n, N, body);
    }
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &qr = call.operand(kQR), &tau = call.operand(kTau);
    const double m = static_cast<double>(rows_of(qr)), n = static_cast<double>(columns_of(qr)),
                 k = static_cast<double>(tau.shape[tau.rank - 1]), count = static_cast<double>(batch_count(qr));
    // LAPACK's count: 4 m n k - 2 (m + n) k^2 + 4 k^3 / 3.
    return {sizeof(fugue_cost), count * (2 * m * n + k) * abi::dtype_size(qr.dtype),
            count * (4 * m * n * k - 2 * (m + n) * k * k + 4 * k * k * k / 3)};
  }

  // LAPACK's org2r (ung2r) in complex extended precision.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView qr(arrays[kQR]), tau(arrays[kTau]);
    sdk::HostView q(arrays[kQ]);
    const fugue_type &t = call.operand(kQR), &tt = call.operand(kTau);
    const int64_t m = rows_of(t), n = columns_of(t), k = tt.shape[tt.rank - 1], count = batch_count(t);
    std::vector<Complex> w(static_cast<size_t>(m * n));
    for (int64_t e = 0; e < count; ++e) {
      auto V = [&](int64_t r, int64_t c) { return get_value(qr, e * m * n + r * n + c); };
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) w[r * n + c] = r == c ? 1 : 0;
      for (int64_t i = k - 1; i >= 0; --i) {
        const Complex ti = get_value(tau, e * k + i);
        for (int64_t c = i; c < n; ++c) {
          Complex d = w[i * n + c];
          for (int64_t r = i + 1; r < m; ++r) d += std::conj(V(r, i)) * w[r * n + c];
          d *= ti;
          w[i * n + c] -= d;
          for (int64_t r = i + 1; r < m; ++r) w[r * n + c] -= d * V(r, i);
        }
      }
      for (int64_t r = 0; r < m * n; ++r) set_value(q, e * m * n + r, w[r]);
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> orgqr_operation() { return std::make_unique<Orgqr>(); }

}  // namespace fugue::linalg
