// gauss_jordan.cpp: linalg.gesv and linalg.gesv_nopiv (see gauss_jordan.h).
#include "gauss_jordan.h"

#include <algorithm>
#include <complex>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"
#include "triangular_solve.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kB = 1, kX = 2, kInfo = 3;

struct Sizes {
  int64_t n, k;
  Tuning tuning;
  int64_t team;  // by the order of [A | B] (rows: of A)
  bool loops;    // one matrix per work-item, [A | B] in local memory, its loops kept (tuning.h's loop_plan)
  bool rows;     // a row of [A | B] in each work-item's registers (tuning.h's row_plan, k up to row_order; sizes_of says where)
};

// The rows plan's local memory, in values: the pivot row and the pivot, twice (taken in turn without
// pivoting), and a magnitude per row (pivoting).
int64_t rows_locals(int64_t n, int64_t k) { return 2 * (n + k + 1) + n; }

Sizes sizes_of(const sdk::Call& call) {
  const int64_t n = columns_of(call.operand(kA)), k = columns_of(call.operand(kB));
  const Tuning t = tuning_of(call);
  // Without a device (the reference) no plan is asked for.
  const bool loops = call.raw()->device && loop_plan(t, n) && fits_local(call, n * (n + k), call.operand(kA).dtype);
  // Rows of values of 8 bytes or more only where B is at most half as wide as A: on an H200 (20,000 f64
  // systems of 16 with 4 right-hand sides, scripts/gpu_solve.sh beside row_order=8) gesv_nopiv took 0.069
  // ms in rows against 0.169 in teams, gesv 0.083 against 0.224, and at 32 (2,000) 0.130 against 0.158 and
  // 0.151 against 0.209; but STAP's 18 x 18 with 16 (4,096) lost, f64 0.193 against 0.136 and 0.196
  // against 0.112, c64 0.156 against 0.108, c128 0.399 against 0.158 (14 of the team's 32 rows idle and
  // 34 values a row), where f32 gained (0.055 against 0.069 and 0.094).
  const bool narrow = abi::dtype_size(call.operand(kA).dtype) < 8 || 2 * k <= n;
  const bool rows = call.raw()->device && !loops && row_plan(t, n) && k <= t.row_order && narrow &&
                    fits_local(call, rows_locals(n, k), call.operand(kA).dtype);
  return {n, k, t, loops ? 1 : team_size(t, rows ? n : n + k), loops, rows};
}

