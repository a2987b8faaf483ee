// reduce.cpp: array.reduce (see reduce.h).
#include "reduce.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dtypes.h"
#include "opencl_c.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kF = 0, kX = 1, kOut = 2;
// Rows along the last axis at least this long take a work-group each; shorter ones a work-item each.
constexpr int64_t kLongRow = 64;
constexpr int64_t kMaxLocal = 256;

enum class Variant { Whole, Rows, Strided };

// x seen as [before, along, after] around the reduced axis.
struct Geometry {
  uint32_t axis = 0;
  int64_t before = 1, along = 1, after = 1;
};

class Reduce final : public sdk::Operation {
 public:
  Reduce() {
    name = "array.reduce";
    doc = "x combined along attribute `axis` (negative counts from the end) by the user function f(a, b), which must be "
          "associative and commutative and return its arguments' dtype: the result has x's shape without that axis (a "
          "scalar for a 1-D x). Elements meet in an order of the device's choosing";
    operands = {sdk::in("f", FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION), kAllDtypes,
                        "a function of two parameters, called with two values of x's dtype"),
                sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "the array to reduce (rank >= 1, no empty axis)"),
                sdk::out("out", kArrayOrScalar, kAllDtypes, "x's shape without the axis, of x's dtype")};
    attrs = {{"axis", FUGUE_ATTR_INT, false, -1, "", "the axis to reduce; -1 the last"}};
    set_tolerance(*this, kSummation);
    test_low = 0.1;
    test_high = 1;
    const std::string max_fn =
        R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.maximum", "out": ["m"], "in": ["a", "b"]}], "result": "m"})";
    const std::string add_fn =
        R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"})";
    const std::string max_abs_fn =
        R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.abs", "out": ["p"], "in": ["a"]}, {"op": "array.abs", "out": ["q"], "in": ["b"]}, {"op": "array.maximum", "out": ["m"], "in": ["p", "q"]}], "result": "m"})";
    test_cases = R"([
      {"name": "maximum along the last axis, short rows", "shape": [7, 5], "inputs": {"f": )" + max_fn + R"(},
       "dtypes": ["f32", "f64", "i32", "i64", "u8", "u32"]},
      {"name": "sum along axis 0", "shape": [33, 4], "attrs": {"axis": 0}, "inputs": {"f": )" + add_fn + R"(},
       "dtypes": ["f32", "f64", "i32", "c64"]},
      {"name": "sum of long rows, one work-group each", "shape": [3, 333], "inputs": {"f": )" + add_fn + R"(},
       "dtypes": ["f32", "f64", "i64", "c128"]},
      {"name": "largest magnitude of a vector", "shape": [4099], "inputs": {"f": )" + max_abs_fn + R"(},
       "dtypes": ["f32", "f64", "i32"]},
      {"name": "middle axis", "shape": [3, 4, 5], "attrs": {"axis": -2}, "inputs": {"f": )" + max_abs_fn + R"(},
       "dtypes": ["f32", "i64"]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    const Geometry g = geometry(call);
    if (sdk::elements(x) == 0)
      throw rejection(name, "operand x", "an array with at least one element (a user function has no identity to "
                      "give an empty reduction)", describe(x));
    check_function(call);
    std::vector<int64_t> shape = sdk::shape_of(x);
    shape.erase(shape.begin() + g.axis);
    types[kOut] = shape.empty() ? sdk::make_type(FUGUE_KIND_SCALAR, x.dtype)
                                : sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, shape);
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& x = call.operand(kX);
    const fugue_dtype dtype = x.dtype;
    const Geometry g = geometry(call);
    const int64_t dsize = static_cast<int64_t>(dtype_bytes(dtype));
    sdk::Plan plan;
    switch (variant(call)) {
      case Variant::Whole:
        plan = sdk::elementwise_plan(call, FUGUE_LEVEL_ITEM, g.along);
        plan.phases = FUGUE_PHASE_PROLOGUE | FUGUE_PHASE_ELEMENT | FUGUE_PHASE_EPILOGUE | FUGUE_PHASE_FINALIZE;
        plan.launch.local_max = kMaxLocal;
        plan.launch.local_preferred = kMaxLocal;
        plan.workspaces = {{dtype, 1}, {FUGUE_DTYPE_I32, 1}};  // each group's result, and whether it has one
        plan.local_mem_bytes = static_cast<uint64_t>(kMaxLocal * (dsize + 4));
        plan.registers = 4;
        return plan;
      case Variant::Rows: {
        const fugue_type& out = call.operand(kOut);
        plan.level = FUGUE_LEVEL_BLOCK;
        plan.phases = FUGUE_PHASE_BODY;
        plan.launch.iteration[0] = g.before;
        plan.launch.local_min = 1;
        // No larger than a row, so that every work-item starts from an element of its own.
        plan.launch.local_max = std::min(kMaxLocal, g.along);
        plan.launch.local_multiple = 1;
        plan.launch.local_preferred = std::min(call.device().type == FUGUE_DEVICE_CPU ? int64_t{16} : int64_t{128}, g.along);
        plan.partitions = {sdk::partition(FUGUE_PARTITION_NONE), sdk::batch_partition(x.rank, static_cast<int32_t>(x.rank) - 2),
                           sdk::batch_partition(out.rank, static_cast<int32_t>(out.rank) - 1)};
        plan.local_mem_bytes = static_cast<uint64_t>(sdk::group_combine_scratch(kMaxLocal) * dsize);
        plan.registers = 4;
        return plan;
      }
      case Variant::Strided:
        plan = sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, g.before * g.after);
        plan.partitions[kX] = sdk::partition(FUGUE_PARTITION_WHOLE, x.rank);  // a column, read with strides
        plan.registers = 4;
        return plan;
    }
    throw std::logic_error("unknown variant");
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    switch (variant(call)) {
      case Variant::Whole: emit_whole(call, em); return;
      case Variant::Rows: emit_rows(call, em); return;
      case Variant::Strided: emit_strided(call, em); return;
    }
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kX)));
    return {sizeof(fugue_cost), traffic_bytes(call.operand(kX), FUGUE_ROLE_IN) +
                                    traffic_bytes(call.operand(kOut), FUGUE_ROLE_OUT),
            n};
  }

  // The pairs of each result's elements combined level by level: log2(along) evaluations of f over
  // every result at once.
  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const fugue_type& x = call.operand(kX);
    const Geometry g = geometry(call);
    const size_t es = dtype_bytes(x.dtype);
    const int64_t results = g.before * g.after;
    const auto* in = static_cast<const uint8_t*>(arrays[kX].data);
    // cur[r * width + k]: the k-th partial of result r.
    int64_t width = g.along;
    std::vector<uint8_t> cur(static_cast<size_t>(results * width) * es);
    for (int64_t a = 0; a < g.before; ++a)
      for (int64_t b = 0; b < g.after; ++b)
        for (int64_t k = 0; k < g.along; ++k)
          std::memcpy(&cur[static_cast<size_t>((a * g.after + b) * width + k) * es],
                      in + static_cast<size_t>((a * g.along + k) * g.after + b) * es, es);
    const std::vector<fugue_dtype> dtypes = {x.dtype, x.dtype};
    while (width > 1) {
      const int64_t pairs = width / 2, next = pairs + width % 2;
      std::vector<uint8_t> lhs(static_cast<size_t>(results * pairs) * es), rhs(lhs.size()), res(lhs.size());
      for (int64_t r = 0; r < results; ++r)
        for (int64_t k = 0; k < pairs; ++k) {
          std::memcpy(&lhs[static_cast<size_t>(r * pairs + k) * es], &cur[static_cast<size_t>(r * width + 2 * k) * es], es);
          std::memcpy(&rhs[static_cast<size_t>(r * pairs + k) * es], &cur[static_cast<size_t>(r * width + 2 * k + 1) * es], es);
        }
      call.evaluate(kF, dtypes, {lhs.data(), rhs.data()}, static_cast<uint64_t>(results * pairs), res.data());
      std::vector<uint8_t> folded(static_cast<size_t>(results * next) * es);
      for (int64_t r = 0; r < results; ++r) {
        std::memcpy(&folded[static_cast<size_t>(r * next) * es], &res[static_cast<size_t>(r * pairs) * es],
                    static_cast<size_t>(pairs) * es);
        if (width % 2)
          std::memcpy(&folded[static_cast<size_t>(r * next + pairs) * es], &cur[static_cast<size_t>(r * width + width - 1) * es], es);
      }
      cur.swap(folded);
      width = next;
    }
    std::memcpy(arrays[kOut].data, cur.data(), cur.size());
  }

 private:
  Geometry geometry(const sdk::Call& call) const {
    const fugue_type& x = call.operand(kX);
    const int64_t axis = call.integer("axis"), rank = x.rank;
    if (rank < 1) throw rejection(name, "operand x", "an array of rank >= 1", describe(x));
    if (axis < -rank || axis >= rank)
      throw rejection(name, "attribute axis", "an axis of x, from " + std::to_string(-rank) + " to " + std::to_string(rank - 1),
                      std::to_string(axis));
    Geometry g;
    g.axis = static_cast<uint32_t>(axis < 0 ? axis + rank : axis);
    for (uint32_t d = 0; d < x.rank; ++d) {
      if (d < g.axis) g.before *= x.shape[d];
      else if (d == g.axis) g.along = x.shape[d];
      else g.after *= x.shape[d];
    }
    return g;
  }

  Variant variant(const sdk::Call& call) const {
    const fugue_type& x = call.operand(kX);
    const Geometry g = geometry(call);
    if (x.rank == 1) return Variant::Whole;
    if (g.after == 1 && g.along >= kLongRow) return Variant::Rows;
    return Variant::Strided;
  }

  // f must take two of x's values and return one.
  void check_function(const sdk::Call& call) const {
    const fugue_dtype dtype = call.operand(kX).dtype;
    const uint32_t arity = call.function_arity(kF);
    if (arity != 2)
      throw rejection(name, "operand f", "a function of two parameters (a, b)", "one of " + std::to_string(arity));
    const fugue_dtype result = call.function_result(kF, {dtype, dtype});
    if (result != dtype)
      throw rejection(name, "operand f", std::string("a function returning its arguments' dtype (") + sdk::dtype_name(dtype) + ")",
                      std::string("one returning ") + sdk::dtype_name(result) + " for two " + sdk::dtype_name(dtype) +
                          " values (cast inside it)");
  }

  std::string combine(const sdk::Emitter& em, fugue_dtype dtype, const std::string& a, const std::string& b) const {
    return em.call_function(kF, {dtype, dtype}, {a, b});
  }

  // Combines the work-items' (value, has) pairs through raw local arrays (kernel scope) into
  // tree[0] / tree_has[0]; every work-item must reach it.
  std::string group_tree(const sdk::Emitter& em, fugue_dtype dtype, const std::string& acc, const std::string& has,
                         const std::string& tree, const std::string& tree_has) const {
    const std::string t = ctype(dtype), L = em.builtin(FUGUE_BUILTIN_LOCAL_SIZE);
    const std::string lid = em.name("lid"), live = em.name("live"), half = em.name("half");
    std::string code = "__local " + t + " " + tree + "[" + L + "];\n__local int " + tree_has + "[" + L + "];\n";
    code += "const int " + lid + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + ";\n";
    code += tree + "[" + lid + "] = " + acc + ";\n" + tree_has + "[" + lid + "] = " + has + ";\n";
    code += "barrier(CLK_LOCAL_MEM_FENCE);\n";
    code += "for (int " + live + " = " + L + "; " + live + " > 1;) {\n";
    code += "  const int " + half + " = (" + live + " + 1) / 2;\n";
    code += "  if (" + lid + " < " + live + " - " + half + " && " + tree_has + "[" + lid + " + " + half + "]) {\n";
    code += "    " + tree + "[" + lid + "] = " + tree_has + "[" + lid + "] ? " +
            combine(em, dtype, tree + "[" + lid + "]", tree + "[" + lid + " + " + half + "]") + " : " + tree + "[" + lid +
            " + " + half + "];\n";
    code += "    " + tree_has + "[" + lid + "] = 1;\n  }\n";
    code += "  barrier(CLK_LOCAL_MEM_FENCE);\n  " + live + " = " + half + ";\n}\n";
    return code;
  }

  void emit_whole(const sdk::Call& call, const sdk::Emitter& em) const {
    const fugue_dtype dtype = call.operand(kX).dtype;
    const std::string t = ctype(dtype), acc = em.name("acc"), has = em.name("has");
    switch (em.phase()) {
      case FUGUE_PHASE_PROLOGUE:  // at kernel scope: the loop and the epilogue use them
        em.append(t + " " + acc + " = " + opencl::cast(dtype, "0") + ";\nint " + has + " = 0;\n");
        return;
      case FUGUE_PHASE_ELEMENT: {
        const std::string v = em.name("v");
        em.append("const " + t + " " + v + " = " + em.read(kX) + ";\n" + acc + " = " + has + " ? " +
                  combine(em, dtype, acc, v) + " : " + v + ";\n" + has + " = 1;\n");
        return;
      }
      case FUGUE_PHASE_EPILOGUE: {
        const std::string tree = em.name("tree"), tree_has = em.name("tree_has");
        em.append(group_tree(em, dtype, acc, has, tree, tree_has) + "if (" + em.builtin(FUGUE_BUILTIN_LOCAL_ID) +
                  " == 0) {\n  " + em.workspace(0) + "[" + em.builtin(FUGUE_BUILTIN_GROUP_ID) + "] = " + tree + "[0];\n  " +
                  em.workspace(1) + "[" + em.builtin(FUGUE_BUILTIN_GROUP_ID) + "] = " + tree_has + "[0];\n}\n");
        return;
      }
      case FUGUE_PHASE_FINALIZE: {
        const std::string g = em.name("g"), facc = em.name("facc"), fhas = em.name("fhas"), tree = em.name("ftree"),
                          tree_has = em.name("ftree_has");
        std::string code = t + " " + facc + " = " + opencl::cast(dtype, "0") + ";\nint " + fhas + " = 0;\n";
        code += "for (int " + g + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + "; " + g + " < " +
                em.builtin(FUGUE_BUILTIN_NUM_GROUPS) + "; " + g + " += " + em.builtin(FUGUE_BUILTIN_LOCAL_SIZE) + ") {\n";
        code += "  if (!" + em.workspace(1) + "[" + g + "]) continue;\n";
        code += "  " + facc + " = " + fhas + " ? " + combine(em, dtype, facc, em.workspace(0) + "[" + g + "]") + " : " +
                em.workspace(0) + "[" + g + "];\n  " + fhas + " = 1;\n}\n";
        code += group_tree(em, dtype, facc, fhas, tree, tree_has);
        code += "if (" + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + " == 0) " + em.write(kOut) + " = " + tree + "[0];\n";
        em.append(code);
        return;
      }
    }
    throw std::logic_error(name + ": asked to emit phase " + std::to_string(em.phase()) + ", which it does not plan");
  }

  void emit_rows(const sdk::Call& call, const sdk::Emitter& em) const {
    const fugue_dtype dtype = call.operand(kX).dtype;
    const Geometry g = geometry(call);
    const std::string t = ctype(dtype), id = em.builtin(FUGUE_BUILTIN_LOCAL_ID), size = em.builtin(FUGUE_BUILTIN_LOCAL_SIZE);
    const std::string scratch = em.local_array(dtype, sdk::group_combine_scratch(em.local_size()), "combine");
    const std::string j = em.name("j"), acc = em.name("acc"), total = em.name("total");
    // The launch keeps the group no larger than a row: every work-item has an element of its own.
    std::string code = t + " " + acc + " = " + em.read_at(kX, id) + ";\n";
    code += "for (long " + j + " = " + id + " + " + size + "; " + j + " < " + std::to_string(g.along) + "L; " + j + " += " +
            size + ") " + acc + " = " + combine(em, dtype, acc, em.read_at(kX, j)) + ";\n";
    code += sdk::group_combine(em, t, acc, scratch, total,
                               [&](const std::string& a, const std::string& b) { return combine(em, dtype, a, b); });
    code += "if (" + id + " == 0) " + em.write_at(kOut, "0") + " = " + total + ";\n";
    em.append(code);
  }

  void emit_strided(const sdk::Call& call, const sdk::Emitter& em) const {
    const fugue_type& x = call.operand(kX);
    const Geometry g = geometry(call);
    // Extents as the core gives them (kernel arguments where it chooses), so new sizes reuse the kernel.
    std::string along = em.extent(kX, g.axis), after = "1L";
    for (uint32_t d = g.axis + 1; d < x.rank; ++d) after += " * " + em.extent(kX, d);
    const std::string t = ctype(x.dtype), o = em.name("o"), base = em.name("base"), stride = em.name("stride"),
                      r = em.name("r"), acc = em.name("acc");
    std::string code = "const long " + o + " = (long)(" + em.builtin(FUGUE_BUILTIN_INDEX) + ");\n";
    code += "const long " + stride + " = " + after + ";\n";
    code += "const long " + base + " = (" + o + " / " + stride + ") * " + along + " * " + stride + " + " + o + " % " + stride +
            ";\n";
    code += t + " " + acc + " = " + em.read_at(kX, base) + ";\n";
    code += "for (long " + r + " = 1; " + r + " < " + along + "; ++" + r + ") " + acc + " = " +
            combine(em, x.dtype, acc, em.read_at(kX, base + " + " + r + " * " + stride)) + ";\n";
    code += em.write(kOut) + " = " + acc + ";\n";
    em.append(code);
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> reduce_operation() { return std::make_unique<Reduce>(); }

}  // namespace fugue::array
