// getrf.cpp: linalg.getrf (see getrf.h).
#include "getrf.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "blocked_lu.h"
#include "kernel_text.h"
#include "lanes.h"
#include "lanes_lu.h"
#include "matrices.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kLU = 1, kIpiv = 2, kInfo = 3, kN = 4;  // kN: linalg.getrf_vbatched's orders

// The plan for m x n matrices: the team, and whether rows stay in registers.
struct Shape {
  int64_t m, n, k;  // rows, columns, steps (min(m, n))
  Tuning tuning;
  int64_t team;
  bool grid;  // a grid of work-items (tuning.h's Grid) holding the matrix in registers
  bool loop;  // one work-item, the matrix in local memory, its loops kept (tuning.h's loop_plan)
  bool blocked;  // kernels over the whole batch, panel by panel (blocked_lu.h)
  int64_t value_bytes;
  Grid grid_shape() const { return grid_of(tuning, std::max(m, n), value_bytes); }
  bool registers() const { return team == 1 && !loop; }
  bool rows() const { return !grid && !loop && row_plan(tuning, std::max(m, n)); }
};

Shape shape_of(const sdk::Call& call, const fugue_type& a, bool vbatched) {
  Shape s;
  s.m = rows_of(a);
  s.n = columns_of(a);
  s.k = std::min(s.m, s.n);
  // Without a device (the reference) no plan is asked for.
  const fugue_device_desc* device = call.raw()->device;
  s.value_bytes = static_cast<int64_t>(abi::dtype_size(a.dtype));
  s.tuning = lu_tuning(tuning_of(call), s.value_bytes);
  const bool loop_fits = device && fits_local(call, s.m * s.n, a.dtype);
  s.blocked = device && !vbatched && blocked_plan(s.tuning.lu_blocked_order, s.tuning, std::max(s.m, s.n), loop_fits);
  s.loop = device && !s.blocked && loop_plan(s.tuning, std::max(s.m, s.n)) && loop_fits;
  s.grid = device && !s.blocked && !s.loop && grid_plan(s.tuning, std::max(s.m, s.n), s.value_bytes, device->max_work_group_size);
  s.team = s.loop ? 1 : s.grid ? s.grid_shape().team() : team_size(s.tuning, std::max(s.m, s.n));
  return s;
}

