// gemm.cpp: linalg.gemm (see gemm.h).
#include "gemm.h"

#include <algorithm>
#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "device_kernels.h"
#include "gemm_mma.h"
#include "gemm_spread.h"
#include "gemm_tiles.h"
#include "gemm_vectors.h"
#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"

namespace fugue::linalg {

namespace {

constexpr uint32_t kA = 0, kB = 1, kC = 2, kInfo = 3, kSizes = 4;  // info and sizes: linalg.gemm_vbatched's
constexpr int64_t kBlock = 4;  // rows and columns of C a work-item computes at most
// C written over A or B: blocks of C per matrix at most (C up to 128 x 128), each work-item keeping its
// blocks in registers (at most 4 in a team of 256; a smaller team, where tiles chose it, keeps more).
constexpr int64_t kMaxBlocksInPlace = 1024;

// The product's sizes and how its blocks meet work-items.
struct Sizes {
  int64_t m, n, k;
  bool ta, tb;  // transposed (or conjugate transposed)
  bool ca, cb;  // conjugated
  int64_t block_rows, block_cols, blocks, team;
};

Sizes sizes_of(const sdk::Call& call) {
  const fugue_type &a = call.operand(kA), &b = call.operand(kB);
  Sizes s;
  const char a_op = transpose_of(call, "trans_a"), b_op = transpose_of(call, "trans_b");
  s.ta = a_op != 'N';
  s.tb = b_op != 'N';
  s.ca = a_op == 'C';
  s.cb = b_op == 'C';
  s.m = s.ta ? columns_of(a) : rows_of(a);
  s.k = s.ta ? rows_of(a) : columns_of(a);
  s.n = s.tb ? rows_of(b) : columns_of(b);
  s.block_rows = std::min(s.m, kBlock);
  s.block_cols = std::min(s.n, kBlock);
  s.blocks = ((s.m + s.block_rows - 1) / s.block_rows) * ((s.n + s.block_cols - 1) / s.block_cols);
  s.team = 1;
  while (s.team < s.blocks && s.team < 256) s.team *= 2;
  return s;
}

// The tiles the call's product takes on its device (gemm_tiles.h), if any.
std::optional<TileShape> tiles_of(const sdk::Call& call, const Sizes& s) {
  const Tuning tu = tuning_of(call);
  const int64_t bytes = static_cast<int64_t>(abi::dtype_size(call.operand(kA).dtype));
  if (!tile_plan(tu, s.m, s.n, bytes, call.device())) return std::nullopt;
  return tile_shape(tu, s.m, s.n, bytes, call.device());
}

// Whether the call's product spreads its tiles over work-groups (gemm_spread.h): a single product, never
// variable sizes.
bool spread(const sdk::Call& call, const Sizes& s, bool vbatched) {
  return call.raw()->device && !vbatched &&
         spread_plan(tuning_of(call), batch_count(call.operand(kA)), s.m, s.n, s.k, call.device());
}

// Whether it spreads its vector blocks over work-groups (CPUs; gemm_spread.h): where neither the spread
// tiles nor the tiles of one work-group do (FUGUE_LINALG_TUNING=tile_order=N keeps them on a CPU).
bool spread_vectors(const sdk::Call& call, const Sizes& s, bool vbatched) {
  return call.raw()->device && !vbatched && !spread(call, s, vbatched) && !tiles_of(call, s) &&
         spread_vectors_plan(tuning_of(call), batch_count(call.operand(kA)), s.m, s.n, s.k, call.operand(kA).dtype, call.device());
}

// The tensor-core tiles the call's product takes on its device (gemm_mma.h), if any.
std::optional<MmaShape> mma_of(const sdk::Call& call, const Sizes& s) {
  const Tuning tu = tuning_of(call);
  if (!mma_plan(tu, s.m, s.n, s.k, call.operand(kA).dtype, call.device())) return std::nullopt;
  return mma_shape(tu, s.m, s.n, s.k, call.device());
}

// The vector blocks the call's product takes on its device (gemm_vectors.h), if any: where no tiles do.
std::optional<VectorShape> vectors_of(const sdk::Call& call, const Sizes& s) {
  const Tuning tu = tuning_of(call);
  const fugue_dtype dtype = call.operand(kA).dtype;
  if (tiles_of(call, s) || !vector_plan(tu, dtype, call.device())) return std::nullopt;
  return vector_shape(tu, s.m, s.n, dtype, call.device());
}

class Gemm final : public sdk::Operation {
 public:
  explicit Gemm(bool vbatched) : vbatched_(vbatched) {
    name = vbatched ? "linalg.gemm_vbatched" : "linalg.gemm";
    doc = "Batched matrix products C = alpha op(A) op(B): A [..., m, k] ([..., k, m] with trans_a \"T\" or \"C\"), B [..., "
          "k, n] ([..., n, k] with trans_b \"T\" or \"C\"), C [..., m, n], the batch axes equal; \"C\" conjugates as it "
          "transposes; beta C is an element-wise operation after it, which joins its kernel (not a single large product, whose "
          "tiles on GPUs, or vector blocks on CPUs, spread over work-groups in a kernel of its own)";
    operands = {sdk::in("A", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., m, k] (trans_a \"T\", \"C\": [..., k, m])"),
                sdk::in("B", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "matrices [..., k, n] (trans_b \"T\", \"C\": [..., n, k])"),
                sdk::out("C", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloatDtypes, "the products [..., m, n]")};
    attrs = {{"trans_a", FUGUE_ATTR_STRING, false, 0, "N", "\"N\": A as stored; \"T\": A transposed; \"C\": conjugate transposed"},
             {"trans_b", FUGUE_ATTR_STRING, false, 0, "N", "\"N\": B as stored; \"T\": B transposed; \"C\": conjugate transposed"},
             {"alpha", FUGUE_ATTR_NUMBER, false, 1, "", "the factor of the product"}};
    tolerance_f32 = 1e-4;
    tolerance_f64 = 1e-12;
    test_cases = R"([
      {"name": "2x3 by 3x2", "inputs": {"A": {"kind": "array", "shape": [50, 2, 3], "from": {"random": {"seed": 1}}},
                                         "B": {"kind": "array", "shape": [50, 3, 2], "from": {"random": {"seed": 2}}}}},
      {"name": "8x8, both transposed, alpha", "attrs": {"trans_a": "T", "trans_b": "T", "alpha": -0.5},
       "inputs": {"A": {"kind": "array", "shape": [2, 3, 8, 8], "from": {"random": {"seed": 3}}},
                  "B": {"kind": "array", "shape": [2, 3, 8, 8], "from": {"random": {"seed": 4}}}}},
      {"name": "17x5 by 5x13", "inputs": {"A": {"kind": "array", "shape": [9, 17, 5], "from": {"random": {"seed": 5}}},
                                           "B": {"kind": "array", "shape": [9, 5, 13], "from": {"random": {"seed": 6}}}}},
      {"name": "A^T, 40x33 by 33x70", "attrs": {"trans_a": "T"},
       "inputs": {"A": {"kind": "array", "shape": [2, 33, 40], "from": {"random": {"seed": 7}}},
                  "B": {"kind": "array", "shape": [2, 33, 70], "from": {"random": {"seed": 8}}}}},
      {"name": "A^H B^H, 6x5 by 4x6", "attrs": {"trans_a": "C", "trans_b": "C"},
       "inputs": {"A": {"kind": "array", "shape": [5, 5, 6], "from": {"random": {"seed": 11}}},
                  "B": {"kind": "array", "shape": [5, 4, 5], "from": {"random": {"seed": 12}}}}},
      {"name": "one matrix, 1x1", "inputs": {"A": {"kind": "array", "shape": [1, 1], "from": {"random": {"seed": 9}}},
                                              "B": {"kind": "array", "shape": [1, 1], "from": {"random": {"seed": 10}}}}}
    ])";
    if (vbatched) {
      doc += ". Variable sizes: sizes [..., 3] (i32) holds each product's m, n and k; op(A)'s and op(B)'s leading m x k and k x n "
             "blocks of the padded batch are multiplied (the padding never read), C's m x n block is written and the rest of C is "
             "zero; info (optional) per product: 0, or -1 for sizes outside the padded ones or negative (that C all zero)";
      operands.push_back(sdk::optional_out("info", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32),
                                           "i32 per product [...]: 0, or -1 for sizes outside 0..M, 0..N, 0..K"));
      operands.push_back(sdk::in("sizes", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32), "m, n and k of each product [..., 3]"));
      test_cases = R"([
      {"name": "sizes within 5x4 by 4x6, bad ones", "inputs": {"A": {"kind": "array", "shape": [6, 5, 4], "from": {"random": {"seed": 1}}},
                                                              "B": {"kind": "array", "shape": [6, 4, 6], "from": {"random": {"seed": 2}}},
                                                              "sizes": {"kind": "array", "dtype": "i32", "shape": [6, 3],
                                                                        "value": [[5, 6, 4], [1, 1, 1], [0, 3, 2], [3, 2, 0], [6, 1, 1], [2, 2, -1]]}}},
      {"name": "A^T B^H within 40x40, in teams", "attrs": {"trans_a": "T", "trans_b": "C"},
       "inputs": {"A": {"kind": "array", "shape": [3, 40, 40], "from": {"random": {"seed": 3}}},
                  "B": {"kind": "array", "shape": [3, 40, 40], "from": {"random": {"seed": 4}}},
                  "sizes": {"kind": "array", "dtype": "i32", "shape": [3, 3], "value": [[40, 40, 40], [17, 33, 9], [2, 39, 25]]}}}
    ])";
    }
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    require_matrices(a, "A");
    require_matrices(b, "B");
    call.number_for("alpha", a.dtype);  // a literal in the kernel
    const bool ta = transpose_of(call, "trans_a") != 'N', tb = transpose_of(call, "trans_b") != 'N';
    if (batch_shape(a) != batch_shape(b))
      throw sdk::InvalidArgument("operands A " + sdk::type_string(a) + " and B " + sdk::type_string(b) +
                                 ": their batch axes (all but the last two) must be equal");
    const int64_t ka = ta ? rows_of(a) : columns_of(a), kb = tb ? columns_of(b) : rows_of(b);
    if (ka != kb)
      throw sdk::InvalidArgument("op(A) has " + std::to_string(ka) + " columns but op(B) " + std::to_string(kb) +
                                 " rows (A " + sdk::type_string(a) + ", trans_a \"" + call.string("trans_a") + "\"; B " +
                                 sdk::type_string(b) + ", trans_b \"" + call.string("trans_b") + "\")");
    if (a.dtype != b.dtype)
      throw sdk::InvalidArgument(std::string("operand A is ") + abi::dtype_name(a.dtype) + ", B " + abi::dtype_name(b.dtype) +
                                 ": they must have one dtype");
    std::vector<int64_t> shape = batch_shape(a);
    shape.push_back(ta ? columns_of(a) : rows_of(a));
    shape.push_back(tb ? rows_of(b) : columns_of(b));
    types[kC] = sdk::make_type(FUGUE_KIND_ARRAY, a.dtype, shape);
    if (vbatched_) {
      const fugue_type& sizes = call.operand(kSizes);
      std::vector<int64_t> expected = batch_shape(a);
      expected.push_back(3);
      if (sdk::shape_of(sizes) != expected)
        throw sdk::InvalidArgument("operand sizes: expected m, n and k of each product, " +
                                   sdk::type_string(sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, expected)) + ", found " + sdk::type_string(sizes));
      types[kInfo] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a));
    }
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    if (spread(call, s, vbatched_)) {
      const uint64_t value = abi::dtype_size(call.operand(kA).dtype);
      return device_plan(call, spread_variant(tuning_of(call), s.m, s.n, spread_tile(call.device(), value)));
    }
    if (spread_vectors(call, s, vbatched_))
      return device_plan(call, spread_vectors_variant(tuning_of(call), s.m, s.n, s.k, call.operand(kA).dtype, call.device()));
    if (const std::optional<MmaShape> mma = mma_of(call, s)) {
      sdk::Plan plan = team_plan(batch_count(call.operand(kA)), mma->team());
      plan.partitions = {matrix_batch(call.operand(kA)), matrix_batch(call.operand(kB)), matrix_batch(call.operand(kC))};
      if (vbatched_) {
        plan.partitions.push_back(value_batch(call.operand(kInfo)));
        plan.partitions.push_back(vector_batch(call.operand(kSizes)));
      }
      // A lane's accumulators and fragments, and its share of the next chunk read ahead.
      plan.registers = static_cast<uint32_t>(mma->tm * mma->tn * 4 + mma->tm * 4 + mma->tn * 2 +
                                             (mma->panel_rows() + mma->panel_columns()) * mma->depth / mma->team() + 12);
      plan.local_mem_bytes = mma->local_bytes();
      plan.variant = mma_variant(*mma, tuning_of(call), call.device());
      return plan;
    }
    const std::optional<TileShape> tiles = tiles_of(call, s);
    const std::optional<VectorShape> vectors = vectors_of(call, s);
    // Vector blocks: a work-item each (every one runs every trip, gemm_vectors.h), 256 at most.
    const int64_t vector_blocks = vectors ? vectors->blocks(s.m, s.n) : 0;
    sdk::Plan plan = team_plan(batch_count(call.operand(kA)), tiles ? tiles->team() : vectors ? std::min<int64_t>(vector_blocks, 256) : s.team);
    plan.partitions = {matrix_batch(call.operand(kA)), matrix_batch(call.operand(kB)), matrix_batch(call.operand(kC))};
    if (vbatched_) {
      plan.partitions.push_back(value_batch(call.operand(kInfo)));
      plan.partitions.push_back(vector_batch(call.operand(kSizes)));
    }
    // Values live per work-item (a complex one takes two registers).
    plan.registers = static_cast<uint32_t>((s.block_rows * s.block_cols + s.block_rows + s.block_cols) * (Scalars(call.operand(kA).dtype).complex ? 2 : 1) + 8);
    if (tiles) {
      const TileShape& t = *tiles;
      const fugue_dtype dtype = call.operand(kA).dtype;
      plan.registers = static_cast<uint32_t>((t.rr * t.cc + t.rr + t.cc) * (Scalars(dtype).complex ? 2 : 1) + 12);
      plan.local_mem_bytes = t.local_bytes(static_cast<int64_t>(abi::dtype_size(dtype)));
      const Tuning tu = tuning_of(call);
      plan.variant = "tiles: C in panels of " + std::to_string(t.panel_rows()) + " x " + std::to_string(t.panel_columns()) + ", a " +
                     std::to_string(t.tp) + " x " + std::to_string(t.tq) + " grid of work-items each " + std::to_string(t.rr) + " x " +
                     std::to_string(t.cc) + " of it in registers, k staged " + std::to_string(t.depth) + " at a time in local memory" + (t.prefetch ? ", the next read ahead" : "") + " (m, n >= " +
                     std::to_string(tu.tile_order) + "); " + tu.row;
      return plan;
    }
    if (vectors) {
      const VectorShape& v = *vectors;
      const int64_t blocks = vector_blocks, team = plan.launch.local_max;
      plan.registers = static_cast<uint32_t>((v.rows + 1) * v.width + 8);
      const Tuning tu = tuning_of(call);
      plan.variant = "vectors: blocks of C of " + std::to_string(v.rows) + " x " + std::to_string(v.width) + " (a " +
                     Scalars(call.operand(kA).dtype).type + std::to_string(v.width) + " a row, the device's native width " +
                     std::to_string(sdk::native_vector_width(&call.device(), call.operand(kA).dtype)) + ") per work-item, " +
                     (team == 1 ? std::string("one work-item") : "a team of " + std::to_string(team)) + " per product (" + std::to_string(blocks) +
                     " block" + (blocks > 1 ? "s" : "") + "), k in order; " + tu.row;
      return plan;
    }
    // Blocks leave walks_rows unset: rows of A a spare element apart went both ways on the H100 (20,000
    // products of 16: f32 0.042 -> 0.038 ms in one call, 0.041 -> 0.046 in the next; f64 0.062 -> 0.062,
    // 0.076 -> 0.083).
    plan.variant = "blocks of C of " + std::to_string(s.block_rows) + " x " + std::to_string(s.block_cols) + " per work-item, " +
                   (s.team == 1 ? std::string("one work-item") : "a team of " + std::to_string(s.team)) + " per product (" + std::to_string(s.blocks) +
                   " block" + (s.blocks > 1 ? "s" : "") + ")";
    return plan;
  }

  // The spread tiles or vector blocks (gemm_spread.h), a kernel of their own.
  void execute(const sdk::Call& call, const fugue_device_services& services) const override {
    const Sizes s = sizes_of(call);
    if (spread_vectors(call, s, vbatched_)) {
      spread_vectors_gemm(call, services, kA, kB, kC, transpose_of(call, "trans_a"), transpose_of(call, "trans_b"), s.m, s.n, s.k, call.number("alpha"));
      return;
    }
    spread_gemm(call, services, kA, kB, kC, transpose_of(call, "trans_a"), transpose_of(call, "trans_b"), batch_count(call.operand(kA)), s.m, s.n, s.k,
                call.number("alpha"));
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    Sizes s = sizes_of(call);
    s.team = em.local_size();  // the plan's: blocks of C (sizes_of) or the tiles' team
    const fugue_dtype dtype = call.operand(kA).dtype;
    const Scalars sc(dtype);
    const std::string t = sc.type, lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID);
    const int64_t block_columns = (s.n + s.block_cols - 1) / s.block_cols;
    std::map<std::string, std::string> vars = {{"t", t}, {"M", std::to_string(s.m)}, {"N", std::to_string(s.n)},
                                               {"K", std::to_string(s.k)}, {"BC", std::to_string(block_columns)},
                                               {"R", std::to_string(s.block_rows)}, {"C", std::to_string(s.block_cols)}};
    for (const char* v : {"q", "b", "i0", "j0", "kk", "acc", "x", "y"}) vars[v] = em.name(v);
    const std::string kk = vars["kk"], lda = std::to_string(columns_of(call.operand(kA))), ldb = std::to_string(columns_of(call.operand(kB)));
    // op(A)(i, kk) and op(B)(kk, j), rows and columns clamped into the matrix (blocks past its edge compute
    // values never written).
    // Variable sizes: this product's m, n and k (checked: 0 for a bad triple), reads past them zero.
    std::string prelude;
    const std::string me = em.name("me"), ne = em.name("ne"), ke = em.name("ke"), bad = em.name("bad_sizes");
    if (vbatched_) {
      prelude = "const int " + me + "_r = " + em.read_at(kSizes, "0") + ", " + ne + "_r = " + em.read_at(kSizes, "1") + ", " + ke +
                "_r = " + em.read_at(kSizes, "2") + ";\n";
      prelude += "const bool " + bad + " = " + me + "_r < 0 || " + me + "_r > " + vars["M"] + " || " + ne + "_r < 0 || " + ne + "_r > " + vars["N"] +
                 " || " + ke + "_r < 0 || " + ke + "_r > " + vars["K"] + ";\n";
      prelude += "const int " + me + " = " + bad + " ? 0 : " + me + "_r, " + ne + " = " + bad + " ? 0 : " + ne + "_r, " + ke + " = " + bad + " ? 0 : " + ke +
                 "_r;\n";
      prelude += "if (" + lane + " == 0) " + em.write_at(kInfo, "0") + " = " + bad + " ? -1 : 0;\n";
      vars["K"] = ke;  // the inner loop stops at this product's k (no barrier inside it)
    }
    auto a_at = [&](const std::string& i) {
      const std::string v = em.read_at(kA, s.ta ? "(" + kk + ") * " + lda + " + " + i : "(" + i + ") * " + lda + " + " + kk);
      return vbatched_ ? "(" + i + " < " + me + " ? " + (s.ca ? sc.conj(v) : v) + " : " + sc.literal(0) + ")" : s.ca ? sc.conj(v) : v;
    };
    auto b_at = [&](const std::string& j) {
      const std::string v = em.read_at(kB, s.tb ? "(" + j + ") * " + ldb + " + " + kk : "(" + kk + ") * " + ldb + " + " + j);
      return vbatched_ ? "(" + j + " < " + ne + " ? " + (s.cb ? sc.conj(v) : v) + " : " + sc.literal(0) + ")" : s.cb ? sc.conj(v) : v;
    };
    // C written over A or B (the program names the same array): every block is computed before any is
    // written, the work-item's blocks kept in registers, a barrier between.
    const bool over_input = em.write_at(kC, "0") == em.read_at(kA, "0") || em.write_at(kC, "0") == em.read_at(kB, "0");
    const double alpha = call.number("alpha");
    // C(i, j) = value, scaled by alpha (0: zeros whatever A and B hold, BLAS's rule: Inf or NaN in them
    // does not reach C), variable sizes' padding zero; a real alpha scales both parts of a complex value.
    auto c_value = [&](const std::string& i, const std::string& j, const std::string& acc_value) {
      std::string value = alpha == 0 ? sc.literal(0) : acc_value;
      if (alpha != 1 && alpha != 0) value = sc.real(alpha) + " * " + value;
      if (vbatched_) value = "(" + i + " < " + me + " && " + j + " < " + ne + " ? " + value + " : " + sc.literal(0) + ")";
      return value;
    };
    // What the tiles and the vectors read and write: op(A)(i, k), op(B)(k, j) and C(i, j).
    TileOperands ops;
    ops.m = s.m;
    ops.n = s.n;
    ops.k = s.k;
    ops.a_k_contiguous = !s.ta;
    ops.b_j_contiguous = !s.tb;
    ops.a_at = [&](const std::string& i, const std::string& k) {
      const std::string v = em.read_at(kA, s.ta ? "(" + k + ") * " + lda + " + " + i : "(" + i + ") * " + lda + " + " + k);
      const std::string c = s.ca ? sc.conj(v) : v;
      return vbatched_ ? "(" + i + " < " + me + " && " + k + " < " + ke + " ? " + c + " : " + sc.literal(0) + ")" : c;
    };
    ops.b_at = [&](const std::string& k, const std::string& j) {
      const std::string v = em.read_at(kB, s.tb ? "(" + j + ") * " + ldb + " + " + k : "(" + k + ") * " + ldb + " + " + j);
      const std::string c = s.cb ? sc.conj(v) : v;
      return vbatched_ ? "(" + j + " < " + ne + " && " + k + " < " + ke + " ? " + c + " : " + sc.literal(0) + ")" : c;
    };
    ops.store = [&](const std::string& i, const std::string& j, const std::string& acc_value) {
      return em.write_at(kC, "(" + i + ") * " + vars["N"] + " + " + j) + " = " + c_value(i, j, acc_value) + ";";
    };
    // Tiles: every value of A and B is read before C is first written when the product is one panel, so
    // C may be written over them; several panels read them again after writing, and take blocks below
    // in the tiles' team (explain still names the tiles: the plan cannot see that C is A or B).
    // The tensor cores' panels likewise; C over its input in several of them takes the blocks (not the
    // tiles: the plan declared the tensor cores' local memory).
    const std::optional<MmaShape> mma = mma_of(call, s);
    if (mma && s.team == mma->team()) {
      const int64_t panels = ((s.m + mma->panel_rows() - 1) / mma->panel_rows()) * ((s.n + mma->panel_columns() - 1) / mma->panel_columns());
      if (!over_input || panels == 1) {
        em.append(prelude + mma_product(em, sc, *mma, ops, lane));
        return;
      }
    }
    if (const std::optional<TileShape> tiles = tiles_of(call, s); !mma && tiles && s.team == tiles->team()) {
      const int64_t panels = ((s.m + tiles->panel_rows() - 1) / tiles->panel_rows()) * ((s.n + tiles->panel_columns() - 1) / tiles->panel_columns());
      if (!over_input || panels == 1) {
        em.append(prelude + tiled_product(em, sc, *tiles, ops, lane));
        return;
      }
    }
    // CPUs: blocks of one native vector (C written over A or B takes the blocks below, which keep
    // every block in registers until all are computed).
    if (const std::optional<VectorShape> vectors = vectors_of(call, s); vectors && !over_input) {
      em.append(prelude + vector_product([&](const std::string& stem) { return em.name(stem); }, sc, *vectors, ops, lane, s.team));
      return;
    }
    const int64_t trips = (s.blocks + s.team - 1) / s.team, block = s.block_rows * s.block_cols;
    if (over_input && s.blocks > kMaxBlocksInPlace)
      throw sdk::Unsupported("C is written over its input A or B, which is supported up to " +
                             std::to_string(kMaxBlocksInPlace * kBlock * kBlock) + " elements of C per matrix; this one has " +
                             std::to_string(s.m * s.n) + ": give C a name of its own");
    // acc(t): the accumulators of the block of trip t (trip 0 when blocks are written as they are computed).
    auto acc = [&](int64_t e) { return vars["acc"] + "[" + (over_input ? vars["q"] + "_b * " + std::to_string(block) + " + " : "") + std::to_string(e) + "]"; };
    std::string compute = fill("    const int $i0 = ($b / $BC) * $R, $j0 = ($b % $BC) * $C;\n", vars);
    if (!over_input) compute += fill("    $t $acc[$R * $C];\n", vars);
    for (int64_t e = 0; e < block; ++e) compute += "    " + acc(e) + " = " + sc.literal(0) + ";\n";
    compute += fill("    for (int $kk = 0; $kk < $K; ++$kk) {\n      $t $x[$R], $y[$C];\n", vars);
    for (int64_t r = 0; r < s.block_rows; ++r)
      compute += "      " + vars["x"] + "[" + std::to_string(r) + "] = " + a_at("min(" + vars["i0"] + " + " + std::to_string(r) + ", " + std::to_string(s.m - 1) + ")") + ";\n";
    for (int64_t c = 0; c < s.block_cols; ++c)
      compute += "      " + vars["y"] + "[" + std::to_string(c) + "] = " + b_at("min(" + vars["j0"] + " + " + std::to_string(c) + ", " + std::to_string(s.n - 1) + ")") + ";\n";
    for (int64_t r = 0; r < s.block_rows; ++r)
      for (int64_t c = 0; c < s.block_cols; ++c)
        compute += "      " + acc(r * s.block_cols + c) + " += " +
                   sc.mul(vars["x"] + "[" + std::to_string(r) + "]", vars["y"] + "[" + std::to_string(c) + "]") + ";\n";
    compute += "    }\n";
    std::string write = over_input ? fill("    const int $i0 = ($b / $BC) * $R, $j0 = ($b % $BC) * $C;\n", vars) : "";
    for (int64_t r = 0; r < s.block_rows; ++r)
      for (int64_t c = 0; c < s.block_cols; ++c) {
        const std::string i = vars["i0"] + " + " + std::to_string(r), j = vars["j0"] + " + " + std::to_string(c);
        const std::string value = c_value(i, j, acc(r * s.block_cols + c));
        write += "    if (" + i + " < " + vars["M"] + " && " + j + " < " + vars["N"] + ") " + em.write_at(kC, "(" + i + ") * " + vars["N"] + " + " + j) +
                 " = " + value + ";\n";
      }
    if (!over_input) {
      em.append(prelude + team_loop(vars["q"] + "_b", lane, s.team, vars["b"], s.blocks, std::to_string(s.blocks), compute + write));
      return;
    }
    // Uniform trips (the loop counter numbers the work-item's blocks), the block tested inside.
    auto blocks_loop = [&](const std::string& body) {
      return fill("for (int $q_b = 0; $q_b < ", (vars["q_b"] = vars["q"] + "_b", vars)) + std::to_string(trips) + "; ++" + vars["q_b"] +
             ") {\n  const int " + vars["b"] + " = " + vars["q_b"] + " * " + std::to_string(s.team) + " + " + lane + ";\n  if (" + vars["b"] +
             " < " + std::to_string(s.blocks) + ") {\n" + body + "  }\n}\n";
    };
    em.append(prelude + t + " " + vars["acc"] + "[" + std::to_string(trips * block) + "];\n" + blocks_loop(compute) + em.barrier() + "\n" + blocks_loop(write));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const Sizes s = sizes_of(call);
    const double count = static_cast<double>(batch_count(call.operand(kA))), size = abi::dtype_size(call.operand(kA).dtype);
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    // A complex multiply-add is 8 real operations.
    return {sizeof(fugue_cost), count * (m * k + k * n + m * n) * size, count * (Scalars(call.operand(kA).dtype).complex ? 8 : 2) * m * n * k};
  }

  // In extended precision, complex throughout (reals have no imaginary part).
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    using Z = std::complex<long double>;
    const sdk::HostView a(arrays[kA]), b(arrays[kB]);
    sdk::HostView c(arrays[kC]);
    const Sizes s = sizes_of(call);
    const bool complex = Scalars(call.operand(kA).dtype).complex;
    const int64_t count = batch_count(call.operand(kA));
    const int64_t lda = columns_of(call.operand(kA)), ldb = columns_of(call.operand(kB));
    const long double alpha = call.number("alpha");
    auto get = [](const sdk::HostView& h, int64_t i, bool conjugate) {
      const std::complex<double> z = h.get_complex(i);
      return Z(z.real(), conjugate ? -z.imag() : z.imag());
    };
    for (int64_t e = 0; e < count; ++e) {
      // Variable sizes: this product's (checked) m, n and k.
      int64_t me = s.m, ne = s.n, ke = s.k;
      if (vbatched_) {
        const sdk::HostView sizes(arrays[kSizes]);
        me = sizes.get_int(e * 3);
        ne = sizes.get_int(e * 3 + 1);
        ke = sizes.get_int(e * 3 + 2);
        const bool bad = me < 0 || me > s.m || ne < 0 || ne > s.n || ke < 0 || ke > s.k;
        if (bad) me = ne = ke = 0;
        sdk::HostView(arrays[kInfo]).set_int(e, bad ? -1 : 0);
      }
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          Z sum = 0;
          for (int64_t kk = 0; kk < ke && i < me && j < ne; ++kk)
            sum += get(a, e * s.m * s.k + (s.ta ? kk * lda + i : i * lda + kk), s.ca) * get(b, e * s.k * s.n + (s.tb ? j * ldb + kk : kk * ldb + j), s.cb);
          const Z z = alpha == 0 ? Z(0) : alpha * sum;
          if (complex) c.set_complex(e * s.m * s.n + i * s.n + j, {static_cast<double>(z.real()), static_cast<double>(z.imag())});
          else c.set(e * s.m * s.n + i * s.n + j, static_cast<double>(z.real()));
        }
    }
  }
 private:
  bool vbatched_;
};

}  // namespace

std::unique_ptr<sdk::Operation> gemm_operation() { return std::make_unique<Gemm>(false); }
std::unique_ptr<sdk::Operation> gemm_vbatched_operation() { return std::make_unique<Gemm>(true); }

}  // namespace fugue::linalg
