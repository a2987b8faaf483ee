// put.cpp: array.put, h[index, ...] = x. An ELEMENT-level operation over the elements of one row of h
// (h's shape without its first axis): h is partitioned SCATTER and written through write_at, each
// element by one work-item, so the element-wise operations that produce x fuse into the same kernel and
// x never reaches global memory. The index is a run-time value (a loop variable, a scalar an operation
// wrote): a kernel serves every step of a loop.
#include "put.h"

#include <cmath>
#include <string>
#include <vector>

#include "dtypes.h"
#include "opencl_c.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kH = 0, kX = 1, kIndex = 2;
constexpr uint32_t kIndexDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) |
                                  FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8);

// The elements of one row: h's shape without its first axis.
int64_t row_elements(const fugue_type& h) {
  int64_t n = 1;
  for (uint32_t a = 1; a < h.rank; ++a) n *= h.shape[a];
  return n;
}

class Put final : public sdk::Operation {
 public:
  Put() {
    name = "array.put";
    doc = "h[index, ...] = x, in place: row `index` of h (along its first axis) becomes x, an array of h's "
          "shape without its first axis or one value for the whole row; the other rows keep their values. "
          "index is an integer scalar, const or loop variable; outside 0 .. h's first extent - 1 nothing is "
          "written";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::inout("h", array, kAllDtypes, "the array written into, updated in place"),
                sdk::in("x", kArrayScalarOrConst, kAllDtypes, "the row written: h's shape without its first axis, or one value"),
                sdk::in("index", kArrayScalarOrConst, kIndexDtypes, "which row: an integer scalar, const or one-element array")};
    set_tolerance(*this, kRounding);
    test_cases = R"([
      {"name": "a row of a matrix", "shape": [6, 5],
       "inputs": {"x": {"shape": [5]}, "index": {"kind": "scalar", "dtype": "i64", "value": 3}}},
      {"name": "an element of a vector", "shape": [9],
       "inputs": {"x": {"kind": "scalar", "value": 2}, "index": {"kind": "const", "value": 0}}},
      {"name": "a plane of a 3-D array, one value", "shape": [4, 3, 7],
       "inputs": {"x": {"kind": "const", "value": 7}, "index": {"kind": "scalar", "dtype": "i32", "value": 2}}},
      {"name": "an index past the end writes nothing", "shape": [3, 4],
       "inputs": {"x": {"shape": [4]}, "index": {"kind": "scalar", "dtype": "i64", "value": 3}}},
      {"name": "a one-element index array", "shape": [5, 2],
       "inputs": {"x": {"shape": [2]}, "index": {"shape": [1], "dtype": "i32", "from": {"fill": 4}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& /*types*/) const override {
    const fugue_type& h = call.operand(kH);
    if (h.rank < 1) throw rejection(name, "operand h", "an array of rank 1 or more", describe(h));
    common_dtype(call, name, {kH, kX});
    const fugue_type& x = call.operand(kX);
    const std::vector<int64_t> row(h.shape + 1, h.shape + h.rank);
    if (x.kind == FUGUE_KIND_ARRAY && sdk::shape_of(x) != row)
      throw rejection(name, "operand x", "an array of h's shape without its first axis " + sdk::shape_string(row) +
                                             " or one value",
                      describe(x));
    const fugue_type& index = call.operand(kIndex);
    if (index.kind == FUGUE_KIND_ARRAY && sdk::elements(index) != 1)
      throw rejection(name, "operand index", "one integer (a scalar, a const or a one-element array)", describe(index));
    // Compared as doubles first: casting 2^63 or more to an integer is undefined.
    if (index.kind == FUGUE_KIND_CONST &&
        (!(std::abs(index.const_value) < 9.2e18) || index.const_value != static_cast<double>(static_cast<int64_t>(index.const_value))))
      throw rejection(name, "operand index", "an integer", describe(index));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& h = call.operand(kH);
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, row_elements(h));
    p.partitions[kH] = sdk::partition(FUGUE_PARTITION_SCATTER, h.rank);
    // Every work-item reads the one index.
    if (call.operand(kIndex).kind == FUGUE_KIND_ARRAY) p.partitions[kIndex] = sdk::partition(FUGUE_PARTITION_WHOLE);
    // A one-value x is read whole by every work-item too; an array x element by element.
    return p;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& h = call.operand(kH);
    const fugue_type& x = call.operand(kX);
    const fugue_type& index = call.operand(kIndex);
    const std::string row = std::to_string(row_elements(h)) + "L", rows = std::to_string(h.shape[0]) + "L";
    const std::string k = em.name("row");
    const std::string at = index.kind == FUGUE_KIND_CONST  ? std::to_string(static_cast<int64_t>(index.const_value)) + "L"
                           : index.kind == FUGUE_KIND_ARRAY ? "(long)(" + em.read_at(kIndex, "0") + ")"
                                                            : "(long)(" + em.read(kIndex) + ")";
    const std::string value = x.kind == FUGUE_KIND_CONST ? opencl::literal(h.dtype, x.const_value)
                                                         : "(" + ctype(h.dtype) + ")(" + em.read(kX) + ")";
    em.append("const long " + k + " = " + at + ";\n" +  //
              "if (" + k + " >= 0 && " + k + " < " + rows + ") " +
              em.write_at(kH, k + " * " + row + " + " + em.builtin(FUGUE_BUILTIN_INDEX)) + " = " + value + ";\n");
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& h = call.operand(kH);
    const double n = static_cast<double>(row_elements(h)), bytes = static_cast<double>(dtype_bytes(h.dtype));
    // The row written, and x read once when it is an array.
    return {sizeof(fugue_cost), n * bytes + traffic_bytes(call.operand(kX), FUGUE_ROLE_IN), 0};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    sdk::HostView h(arrays[kH]), x(arrays[kX]), index(arrays[kIndex]);
    const fugue_type& type = call.operand(kH);
    const int64_t k = index.get_int(0), row = row_elements(type);
    if (k < 0 || k >= type.shape[0]) return;
    for (int64_t i = 0; i < row; ++i) {
      if (abi::is_complex(h.dtype())) h.set_complex(k * row + i, x.get_complex(i));
      else if (is_integer(h.dtype())) h.set_int(k * row + i, x.get_int(i));
      else h.set(k * row + i, x.get(i));
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> put_operation() { return std::make_unique<Put>(); }

}  // namespace fugue::array
