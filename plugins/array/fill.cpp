// fill.cpp: array.fill.
#include "fill.h"

#include "dtypes.h"
#include "opencl_c.h"
#include "typing.h"

namespace fugue::array {

namespace {
enum : uint32_t { kLike, kOut };
}

Fill::Fill() {
  name = "array.fill";
  doc = "An array of attribute `value` (value + 0i for a complex dtype), of the shape of `like` (a "
        "scalar when `like` is one)";
  operands = {
      sdk::in("like", kArrayOrScalar, kAllDtypes,
              "lends its shape, and its dtype unless attribute dtype is given; never read"),
      sdk::out("out", kArrayOrScalar, kAllDtypes, "value everywhere"),
  };
  attrs = {
      {"value", FUGUE_ATTR_NUMBER, true, 0, "", "the value; it must fit the dtype"},
      {"dtype", FUGUE_ATTR_DTYPE, false, 0, "", "the dtype of out; default: that of like"},
  };
  flops_per_element = 0;
  set_tolerance(*this, kRounding);
}

bool Fill::touches(uint32_t operand) const { return operand != kLike; }

fugue_dtype Fill::result_dtype(const sdk::Call& call) const {
  const fugue_dtype given = call.dtype("dtype");
  return given == FUGUE_DTYPE_NONE ? call.operand(kLike).dtype : given;
}

void Fill::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_dtype dtype = result_dtype(call);
  const double value = call.number("value");
  if (!fits(dtype, value))
    throw rejection(name, "attribute value",
                    fitting_values(dtype) + " (out is " + sdk::dtype_name(dtype) + ")",
                    number_text(value));
  fugue_type out = call.operand(kLike);
  out.dtype = dtype;
  types[kOut] = out;
}

std::string Fill::element_code(const sdk::Call& call) const {
  return "  ${out=} = " + opencl::literal(result_dtype(call), call.number("value")) + ";\n";
}

void Fill::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const double value = call.number("value");
  sdk::HostView out(operands[kOut]);
  for (int64_t i = 0; i < out.size(); ++i) out.set(i, value);
}

}  // namespace fugue::array