class Getrf final : public sdk::Operation {
 public:
  explicit Getrf(bool vbatched) : vbatched_(vbatched) {
    name = vbatched ? "linalg.getrf_vbatched" : "linalg.getrf";
    doc = "LU factorization with partial pivoting of a batch of matrices [..., m, n], A = P L U as LAPACK's getrf: LU "
          "holds L below the diagonal (unit diagonal not stored) and U on and above it; ipiv (i32 [..., min(m, n)], "
          "1-based) the row swapped with row i at step i, the first element of largest magnitude in its column (|re| + |im| for "
          "complex numbers, as LAPACK's izamax); info "
          "(optional) per matrix: 0, or k when U(k, k) is exactly zero (the factorization completes)";
    if (vbatched)
      doc += ". Variable sizes: square matrices, matrix e being A[e, :n_e, :n_e] of the padded [..., N, N] batch (the padding never "
             "read); LU and ipiv are those of diag(A_e, I) (pivots n_e + 1 .. N their own rows), so linalg.getrs takes them as they "
             "are; info -1 for an order outside 0..N";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., m, n]"),
                sdk::out("LU", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the factors L and U, of A's shape and dtype"),
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
    if (vbatched) {
      operands.push_back(sdk::in("n", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32), "the order of each matrix [...], 0..N"));
      test_cases = R"([
      {"name": "orders 0 to 5 of 5x5, bad ones", "inputs": {"A": {"kind": "array", "shape": [9, 5, 5], "from": {"random": {"seed": 1}}},
                                                           "n": {"kind": "array", "dtype": "i32", "shape": [9], "value": [0, 1, 2, 3, 4, 5, 6, -1, 5]}}},
      {"name": "orders of 12x12 in rows", "inputs": {"A": {"kind": "array", "shape": [2, 3, 12, 12], "from": {"random": {"seed": 2}}},
                                                     "n": {"kind": "array", "dtype": "i32", "shape": [2, 3], "value": [[12, 7, 1], [9, 0, 11]]}}},
      {"name": "orders of 40x40 in teams", "inputs": {"A": {"kind": "array", "shape": [4, 40, 40], "from": {"random": {"seed": 3}}},
                                                      "n": {"kind": "array", "dtype": "i32", "shape": [4], "value": [40, 17, 33, 2]}}},
      {"name": "singular within the order", "inputs": {"A": {"kind": "array", "shape": [2, 3, 3], "value": [[[1, 2, 5], [2, 4, 6], [7, 8, 9]], [[0, 0, 1], [0, 1, 0], [1, 0, 0]]]},
                                                        "n": {"kind": "array", "dtype": "i32", "shape": [2], "value": [2, 2]}}}
    ])";
    }
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& a = call.operand(kA);
    require_matrices(a, "A");
    if (vbatched_) {
      square_order(a, "A");
      require_orders(call.operand(kN), a, "n", "A");
    }
    std::vector<int64_t> pivots = batch_shape(a);
    pivots.push_back(std::min(rows_of(a), columns_of(a)));
    types[kLU] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, sdk::shape_of(a));
    types[kIpiv] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, pivots);
    types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(call, a, vbatched_);
    if (s.blocked) return blocked_lu_plan(call, s.tuning, s.m, s.n, a.dtype);
    sdk::Plan plan = emitted_plan(call, s);
    // Alone on a CPU, small real matrices take the lanes (lanes.h, lanes_lu.h); the emitted plan is what
    // others join.
    if (const int64_t lanes = lanes_for(call, s.tuning, s.m, s.n, a.dtype, vbatched_)) {
      plan.own_kernels_alone = true;
      plan.variant += "; " + lanes_text(s.tuning, std::max(s.m, s.n), lanes);
    }
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(call, a, vbatched_);
    std::string code;
    const VariableOrder v = vbatched_ ? declare_order(em, kN, s.n, code) : VariableOrder{};
    code += s.loop        ? in_loops(em, a.dtype, s, v)
            : s.registers() ? in_registers(em, a.dtype, s, v)
            : s.grid      ? in_grid(em, a.dtype, s, s.grid_shape(), v)
            : s.rows()    ? in_rows(em, a.dtype, s, v)
                          : in_team(em, a.dtype, s, fits_local(call, s.m * s.n, a.dtype), v);
    em.append(code);
  }

  // The blocked plan (blocked_lu.h), or the lanes where getrf runs alone (lanes_lu.h); the others are
  // emitted.
  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const fugue_type& a = call.operand(kA);
    const Shape shape = shape_of(call, a, vbatched_);
    if (shape.blocked)
      blocked_lu(call, s, kA, kLU, kIpiv, kInfo);
    else
      lanes_lu(call, s, kA, kLU, kIpiv, kInfo, lanes_for(call, shape.tuning, shape.m, shape.n, a.dtype, vbatched_));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Shape s = shape_of(call, a, vbatched_);
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    const double count = static_cast<double>(batch_count(a));
    // LAPACK's count for m >= n: m n^2 - n^3 / 3 (with k = min(m, n) in general).
    const double flops = count * (m * n * k - (m + n) * k * k / 2 + k * k * k / 3);
    return {sizeof(fugue_cost), count * (2 * m * n * abi::dtype_size(a.dtype) + 4 * (k + 1)), flops};
  }

  // Right-looking elimination in (complex) extended precision, the pivots chosen as LAPACK chooses them.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]);
    sdk::HostView lu(arrays[kLU]), ipiv(arrays[kIpiv]), info(arrays[kInfo]);
    const fugue_type& t = call.operand(kA);
    const Shape s = shape_of(call, t, vbatched_);
    const int64_t count = batch_count(t);
    auto magnitude = [](const Complex& z) { return std::fabs(z.real()) + std::fabs(z.imag()); };
    std::vector<Complex> f(static_cast<size_t>(s.m * s.n));
    for (int64_t e = 0; e < count; ++e) {
      const int64_t base = e * s.m * s.n;
      // Variable sizes: diag(A_e, I), A_e of order ne (0 for an order outside 0..n).
      const int64_t order = vbatched_ ? sdk::HostView(arrays[kN]).get_int(e) : s.n;
      const bool bad = order < 0 || order > s.n;
      const int64_t ne = bad ? 0 : order;
      for (int64_t i = 0; i < s.m * s.n; ++i)
        f[i] = !vbatched_ || (i / s.n < ne && i % s.n < ne) ? get_value(a, base + i) : Complex(i / s.n == i % s.n ? 1 : 0);
      int64_t failed = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        int64_t p = k;
        for (int64_t r = k + 1; r < s.m; ++r)
          if (magnitude(f[r * s.n + k]) > magnitude(f[p * s.n + k])) p = r;
        ipiv.set_int(e * s.k + k, p + 1);
        const Complex pivot = f[p * s.n + k];
        if (pivot == Complex(0)) {
          if (!failed) failed = k + 1;
          continue;  // the column below is zero: nothing to swap or eliminate
        }
        for (int64_t j = 0; j < s.n; ++j) std::swap(f[k * s.n + j], f[p * s.n + j]);
        for (int64_t r = k + 1; r < s.m; ++r) {
          const Complex l = f[r * s.n + k] / pivot;
          f[r * s.n + k] = l;
          for (int64_t j = k + 1; j < s.n; ++j) f[r * s.n + j] -= l * f[k * s.n + j];
        }
      }
      for (int64_t i = 0; i < s.m * s.n; ++i) set_value(lu, base + i, f[i]);
      info.set_int(e, bad ? -1 : failed);
    }
  }

 private:
  // The plans getrf's kernel is emitted for, below the blocked one.
  sdk::Plan emitted_plan(const sdk::Call& call, const Shape& s) const {
    const fugue_type& a = call.operand(kA);
    const uint64_t size = abi::dtype_size(a.dtype);
    sdk::Plan plan = team_plan(batch_count(a), s.team);
    plan.partitions = {matrix_batch(a), matrix_batch(call.operand(kLU)), vector_batch(call.operand(kIpiv)),
                       value_batch(call.operand(kInfo))};
    if (vbatched_) plan.partitions.push_back(value_batch(call.operand(kN)));
    if (s.loop) {
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(s.m * s.n) * size;
      plan.reads_once = uint64_t{1} << kA;  // copied into the matrix it factors
      plan.variant = loop_variant_text(s.tuning, std::max(s.m, s.n), "the matrix in local memory, rows swapped whole and updated along them");
      return plan;
    }
    if (s.registers()) {
      plan.registers = static_cast<uint32_t>(s.m * s.n + 8);
    } else if (s.grid) {
      const Grid g = s.grid_shape();
      const int64_t br = g.block_rows(s.m), bc = g.block_columns(s.n);
      // The elements, the rows' multipliers and the pivot row's values at the work-item's columns; the
      // rows' positions, then and now.
      plan.registers = static_cast<uint32_t>((br * bc + br + bc) * (Scalars(a.dtype).complex ? 2 : 1) + 2 * br + 12);
      // Column k twice (two steps in turn), the pivot row, and each grid row's candidate pivot.
      plan.local_mem_bytes = static_cast<uint64_t>(2 * s.m + s.n) * size + static_cast<uint64_t>(g.rows) * (size + 4);
      plan.variant = variant_text(s.tuning, std::max(s.m, s.n), s.team, true, "", &g, s.m, s.n);
      return plan;
    } else if (s.rows()) {
      plan.registers = static_cast<uint32_t>(s.n + 8);
      plan.local_mem_bytes = static_cast<uint64_t>(s.m + s.n) * size;  // the pivot column and the pivot row
      // A row per work-item (H100, 20,000 f64 16 x 16: 0.112 ms packed, 0.064 with the rows apart;
      // 2,000 f64 32 x 32: 0.059, 0.047).
      plan.walks_rows = true;
    } else {
      plan.registers = 16;
      if (fits_local(call, s.m * s.n, a.dtype)) plan.local_mem_bytes = static_cast<uint64_t>(s.m * s.n) * size;  // the matrix
    }
    plan.variant = variant_text(s.tuning, std::max(s.m, s.n), s.team, true,
                                s.registers() || s.rows() ? "" : plan.local_mem_bytes ? "the matrix in local memory" : "the matrix in LU's storage");
    return plan;
  }

  // One matrix per work-item: f[r * n + c] in registers, every index a constant; the pivot row is
  // swapped in by selects against each row it may be.
  static std::string in_registers(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s, const VariableOrder& vo) {
    const Scalars sc(dtype);
    const std::string t = sc.type, rt = sc.real_type;
    const std::string f = em.name("f"), info = em.name("info"), p = em.name("p"), mx = em.name("mx"), v = em.name("v"),
                      piv = em.name("piv"), rcp = em.name("rcp"), tmp = em.name("t");
    auto at = [&](int64_t r, int64_t c) { return f + "[" + std::to_string(r * s.n + c) + "]"; };
    std::string code = t + " " + f + "[" + std::to_string(s.m * s.n) + "];\n";
    for (int64_t e = 0; e < s.m * s.n; ++e)
      code += at(e / s.n, e % s.n) + " = " +
              embedded(vo, em.read_at(kA, std::to_string(e)), std::to_string(e / s.n), std::to_string(e % s.n), sc.literal(1), sc.literal(0)) + ";\n";
    code += "int " + info + " = 0;\n";
    for (int64_t k = 0; k < s.k; ++k) {
      const std::string K = std::to_string(k);
      code += "{\n  int " + p + " = " + K + ";\n  " + rt + " " + mx + " = " + sc.pivot_magnitude(at(k, k)) + ";\n";
      for (int64_t r = k + 1; r < s.m; ++r)
        code += fill("  { const $rt $v = $x; if ($v > $mx) { $mx = $v; $p = $r; } }\n",
                     {{"rt", rt}, {"v", v}, {"x", sc.pivot_magnitude(at(r, k))}, {"mx", mx}, {"p", p}, {"r", std::to_string(r)}});
      code += "  " + em.write_at(kIpiv, K) + " = " + p + " + 1;\n";
      for (int64_t r = k + 1; r < s.m; ++r) {
        code += "  if (" + p + " == " + std::to_string(r) + ") {\n";
        for (int64_t j = 0; j < s.n; ++j)
          code += "    { const " + t + " " + tmp + " = " + at(k, j) + "; " + at(k, j) + " = " + at(r, j) + "; " + at(r, j) + " = " +
                  tmp + "; }\n";
        code += "  }\n";
      }
      code += "  const " + t + " " + piv + " = " + at(k, k) + ";\n";
      code += "  if (" + sc.is_zero(piv) + ") { if (" + info + " == 0) " + info + " = " + std::to_string(k + 1) + "; } else {\n";
      code += "    " + sc.declare_reciprocal(rcp, piv);
      for (int64_t r = k + 1; r < s.m; ++r) {
        code += "    " + at(r, k) + " = " + sc.by_pivot(at(r, k), piv, rcp) + ";\n";
        for (int64_t j = k + 1; j < s.n; ++j) code += "    " + at(r, j) + " -= " + sc.mul(at(r, k), at(k, j)) + ";\n";
      }
      code += "  }\n}\n";
    }
    for (int64_t e = 0; e < s.m * s.n; ++e) code += em.write_at(kLU, std::to_string(e)) + " = " + at(e / s.n, e % s.n) + ";\n";
    code += em.write_at(kInfo, "0") + " = " + stored_info(vo, info) + ";\n";
    return code;
  }

  // One matrix per work-item in a local array, row-major, its loops kept (a CPU's plan): rows are
  // swapped whole and every update runs along a row, consecutive values the compiler turns into vector
  // operations. Blocks of KB columns (LAPACK's getrf's order within a kernel): column k and row k are
  // brought up to date with the block's earlier columns only when step k reaches them, and the rows below
  // a block are updated by all of its rows at once, each element read and written once a block. The
  // pivots and info as in_registers.
  static std::string in_loops(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s, const VariableOrder& vo) {
    const Scalars sc(dtype);
    std::map<std::string, std::string> vars = {{"t", sc.type}, {"rt", sc.real_type}, {"M", std::to_string(s.m)}, {"N", std::to_string(s.n)},
                                               {"K", std::to_string(s.k)}, {"MN", std::to_string(s.m * s.n)}};
    for (const char* name : {"e", "k0", "kend", "k", "r", "j", "i", "p", "mx", "v", "x", "tmp", "piv", "rcp", "l", "info"}) vars[name] = em.name(name);
    const std::string w = em.local_array(dtype, s.m * s.n, "matrix");
    auto W = [&](const std::string& row, const std::string& col) { return w + "[(" + row + ") * " + std::to_string(s.n) + " + " + col + "]"; };
    const std::string e = vars["e"], k0 = vars["k0"], k = vars["k"], r = vars["r"], j = vars["j"], i = vars["i"], p = vars["p"];
    // Columns a block (PoCL, 2,000 matrices of 128: f64 350-375 ms by 1, 165-182 by 4, 184-193 by 8;
    // f32 173, 103-131, 126-129; of 64 and 20,000 of 16 likewise 4).
    const int64_t kb = 4;
    vars["KB"] = std::to_string(kb);
    vars["w_e"] = w + "[" + e + "]";
    vars["a_e"] = embedded(vo, em.read_at(kA, e), e + " / " + vars["N"], e + " % " + vars["N"], sc.literal(1), sc.literal(0));
    vars["lu_e"] = em.write_at(kLU, e);
    vars["mag_kk"] = sc.pivot_magnitude(W(k, k));
    vars["mag_rk"] = sc.pivot_magnitude(W(r, k));
    vars["ipiv"] = em.write_at(kIpiv, k);
    vars["wkj"] = W(k, j);
    vars["wpj"] = W(p, j);
    vars["wkk"] = W(k, k);
    vars["wrk"] = W(r, k);
    vars["column_update"] = sc.mul(W(r, i), W(i, k));
    vars["W_ki"] = W(k, i);
    vars["row_update"] = sc.mul(vars["l"], W(i, j));
    vars["singular"] = sc.is_zero(vars["piv"]);
    vars["reciprocal"] = sc.declare_reciprocal(vars["rcp"], vars["piv"]);
    vars["scaled"] = sc.by_pivot(W(r, k), vars["piv"], vars["rcp"]);
    vars["wrj"] = W(r, j);
    // The rows below a block: the block's multipliers, then each element updated by all of them at once.
    std::string block_l, block_update;
    for (int64_t t = 0; t < kb; ++t) {
      const std::string row = t == 0 ? k0 : k0 + " + " + std::to_string(t), l = vars["l"] + "_" + std::to_string(t);
      block_l += (t == 0 ? "      const $t " : ", ") + l + " = " + W(r, row);
      block_update += (t == 0 ? "" : " + ") + sc.mul(l, W(row, j));
    }
    vars["block_l"] = fill(block_l, vars) + ";\n";
    vars["block_update"] = "(" + block_update + ")";
    std::string code = fill("for (int $e = 0; $e < $MN; ++$e) $w_e = $a_e;\n"
                            "int $info = 0;\n"
                            "for (int $k0 = 0; $k0 < $K; $k0 += $KB) {\n"
                            "  const int $kend = min($k0 + $KB, $K);\n"
                            "  for (int $k = $k0; $k < $kend; ++$k) {\n"
                            "    for (int $r = $k; $r < $M; ++$r) {  /* column k, by the block's columns before it */\n"
                            "      $t $x = $wrk;\n"
                            "      for (int $i = $k0; $i < $k; ++$i) $x -= $column_update;\n"
                            "      $wrk = $x;\n"
                            "    }\n"
                            "    int $p = $k;\n"
                            "    $rt $mx = $mag_kk;\n"
                            "    for (int $r = $k + 1; $r < $M; ++$r) { const $rt $v = $mag_rk; if ($v > $mx) { $mx = $v; $p = $r; } }\n"
                            "    $ipiv = $p + 1;\n"
                            "    if ($p != $k)\n"
                            "      for (int $j = 0; $j < $N; ++$j) { const $t $tmp = $wkj; $wkj = $wpj; $wpj = $tmp; }\n"
                            "    for (int $i = $k0; $i < $k; ++$i) {  /* row k right of column k, by the block's rows before it */\n"
                            "      const $t $l = $W_ki;\n"
                            "      for (int $j = $k + 1; $j < $N; ++$j) $wkj -= $row_update;\n"
                            "    }\n"
                            "    const $t $piv = $wkk;\n"
                            "    if ($singular) { if ($info == 0) $info = $k + 1; } else {\n"
                            "      $reciprocal"
                            "      for (int $r = $k + 1; $r < $M; ++$r) $wrk = $scaled;\n"
                            "    }\n"
                            "  }\n"
                            "  if ($kend < $N)  /* a block short of KB columns is the last: no rows below it, or no columns right */\n"
                            "    for (int $r = $kend; $r < $M; ++$r) {\n"
                            "$block_l"
                            "      for (int $j = $kend; $j < $N; ++$j) $wrj -= $block_update;\n"
                            "    }\n"
                            "}\n"
                            "for (int $e = 0; $e < $MN; ++$e) $lu_e = $w_e;\n",
                            vars);
    code += em.write_at(kInfo, "0") + " = " + stored_info(vo, vars["info"]) + ";\n";
    return code;
  }

  // A team with row `lane` of the matrix in work-item lane's registers. Rows never move: each keeps its
  // current position `pos`, and a swap exchanges two positions. At step k every row leaves its element
  // of column k at its position in local memory; every work-item finds the same pivot there; the pivot
  // row leaves its elements right of k in local memory, and every row below k eliminates with them.
  static std::string in_rows(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s, const VariableOrder& vo) {
    const Scalars sc(dtype);
    const std::string t = sc.type, zero = sc.literal(0);
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const std::string column = em.local_array(dtype, s.m, "column"), pivot_row = em.local_array(dtype, s.n, "pivot_row");
    const std::string row = em.name("row"), pos = em.name("pos"), live = em.name("live"), info = em.name("info"),
                      p = em.name("p"), mx = em.name("mx"), v = em.name("v"), piv = em.name("piv"), l = em.name("l");
    const std::string M = std::to_string(s.m);
    auto el = [&](int64_t j) { return row + "[" + std::to_string(j) + "]"; };
    std::map<std::string, std::string> vars = {{"t", t}, {"lane", lane}, {"pos", pos}, {"live", live}, {"info", info},
                                               {"p", p}, {"mx", mx}, {"v", v}, {"piv", piv}, {"l", l}, {"M", M},
                                               {"column", column}, {"prow", pivot_row}, {"rt", sc.real_type},
                                               {"rcp", em.name("rcp")}};
    std::string code = fill("const bool $live = $lane < $M;\nint $pos = $lane;\nint $info = 0;\n", vars);
    code += t + " " + row + "[" + std::to_string(s.n) + "];\n";
    for (int64_t j = 0; j < s.n; ++j)
      code += el(j) + " = " + live + " ? " +
              embedded(vo, em.read_at(kA, "min(" + lane + ", " + std::to_string(s.m - 1) + ") * " + std::to_string(s.n) + " + " + std::to_string(j)),
                       lane, std::to_string(j), sc.literal(1), zero) +
              " : " + zero + ";\n";
    for (int64_t k = 0; k < s.k; ++k) {
      vars["k"] = std::to_string(k);
      vars["k1"] = std::to_string(k + 1);
      vars["x"] = el(k);
      vars["ipiv"] = em.write_at(kIpiv, vars["k"]);
      code += fill("if ($live) $column[$pos] = $x;\n", vars) + sync;
      code += fill("{\n  int $p = $k;\n  $rt $mx = ", vars) + sc.pivot_magnitude(column + "[" + vars["k"] + "]") + ";\n";
      for (int64_t r = k + 1; r < s.m; ++r)
        code += fill("  { const $rt $v = ", vars) + sc.pivot_magnitude(column + "[" + std::to_string(r) + "]") +
                fill("; if ($v > $mx) { $mx = $v; $p = $r; } }\n", {{"v", v}, {"mx", mx}, {"p", p}, {"r", std::to_string(r)}});
      vars["singular"] = sc.is_zero(piv);
      code += fill("  const $t $piv = $column[$p];\n"
                   "  if ($lane == 0) $ipiv = $p + 1;\n"
                   "  if ($singular && $info == 0) $info = $k1;\n"
                   "  $pos = $pos == $p ? $k : $pos == $k ? $p : $pos;\n",
                   vars);
      if (k + 1 < s.n) {
        code += fill("  if ($live && $pos == $k) {\n", vars);
        for (int64_t j = k + 1; j < s.n; ++j) code += "    " + pivot_row + "[" + std::to_string(j) + "] = " + el(j) + ";\n";
        code += "  }\n";
      }
      code += "  " + sync;
      code += fill("  if ($live && $pos > $k && !$singular) {\n", vars) + "    " + sc.declare_reciprocal(vars["rcp"], piv) +
              fill("    const $t $l = ", vars) + sc.by_pivot(el(k), piv, vars["rcp"]) + ";\n" + fill("    $x = $l;\n", vars);
      for (int64_t j = k + 1; j < s.n; ++j) code += "    " + el(j) + " -= " + sc.mul(l, pivot_row + "[" + std::to_string(j) + "]") + ";\n";
      code += "  }\n}\n";
    }
    code += "if (" + live + ") {\n";
    for (int64_t j = 0; j < s.n; ++j)
      code += "  " + em.write_at(kLU, pos + " * " + std::to_string(s.n) + " + " + std::to_string(j)) + " = " + el(j) + ";\n";
    code += "}\n";
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(vo, info) + ";\n";
    return code;
  }

  // A grid of work-items (tuning.h's Grid), each holding its elements of the matrix in registers
  // (a[bi * BC + bj] is element (p + bi P, q + bj Q) of A as stored). As in_rows, rows never move: each
  // keeps its position (pos_bi), and a swap exchanges two positions. Two barriers a step: the owners of
  // column k leave its elements at their rows' positions in local memory, and each of them its
  // candidate pivot (the first largest magnitude among its rows at positions k and below); every
  // work-item picks the same pivot from the P candidates; the pivot row's holders leave its elements
  // right of k in local memory; every row below k then eliminates. Column k alternates between two
  // arrays, since it is still read after the second barrier.
  static std::string in_grid(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s, const Grid& g, const VariableOrder& vo) {
    const Scalars sc(dtype);
    const std::string t = sc.type, rt = sc.real_type, zero = sc.literal(0), sync = em.barrier() + "\n";
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), M = std::to_string(s.m), N = std::to_string(s.n);
    const GridCode gc(em, g, s.m, s.n);
    const int64_t P = gc.P, Q = gc.Q, BR = gc.BR, BC = gc.BC;
    const std::string columns[2] = {em.local_array(dtype, s.m, "column_even"), em.local_array(dtype, s.m, "column_odd")};
    const std::string pivot_row = em.local_array(dtype, s.n, "pivot_row");
    const std::string cand_mag = em.local_array(part_dtype(dtype), P, "candidate"), cand_pos = em.local_array(FUGUE_DTYPE_I32, P, "candidate_at");
    const std::string &p = gc.p, &q = gc.q;
    const std::string pos = em.name("pos"), info = em.name("info"), best = em.name("best"), at = em.name("at"), v = em.name("v"),
                      piv = em.name("piv"), rcp = em.name("rcp"), old = em.name("old"), l = em.name("l"), singular = em.name("singular");
    auto row = [&](int64_t bi) { return gc.row(bi); };  // the row of A (as stored) of block row bi
    auto col = [&](int64_t bj) { return gc.col(bj); };
    auto position = [&](int64_t bi) { return pos + "_" + std::to_string(bi); };
    auto el = [&](int64_t bi, int64_t bj) { return gc.el(bi, bj); };
    std::string code = gc.declarations(lane, t);
    // Rows past m take a position no step reaches.
    for (int64_t bi = 0; bi < BR; ++bi)
      code += "int " + position(bi) + " = " + row(bi) + " < " + M + " ? " + row(bi) + " : " + std::to_string(s.m + s.n) + ";\n";
    for (int64_t bi = 0; bi < BR; ++bi)
      for (int64_t bj = 0; bj < BC; ++bj) {
        const std::string i = row(bi), j = col(bj);
        code += el(bi, bj) + " = " + i + " < " + M + " && " + j + " < " + N + " ? " +
                embedded(vo, em.read_at(kA, i + " * " + N + " + " + j), i, j, sc.literal(1), zero) + " : " + zero + ";\n";
      }
    code += "int " + info + " = 0;\n";
    for (int64_t k = 0; k < s.k; ++k) {
      const std::string K = std::to_string(k), column = columns[k % 2], KQ = std::to_string(k % Q);
      const int64_t kj = k / Q;
      // The owners of column k: its elements at their positions, and their candidate (NaNs never win).
      code += "if (" + q + " == " + KQ + ") {\n  " + rt + " " + best + " = -1;\n  int " + at + " = " + std::to_string(s.m) + ";\n";
      for (int64_t bi = 0; bi < BR; ++bi) {
        code += "  if (" + position(bi) + " >= " + K + " && " + position(bi) + " < " + M + ") {\n";
        code += "    " + column + "[" + position(bi) + "] = " + el(bi, kj) + ";\n";
        code += "    const " + rt + " " + v + " = " + sc.pivot_magnitude(el(bi, kj)) + ";\n";
        code += "    if (" + v + " > " + best + " || (" + v + " == " + best + " && " + position(bi) + " < " + at + ")) { " + best + " = " + v +
                "; " + at + " = " + position(bi) + "; }\n  }\n";
      }
      code += "  " + cand_mag + "[" + p + "] = " + best + ";\n  " + cand_pos + "[" + p + "] = " + at + ";\n}\n" + sync;
      // The pivot: the best candidate, the first position among equals; a NaN at position k stays (as a
      // scan from k that replaces only on a larger magnitude).
      code += "{\n  " + rt + " " + best + " = " + cand_mag + "[0];\n  int " + at + " = " + cand_pos + "[0];\n";
      for (int64_t c = 1; c < P; ++c) {
        const std::string mag = cand_mag + "[" + std::to_string(c) + "]", where = cand_pos + "[" + std::to_string(c) + "]";
        code += "  if (" + mag + " > " + best + " || (" + mag + " == " + best + " && " + where + " < " + at + ")) { " + best + " = " + mag + "; " + at +
                " = " + where + "; }\n";
      }
      code += "  if (isnan(" + sc.pivot_magnitude(column + "[" + K + "]") + ")) " + at + " = " + K + ";\n";
      code += "  const " + t + " " + piv + " = " + column + "[" + at + "];\n";
      code += "  const bool " + singular + " = " + sc.is_zero(piv) + ";\n";
      code += "  if (" + lane + " == 0) " + em.write_at(kIpiv, K) + " = " + at + " + 1;\n";
      code += "  if (" + singular + " && " + info + " == 0) " + info + " = " + std::to_string(k + 1) + ";\n";
      // Positions swapped (each row keeps where it was, to read its element of column k).
      for (int64_t bi = 0; bi < BR; ++bi) {
        code += "  const int " + old + "_" + std::to_string(bi) + " = " + position(bi) + ";\n";
        code += "  " + position(bi) + " = " + position(bi) + " == " + at + " ? " + K + " : " + position(bi) + " == " + K + " ? " + at + " : " +
                position(bi) + ";\n";
      }
      const int64_t bj0 = (k + 1) / Q;
      if (k + 1 < s.n) {
        for (int64_t bi = 0; bi < BR; ++bi) {
          code += "  if (" + position(bi) + " == " + K + ") {\n";
          for (int64_t bj = bj0; bj < BC; ++bj)
            code += "    if (" + col(bj) + " > " + K + " && " + col(bj) + " < " + N + ") " + pivot_row + "[" + col(bj) + "] = " + el(bi, bj) + ";\n";
          code += "  }\n";
        }
      }
      code += "  " + sync;
      code += "  if (!" + singular + ") {\n    " + sc.declare_reciprocal(rcp, piv);
      std::string reads;  // U(k, j) at this work-item's columns right of k
      for (int64_t bj = bj0; bj < BC && k + 1 < s.n; ++bj)
        reads += "    const " + t + " " + v + "_" + std::to_string(bj) + " = " + pivot_row + "[min(" + col(bj) + ", " + std::to_string(s.n - 1) + ")];\n";
      code += reads;
      // The multipliers, each row's element of column k times the reciprocal; pivots below the smallest
      // normal number (complex: their larger part) divide instead (as LAPACK's getf2 and zgetf2), in a
      // branch of their own that every work-item takes alike, so that no division is paid on the common path.
      auto element = [&](int64_t bi) { return column + "[min(" + old + "_" + std::to_string(bi) + ", " + std::to_string(s.m - 1) + ")]"; };
      for (int64_t bi = 0; bi < BR; ++bi) code += "    " + t + " " + l + "_" + std::to_string(bi) + " = " + sc.mul(element(bi), rcp) + ";\n";
      code += "    if " + sc.divides(piv, rcp) + " {\n";
      for (int64_t bi = 0; bi < BR; ++bi) code += "      " + l + "_" + std::to_string(bi) + " = " + sc.by_pivot(element(bi), piv, rcp) + ";\n";
      code += "    }\n";
      for (int64_t bi = 0; bi < BR; ++bi) {
        const std::string lb = l + "_" + std::to_string(bi);
        code += "    if (" + position(bi) + " > " + K + " && " + position(bi) + " < " + M + ") {\n";
        code += "      const " + t + " " + l + " = " + lb + ";\n";
        code += "      if (" + q + " == " + KQ + ") " + el(bi, kj) + " = " + l + ";\n";
        for (int64_t bj = bj0; bj < BC && k + 1 < s.n; ++bj)
          code += "      if (" + col(bj) + " > " + K + ") " + el(bi, bj) + " -= " + sc.mul(l, v + "_" + std::to_string(bj)) + ";\n";
        code += "    }\n";
      }
      code += "  }\n}\n";
    }
    // Out: each row at its position.
    for (int64_t bi = 0; bi < BR; ++bi)
      for (int64_t bj = 0; bj < BC; ++bj)
        code += "if (" + position(bi) + " < " + M + " && " + col(bj) + " < " + N + ") " +
                em.write_at(kLU, position(bi) + " * " + N + " + " + col(bj)) + " = " + el(bi, bj) + ";\n";
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(vo, info) + ";\n";
    return code;
  }

  // A team per matrix, right-looking in a local array of its own where the matrix fits (`in_local`),
  // else in LU's storage (where the core keeps it), each work-item owning columns (lane, lane + T, ...), one barrier a step. At step k every
  // work-item reads column k alike and finds the same pivot; each swaps rows k and p in its own columns
  // and updates them from column k. Column k itself is swapped and scaled by its owner only at the next
  // step (everyone reads it meanwhile, its row p standing for row k): no work-item waits for another
  // within a step.
  static std::string in_team(const sdk::Emitter& em, fugue_dtype dtype, const Shape& s, bool in_local, const VariableOrder& vo) {
    const Scalars sc(dtype);
    const std::string t = sc.type;
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const int64_t team = s.team;
    const std::string M = std::to_string(s.m), N = std::to_string(s.n);
    std::map<std::string, std::string> vars = {
        {"t", t}, {"rt", sc.real_type}, {"lane", lane}, {"M", M}, {"N", N}, {"K", std::to_string(s.k)}, {"zero", sc.literal(0)}};
    for (const char* v : {"q", "e", "c", "k", "i", "vi", "l", "p", "mx", "v", "piv", "rcp", "tmp", "info", "pp", "ppiv", "prcp", "pdo"})
      vars[v] = em.name(v);
    const std::string w = in_local ? em.local_array(dtype, s.m * s.n, "matrix") : "";
    auto LU = [&](const std::string& row, const std::string& col) {
      const std::string index = "(" + row + ") * " + N + " + " + col;
      return in_local ? w + "[" + index + "]" : em.write_at(kLU, index);
    };
    auto LUr = [&](const std::string& row, const std::string& col) {
      return in_local ? LU(row, col) : em.read_at(kLU, "(" + row + ") * " + N + " + " + col);
    };
    const std::string c = vars["c"], k = vars["k"], i = vars["i"], p = vars["p"], pp = vars["pp"], vi = vars["vi"];
    vars["LUrk"] = LUr(i, k);
    vars["ipiv"] = em.write_at(kIpiv, k);
    vars["LUpk"] = LUr(p, k);
    // Swaps rows a and b of the work-item's column c.
    auto swap = [&](const std::string& a, const std::string& b) {
      return "{ const " + t + " " + vars["tmp"] + " = " + LUr(a, c) + "; " + LU(a, c) + " = " + LUr(b, c) + "; " + LU(b, c) + " = " +
             vars["tmp"] + "; }";
    };
    // Every column the work-item owns, `body` run with $c set where c < n (the same trips everywhere).
    auto columns = [&](const std::string& body) { return team_loop(vars["q"], lane, team, c, s.n, N, body); };
    std::string code;
    const std::string e = vars["e"], all = std::to_string(s.m * s.n);
    code += team_loop(vars["q"], lane, team, e, s.m * s.n, all,
                      "    " + (in_local ? w + "[" + e + "]" : em.write_at(kLU, e)) + " = " +
                          embedded(vo, em.read_at(kA, e), e + " / " + N, e + " % " + N, sc.literal(1), vars["zero"]) + ";\n");
    code += sync;
    // The previous step's pivot row, pivot, reciprocal, and whether it was nonzero.
    code += fill("int $info = 0, $pp = 0;\n$t $ppiv = $zero;\nbool $pdo = false;\n", vars) + sc.declare_reciprocal_carrier(vars["prcp"]) +
            fill("for (int $k = 0; $k < $K; ++$k) {\n", vars);
    // The pivot: the first row of largest magnitude in column k (rows k and below), alike everywhere.
    vars["mag_pk"] = sc.pivot_magnitude(vars["LUpk"]);
    vars["mag_ik"] = sc.pivot_magnitude(vars["LUrk"]);
    vars["singular"] = sc.is_zero(vars["piv"]);
    code += fill("  int $p = $k;\n  $rt $mx = $mag_pk;\n"
                 "  for (int $i = $k + 1; $i < $M; ++$i) {\n    const $rt $v = $mag_ik;\n    if ($v > $mx) { $mx = $v; $p = $i; }\n  }\n"
                 "  const $t $piv = $LUpk;\n",
                 vars) +
            "  " + sc.declare_reciprocal(vars["rcp"], vars["piv"]) +
            fill("  if ($lane == 0) $ipiv = $p + 1;\n"
                 "  if ($singular && $info == 0) $info = $k + 1;\n",
                 vars);
    // Swaps: column k - 1's deferred one (rows k - 1 and its pivot row), then step k's in every column
    // but k (whose owner swaps it at the next step).
    code += columns("    if (" + c + " == " + k + " - 1 && " + pp + " != " + k + " - 1) " + swap(k + " - 1", pp) + "\n" +
                    "    if (" + c + " != " + k + " && " + p + " != " + k + ") " + swap(k, p) + "\n");
    // Rows k and below: column k - 1 scaled (deferred), the columns right of k updated from column k,
    // whose row p stands for row k and row k for row p until its owner swaps them.
    // The multiplier of row i, once per row (the same in every work-item).
    code += fill("  for (int $i = $k; $i < $M; ++$i) {\n    const int $vi = $i == $p ? $k : $i;\n    const $t $l = ", vars) +
            sc.by_pivot(LUr(vi, k), vars["piv"], vars["rcp"]) + ";\n";
    code += columns("    if (" + c + " == " + k + " - 1 && " + vars["pdo"] + ") " + LU(i, c) + " = " +
                    sc.by_pivot(LUr(i, c), vars["ppiv"], vars["prcp"]) + ";\n" + "    if (" + c + " > " + k + " && " + i + " > " + k +
                    " && !" + vars["singular"] + ") " + LU(i, c) + " -= " + sc.mul(vars["l"], LUr(k, c)) + ";\n");
    code += "  }\n";
    code += fill("  $pp = $p;\n  $ppiv = $piv;\n  $pdo = !$singular;\n", vars) + sc.copy_reciprocal(vars["prcp"], vars["rcp"]);
    code += "  " + sync + "}\n";
    // The last column's deferred swap and scaling.
    code += columns("    if (" + c + " == " + vars["K"] + " - 1 && " + pp + " != " + c + ") " + swap(c, pp) + "\n");
    code += fill("for (int $i = $K; $i < $M; ++$i) {\n", vars) +
            columns("    if (" + c + " == " + vars["K"] + " - 1 && " + vars["pdo"] + ") " + LU(i, c) + " = " +
                    sc.by_pivot(LUr(i, c), vars["ppiv"], vars["prcp"]) + ";\n") +
            "}\n";
    code += sync;
    if (in_local) code += team_loop(vars["q"], lane, team, e, s.m * s.n, all, "    " + em.write_at(kLU, e) + " = " + w + "[" + e + "];\n");
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(vo, vars["info"]) + ";\n";
    return code;
  }

  bool vbatched_;
};

}  // namespace

std::unique_ptr<sdk::Operation> getrf_operation() { return std::make_unique<Getrf>(false); }
std::unique_ptr<sdk::Operation> getrf_vbatched_operation() { return std::make_unique<Getrf>(true); }

}  // namespace fugue::linalg
