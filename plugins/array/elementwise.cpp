// elementwise.cpp: plans, costs and code of the element-wise operations, and MapOperation.
#include "elementwise.h"

#include <stdexcept>
#include <string>

#include "dtypes.h"
#include "opencl_c.h"
#include "typing.h"

namespace fugue::array {

sdk::Plan ElementwiseOperation::plan(const sdk::Call& call) const {
  sdk::Plan plan =
      sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, element_count(call.operand("out")));
  for (uint32_t i = 0; i < call.size(); ++i)
    if (!touches(i)) plan.partitions[i] = sdk::partition(FUGUE_PARTITION_NONE);
  plan.registers = call.size();
  return plan;
}

void ElementwiseOperation::emit(const sdk::Call& call, const sdk::Plan&,
                                const sdk::Emitter& emitter) const {
  if (emitter.phase() != FUGUE_PHASE_ELEMENT)
    throw std::logic_error(name + ": asked to emit phase " + std::to_string(emitter.phase()) +
                           ", but it plans only the ELEMENT phase");
  // A scope of its own, so that the locals of fused operations never meet.
  emitter.append("{\n" + emitter.format(element_code(call)) + "}\n");
}

fugue_cost ElementwiseOperation::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  for (uint32_t i = 0; i < call.size(); ++i)
    if (touches(i)) cost.bytes += traffic_bytes(call.operand(i), operands[i].role);
  cost.flops = flops_per_element * static_cast<double>(element_count(call.operand("out")));
  return cost;
}

Formula unary_formula(std::function<std::string(fugue_dtype, const std::string&)> device,
                      std::function<ref::Real(ref::Real)> real,
                      std::function<int64_t(int64_t)> integer,
                      std::function<ref::Complex(ref::Complex)> complex) {
  Formula f;
  f.device = [device](fugue_dtype dtype, const std::string& x, const std::string&) {
    return device(dtype, x);
  };
  if (real) f.real = [real](ref::Real x, ref::Real) { return real(x); };
  if (integer) f.integer = [integer](int64_t x, int64_t) { return integer(x); };
  if (complex) f.complex = [complex](ref::Complex x, ref::Complex) { return complex(x); };
  return f;
}

MapSpec unary_map(std::string name, std::string doc, uint32_t dtypes, Formula formula) {
  MapSpec spec;
  spec.name = std::move(name);
  spec.doc = std::move(doc);
  spec.inputs = {{"x", "the operand"}};
  spec.dtypes = dtypes;
  spec.formula = std::move(formula);
  return spec;
}

MapSpec binary_map(std::string name, std::string doc, uint32_t dtypes, Formula formula) {
  MapSpec spec = unary_map(std::move(name), std::move(doc), dtypes, std::move(formula));
  spec.inputs = {{"a", "the left operand"}, {"b", "the right operand"}};
  return spec;
}

MapOperation::MapOperation(MapSpec spec) : spec_(std::move(spec)) {
  name = "array." + spec_.name;
  doc = spec_.doc;
  // A const needs another input to take its dtype from.
  const uint32_t kinds = spec_.inputs.size() > 1 ? kArrayScalarOrConst : kArrayOrScalar;
  for (const MapInput& input : spec_.inputs) {
    inputs_.push_back(static_cast<uint32_t>(operands.size()));
    operands.push_back(sdk::in(input.name, kinds, spec_.dtypes, input.doc));
  }
  // The result's mask: the result dtype of each input dtype.
  uint32_t result_dtypes = 0;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if (spec_.dtypes & FUGUE_DTYPE_BIT(d)) result_dtypes |= FUGUE_DTYPE_BIT(result_dtype(d));
  if ((spec_.dtypes & kComplexDtypes) && !spec_.formula.complex)
    throw std::logic_error(name + " accepts complex dtypes but has no complex formula");
  operands.push_back(sdk::out("out", kArrayOrScalar, result_dtypes,
                              "the result: an array of the array inputs' shape, else a scalar"));
  flops_per_element = spec_.flops_per_element;
  set_tolerance(*this, spec_.tolerance);
  test_low = spec_.test_low;
  test_high = spec_.test_high;
  // Element by element through the accessors: the core runs them over the elements present.
  traits = spec_.traits | FUGUE_OP_RUNTIME_EXTENTS;
  test_cases = spec_.test_cases;
}

fugue_dtype MapOperation::result_dtype(fugue_dtype computed_in) const {
  if (spec_.result != FUGUE_DTYPE_NONE) return spec_.result;
  return spec_.result_rule ? spec_.result_rule(computed_in) : computed_in;
}

void MapOperation::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_dtype dtype = common_dtype(call, name, inputs_);
  types[call.index("out")] = broadcast(call, name, inputs_, result_dtype(dtype));
}

std::string MapOperation::element_code(const sdk::Call& call) const {
  const fugue_dtype dtype = common_dtype(call, name, inputs_);
  std::string code;
  std::string args[2];
  for (size_t k = 0; k < spec_.inputs.size(); ++k) {
    code += "  " + opencl::load(dtype, spec_.inputs[k].name, call.operand(inputs_[k]).kind);
    args[k] = "${@" + spec_.inputs[k].name + "}";
  }
  const std::string value = spec_.formula.device(dtype, args[0], args[1]);
  return code + "  ${out=} = " + opencl::cast(result_dtype(dtype), value) + ";\n";
}

void MapOperation::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_dtype dtype = common_dtype(call, name, inputs_);
  const bool binary = inputs_.size() > 1;
  const sdk::HostView x(operands[inputs_[0]]);
  const sdk::HostView y(operands[inputs_[binary ? 1 : 0]]);  // unary formulas ignore y
  sdk::HostView out(operands[call.index("out")]);
  const bool complex = is_complex(dtype) || is_complex(out.dtype());
  for (int64_t i = 0; i < out.size(); ++i) {
    if (complex) {
      const ref::Complex v =
          spec_.formula.complex(ref::complex_value(x, i, dtype), ref::complex_value(y, i, dtype));
      // set_complex keeps the real part for a real out.
      out.set_complex(i, {static_cast<double>(v.real()), static_cast<double>(v.imag())});
    } else if (sdk::is_float(dtype))
      out.set(i, static_cast<double>(
                     spec_.formula.real(ref::value(x, i, dtype), ref::value(y, i, dtype))));
    else
      out.set_int(i, spec_.formula.integer(x.get_int(i), y.get_int(i)));
  }
}

std::vector<std::unique_ptr<sdk::Operation>> map_operations(const std::vector<MapSpec>& specs) {
  std::vector<std::unique_ptr<sdk::Operation>> ops;
  for (const MapSpec& spec : specs) ops.push_back(std::make_unique<MapOperation>(spec));
  return ops;
}

}  // namespace fugue::array
