// select.cpp: array.select.
#include "select.h"

#include "opencl_c.h"
#include "reference_math.h"
#include "typing.h"

namespace fugue::array {

namespace {
enum : uint32_t { kCond, kA, kB, kOut };
}

Select::Select() {
  name = "array.select";
  traits = FUGUE_OP_RUNTIME_EXTENTS;  // walks x through the accessors: the elements present
  doc = "cond != 0 ? a : b, element by element; a and b of any dtype, cond real";
  operands = {
      sdk::in("cond", kArrayScalarOrConst, kRealDtypes, "where nonzero, out takes a; else b"),
      sdk::in("a", kArrayScalarOrConst, kAllDtypes, "the value where cond is nonzero"),
      sdk::in("b", kArrayScalarOrConst, kAllDtypes, "the value where cond is zero"),
      sdk::out("out", kArrayOrScalar, kAllDtypes,
               "the dtype of a and b; an array of the array inputs' shape, else a scalar"),
  };
  set_tolerance(*this, kRounding);
}

void Select::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_dtype dtype = common_dtype(call, name, {kA, kB});
  types[kOut] = broadcast(call, name, {kCond, kA, kB}, dtype);
}

std::string Select::element_code(const sdk::Call& call) const {
  const fugue_dtype dtype = call.operand(kOut).dtype;
  const std::string a = opencl::operand_value(dtype, "${a}", call.operand(kA).kind);
  const std::string b = opencl::operand_value(dtype, "${b}", call.operand(kB).kind);
  const fugue_type& cond = call.operand(kCond);
  if (cond.kind == FUGUE_KIND_CONST)
    return "  ${out=} = " + (cond.const_value != 0 ? a : b) + ";\n";
  return "  ${out=} = " + opencl::cast(cond.dtype, "${cond}") + " != 0 ? " + a + " : " + b + ";\n";
}

void Select::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_dtype dtype = call.operand(kOut).dtype;
  const sdk::HostView cond(operands[kCond]), a(operands[kA]), b(operands[kB]);
  sdk::HostView out(operands[kOut]);
  for (int64_t i = 0; i < out.size(); ++i) {
    // get() turns no nonzero integer into 0.0, and NaN != 0 holds, as on the device.
    const sdk::HostView& chosen = cond.get(i) != 0 ? a : b;
    if (sdk::is_complex(dtype)) {
      const ref::Complex v = ref::complex_value(chosen, i, dtype);
      out.set_complex(i, {static_cast<double>(v.real()), static_cast<double>(v.imag())});
    } else if (sdk::is_float(dtype))
      out.set(i, static_cast<double>(ref::value(chosen, i, dtype)));
    else
      out.set_int(i, chosen.get_int(i));
  }
}

}  // namespace fugue::array
