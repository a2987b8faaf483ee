// potrf.cpp: linalg.potrf (see potrf.h).
#include "potrf.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "blocked_cholesky.h"
#include "cholesky.h"
#include "kernel_text.h"
#include "lanes.h"
#include "lanes_cholesky.h"
#include "matrices.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kL = 1, kInfo = 2, kN = 3;  // kN: linalg.potrf_vbatched's orders

class Potrf final : public sdk::Operation {
 public:
  explicit Potrf(bool vbatched) : vbatched_(vbatched) {
    name = vbatched ? "linalg.potrf_vbatched" : "linalg.potrf";
    doc = "Cholesky factorization of a batch of symmetric positive definite matrices [..., n, n]: L with A = L L^T "
          "(lower, the default) or U with A = U^T U (lower false), from A's lower (upper) triangle, the other triangle "
          "zero; info (optional) per matrix as LAPACK's: 0, or k when the leading minor of order k is not positive "
          "definite (the factor then holds its first k - 1 columns, rows when upper, and zeros)";
    if (vbatched)
      doc += ". Variable sizes: matrix e is A[e, :n_e, :n_e] of the padded [..., N, N] batch (the padding never read); L is "
             "the factor of diag(A_e, I), so linalg.potrs takes it as it is; info -1 for an order outside 0..N";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "symmetric (Hermitian) positive definite matrices [..., n, n]"),
                sdk::out("L", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the factors, of A's shape and dtype"),
                sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                  "i32 per matrix [...]: 0 or the order of the first leading minor that is not positive definite")};
    if (vbatched)
      operands.push_back(sdk::in("n", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32), "the order of each matrix [...], 0..N"));
    attrs = {{"lower", FUGUE_ATTR_BOOL, false, 1, "", "true: A = L L^T from A's lower triangle; false: A = U^T U from its upper"}};
    // Backward stable: errors of about n * eps * cond(A) relative to the factor's largest elements.
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_cases = R"([
      {"name": "one 1x1", "inputs": {"A": {"kind": "array", "shape": [1, 1], "from": {"spd": {"seed": 1}}}}},
      {"name": "batch of 3x3 in registers", "inputs": {"A": {"kind": "array", "shape": [37, 3, 3], "from": {"spd": {"seed": 2}}}}},
      {"name": "8x8 upper", "attrs": {"lower": false}, "inputs": {"A": {"kind": "array", "shape": [2, 5, 8, 8], "from": {"spd": {"seed": 3}}}}},
      {"name": "9x9 in teams", "inputs": {"A": {"kind": "array", "shape": [21, 9, 9], "from": {"spd": {"seed": 4, "cond": 100}}}}},
      {"name": "33x33 upper in teams", "attrs": {"lower": false}, "inputs": {"A": {"kind": "array", "shape": [5, 33, 33], "from": {"spd": {"seed": 5}}}}},
      {"name": "70x70, a work-group each", "inputs": {"A": {"kind": "array", "shape": [3, 70, 70], "from": {"spd": {"seed": 6}}}}},
      {"name": "not positive definite", "inputs": {"A": {"kind": "array", "shape": [2, 2, 2], "value": [[[4, 2], [2, 1]], [[1, 0], [0, -1]]]}}},
      {"name": "not positive definite in teams", "inputs": {"A": {"kind": "array", "shape": [1, 12, 12], "from": {"random": {"seed": 7}}}}}
    ])";
    if (vbatched)
      test_cases = R"([
      {"name": "orders 0 to 5 of 5x5, a bad one", "inputs": {"A": {"kind": "array", "shape": [8, 5, 5], "from": {"spd": {"seed": 1}}},
                                                            "n": {"kind": "array", "dtype": "i32", "shape": [8], "value": [0, 1, 2, 3, 4, 5, 6, -1]}}},
      {"name": "orders of 12x12 in rows, upper", "attrs": {"lower": false},
       "inputs": {"A": {"kind": "array", "shape": [2, 3, 12, 12], "from": {"spd": {"seed": 2}}},
                  "n": {"kind": "array", "dtype": "i32", "shape": [2, 3], "value": [[12, 7, 1], [9, 0, 11]]}}},
      {"name": "orders of 40x40 in teams", "inputs": {"A": {"kind": "array", "shape": [4, 40, 40], "from": {"spd": {"seed": 3}}},
                                                      "n": {"kind": "array", "dtype": "i32", "shape": [4], "value": [40, 17, 33, 2]}}},
      {"name": "not positive definite within the order", "inputs": {"A": {"kind": "array", "shape": [2, 6, 6], "from": {"random": {"seed": 4}}},
                                                                     "n": {"kind": "array", "dtype": "i32", "shape": [2], "value": [3, 6]}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& a = call.operand(kA);
    square_order(a, "A");
    if (vbatched_) require_orders(call.operand(kN), a, "n", "A");
    types[kL] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, sdk::shape_of(a));
    types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const Tuning tu = tuning_of(call);
    const int64_t n = a.shape[a.rank - 1];
    if (blocked(call, tu, n)) return blocked_cholesky_plan(call, tu, n, a.dtype);
    sdk::Plan plan = emitted_plan(call, tu, n);
    // Alone on a CPU, small real matrices take the lanes (lanes.h, lanes_cholesky.h); the emitted plan is
    // what others join.
    if (const int64_t lanes = lanes_for(call, tu, n, n, a.dtype, vbatched_)) {
      plan.own_kernels_alone = true;
      plan.variant += "; " + lanes_text(tu, n, lanes);
    }
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& a = call.operand(kA);
    const int64_t n = a.shape[a.rank - 1];
    const bool lower = call.flag("lower");
    const Tuning tu = tuning_of(call);
    const int64_t bytes = static_cast<int64_t>(abi::dtype_size(a.dtype));
    std::string code;
    const VariableOrder v = vbatched_ ? declare_order(em, kN, n, code) : VariableOrder{};
    code += em.local_size() == 1 && n > tu.register_order && by_dot_products(call) ? by_rows_of_l(em, a.dtype, n, v, vector_width(call))
            : em.local_size() == 1 && n > tu.register_order            ? in_loops(em, a.dtype, n, lower, v)
            : em.local_size() == 1                                     ? in_registers(em, a.dtype, n, lower, v)
            : grid_plan(tu, n, bytes, call.device().max_work_group_size) ? in_grid(em, a.dtype, n, lower, grid_of(tu, n, bytes), v)
            : row_plan(tu, n)                                     ? in_rows(em, a.dtype, n, lower, v)
                                                                  : in_team(em, a.dtype, n, lower, fits_local(call, n * n, a.dtype), v);
    em.append(code);
  }

  // The blocked plan (blocked_cholesky.h), or the lanes where potrf runs alone (lanes_cholesky.h); the
  // others are emitted.
  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const fugue_type& a = call.operand(kA);
    const Tuning tu = tuning_of(call);
    const int64_t n = a.shape[a.rank - 1];
    if (blocked(call, tu, n))
      blocked_cholesky(call, s, kA, kL, kInfo, call.flag("lower"));
    else
      lanes_cholesky(call, s, kA, kL, kInfo, call.flag("lower"), lanes_for(call, tu, n, n, a.dtype, vbatched_));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& a = call.operand(kA);
    const double n = static_cast<double>(a.shape[a.rank - 1]), m = static_cast<double>(batch_count(a));
    return {sizeof(fugue_cost), 2 * m * n * n * abi::dtype_size(a.dtype) + 4 * m, m * n * n * n / 3};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]);
    sdk::HostView l(arrays[kL]), info(arrays[kInfo]);
    const fugue_type& t = call.operand(kA);
    const int64_t n = t.shape[t.rank - 1], count = batch_count(t);
    const bool lower = call.flag("lower");
    std::vector<Complex> f(static_cast<size_t>(n * n));
    for (int64_t m = 0; m < count; ++m) {
      const int64_t base = m * n * n;
      // Variable sizes: diag(A_e, I), A_e of order ne (0 for an order outside 0..n).
      const int64_t order = vbatched_ ? sdk::HostView(arrays[kN]).get_int(m) : n;
      const bool bad = order < 0 || order > n;
      const int64_t ne = bad ? 0 : order;
      // f: the lower triangle of A (upper: of A^H), factored in place, in extended precision.
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c)
          f[r * n + c] = c > r                ? Complex(0)
                         : r >= ne || c >= ne ? Complex(r == c ? 1 : 0)
                         : lower              ? get_value(a, base + r * n + c)
                                              : std::conj(get_value(a, base + c * n + r));
      const int64_t failed = cholesky_reference(f, n);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c) {
          const bool kept = c <= r && (!failed || c < failed - 1);
          set_value(l, base + (lower ? r * n + c : c * n + r), kept ? (lower ? f[r * n + c] : std::conj(f[r * n + c])) : Complex(0));
        }
      info.set_int(m, bad ? -1 : failed);
    }
  }

 private:
  // Whether the blocked plan (blocked_cholesky.h) serves order n.
  bool blocked(const sdk::Call& call, const Tuning& tu, int64_t n) const {
    return !vbatched_ && blocked_plan(tu.blocked_order, tu, n, fits_local(call, n * n, call.operand(kA).dtype));
  }

  // The plans potrf's kernel is emitted for, below the blocked one.
  sdk::Plan emitted_plan(const sdk::Call& call, const Tuning& tu, int64_t n) const {
    const fugue_type& a = call.operand(kA);
    const int64_t bytes = static_cast<int64_t>(abi::dtype_size(a.dtype));
    const bool loop_fits = fits_local(call, n * n, a.dtype);
    if (loop_plan(tu, n) && loop_fits) {
      sdk::Plan plan = team_plan(batch_count(a), 1);
      add_partitions(call, plan);
      plan.registers = 16;
      plan.local_mem_bytes = static_cast<uint64_t>(n * n * bytes);
      plan.reads_once = uint64_t{1} << kA;  // copied into the matrix it factors
      const int64_t width = vector_width(call);
      plan.variant = loop_variant_text(tu, n, by_dot_products(call) ? "L in local memory, built 4 rows at a time from dot products along its rows " +
                                                                          (width >= 2 ? "in vectors of " + std::to_string(width) : std::string("one value at a time"))
                                                                    : "the matrix in local memory, factored as U = L^H along its rows");
      return plan;
    }
    if (grid_plan(tu, n, bytes, call.device().max_work_group_size)) {
      const Grid g = grid_of(tu, n, bytes);
      sdk::Plan plan = team_plan(batch_count(a), g.team());
      add_partitions(call, plan);
      const int64_t block = g.block_rows(n) * g.block_columns(n);
      plan.registers = static_cast<uint32_t>((block + g.block_rows(n) + g.block_columns(n)) * (Scalars(a.dtype).complex ? 2 : 1) + 12);
      plan.local_mem_bytes = static_cast<uint64_t>(2 * n * bytes);  // column k, twice
      plan.variant = variant_text(tu, n, g.team(), true, "", &g);
      return plan;
    }
    const int64_t team = team_size(tu, n);
    const bool rows = row_plan(tu, n), local = team > 1 && !rows && fits_local(call, n * n, a.dtype);
    sdk::Plan plan = team_plan(batch_count(a), team);
    add_partitions(call, plan);
    plan.registers = team == 1 ? static_cast<uint32_t>(n * n + 8) : rows ? static_cast<uint32_t>(n + 8) : 12;
    if (rows) plan.local_mem_bytes = static_cast<uint64_t>(n) * abi::dtype_size(a.dtype);  // the column
    else if (local) plan.local_mem_bytes = static_cast<uint64_t>(n * n) * abi::dtype_size(a.dtype);
    // A row per work-item, read and written along it (H100, 20,000 f64 16 x 16: 0.080 ms packed, 0.047
    // with the rows a spare element apart). Upper factors read and write U = L^H's columns, consecutive
    // for consecutive work-items: packed.
    plan.walks_rows = rows && call.flag("lower");
    plan.variant = variant_text(tu, n, team, true, team == 1 || rows ? "" : local ? "the matrix in local memory" : "the matrix in L's storage");
    return plan;
  }

  void add_partitions(const sdk::Call& call, sdk::Plan& plan) const {
    plan.partitions = {matrix_batch(call.operand(kA)), matrix_batch(call.operand(kL)), value_batch(call.operand(kInfo))};
    if (vbatched_) plan.partitions.push_back(value_batch(call.operand(kN)));
  }

  // One matrix per work-item, in registers: every index a constant once the loops are unrolled.
  static std::string in_registers(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, bool lower, const VariableOrder& v) {
    const Scalars sc(dtype);
    const std::string t = sc.type, N = std::to_string(n), zero = sc.literal(0);
    const std::string f = em.name("f"), info = em.name("info"), r = em.name("r"), c = em.name("c");
    // Upper: A^H's lower triangle (the conjugate of the transpose, for Hermitian matrices).
    const std::string at_a = embedded(v, lower ? em.read_at(kA, r + " * " + N + " + " + c) : sc.conj(em.read_at(kA, c + " * " + N + " + " + r)), r,
                                      c, sc.literal(1), zero);
    std::string code = t + " " + f + "[" + std::to_string(n * n) + "];\n";
    code += "#pragma unroll\nfor (int " + r + " = 0; " + r + " < " + N + "; ++" + r + ")\n  #pragma unroll\n  for (int " + c +
            " = 0; " + c + " <= " + r + "; ++" + c + ") " + f + "[" + r + " * " + N + " + " + c + "] = " + at_a + ";\n";
    code += register_cholesky(sc, n, f, info);
    // Out: the factor's triangle (its first info - 1 columns when it failed), zeros elsewhere.
    const std::string at_l = em.write_at(kL, lower ? r + " * " + N + " + " + c : c + " * " + N + " + " + r);
    code += "#pragma unroll\nfor (int " + r + " = 0; " + r + " < " + N + "; ++" + r + ")\n  #pragma unroll\n  for (int " + c +
            " = 0; " + c + " < " + N + "; ++" + c + ") " + at_l + " = " + c + " <= " + r + " && (" + info + " == 0 || " + c +
            " < " + info + " - 1) ? " + (lower ? f + "[" + r + " * " + N + " + " + c + "]" : sc.conj(f + "[" + r + " * " + N + " + " + c + "]")) +
            " : " + zero + ";\n";
    code += em.write_at(kInfo, "0") + " = " + stored_info(v, info) + ";\n";
    return code;
  }

  // The loop plan of a lower factor of real values builds L in its own layout (below); upper factors and
  // complex values factor U = L^H (in_loops), whose rows are A's for upper factors.
  static bool by_dot_products(const sdk::Call& call) { return call.flag("lower") && !Scalars(call.operand(kA).dtype).complex; }
  // The dot products' vectors: the device's native width, at most 4. Each dot product ends in a sum across
  // its vector and a tail of up to width - 1 scalar steps, both of which grow with the width while the
  // products along a row of at most n stay short (PoCL, AVX-512, fugue bench medians of 5, two runs, ms:
  // 2,000 f32 matrices of 64 in vectors of 16 17.4-17.7, 8 8.5-8.7, 4 8.1-8.4, 2 9.7-9.8; f64 of 64 in 8
  // 16.3-17.4, 4 12.9-13.8, 2 14.9-15.2; f32 of 128 71-76, 44, 44-48, 60-63; f64 of 128 70-72, 57-61, 74-76;
  // 20,000 f32 of 16 7.9-8.1, 4.5, 4.2-4.5 (one run 8.6), 5.0; f64 of 16 8.3-9.4 (one run 13.3), 6.9-7.1, 7.2).
  static int64_t vector_width(const sdk::Call& call) {
    return std::min<int64_t>(sdk::native_vector_width(&call.device(), call.operand(kA).dtype), 4);
  }

  // One matrix per work-item, its loops kept (a CPU's plan), lower and real: L in a local array in its own
  // layout, row by row (Cholesky-Crout): L(i, j) = (A(i, j) - L(i, :j) . L(j, :j)) / L(j, j), every dot
  // product along two rows, in vectors of up to 4 values (vector_width). Four rows at a time left of their
  // diagonal block, sharing each row j's loads; then the block's own triangle. A is read once, and L
  // written along its rows, with no transposed copy either way (PoCL, 2,000 f64 matrices of 32, in a
  // hand-edited kernel: 2.8-5.7 ms against 4.7-10 for U = L^T; 20,000 of 16: 6.7-9.9 against 15-16).
  // When a leading minor is not positive definite (info = k), the rows below still take their first
  // k - 1 columns, which the factor keeps.
  static std::string by_rows_of_l(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, const VariableOrder& v, int64_t width) {
    const Scalars sc(dtype);
    const int64_t R = 4, V = width >= 2 ? width : 1;
    const std::string t = sc.type, vt = t + std::to_string(V), N = std::to_string(n), zero = sc.literal(0), last = std::to_string(n - 1);
    const std::string w = em.local_array(dtype, n * n, "factor");
    const std::string rd = em.name("rd"), info = em.name("info"), r0 = em.name("r0"), lim = em.name("lim"), j = em.name("j"), i = em.name("i"),
                      k = em.name("k"), pj = em.name("pj"), s = em.name("s"), d = em.name("d"), q = em.name("q"), r = em.name("r"), c = em.name("c");
    auto row = [&](const std::string& index) { return "(" + w + " + (" + index + ") * " + N + ")"; };
    auto a_at = [&](const std::string& rr, const std::string& cc) {
      return embedded(v, em.read_at(kA, "(" + rr + ") * " + N + " + (" + cc + ")"), rr, cc, sc.literal(1), zero);
    };
    // The sum of a vector's parts, pairwise.
    auto hsum = [&](const std::string& x) {
      std::vector<std::string> parts;
      for (int64_t p = 0; p < V; ++p) parts.push_back(V == 1 ? x : x + ".s" + std::string(1, "0123456789abcdef"[p]));
      while (parts.size() > 1) {
        std::vector<std::string> next;
        for (size_t p = 0; p + 1 < parts.size(); p += 2) next.push_back("(" + parts[p] + " + " + parts[p + 1] + ")");
        parts = next;
      }
      return parts[0];
    };
    // sums[x] = rows[x] . y over the first `len` elements, all rows at once (y's loads shared).
    auto dots = [&](const std::vector<std::string>& rows, const std::string& y, const std::string& len, const std::vector<std::string>& sums) {
      std::string code = "  {\n    int " + k + " = 0;\n";
      if (V > 1) {
        const std::string load = "vload" + std::to_string(V) + "(0, ";
        for (size_t x = 0; x < rows.size(); ++x) code += "    " + vt + " " + sums[x] + "_v = (" + vt + ")(" + zero + ");\n";
        code += "    for (; " + k + " + " + std::to_string(V) + " <= " + len + "; " + k + " += " + std::to_string(V) + ") {\n";
        code += "      const " + vt + " " + q + " = " + load + y + " + " + k + ");\n";
        for (size_t x = 0; x < rows.size(); ++x)
          code += "      " + sums[x] + "_v = fma(" + load + rows[x] + " + " + k + "), " + q + ", " + sums[x] + "_v);\n";
        code += "    }\n";
        for (size_t x = 0; x < rows.size(); ++x) code += "    " + sums[x] + " = " + hsum(sums[x] + "_v") + ";\n";
      }
      code += "    for (; " + k + " < " + len + "; ++" + k + ") {\n      const " + t + " " + q + " = " + y + "[" + k + "];\n";
      for (size_t x = 0; x < rows.size(); ++x) code += "      " + sums[x] + " = fma(" + rows[x] + "[" + k + "], " + q + ", " + sums[x] + ");\n";
      return code + "    }\n  }\n";
    };
    std::string code = t + " " + rd + "[" + N + "];\nint " + info + " = 0;\n";
    code += "for (int " + r0 + " = 0; " + r0 + " < " + N + "; " + r0 + " += " + std::to_string(R) + ") {\n";
    code += "  const int " + lim + " = " + info + " == 0 ? " + r0 + " : min(" + r0 + ", " + info + " - 1);\n";
    // Left of the block: its rows (past n: the last row again, never stored) against each row j above.
    std::vector<std::string> rows, sums;
    for (int64_t x = 0; x < R; ++x) {
      const std::string X = std::to_string(x), at = x == 0 ? r0 : "min(" + r0 + " + " + X + ", " + last + ")";
      rows.push_back(em.name("p" + X));
      sums.push_back(em.name("s" + X));
      code += "  const __local " + t + "* " + rows.back() + " = " + row(at) + ";\n";
    }
    code += "  for (int " + j + " = 0; " + j + " < " + lim + "; ++" + j + ") {\n";
    code += "  const __local " + t + "* " + pj + " = " + row(j) + ";\n";
    for (int64_t x = 0; x < R; ++x) code += "  " + t + " " + sums[x] + " = " + zero + ";\n";
    code += dots(rows, pj, j, sums);
    for (int64_t x = 0; x < R; ++x) {
      const std::string X = std::to_string(x), at = r0 + " + " + X;
      code += "  " + std::string(x ? "if (" + at + " < " + N + ") " : "") + w + "[(" + at + ") * " + N + " + " + j + "] = (" + a_at(at, j) + " - " +
              sums[x] + ") * " + rd + "[" + j + "];\n";
    }
    code += "  }\n";
    // The block's triangle, column by column: the diagonal, then the block's rows below it.
    const std::string end = "min(" + r0 + " + " + std::to_string(R) + ", " + N + ")";
    code += "  for (int " + j + " = " + r0 + "; " + j + " < " + end + " && " + info + " == 0; ++" + j + ") {\n";
    code += "  const __local " + t + "* " + pj + " = " + row(j) + ";\n";
    code += "  " + t + " " + s + " = " + zero + ";\n" + dots({pj}, pj, j, {s});
    code += "  const " + t + " " + d + " = " + a_at(j, j) + " - " + s + ";\n";
    code += "  if (!(" + d + " > " + zero + ")) { " + info + " = " + j + " + 1; break; }\n";
    code += "  " + w + "[" + j + " * " + N + " + " + j + "] = sqrt(" + d + ");\n";
    code += "  " + rd + "[" + j + "] = " + sc.literal(1) + " / " + w + "[" + j + " * " + N + " + " + j + "];\n";
    code += "  for (int " + i + " = " + j + " + 1; " + i + " < " + end + "; ++" + i + ") {\n";
    code += "  " + t + " " + s + " = " + zero + ";\n" + dots({row(i)}, pj, j, {s});
    code += "  " + w + "[" + i + " * " + N + " + " + j + "] = (" + a_at(i, j) + " - " + s + ") * " + rd + "[" + j + "];\n";
    code += "  }\n  }\n}\n";
    // Out along L's rows: its first info - 1 columns when it failed, zeros elsewhere.
    code += "for (int " + r + " = 0; " + r + " < " + N + "; ++" + r + ")\n  for (int " + c + " = 0; " + c + " < " + N + "; ++" + c + ") " +
            em.write_at(kL, r + " * " + N + " + " + c) + " = " + c + " <= " + r + " && (" + info + " == 0 || " + c + " < " + info + " - 1) ? " + w +
            "[" + r + " * " + N + " + " + c + "] : " + zero + ";\n";
    code += em.write_at(kInfo, "0") + " = " + stored_info(v, info) + ";\n";
    return code;
  }

  // One matrix per work-item, its loops kept (a CPU's plan): U = L^H (upper: U itself) in a local
  // array, row-major, factored by cholesky.h's loop_cholesky.
  static std::string in_loops(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, bool lower, const VariableOrder& v) {
    const Scalars sc(dtype);
    std::map<std::string, std::string> vars = {{"t", sc.type}, {"rt", sc.real_type}, {"N", std::to_string(n)}, {"zero", sc.literal(0)},
                                               {"rzero", sc.real(0)}, {"one", sc.real(1)}};
    for (const char* name : {"r", "c", "info"}) vars[name] = em.name(name);
    const std::string w = em.local_array(dtype, n * n, "matrix");
    auto W = [&](const std::string& row, const std::string& col) { return w + "[(" + row + ") * " + std::to_string(n) + " + " + col + "]"; };
    const std::string r = vars["r"], c = vars["c"];
    // A read along its rows (loop_cholesky), and L written along its rows below.
    const auto a_at = [&](const std::string& row, const std::string& col) {
      return embedded(v, em.read_at(kA, row + " * " + vars["N"] + " + " + col), row, col, sc.literal(1), vars["zero"]);
    };
    std::string code = loop_cholesky(sc, n, lower, a_at, W, [&](const char* stem) { return em.name(stem); }, vars["info"]);
    // Out: U's first info - 1 rows when the factor failed (L's columns), zeros elsewhere; lower: U^H.
    const std::string kept = "(" + vars["info"] + " == 0 || " + r + " < " + vars["info"] + " - 1)";
    if (lower)  // L(r, c) = conj(U(c, r)), kept for columns c < info - 1
      code += fill("for (int $r = 0; $r < $N; ++$r)\n  for (int $c = 0; $c < $N; ++$c) ", vars) + em.write_at(kL, r + " * " + vars["N"] + " + " + c) +
              " = " + c + " <= " + r + " && (" + vars["info"] + " == 0 || " + c + " < " + vars["info"] + " - 1) ? " + sc.conj(W(c, r)) + " : " +
              vars["zero"] + ";\n";
    else
      code += fill("for (int $r = 0; $r < $N; ++$r)\n  for (int $c = 0; $c < $N; ++$c) ", vars) + em.write_at(kL, r + " * " + vars["N"] + " + " + c) +
              " = " + c + " >= " + r + " && " + kept + " ? " + W(r, c) + " : " + vars["zero"] + ";\n";
    code += em.write_at(kInfo, "0") + " = " + stored_info(v, vars["info"]) + ";\n";
    return code;
  }

  // A team with a row of the matrix in each work-item's registers (rows past n idle), factored by
  // cholesky.h's rows_cholesky.
  static std::string in_rows(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, bool lower, const VariableOrder& v) {
    const Scalars sc(dtype);
    const std::string t = sc.type, N = std::to_string(n), zero = sc.literal(0);
    const std::string row = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    const std::string a = em.name("a"), info = em.name("info");
    auto el = [&](int64_t j) { return a + "[" + std::to_string(j) + "]"; };
    std::string code = t + " " + a + "[" + N + "];\n";
    for (int64_t j = 0; j < n; ++j)
      code += el(j) + " = " + row + " < " + N + " && " + std::to_string(j) + " <= " + row + " ? " +
              embedded(v,
                       lower ? em.read_at(kA, "min(" + row + ", " + std::to_string(n - 1) + ") * " + N + " + " + std::to_string(j))
                             : sc.conj(em.read_at(kA, std::to_string(j) + " * " + N + " + min(" + row + ", " + std::to_string(n - 1) + ")")),
                       row, std::to_string(j), sc.literal(1), zero) +
              " : " + zero + ";\n";
    code += rows_cholesky(em, sc, n, a, row, info);
    // Out: the row (its first info - 1 elements when the factor failed), zeros elsewhere; upper: as a column.
    code += "if (" + row + " < " + N + ") {\n";
    for (int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      code += "  " + em.write_at(kL, lower ? row + " * " + N + " + " + J : J + " * " + N + " + " + row) + " = " + J + " <= " + row +
              " && (" + info + " == 0 || " + J + " < " + info + " - 1) ? " + (lower ? el(j) : sc.conj(el(j))) + " : " + zero + ";\n";
    }
    code += "}\n";
    code += "if (" + row + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(v, info) + ";\n";
    return code;
  }

  // A grid of work-items (tuning.h's Grid), each holding its elements of the matrix in registers
  // (a[bi * BC + bj] is element (p + bi P, q + bj Q)), right-looking, one barrier a step: at step k the
  // owners of column k leave it in local memory (two arrays taken in turn, so that the next step's writes
  // cannot meet this step's reads without a barrier between), every work-item reads the pivot alike (so
  // the grid decides alike), scales the column's elements at its rows and columns as it reads them, and
  // updates its elements right of k. Blocks wholly left of or above k are not in the step's code.
  static std::string in_grid(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, bool lower, const Grid& g, const VariableOrder& v) {
    const Scalars sc(dtype);
    const std::string t = sc.type, rt = sc.real_type, N = std::to_string(n), zero = sc.literal(0), sync = em.barrier() + "\n";
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    const GridCode gc(em, g, n, n);
    const int64_t P = gc.P, Q = gc.Q, BR = gc.BR, BC = gc.BC;
    const std::string columns[2] = {em.local_array(dtype, n, "column_even"), em.local_array(dtype, n, "column_odd")};
    const std::string& q = gc.q;
    const std::string info = em.name("info"), d = em.name("d"), s = em.name("s"), r = em.name("r"), x = em.name("x"), y = em.name("y");
    auto row = [&](int64_t bi) { return gc.row(bi); };
    auto col = [&](int64_t bj) { return gc.col(bj); };
    auto el = [&](int64_t bi, int64_t bj) { return gc.el(bi, bj); };
    std::string code = gc.declarations(lane, t);
    // In: the lower triangle (upper: A^H's), rows and columns past n zero and never read.
    for (int64_t bi = 0; bi < BR; ++bi)
      for (int64_t bj = 0; bj < BC; ++bj) {
        const std::string i = row(bi), j = col(bj);
        code += el(bi, bj) + " = " + i + " < " + N + " && " + j + " <= " + i + " ? " +
                embedded(v, lower ? em.read_at(kA, i + " * " + N + " + " + j) : sc.conj(em.read_at(kA, j + " * " + N + " + " + i)), i, j,
                         sc.literal(1), zero) +
                " : " + zero + ";\n";
      }
    code += "int " + info + " = 0;\n";
    for (int64_t k = 0; k < n; ++k) {
      const std::string K = std::to_string(k), column = columns[k % 2];
      const int64_t kj = k / Q, first_row = k / P;
      code += "if (" + q + " == " + std::to_string(k % Q) + ") {\n";
      for (int64_t bi = first_row; bi < BR; ++bi)
        code += "  if (" + row(bi) + " >= " + K + " && " + row(bi) + " < " + N + ") " + column + "[" + row(bi) + "] = " + el(bi, kj) + ";\n";
      code += "}\n" + sync;
      code += "{\n  const " + rt + " " + d + " = " + sc.real_part(column + "[" + K + "]") + ";\n";
      code += "  if (" + info + " == 0 && !(" + d + " > " + sc.real(0) + ")) " + info + " = " + std::to_string(k + 1) + ";\n";
      code += "  if (" + info + " == 0) {\n";
      code += "    const " + rt + " " + s + " = sqrt(" + d + "), " + r + " = " + sc.real(1) + " / " + s + ";\n";
      code += "    if (" + q + " == " + std::to_string(k % Q) + ") {\n";
      for (int64_t bi = first_row; bi < BR; ++bi)
        code += "      if (" + row(bi) + " == " + K + ") " + el(bi, kj) + " = " + sc.from_real(s) + ";\n      else if (" + row(bi) + " > " + K +
                ") " + el(bi, kj) + " = " + el(bi, kj) + " * " + r + ";\n";
      code += "    }\n";
      // L(i, k) at this work-item's rows and conj(L(j, k)) at its columns, both right of k (rows past n
      // read the last row's: their elements are never stored).
      const int64_t bi0 = (k + 1) / P, bj0 = (k + 1) / Q;
      for (int64_t bi = bi0; bi < BR; ++bi)
        code += "    const " + t + " " + x + "_" + std::to_string(bi) + " = " + column + "[min(" + row(bi) + ", " + std::to_string(n - 1) + ")] * " + r + ";\n";
      for (int64_t bj = bj0; bj < BC; ++bj)
        code += "    const " + t + " " + y + "_" + std::to_string(bj) + " = " + sc.conj(column + "[min(" + col(bj) + ", " + std::to_string(n - 1) + ")]") +
                " * " + r + ";\n";
      for (int64_t bi = bi0; bi < BR; ++bi)
        for (int64_t bj = bj0; bj < BC; ++bj)
          code += "    if (" + col(bj) + " > " + K + " && " + col(bj) + " <= " + row(bi) + ") " + el(bi, bj) + " -= " +
                  sc.mul(x + "_" + std::to_string(bi), y + "_" + std::to_string(bj)) + ";\n";
      code += "  }\n}\n";
    }
    // Out: the factor's triangle (its first info - 1 columns when it failed), zeros elsewhere; upper:
    // transposed. The grid's elements cover the matrix once.
    for (int64_t bi = 0; bi < BR; ++bi)
      for (int64_t bj = 0; bj < BC; ++bj) {
        const std::string i = row(bi), j = col(bj);
        code += "if (" + i + " < " + N + " && " + j + " < " + N + ") " + em.write_at(kL, lower ? i + " * " + N + " + " + j : j + " * " + N + " + " + i) +
                " = " + j + " <= " + i + " && (" + info + " == 0 || " + j + " < " + info + " - 1) ? " + (lower ? el(bi, bj) : sc.conj(el(bi, bj))) +
                " : " + zero + ";\n";
      }
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(v, info) + ";\n";
    return code;
  }

  // A team of work-items per matrix (team_cholesky), factoring it in a local array of its own where the
  // matrix fits (`in_local`), else in the result's storage.
  static std::string in_team(const sdk::Emitter& em, fugue_dtype dtype, int64_t n, bool lower, bool in_local, const VariableOrder& v) {
    const Scalars sc(dtype);
    const std::string t = sc.type, N = std::to_string(n), NN = std::to_string(n * n);
    const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
    const int64_t team = em.local_size();
    const std::string e = em.name("e"), q = em.name("q"), r = em.name("r"), c = em.name("c"), d = em.name("d"),
                      info = em.name("info"), zero = sc.literal(0);
    // The factor is computed lower in L's storage (upper: A read transposed), then transposed in place.
    const std::string w = in_local ? em.local_array(dtype, n * n, "matrix") : "";
    auto W = [&](const std::string& index) { return in_local ? w + "[" + index + "]" : em.write_at(kL, index); };
    auto Wr = [&](const std::string& index) { return in_local ? w + "[" + index + "]" : em.read_at(kL, index); };
    auto L = [&](const std::string& row, const std::string& col) { return W("(" + row + ") * " + N + " + " + col); };
    auto each = [&](const std::string& index, int64_t count, const std::string& bound, const std::string& body) {
      return team_loop(q, lane, team, index, count, bound, body);
    };
    std::string code;
    code += each(e, n * n, NN,
                 "    const int " + r + " = " + e + " / " + N + ", " + c + " = " + e + " % " + N + ";\n    " + W(e) + " = " +
                     c + " <= " + r + " ? " + embedded(v, lower ? em.read_at(kA, e) : sc.conj(em.read_at(kA, c + " * " + N + " + " + r)), r, c, sc.literal(1), zero) +
                     " : " + zero + ";\n");
    code += sync + team_cholesky(em, sc, n, Wr, W, info);
    // A failed factor keeps its first info - 1 columns; upper: transposed. From the local array every
    // element of the result is written once; in place each pair (r, c <= r) is one work-item's.
    std::string last = "    const int " + r + " = " + e + " / " + N + ", " + c + " = " + e + " % " + N + ";\n";
    const std::string kept = c + " <= " + r + " && (" + info + " == 0 || " + c + " < " + info + " - 1)";
    if (in_local) {
      last += "    " + em.write_at(kL, lower ? e : c + " * " + N + " + " + r) + " = " + kept + " ? " + (lower ? Wr(e) : sc.conj(Wr(e))) + " : " + zero + ";\n";
    } else {
      last += "    if (" + c + " <= " + r + ") {\n";
      last += "      const " + t + " " + d + " = " + kept + " ? " + Wr(e) + " : " + zero + ";\n";
      if (lower) {
        last += "      " + em.write_at(kL, e) + " = " + d + ";\n";
      } else {
        last += "      " + em.write_at(kL, e) + " = " + zero + ";\n";
        last += "      " + L(c, r) + " = " + sc.conj(d) + ";\n";
      }
      last += "    }\n";
    }
    code += each(e, n * n, NN, last);
    code += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + stored_info(v, info) + ";\n";
    return code;
  }

  bool vbatched_;
};

}  // namespace

std::unique_ptr<sdk::Operation> potrf_operation() { return std::make_unique<Potrf>(false); }
std::unique_ptr<sdk::Operation> potrf_vbatched_operation() { return std::make_unique<Potrf>(true); }

}  // namespace fugue::linalg
