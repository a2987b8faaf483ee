// typing.cpp: the dtype and shape rules of the array operations, with their error messages.
#include "typing.h"

#include "dtypes.h"

namespace fugue::array {

namespace {

std::string operand(const sdk::Call& call, uint32_t i) { return "operand " + call.operand_name(i); }

// "a and b", "cond, a and b".
std::string names(const sdk::Call& call, const std::vector<uint32_t>& inputs) {
  std::string s;
  for (size_t k = 0; k < inputs.size(); ++k)
    s += (k == 0 ? "" : k + 1 == inputs.size() ? " and " : ", ") + call.operand_name(inputs[k]);
  return s;
}

}  // namespace

std::string describe(const fugue_type& type) {
  if (type.kind == FUGUE_KIND_CONST) return "const " + number_text(type.const_value);
  return sdk::type_string(type);
}

// The core puts the operation's name in front of the message: `op` is not repeated.
sdk::InvalidArgument rejection(const std::string& /*op*/, const std::string& subject,
                               const std::string& expected, const std::string& found) {
  return sdk::InvalidArgument(subject + ": expected " + expected + ", found " + found);
}

fugue_dtype common_dtype(const sdk::Call& call, const std::string& op,
                         const std::vector<uint32_t>& inputs) {
  const uint32_t none = UINT32_MAX;
  uint32_t first = none;  // the input that sets the dtype
  for (uint32_t i : inputs) {
    const fugue_type& t = call.operand(i);
    if (t.kind == FUGUE_KIND_CONST) continue;
    if (first == none) {
      first = i;
    } else if (t.dtype != call.operand(first).dtype) {
      throw rejection(
          op, operand(call, i),
          std::string(sdk::dtype_name(call.operand(first).dtype)) + " like " + operand(call, first),
          describe(t));
    }
  }
  if (first == none)
    throw rejection(op, "operands " + names(call, inputs),
                    "an array or scalar among them to set the dtype", "only consts");
  const fugue_dtype dtype = call.operand(first).dtype;
  for (uint32_t i : inputs) {
    const fugue_type& t = call.operand(i);
    if (t.kind == FUGUE_KIND_CONST && !fits(dtype, t.const_value))
      throw rejection(op, operand(call, i),
                      fitting_values(dtype) + " (" + operand(call, first) + " makes the dtype " +
                          sdk::dtype_name(dtype) + ")",
                      describe(t));
  }
  return dtype;
}

sdk::Type broadcast(const sdk::Call& call, const std::string& op,
                     const std::vector<uint32_t>& inputs, fugue_dtype dtype) {
  const fugue_type* shape = nullptr;  // the first array input
  uint32_t shape_input = 0;
  for (uint32_t i : inputs) {
    const fugue_type& t = call.operand(i);
    if (t.kind != FUGUE_KIND_ARRAY) continue;
    if (!shape) {
      shape = &t;
      shape_input = i;
    } else if (!sdk::same_shape(t, *shape) || t.runtime_axes != shape->runtime_axes) {
      // A run-time length only meets its own kind: its rows are as many as the other's at run time.
      throw rejection(op, operand(call, i),
                      "shape " + sdk::shape_string(sdk::shape_of(*shape), shape->runtime_axes) + " like " +
                          operand(call, shape_input),
                      describe(t));
    }
  }
  if (!shape) return sdk::make_type(FUGUE_KIND_SCALAR, dtype);
  sdk::Type out = sdk::make_type(FUGUE_KIND_ARRAY, dtype, std::vector<int64_t>(shape->shape, shape->shape + shape->rank));
  out.runtime_axes = shape->runtime_axes;  // the result has the inputs' run-time length
  return out;
}

}  // namespace fugue::array
