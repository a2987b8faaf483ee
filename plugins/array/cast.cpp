// cast.cpp: array.cast.
#include "cast.h"

#include "dtypes.h"
#include "opencl_c.h"
#include "reference_math.h"
#include "typing.h"

namespace fugue::array {

namespace {
enum : uint32_t { kX, kOut };
}

Cast::Cast() {
  name = "array.cast";
  traits = FUGUE_OP_RUNTIME_EXTENTS;  // walks x through the accessors: the elements present
  doc = "x converted to attribute dtype; float to integer and wider to narrower integer saturate; "
        "real to complex is re + 0i, complex to real is refused (use array.real or array.abs)";
  operands = {
      sdk::in("x", kArrayOrScalar, kAllDtypes, "the values to convert"),
      sdk::out("out", kArrayOrScalar, kAllDtypes, "x in the new dtype, of its kind and shape"),
  };
  attrs = {{"dtype", FUGUE_ATTR_DTYPE, true, 0, "", "the dtype to convert to"}};
  set_tolerance(*this, kRounding);
  test_low = -10;  // wide enough that conversions to integers are not all 0
  test_high = 10;
}

void Cast::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_dtype to = call.dtype("dtype");
  if (to == FUGUE_DTYPE_NONE)
    throw rejection(name, "attribute dtype", "one of " + sdk::dtype_names(kAllDtypes), "none");
  const fugue_dtype from = call.operand(kX).dtype;
  if (is_complex(from) && !is_complex(to))
    throw rejection(name, "attribute dtype",
                    std::string("a complex dtype for complex x (") + sdk::dtype_name(from) +
                        "; for a real result, take array.real or array.abs of x)",
                    sdk::dtype_name(to));
  fugue_type out = call.operand(kX);
  out.dtype = to;
  types[kOut] = out;
}

std::string Cast::element_code(const sdk::Call& call) const {
  const fugue_dtype from = call.operand(kX).dtype, to = call.operand(kOut).dtype;
  return "  ${out=} = " + opencl::convert(from, to, opencl::cast(from, "${x}")) + ";\n";
}

void Cast::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_dtype from = call.operand(kX).dtype, to = call.operand(kOut).dtype;
  const sdk::HostView x(operands[kX]);
  sdk::HostView out(operands[kOut]);
  // Complex results take the real conversion to their parts' dtype as the real part.
  const fugue_dtype to_real = component(to);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (is_complex(from))
      out.set_complex(i, x.get_complex(i));  // rounds each part once for c64
    else if (is_complex(to) && sdk::is_float(from))
      out.set_complex(i, x.get(i));
    else if (is_complex(to))
      out.set_complex(i, to_real == FUGUE_DTYPE_F32
                             ? static_cast<double>(static_cast<float>(x.get_int(i)))
                             : static_cast<double>(x.get_int(i)));
    else if (sdk::is_float(from) && sdk::is_float(to))
      out.set(i, x.get(i));  // a double rounds to f32 once, in set
    else if (sdk::is_float(to))
      // Round the integer once, straight to the dtype: through double, an i64 could round twice.
      out.set(i, to == FUGUE_DTYPE_F32 ? static_cast<double>(static_cast<float>(x.get_int(i)))
                                       : static_cast<double>(x.get_int(i)));
    else if (sdk::is_float(from))
      out.set_int(i, ref::saturate(x.get(i), to));
    else
      out.set_int(i, ref::convert_integer(x.get_int(i), from, to));
  }
}

}  // namespace fugue::array
