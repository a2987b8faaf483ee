// getrf.cpp: linalg.getrf (see getrf.h).
#include "getrf.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernel_text.h"
#include "matrices.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kLU = 1, kIpiv = 2, kInfo = 3;

// The plan for m x n matrices: the team, and whether rows stay in registers.
struct Shape {
  int64_t m, n, k;  // rows, columns, steps (min(m, n))
  int64_t team;
  bool registers() const { return team == 1; }
  bool rows() const { return team > 1 && std::max(m, n) <= kRowOrder; }
};

Shape shape_of(const fugue_type& a) {
  Shape s;
  s.m = rows_of(a);
  s.n = columns_of(a);
  s.k = std::min(s.m, s.n);
  s.team = team_size(std::max(s.m, s.n));
  return s;
}

class Getrf final : public sdk::Operation {
 public:
  Getrf() {
    name = "linalg.getrf";
    doc = "LU factorization with partial pivoting of a batch of matrices [..., m, n], A = P L U as LAPACK's getrf: LU "
          "holds L below the diagonal (unit diagonal not stored) and U on and above it; ipiv (i32 [..., min(m, n)], "
          "1-based) the row swapped with row i at step i, the first element of largest magnitude in its column; info "
          "(optional) per matrix: 0, or k when U(k, k) is exactly zero (the factorization completes)";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kRealDtypes, "matrices [..., m, n]"),
                sdk::out("LU", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kRealDtypes, "the factors L and U, of A's shape and dtype"),
                sdk::out("ipiv", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                         "i32 [..., min(m, n)]: the pivots, 1-based as LAPACK's"),
                sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                  "i32 per matrix [...]: 0, or the first k with U(k, k) exactly zero")};
    // Backward stable with partial pivoting (growth is small on the matrices tests use).
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-10;
    test_cases = R"([
      {"name": "one 1x1", "inputs": {"A": {"kind": "array", "shape": [1, 1], "from": {"random": {"seed": 1}}}}},
      {"name": "batch of 3x3 in registers", "inputs": {"A": {"kind": "array", "shape": [37, 3, 3], "from": {"random": {"seed": 2}}}}},
      {"name": "8x5 in registers", "inputs": {"A": {"kind": "array", "shape": [2, 5, 8, 5], "from": {"random": {"seed": 3}}}}},
      {"name": "12x12 in rows", "inputs": {"A": {"kind": "array", "shape": [21, 12, 12], "from": {"random": {"seed": 4}}}}},
      {"name": "5x16 in rows", "inputs": {"A": {"kind": "array", "shape": [9, 5, 16], "from": {"random": {"seed": 5}}}}},
      {"name": "33x20 in teams", "inputs": {"A": {"kind": "array", "shape": [5, 33, 20], "from": {"random": {"seed": 6}}}}},
      {"name": "70x70, a work-group each", "inputs": {"A": {"kind": "array", "shape": [3, 70, 70], "from": {"random": {"seed": 7}}}}},
      {"name": "singular", "inputs": {"A": {"kind": "array", "shape": [3, 2, 2], "value": [[[1, 2], [2, 4]], [[0, 0], [0, 1]], [[0, 3], [0, 1]]]}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& a = call.operand(kA);
    require_matrices(a, name, "A");
    std::vector<int64_t> pivots = batch_shape(a);
    pivots.push_back(std::min(rows_of(a), columns_of(a)));
    types[kLU] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, sdk::shape_of(a));
    types[kIpiv] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, pivots);
    types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(a);
    const uint64_t size = abi::dtype_size(a.dtype);
    sdk::Plan plan;
    plan.level = FUGUE_LEVEL_BLOCK;
    plan.phases = FUGUE_PHASE_BODY;
    plan.entry_teams = true;
    plan.launch.iteration[0] = batch_count(a);
    plan.launch.local_min = plan.launch.local_max = plan.launch.local_preferred = s.team;
    plan.launch.local_multiple = 1;
    plan.partitions = {matrix_batch(a), matrix_batch(call.operand(kLU)), vector_batch(call.operand(kIpiv)),
                       value_batch(call.operand(kInfo))};
    if (s.registers()) {
      plan.registers = static_cast<uint32_t>(s.m * s.n + 8);
    } else if (s.rows()) {
      plan.registers = static_cast<uint32_t>(s.n + 8);
      plan.local_mem_bytes = static_cast<uint64_t>(s.m + s.n) * size;  // the pivot column and the pivot row
    } else {
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(s.team) * (size + 4);  // each work-item's best candidate
    }
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(a);
    em.append(s.registers() ? in_registers(em, a.dtype, s) : s.rows() ? in_rows(em, a.dtype, s) : in_team(em, a.dtype, s));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(a);
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    const double count = static_cast<double>(batch_count(a));
    // LAPACK's count for m >= n: m n^2 - n^3 / 3 (with k = min(m, n) in general).
    const double flops = count * (m * n * k - (m + n) * k * k / 2 + k * k * k / 3);
    return {sizeof(fugue_cost), count * (2 * m * n * abi::dtype_size(a.dtype) + 4 * (k + 1)), flops};
  }

  // Right-looking elimination in extended precision, the pivots chosen as LAPACK chooses them.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]);
    sdk::HostView lu(arrays[kLU]), ipiv(arrays[kIpiv]), info(arrays[kInfo]);
    const fugue_type& t = call.operand(kA);
    const Shape s = shape_of(t);
    const int64_t count = batch_count(t);
    std::vector<long double> f(static_cast<size_t>(s.m * s.n));
    for (int64_t e = 0; e < count; ++e) {
      const int64_t base = e * s.m * s.n;
      for (int64_t i = 0; i < s.m * s.n; ++i) f[i] = a.get(base + i);
      int64_t failed = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        int64_t p = k;
        for (int64_t r = k + 1; r < s.m; ++r)
          if (std::fabs(f[r * s.n + k]) > std::fabs(f[p * s.n + k])) p = r;
        ipiv.set_int(e * s.k + k, p + 1);
        const long double pivot = f[p * s.n + k];
        if (pivot == 0) {
          if (!failed) failed = k + 1;
          continue;  // the column below is zero: nothing to swap or eliminate
        }
        for (int64_t j = 0; j < s.n; ++j) std::swap(f[k * s.n + j], f[p * s.n + j]);
        for (int64_t r = k + 1; r < s.m; ++r) {
          const long double l = f[r * s.n + k] / pivot;
          f[r * s.n + k] = l;
          for (int64_t j = k + 1; j < s.n; ++j) f[r * s.n + j] -= l * f[k * s.n + j];
        }
      }
      for (int64_t i = 0; i < s.m * s.n; ++i) lu.set(base + i, static_cast<double>(f[i]));
      info.set_int(e, failed);
    }
  }

 private:
  // One matrix per work-item: f[r * n + c] in registers, every index a constant; the pivot row is
  // swapped in by selects against each row it may be.
  static std::string in_registers(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s) {
    const std::string t = std::string(abi::dtype_ctype(dtype));
    const std::string f = em.name("f"), info = em.name("info"), p = em.name("p"), mx = em.name("mx"), v = em.name("v"),
                      piv = em.name("piv"), rcp = em.name("rcp"), tmp = em.name("t");
    auto at = [&](int64_t r, int64_t c) { return f + "[" + std::to_string(r * s.n + c) + "]"; };
    std::string code = t + " " + f + "[" + std::to_string(s.m * s.n) + "];\n";
    for (int64_t e = 0; e < s.m * s.n; ++e) code += at(e / s.n, e % s.n) + " = " + em.read_at(kA, std::to_string(e)) + ";\n";
    code += "int " + info + " = 0;\n";
    for (int64_t k = 0; k < s.k; ++k) {
      const std::string K = std::to_string(k);
      code += "{\n  int " + p + " = " + K + ";\n  " + t + " " + mx + " = fabs(" + at(k, k) + ");\n";
      for (int64_t r = k + 1; r < s.m; ++r)
        code += fill("  { const $t $v = fabs($x); if ($v > $mx) { $mx = $v; $p = $r; } }\n",
                     {{"t", t}, {"v", v}, {"x", at(r, k)}, {"mx", mx}, {"p", p}, {"r", std::to_string(r)}});
      code += "  " + em.write_at(kIpiv, K) + " = " + p + " + 1;\n";
      for (int64_t r = k + 1; r < s.m; ++r) {
        code += "  if (" + p + " == " + std::to_string(r) + ") {\n";
        for (int64_t j = 0; j < s.n; ++j)
          code += "    { const " + t + " " + tmp + " = " + at(k, j) + "; " + at(k, j) + " = " + at(r, j) + "; " + at(r, j) + " = " +
                  tmp + "; }\n";
        code += "  }\n";
      }
      code += "  const " + t + " " + piv + " = " + at(k, k) + ";\n";
      code += "  if (" + piv + " == " + real_literal(dtype, 0) + ") { if (" + info + " == 0) " + info + " = " + std::to_string(k + 1) +
              "; } else {\n";
      code += "    const " + t + " " + rcp + " = " + real_literal(dtype, 1) + " / " + piv + ";\n";
      for (int64_t r = k + 1; r < s.m; ++r) {
        code += "    " + at(r, k) + " *= " + rcp + ";\n";
        for (int64_t j = k + 1; j < s.n; ++j) code += "    " + at(r, j) + " -= " + at(r, k) + " * " + at(k, j) + ";\n";
      }
      code += "  }\n}\n";
    }
    for (int64_t e = 0; e < s.m * s.n; ++e) code += em.write_at(kLU, std::to_string(e)) + " = " + at(e / s.n, e % s.n) + ";\n";
    code += em.write_at(kInfo, "0") + " = " + info + ";\n";
    return code;
  }

  // A team with row `lane` of the matrix in work-item lane's registers. Rows never move: each keeps its
  // current position `pos`, and a swap exchanges two positions. At step k every row leaves its element
  // of column k at its position in local memory; every work-item finds the same pivot there; the pivot
  // row leaves its elements right of k in local memory, and every row below k eliminates with them.
  static std::string in_rows(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s) {
    const std::string t = std::string(abi::dtype_ctype(dtype)), zero = real_literal(dtype, 0);
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const std::string column = em.local_array(dtype, s.m, "column"), pivot_row = em.local_array(dtype, s.n, "pivot_row");
    const std::string row = em.name("row"), pos = em.name("pos"), live = em.name("live"), info = em.name("info"),
                      p = em.name("p"), mx = em.name("mx"), v = em.name("v"), piv = em.name("piv"), l = em.name("l");
    const std::string M = std::to_string(s.m);
    auto el = [&](int64_t j) { return row + "[" + std::to_string(j) + "]"; };
    std::map<std::string, std::string> vars = {{"t", t}, {"lane", lane}, {"pos", pos}, {"live", live}, {"info", info},
                                               {"p", p}, {"mx", mx}, {"v", v}, {"piv", piv}, {"l", l}, {"M", M},
                                               {"column", column}, {"prow", pivot_row}, {"zero", zero},
                                               {"one", real_literal(dtype, 1)}};
    std::string code = fill("const bool $live = $lane < $M;\nint $pos = $lane;\nint $info = 0;\n", vars);
    code += t + " " + row + "[" + std::to_string(s.n) + "];\n";
    for (int64_t j = 0; j < s.n; ++j)
      code += el(j) + " = " + live + " ? " + em.read_at(kA, "min(" + lane + ", " + std::to_string(s.m - 1) + ") * " +
                                                                 std::to_string(s.n) + " + " + std::to_string(j)) + " : " + zero + ";\n";
    for (int64_t k = 0; k < s.k; ++k) {
      vars["k"] = std::to_string(k);
      vars["k1"] = std::to_string(k + 1);
      vars["x"] = el(k);
      vars["ipiv"] = em.write_at(kIpiv, vars["k"]);
      code += fill("if ($live) $column[$pos] = $x;\n", vars) + sync;
      code += fill("{\n  int $p = $k;\n  $t $mx = fabs($column[$k]);\n", vars);
      for (int64_t r = k + 1; r < s.m; ++r) {
        vars["r"] = std::to_string(r);
        code += fill("  { const $t $v = fabs($column[$r]); if ($v > $mx) { $mx = $v; $p = $r; } }\n", vars);
      }
      code += fill("  const $t $piv = $column[$p];\n"
                   "  if ($lane == 0) $ipiv = $p + 1;\n"
                   "  if ($piv == $zero && $info == 0) $info = $k1;\n"
                   "  $pos = $pos == $p ? $k : $pos == $k ? $p : $pos;\n",
                   vars);
      if (k + 1 < s.n) {
        code += fill("  if ($live && $pos == $k) {\n", vars);
        for (int64_t j = k + 1; j < s.n; ++j) code += "    " + pivot_row + "[" + std::to_string(j) + "] = " + el(j) + ";\n";
        code += "  }\n";
      }
      code += "  " + sync;
      code += fill("  if ($live && $pos > $k && $piv != $zero) {\n    const $t $l = $x * ($one / $piv);\n    $x = $l;\n", vars);
      for (int64_t j = k + 1; j < s.n; ++j) code += "    " + el(j) + " -= " + l + " * " + pivot_row + "[" + std::to_string(j) + "];\n";
      code += "  }\n}\n";
    }
    code += "if (" + live + ") {\n";
    for (int64_t j = 0; j < s.n; ++j)
      code += "  " + em.write_at(kLU, pos + " * " + std::to_string(s.n) + " + " + std::to_string(j)) + " = " + el(j) + ";\n";
    code += "}\n";
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
    return code;
  }

  // A team per matrix, right-looking in LU's storage (local memory with teams, else where the core
  // keeps it): each step every work-item finds its best candidate among the rows it takes, every
  // work-item picks the same pivot from those (largest magnitude, then the first row), the team swaps
  // the two rows, scales the column and updates the trailing matrix, a barrier between each.
  static std::string in_team(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s) {
    const std::string t = std::string(abi::dtype_ctype(dtype));
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const int64_t team = s.team;
    const std::string best_value = em.local_array(dtype, team, "best_value"),
                      best_row = em.local_array(FUGUE_DTYPE_I32, team, "best_row");
    const std::string q = em.name("q"), e = em.name("e"), r = em.name("r"), c = em.name("c"), k = em.name("k"),
                      i = em.name("i"), j = em.name("j"), w = em.name("w"), h = em.name("h"), v = em.name("v"),
                      mx = em.name("mx"), p = em.name("p"), piv = em.name("piv"), rcp = em.name("rcp"), tmp = em.name("tmp"),
                      info = em.name("info"), o = em.name("o");
    const std::string M = std::to_string(s.m), N = std::to_string(s.n);
    auto LU = [&](const std::string& row, const std::string& col) { return em.write_at(kLU, "(" + row + ") * " + N + " + " + col); };
    auto LUr = [&](const std::string& row, const std::string& col) { return em.read_at(kLU, "(" + row + ") * " + N + " + " + col); };
    std::map<std::string, std::string> vars = {
        {"t", t},     {"lane", lane}, {"k", k},       {"i", i},           {"j", j},           {"w", w},     {"h", h},
        {"v", v},     {"mx", mx},     {"p", p},       {"piv", piv},       {"rcp", rcp},       {"tmp", tmp}, {"info", info},
        {"o", o},     {"M", M},       {"N", N},       {"T", std::to_string(team)},           {"bv", best_value},
        {"br", best_row}, {"zero", real_literal(dtype, 0)}, {"one", real_literal(dtype, 1)}, {"K", std::to_string(s.k)},
        {"LUik", LUr(i, k)}, {"LUkj", LUr(k, j)}, {"LUij", LU(i, j)}, {"LUik_w", LU(i, k)}, {"LUrk", LUr(r, k)},
        {"LUkc", LU(k, c)}, {"LUpc", LU(p, c)}, {"LUkc_r", LUr(k, c)}, {"LUpc_r", LUr(p, c)}, {"LUpk", LUr(p, k)},
        {"r", r}, {"c", c}, {"ipiv", em.write_at(kIpiv, k)}};
    std::string code;
    code += team_loop(q, lane, team, e, s.m * s.n, std::to_string(s.m * s.n),
                      "    " + em.write_at(kLU, e) + " = " + em.read_at(kA, e) + ";\n");
    code += sync;
    code += fill("int $info = 0;\nfor (int $k = 0; $k < $K; ++$k) {\n", vars);
    // Each work-item's best candidate among rows k + lane, k + lane + T, ... (the first of equals).
    code += fill("$t $mx = -$one;\nint $p = $M;\n", vars);
    code += team_loop(q, lane, team, o, s.m, M + " - " + k,
                      fill("    const int $r = $k + $o;\n    const $t $v = fabs($LUrk);\n    if ($v > $mx) { $mx = $v; $p = $r; }\n",
                           vars));
    code += fill("$bv[$lane] = $mx;\n$br[$lane] = $p;\n", vars) + sync;
    // Every work-item picks the same pivot: the largest magnitude, the first row among equals.
    code += fill("$mx = $bv[0];\n$p = $br[0];\n"
                 "for (int $o = 1; $o < $T; ++$o) {\n"
                 "  const $t $v = $bv[$o];\n"
                 "  if ($v > $mx || ($v == $mx && $br[$o] < $p)) { $mx = $v; $p = $br[$o]; }\n"
                 "}\n"
                 "if ($p >= $M) $p = $k;  /* a column of NaNs: no candidate compared */\n"
                 "const $t $piv = $LUpk;\n"
                 "if ($lane == 0) $ipiv = $p + 1;\n"
                 "if ($piv == $zero && $info == 0) $info = $k + 1;\n",
                 vars);
    code += sync;  // every work-item has read the pivot before the rows move
    code += team_loop(q, lane, team, c, s.n, "(" + p + " != " + k + " ? " + N + " : 0)",
                      fill("    const $t $tmp = $LUkc_r;\n    $LUkc = $LUpc_r;\n    $LUpc = $tmp;\n", vars));
    code += sync;
    code += fill("const int $h = $piv == $zero ? 0 : $M - $k - 1;  /* rows below the pivot to eliminate */\n"
                 "const int $w = $N - $k - 1;\n"
                 "const $t $rcp = $one / $piv;\n",
                 vars);
    code += team_loop(q, lane, team, o, s.m, h, fill("    const int $i = $k + 1 + $o;\n    $LUik_w = $LUik * $rcp;\n", vars));
    code += sync;
    code += team_loop(q, lane, team, o, s.m * s.n, h + " * " + w,
                      fill("    const int $i = $k + 1 + $o / $w, $j = $k + 1 + $o % $w;\n    $LUij -= $LUik * $LUkj;\n", vars));
    code += sync + "}\n";
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
    return code;
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> getrf_operation() { return std::make_unique<Getrf>(); }

}  // namespace fugue::linalg