class GaussJordan final : public sdk::Operation {
 public:
  explicit GaussJordan(bool pivoting) : pivoting_(pivoting) {
    name = pivoting ? "linalg.gesv" : "linalg.gesv_nopiv";
    doc = pivoting ? "Solves A X = B for a batch of matrices A [..., n, n] (LAPACK's gesv) by Gauss-Jordan elimination with "
                     "partial pivoting (LAPACK's pivots: the first element of largest magnitude in the column); B [..., n, k], X "
                     "of B's shape; info (optional) per matrix as LAPACK's: 0, or k when U(k, k) is exactly zero (A singular; "
                     "that X is then NaN)"
                   : "Solves A X = B for a batch of matrices A [..., n, n] that need no pivoting (symmetric positive definite, "
                     "diagonally dominant) by Gauss-Jordan elimination without pivoting; B [..., n, k], X of B's shape; info "
                     "(optional) per matrix: 0, or k when the k-th pivot is exactly zero (that X is then NaN)";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes,
                        pivoting ? "matrices [..., n, n]" : "matrices [..., n, n] that need no pivoting"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "right-hand sides [..., n, k]"),
                sdk::out("X", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the solutions, of B's shape"),
                sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                  "i32 per matrix [...]: 0, or the first k whose pivot is exactly zero")};
    // The cases: pivoting sees the positive definite ones too (it then swaps nothing), and random ones.
    tolerance_f32 = 2e-3;
    tolerance_f64 = 1e-9;
    test_cases = R"([
      {"name": "3x3, one column, in registers", "inputs": {"A": {"kind": "array", "shape": [40, 3, 3], "from": {"spd": {"seed": 1}}},
                                                            "B": {"kind": "array", "shape": [40, 3, 1], "from": {"random": {"seed": 2}}}}},
      {"name": "4x4, 4 columns, in registers", "inputs": {"A": {"kind": "array", "shape": [9, 4, 4], "from": {"spd": {"seed": 3}}},
                                                           "B": {"kind": "array", "shape": [9, 4, 4], "from": {"random": {"seed": 4}}}}},
      {"name": "40x40, 2 columns", "inputs": {"A": {"kind": "array", "shape": [3, 40, 40], "from": {"spd": {"seed": 7}}},
                                               "B": {"kind": "array", "shape": [3, 40, 2], "from": {"random": {"seed": 8}}}}},
      {"name": "18x18, 16 columns, as STAP solves", "inputs": {"A": {"kind": "array", "shape": [6, 18, 18], "from": {"spd": {"seed": 5}}},
                                                       "B": {"kind": "array", "shape": [6, 18, 16], "from": {"random": {"seed": 6}}}}},
      {"name": "zero pivots", "inputs": {"A": {"kind": "array", "shape": [3, 2, 2], "value": [[[0, 1], [1, 0]], [[1, 2], [2, 4]], [[2, 1], [1, 2]]]},
                                          "B": {"kind": "array", "shape": [3, 2, 1], "value": [[[1], [2]], [[1], [2]], [[1], [2]]]}}},
      {"name": "zero pivot in teams", "inputs": {"A": {"kind": "array", "shape": [2, 9, 9], "from": {"random": {"seed": 9, "low": 0, "high": 0}}},
                                                  "B": {"kind": "array", "shape": [2, 9, 1], "from": {"random": {"seed": 10}}}}}
    ])";
    if (pivoting)
      test_cases.insert(test_cases.rfind(']'), R"(,
      {"name": "random 5x5, 2 columns, in registers", "inputs": {"A": {"kind": "array", "shape": [30, 5, 5], "from": {"random": {"seed": 11}}},
                                                                  "B": {"kind": "array", "shape": [30, 5, 2], "from": {"random": {"seed": 12}}}}},
      {"name": "random 30x30 in teams", "inputs": {"A": {"kind": "array", "shape": [4, 30, 30], "from": {"random": {"seed": 13}}},
                                                    "B": {"kind": "array", "shape": [4, 30, 3], "from": {"random": {"seed": 14}}}}},
      {"name": "needs a swap", "inputs": {"A": {"kind": "array", "shape": [1, 3, 3], "value": [[[0, 1, 2], [1, 0, 3], [4, 5, 0]]]},
                                           "B": {"kind": "array", "shape": [1, 3, 1], "value": [[[1], [2], [3]]]}}}
    )");
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override { infer_solve(call, types, kA, kB, kX, kInfo); }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Sizes s = sizes_of(call);
    sdk::Plan plan = team_plan(batch_count(a), s.team);
    plan.partitions = {matrix_batch(a), matrix_batch(call.operand(kB)), matrix_batch(call.operand(kX)),
                       value_batch(call.operand(kInfo))};
    if (s.loops) {
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(s.n * (s.n + s.k)) * abi::dtype_size(a.dtype);
      plan.reads_once = uint64_t{1} << kA | uint64_t{1} << kB;  // copied into [A | B] first
      plan.variant = loop_variant_text(s.tuning, s.n, "[A | B] in local memory, eliminated along its rows");
      return plan;
    }
    if (s.rows) {
      plan.registers = static_cast<uint32_t>((s.n + s.k) * (Scalars(a.dtype).complex ? 2 : 1) + 8);
      plan.local_mem_bytes = static_cast<uint64_t>(rows_locals(s.n, s.k)) * abi::dtype_size(a.dtype);
      plan.walks_rows = true;  // A's rows and B's, every work-item its own
      plan.variant = variant_text(s.tuning, s.n, s.team, true, std::string("[A | B]'s row in registers, ") +
                                                                   (pivoting_ ? "two barriers a step" : "one barrier a step"));
      return plan;
    }
    plan.registers = s.team == 1 ? static_cast<uint32_t>(s.n * (s.n + s.k) + 8) : 16;
    if (s.team > 1) {
      if (fits_local(call, s.n * s.n, a.dtype)) plan.local_mem_bytes = static_cast<uint64_t>(s.n * s.n) * abi::dtype_size(a.dtype);
      else plan.workspaces = {{a.dtype, s.n * s.n}};
    }
    plan.variant = variant_text(s.tuning, s.n + s.k, s.team, false,
                                s.team == 1 ? "" : std::string(plan.workspaces.empty() ? "A in local memory" : "A in the core's workspace") + ", B in X's storage");
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan& plan, const sdk::Emitter& em) const override {
    const fugue_dtype dtype = call.operand(kA).dtype;
    const Sizes s = sizes_of(call);
    const std::string N = std::to_string(s.n), K = std::to_string(s.k), C = std::to_string(s.n + s.k);
    const Scalars sc(dtype);
    std::map<std::string, std::string> v = {{"t", sc.type}, {"rt", sc.real_type}, {"N", N}, {"K", K}, {"nan", sc.nan()}};
    for (const char* n : {"kk", "i", "j", "c", "e", "q", "p", "r", "u", "ok", "info", "f", "pr", "mx", "ax", "tmp", "tk"}) v[n] = em.name(n);
    const std::string kk = v["kk"], i = v["i"], e = v["e"];
    if (s.loops) {
      em.append(loop_elimination(call, em, sc, s, v));
      return;
    }
    if (s.rows) {
      em.append(rows_elimination(em, sc, s));
      return;
    }
    if (em.local_size() == 1) {
      // [A | B] in a private array, every loop unrolled so that every index is a constant.
      const std::string f = v["f"];
      auto F = [&](const std::string& r, const std::string& c) { return f + "[(" + r + ") * " + C + " + (" + c + ")]"; };
      std::string code = v["t"] + " " + f + "[" + std::to_string(s.n * (s.n + s.k)) + "];\n";
      for (int64_t r = 0; r < s.n; ++r)
        for (int64_t c = 0; c < s.n + s.k; ++c)
          code += F(std::to_string(r), std::to_string(c)) + " = " +
                  (c < s.n ? em.read_at(kA, std::to_string(r * s.n + c)) : em.read_at(kB, std::to_string(r * s.k + c - s.n))) + ";\n";
      // Straight-line code with constant indices. The pivot row is divided (at most 8 x 8 divisions a
      // matrix): NVIDIA's compiler miscompiled the select between multiplying by the reciprocal and
      // dividing (divided_by_pivot) here, for 4 x 4 systems with 4 right-hand sides in f32 when info was
      // stored (X wrong by up to 1e4; found by scripts/gpu_solve.sh).
      auto at = [&](int64_t r, int64_t c) { return F(std::to_string(r), std::to_string(c)); };
      code += "int " + v["info"] + " = 0;\n";
      for (int64_t p = 0; p < s.n; ++p) {
        code += "{\n";
        if (pivoting_) {
          // The first element of largest magnitude in column p, rows p on; its row swapped with row p by
          // selects (register indices stay constants); columns left of p are no longer read.
          code += fill("  int $pr = ", v) + std::to_string(p) + fill(";\n  $rt $mx = ", v) + sc.pivot_magnitude(at(p, p)) + ";\n";
          for (int64_t r = p + 1; r < s.n; ++r)
            code += fill("  { const $rt $ax = ", v) + sc.pivot_magnitude(at(r, p)) + fill("; if ($ax > $mx) { $mx = $ax; $pr = ", v) +
                    std::to_string(r) + "; } }\n";
          for (int64_t r = p + 1; r < s.n; ++r) {
            code += "  if (" + v["pr"] + " == " + std::to_string(r) + ") {\n";
            for (int64_t c = p; c < s.n + s.k; ++c)
              code += fill("    { const $t $tmp = ", v) + at(p, c) + "; " + at(p, c) + " = " + at(r, c) + "; " + at(r, c) + " = " + v["tmp"] + "; }\n";
            code += "  }\n";
          }
        }
        code += fill("  const $t $p = ", v) + at(p, p) + ";\n  if (" + v["info"] + " == 0 && " + sc.is_zero(v["p"]) + ") " + v["info"] + " = " +
                std::to_string(p + 1) + ";\n  if (" + v["info"] + " == 0) {\n";
        // Complex: times the pivot's reciprocal, made without overflow (divided for a tiny pivot, by_pivot).
        if (sc.complex) code += "    " + sc.declare_reciprocal(v["r"], v["p"]);
        for (int64_t j = p + 1; j < s.n + s.k; ++j) {
          code += "    " + at(p, j) + (sc.complex ? " = " + sc.by_pivot(at(p, j), v["p"], v["r"]) : " /= " + v["p"]) + ";\n";
          for (int64_t i = 0; i < s.n; ++i)
            if (i != p) code += "    " + at(i, j) + " -= " + sc.mul(at(i, p), at(p, j)) + ";\n";
        }
        code += "  }\n}\n";
      }
      for (int64_t r = 0; r < s.n; ++r)
        for (int64_t c = 0; c < s.k; ++c)
          code += em.write_at(kX, std::to_string(r * s.k + c)) + " = " + v["info"] + " == 0 ? " + F(std::to_string(r), std::to_string(s.n + c)) +
                  " : " + v["nan"] + ";\n";
      code += em.write_at(kInfo, "0") + " = " + v["info"] + ";\n";
      em.append(code);
      return;
    }
    // A team: A's columns in a local array (or the workspace), B's in X's storage.
    const std::string w = plan.workspaces.empty() ? em.local_array(dtype, s.n * s.n, "matrix") : em.workspace(0);
    const ElementAt WA = [&](const std::string& r, const std::string& c) { return w + "[(" + r + ") * " + N + " + (" + c + ")]"; };
    const ElementAt Xr = [&](const std::string& r, const std::string& c) { return em.read_at(kX, "(" + r + ") * " + K + " + (" + c + ")"); };
    const ElementAt Xw = [&](const std::string& r, const std::string& c) { return em.write_at(kX, "(" + r + ") * " + K + " + (" + c + ")"); };
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const int64_t team = em.local_size();
    // Step kk's update of column `col` (read and written through `rd`, `wr`): rows kk and pr swapped (pr
    // the pivot's row), the pivot row scaled, the column eliminated from every other row with column kk,
    // which no one writes at this step (its rows kk and pr are swapped as they are read).
    const std::string pr = pivoting_ ? v["pr"] : kk;
    // x / p: real, LAPACK's (times the reciprocal unless p is below the smallest normal number); complex,
    // times the reciprocal made without overflow.
    auto by_pivot = [&](const std::string& x) { return sc.by_pivot(x, v["p"], v["r"]); };
    auto update = [&](const ElementAt& rd, const ElementAt& wr, const std::string& col) {
      std::string u;
      if (pivoting_)
        u = "      const " + v["t"] + " " + v["tk"] + " = " + rd(kk, col) + ", " + v["tmp"] + " = " + rd(pr, col) + ";\n      " + wr(pr, col) +
            " = " + v["tk"] + ";\n      const " + v["t"] + " " + v["u"] + " = " + by_pivot(v["tmp"]) + ";\n";
      else
        u = "      const " + v["t"] + " " + v["u"] + " = " + by_pivot(rd(kk, col)) + ";\n";
      const std::string multiplier = pivoting_ ? "(" + i + " == " + pr + " ? " + WA(kk, kk) + " : " + WA(i, kk) + ")" : WA(i, kk);
      return u + "      " + wr(kk, col) + " = " + v["u"] + ";\n      for (int " + i + " = 0; " + i + " < " + N + "; ++" + i + ") if (" + i +
             " != " + kk + ") " + wr(i, col) + " -= " + sc.mul(multiplier, v["u"]) + ";\n";
    };
    std::string code;
    code += team_loop(v["q"], lane, team, e, s.n * s.n, std::to_string(s.n * s.n),
                      "    " + w + "[" + e + "] = " + em.read_at(kA, e) + ";\n");
    code += team_loop(v["q"], lane, team, e, s.n * s.k, std::to_string(s.n * s.k),
                      "    " + em.write_at(kX, e) + " = " + em.read_at(kB, e) + ";\n");
    code += sync;
    code += fill("int $info = 0;\n"
                 "for (int $kk = 0; $kk < $N; ++$kk) {\n", v);
    if (pivoting_)  // every work-item finds the same pivot in column kk (no one writes it at this step)
      code += fill("  int $pr = $kk;\n  $rt $mx = ", v) + sc.pivot_magnitude(WA(kk, kk)) +
              fill(";\n  for (int $i = $kk + 1; $i < $N; ++$i) { const $rt $ax = ", v) + sc.pivot_magnitude(WA(i, kk)) +
              fill("; if ($ax > $mx) { $mx = $ax; $pr = $i; } }\n", v);
    code += fill("  const $t $p = ", v) + WA(pr, kk) + ";\n  if (" + v["info"] + " == 0 && " + sc.is_zero(v["p"]) + ") " + v["info"] + " = " +
            kk + " + 1;\n" + fill("  const bool $ok = $info == 0;\n", v) + "  " + sc.declare_reciprocal(v["r"], v["p"]);
    code += team_loop(v["q"], lane, team, v["j"], s.n, N, "    if (" + v["ok"] + " && " + v["j"] + " > " + kk + ") {\n" + update(WA, WA, v["j"]) + "    }\n");
    code += team_loop(v["q"], lane, team, v["c"], s.k, K, "    if (" + v["ok"] + ") {\n" + update(Xr, Xw, v["c"]) + "    }\n");
    code += "  " + sync + "}\n";
    code += team_loop(v["q"], lane, team, e, s.n * s.k, std::to_string(s.n * s.k),
                      "    if (" + v["info"] + " != 0) " + em.write_at(kX, e) + " = " + v["nan"] + ";\n");
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + v["info"] + ";\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    const double n = static_cast<double>(s.n), k = static_cast<double>(s.k), count = static_cast<double>(batch_count(call.operand(kA)));
    const double real_ops = Scalars(call.operand(kA).dtype).complex ? 4 : 1;  // a complex multiply-add is 8, a real one 2
    return {sizeof(fugue_cost), count * (n * n + 2 * n * k) * abi::dtype_size(call.operand(kA).dtype),
            real_ops * count * (n * n * n + 2 * n * n * k)};
  }

  // In extended precision, complex throughout (reals have no imaginary part); pivots by LAPACK's magnitude.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    using Z = std::complex<long double>;
    const sdk::HostView a(arrays[kA]), b(arrays[kB]);
    sdk::HostView x(arrays[kX]), info(arrays[kInfo]);
    const Sizes s = sizes_of(call);
    const bool complex = Scalars(call.operand(kA).dtype).complex;
    const int64_t C = s.n + s.k, count = batch_count(call.operand(kA));
    auto get = [](const sdk::HostView& h, int64_t i) { const std::complex<double> z = h.get_complex(i); return Z(z.real(), z.imag()); };
    auto magnitude = [](const Z& z) { return std::fabs(z.real()) + std::fabs(z.imag()); };
    std::vector<Z> w(static_cast<size_t>(s.n * C));
    for (int64_t e = 0; e < count; ++e) {
      for (int64_t r = 0; r < s.n; ++r)
        for (int64_t c = 0; c < C; ++c) w[r * C + c] = c < s.n ? get(a, e * s.n * s.n + r * s.n + c) : get(b, e * s.n * s.k + r * s.k + c - s.n);
      int64_t failed = 0;
      for (int64_t k = 0; k < s.n && !failed; ++k) {
        if (pivoting_) {
          int64_t pr = k;
          for (int64_t i = k + 1; i < s.n; ++i)
            if (magnitude(w[i * C + k]) > magnitude(w[pr * C + k])) pr = i;
          for (int64_t c = 0; c < C; ++c) std::swap(w[k * C + c], w[pr * C + c]);
        }
        const Z p = w[k * C + k];
        if (p == Z(0)) {
          failed = k + 1;
          break;
        }
        for (int64_t j = k + 1; j < C; ++j) {
          const Z u = w[k * C + j] / p;
          w[k * C + j] = u;
          for (int64_t i = 0; i < s.n; ++i)
            if (i != k) w[i * C + j] -= w[i * C + k] * u;
        }
      }
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (int64_t r = 0; r < s.n; ++r)
        for (int64_t c = 0; c < s.k; ++c) {
          const Z z = w[r * C + s.n + c];
          const int64_t at = e * s.n * s.k + r * s.k + c;
          if (complex) x.set_complex(at, failed ? std::complex<double>(nan, nan) : std::complex<double>(static_cast<double>(z.real()), static_cast<double>(z.imag())));
          else x.set(at, failed ? nan : static_cast<double>(z.real()));
        }
      info.set_int(e, failed);
    }
  }

 private:
  // The rows plan: work-item `row` holds row `row` of [A | B] in registers (rows past n idle), every loop
  // unrolled. At step p the rows from p on leave the magnitudes of their elements of column p in local
  // memory, and every work-item picks the same pivot row from them (LAPACK's: the first of the largest
  // magnitude); rows are swapped by renaming (`me`, the row a work-item now holds; X is written at it).
  // Row p then scales itself by the pivot and leaves its elements right of p and the pivot in local
  // memory; after a barrier every other row eliminates column p with them. Without pivoting the row and
  // the pivot alternate between two slots, so that a step needs one barrier (step p + 1 writes the slot
  // nobody reads any more); with it, the magnitudes' barrier already separates the steps.
  std::string rows_elimination(const sdk::Emitter& em, const Scalars& sc, const Sizes& s) const {
    const int64_t n = s.n, k = s.k, width = n + k;
    const std::string N = std::to_string(n), K = std::to_string(k), zero = sc.literal(0);
    const std::string sync = em.barrier() + "\n", row = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    const std::string a = em.name("a"), me = em.name("me"), info = em.name("info"), p = em.name("p"), r = em.name("r"), f = em.name("f"),
                      pr = em.name("pr"), mx = em.name("mx"), ax = em.name("ax"), i = em.name("i");
    const fugue_dtype dtype = sc.dtype;
    const std::string pivots = em.local_array(dtype, 2 * (width + 1), "pivot_row");
    const std::string magnitudes = pivoting_ ? em.local_array(part_dtype(dtype), n, "magnitude") : "";
    auto el = [&](int64_t j) { return a + "[" + std::to_string(j) + "]"; };
    std::string code = sc.type + " " + a + "[" + std::to_string(width) + "];\n";
    code += row_into_registers(em, kA, row, n, n, a, 0, zero) + row_into_registers(em, kB, row, n, k, a, n, zero);
    code += "int " + me + " = " + row + ", " + info + " = 0;\n";
    for (int64_t q = 0; q < n; ++q) {
      const std::string Q = std::to_string(q);
      const int64_t slot = pivoting_ ? 0 : (q % 2) * (width + 1);  // the pivot at slot + width
      auto pivot_at = [&](int64_t j) { return pivots + "[" + std::to_string(slot + j) + "]"; };
      code += "{\n";
      if (pivoting_) {
        code += "if (" + me + " >= " + Q + " && " + me + " < " + N + ") " + magnitudes + "[" + me + "] = " + sc.pivot_magnitude(el(q)) + ";\n" + sync;
        code += "int " + pr + " = " + Q + ";\n" + sc.real_type + " " + mx + " = " + magnitudes + "[" + Q + "];\n";
        code += "for (int " + i + " = " + std::to_string(q + 1) + "; " + i + " < " + N + "; ++" + i + ") { const " + sc.real_type + " " + ax + " = " +
                magnitudes + "[" + i + "]; if (" + ax + " > " + mx + ") { " + mx + " = " + ax + "; " + pr + " = " + i + "; } }\n";
        code += "if (" + me + " == " + pr + ") " + me + " = " + Q + "; else if (" + me + " == " + Q + ") " + me + " = " + pr + ";\n";
      }
      code += "if (" + me + " == " + Q + ") {\n  const " + sc.type + " " + p + " = " + el(q) + ";\n  " + sc.declare_reciprocal(r, p);
      for (int64_t j = q + 1; j < width; ++j)
        code += "  " + el(j) + " = " + sc.by_pivot(el(j), p, r) + ";\n  " + pivot_at(j) + " = " + el(j) + ";\n";
      code += "  " + pivot_at(width) + " = " + p + ";\n}\n" + sync;
      code += "if (" + info + " == 0 && " + sc.is_zero(pivot_at(width)) + ") " + info + " = " + std::to_string(q + 1) + ";\n";
      code += "if (" + info + " == 0 && " + me + " != " + Q + " && " + me + " < " + N + ") {\n  const " + sc.type + " " + f + " = " + el(q) + ";\n";
      for (int64_t j = q + 1; j < width; ++j) code += "  " + el(j) + " -= " + sc.mul(f, pivot_at(j)) + ";\n";
      code += "}\n}\n";
    }
    code += "if (" + me + " < " + N + ") {\n";
    for (int64_t c = 0; c < k; ++c)
      code += "  " + em.write_at(kX, me + " * " + K + " + " + std::to_string(c)) + " = " + info + " == 0 ? " + el(n + c) + " : " + sc.nan() + ";\n";
    return code + "}\nif (" + row + " == 0) " + em.write_at(kInfo, "0") + " = " + info + ";\n";
  }

  // The loop plan (a CPU's: its core runs the one work-item's loops in its vector units, where a team
  // would pay a pass over the work-group at every barrier): [A | B] in local memory, row-major, and at
  // each step the pivot row scaled, then every other row updated along its length (contiguous).
  std::string loop_elimination(const sdk::Call& call, const sdk::Emitter& em, const Scalars& sc, const Sizes& s,
                               std::map<std::string, std::string> v) const {
    v["C"] = std::to_string(s.n + s.k);
    v["f"] = em.local_array(call.operand(kA).dtype, s.n * (s.n + s.k), "augmented");
    auto F = [&](const std::string& r, const std::string& c) { return v["f"] + "[(" + r + ") * " + v["C"] + " + (" + c + ")]"; };
    const std::string e = v["e"], kk = v["kk"], i = v["i"], j = v["j"];
    std::string code = fill("for (int $e = 0; $e < $N * $N; ++$e) ", v) + F(e + " / " + v["N"], e + " % " + v["N"]) + " = " + em.read_at(kA, e) + ";\n";
    code += fill("for (int $e = 0; $e < $N * $K; ++$e) ", v) + F(e + " / " + v["K"], v["N"] + " + " + e + " % " + v["K"]) + " = " + em.read_at(kB, e) + ";\n";
    // info: the first step whose pivot is exactly zero (that X is NaN, so the steps stop there).
    code += fill("int $info = 0;\nfor (int $kk = 0; $kk < $N; ++$kk) {\n", v);
    if (pivoting_)
      code += fill("  int $pr = $kk;\n  $rt $mx = ", v) + sc.pivot_magnitude(F(kk, kk)) +
              fill(";\n  for (int $i = $kk + 1; $i < $N; ++$i) { const $rt $ax = ", v) + sc.pivot_magnitude(F(i, kk)) +
              fill("; if ($ax > $mx) { $mx = $ax; $pr = $i; } }\n", v) +
              fill("  if ($pr != $kk)\n    for (int $j = $kk; $j < $C; ++$j) { const $t $tmp = ", v) + F(kk, j) + "; " + F(kk, j) + " = " + F(v["pr"], j) +
              "; " + F(v["pr"], j) + " = " + v["tmp"] + "; }\n";
    code += fill("  const $t $p = ", v) + F(kk, kk) + ";\n  if (" + sc.is_zero(v["p"]) + ") { " + v["info"] + " = " + kk + " + 1; break; }\n  " +
            sc.declare_reciprocal(v["r"], v["p"]);
    code += fill("  for (int $j = $kk + 1; $j < $C; ++$j) ", v) + F(kk, j) + " = " + sc.by_pivot(F(kk, j), v["p"], v["r"]) + ";\n";
    code += fill("  for (int $i = 0; $i < $N; ++$i) {\n    if ($i == $kk) continue;\n    const $t $u = ", v) + F(i, kk) + ";\n" +
            fill("    for (int $j = $kk + 1; $j < $C; ++$j) ", v) + F(i, j) + " -= " + sc.mul(v["u"], F(kk, j)) + ";\n  }\n}\n";
    code += fill("for (int $e = 0; $e < $N * $K; ++$e) ", v) + em.write_at(kX, e) + " = " + v["info"] + " == 0 ? " +
            F(e + " / " + v["K"], v["N"] + " + " + e + " % " + v["K"]) + " : " + v["nan"] + ";\n";
    return code + em.write_at(kInfo, "0") + " = " + v["info"] + ";\n";
  }

  bool pivoting_;
};

}  // namespace

std::unique_ptr<sdk::Operation> gesv_operation() { return std::make_unique<GaussJordan>(true); }
std::unique_ptr<sdk::Operation> gesv_nopiv_operation() { return std::make_unique<GaussJordan>(false); }

}  // namespace fugue::linalg
