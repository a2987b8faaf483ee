// reductions.cpp: the reductions' table, their device code (with the templates of
// kernels/array/reduce_*.cl) and their references.
#include "reductions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "dtypes.h"
#include "kernel_template.h"
#include "opencl_c.h"
#include "reduce_finalize_cl.h"
#include "reduce_group_cl.h"
#include "reduce_partial_cl.h"
#include "reference_math.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

const std::vector<ReductionSpec>& specs() {
  static const std::vector<ReductionSpec> table = {
      {"sum", "The sum of the elements of x (0 if it has none); integers wrap around", Term::Value,
       Combine::Sum, false, kAllDtypes, 1},
      {"min", "The smallest element of x, which must have one; floats ignore NaN, as fmin; a run-time-length "
       "x left with none gives NaN (floats) or the dtype's largest value (integers)",
       Term::Value, Combine::Min, false, kRealDtypes, 1},
      {"max", "The largest element of x, which must have one; floats ignore NaN, as fmax; a run-time-length "
       "x left with none gives NaN (floats) or the dtype's smallest value (integers)",
       Term::Value, Combine::Max, false, kRealDtypes, 1},
      // Complex: BLAS dotc, so that dot(x, x) is the squared norm.
      {"dot",
       "The sum of a[i] * b[i] (0 for empty arrays); integers wrap around; complex a is "
       "conjugated, sum(conj(a[i]) * b[i]), as BLAS dotc",
       Term::Product, Combine::Sum, false, kAllDtypes, 2},
      {"norm2", "The Euclidean norm of x, sqrt(sum of x[i]^2) (0 if it has no element)",
       Term::Square, Combine::Sum, true, kFloatDtypes, 2},
  };
  return table;
}

const char* combination_name(Combine c) {
  switch (c) {
    case Combine::Sum: return "sum";
    case Combine::Min: return "minimum";
    case Combine::Max: return "maximum";
  }
  return "?";
}

}  // namespace

Reduction::Reduction(ReductionSpec spec) : spec_(std::move(spec)) {
  name = "array." + spec_.name;
  traits = FUGUE_OP_RUNTIME_EXTENTS;  // walks x through the accessors: the elements present
  doc = spec_.doc;
  const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
  if (spec_.term == Term::Product) {
    operands = {sdk::in("a", array, spec_.dtypes, "the left factors"),
                sdk::in("b", array, spec_.dtypes, "the right factors, of a's shape and dtype")};
  } else {
    operands = {sdk::in("x", array, spec_.dtypes, "the elements to reduce, of any shape")};
  }
  for (uint32_t i = 0; i < operands.size(); ++i) inputs_.push_back(i);
  out_ = static_cast<uint32_t>(operands.size());
  operands.push_back(sdk::out("out", FUGUE_KIND_BIT(FUGUE_KIND_SCALAR), spec_.dtypes,
                              "the result, a device scalar of the inputs' dtype"));
  // min and max pick an element: nothing rounds.
  set_tolerance(*this, spec_.combine == Combine::Sum ? kSummation : kRounding);
  test_low = 0.1;  // all positive, so that sums do not cancel
  test_high = 1;
}

void Reduction::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_dtype dtype = common_dtype(call, name, inputs_);
  broadcast(call, name, inputs_, dtype);  // dot: a and b of one shape
  const fugue_type& x = call.operand(inputs_[0]);
  if (spec_.combine != Combine::Sum && sdk::elements(x) == 0)
    throw rejection(name, "operand " + call.operand_name(inputs_[0]),
                    std::string("at least one element (the ") + combination_name(spec_.combine) +
                        " of none is undefined)",
                    describe(x));
  types[out_] = sdk::make_type(FUGUE_KIND_SCALAR, dtype);
}

sdk::Plan Reduction::plan(const sdk::Call& call) const {
  const fugue_dtype acc = call.operand(out_).dtype;
  sdk::Plan plan =
      sdk::elementwise_plan(call, FUGUE_LEVEL_ITEM, sdk::elements(call.operand(inputs_[0])));
  plan.phases =
      FUGUE_PHASE_PROLOGUE | FUGUE_PHASE_ELEMENT | FUGUE_PHASE_EPILOGUE | FUGUE_PHASE_FINALIZE;
  plan.workspaces.push_back({acc, 1});  // one partial per work-group
  // The tree of reduce_group.cl, at the largest work-group.
  plan.local_mem_bytes = static_cast<uint64_t>(plan.launch.local_max) * dtype_bytes(acc);
  plan.registers = static_cast<uint32_t>(inputs_.size()) + 2;
  // A device's rows of a split program reduce to a part of the result; the parts combine as the
  // elements do (a norm: the root of the parts' squares' sum).
  plan.combine = spec_.root                          ? FUGUE_COMBINE_ROOT_SUM_SQUARES
                 : spec_.combine == Combine::Sum     ? FUGUE_COMBINE_SUM
                 : spec_.combine == Combine::Min     ? FUGUE_COMBINE_MIN
                                                     : FUGUE_COMBINE_MAX;
  return plan;
}

fugue_cost Reduction::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  for (uint32_t i = 0; i < call.size(); ++i)
    cost.bytes += traffic_bytes(call.operand(i), operands[i].role);
  cost.flops =
      spec_.flops_per_element * static_cast<double>(sdk::elements(call.operand(inputs_[0])));
  return cost;
}

// ---------------------------------------------------------------------------------------------
// Device code

std::string Reduction::identity(fugue_dtype dtype) const {
  if (spec_.combine == Combine::Sum) return opencl::cast(dtype, "0");  // (0, 0) for complex
  // fmin and fmax ignore a NaN, and still give NaN when every element is one, like the reference.
  if (sdk::is_float(dtype)) return opencl::nan(dtype);
  return spec_.combine == Combine::Min ? opencl::highest(dtype) : opencl::lowest(dtype);
}

std::string Reduction::combine(fugue_dtype dtype, const std::string& x,
                               const std::string& y) const {
  switch (spec_.combine) {
    case Combine::Sum: return opencl::wrapping(dtype, x, '+', y);
    case Combine::Min: return opencl::minimum(dtype, x, y);
    case Combine::Max: return opencl::maximum(dtype, x, y);
  }
  throw std::logic_error("unknown combination");
}

KernelTemplate::Function Reduction::combiner(fugue_dtype dtype) const {
  return [this, dtype](const std::vector<std::string>& args) {
    return combine(dtype, args[0], args[1]);
  };
}

std::string Reduction::element_code(fugue_dtype dtype) const {
  std::string code = "{\n";
  for (uint32_t i : inputs_) code += "  " + opencl::load(dtype, operands[i].name);
  std::string term;
  switch (spec_.term) {
    case Term::Value: term = "${@x}"; break;
    case Term::Product:
      if (is_complex(dtype)) code += "  const " + ctype(dtype) + " ${@conj_a} = " +
                                     opencl::conjugate(dtype, "${@a}") + ";\n";
      term = opencl::wrapping(dtype, is_complex(dtype) ? "${@conj_a}" : "${@a}", '*', "${@b}");
      break;
    case Term::Square: term = opencl::wrapping(dtype, "${@x}", '*', "${@x}"); break;
  }
  return code + "  ${@acc} = " + combine(dtype, "${@acc}", term) + ";\n}\n";
}

std::string Reduction::group_tree(const sdk::Emitter& emitter, fugue_dtype dtype) const {
  return KernelTemplate(kernel_source_reduce_group)
      .value("ACC_T", ctype(dtype))
      .value("LOCAL_ID", emitter.builtin(FUGUE_BUILTIN_LOCAL_ID))
      .value("LOCAL_SIZE", emitter.builtin(FUGUE_BUILTIN_LOCAL_SIZE))
      .function("COMBINE", 2, combiner(dtype))
      .expand();
}

std::string Reduction::epilogue(const sdk::Emitter& emitter, fugue_dtype dtype) const {
  return KernelTemplate(kernel_source_reduce_partial)
      .value("GROUP_TREE", group_tree(emitter, dtype))
      .value("WORKSPACE", emitter.workspace(0))
      .value("GROUP_ID", emitter.builtin(FUGUE_BUILTIN_GROUP_ID))
      .expand();
}

std::string Reduction::finalize(const sdk::Emitter& emitter, fugue_dtype dtype) const {
  return KernelTemplate(kernel_source_reduce_finalize)
      .value("ACC_T", ctype(dtype))
      .value("IDENTITY", identity(dtype))
      .value("LOCAL_ID", emitter.builtin(FUGUE_BUILTIN_LOCAL_ID))
      .value("LOCAL_SIZE", emitter.builtin(FUGUE_BUILTIN_LOCAL_SIZE))
      .value("NUM_GROUPS", emitter.builtin(FUGUE_BUILTIN_NUM_GROUPS))
      .value("WORKSPACE", emitter.workspace(0))
      .value("GROUP_TREE", group_tree(emitter, dtype))
      .function("COMBINE", 2, combiner(dtype))
      .function("FINISH", 1,
                [&](const std::vector<std::string>& args) {
                  return spec_.root ? "sqrt(" + args[0] + ")" : args[0];
                })
      .expand();
}

void Reduction::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  const fugue_dtype dtype = call.operand(out_).dtype;  // the accumulator's too
  switch (emitter.phase()) {
    case FUGUE_PHASE_PROLOGUE:
      // At kernel function scope, unscoped: ELEMENT and EPILOGUE use the accumulator.
      emitter.emit(ctype(dtype) + " ${@acc} = " + identity(dtype) + ";\n");
      return;
    case FUGUE_PHASE_ELEMENT: emitter.emit(element_code(dtype)); return;
    case FUGUE_PHASE_EPILOGUE: emitter.emit(epilogue(emitter, dtype)); return;
    case FUGUE_PHASE_FINALIZE: emitter.emit(finalize(emitter, dtype)); return;
  }
  throw std::logic_error(name + ": asked to emit phase " + std::to_string(emitter.phase()) +
                         ", which it does not plan");
}

// ---------------------------------------------------------------------------------------------
// Reference

namespace {

ref::Real combined(Combine c, ref::Real x, ref::Real y) {
  return c == Combine::Sum ? x + y : c == Combine::Min ? std::fmin(x, y) : std::fmax(x, y);
}

int64_t combined(Combine c, int64_t x, int64_t y) {
  return c == Combine::Sum   ? ref::wrapping(x, '+', y)
         : c == Combine::Min ? std::min(x, y)
                             : std::max(x, y);
}

}  // namespace

void Reduction::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_dtype dtype = call.operand(out_).dtype;
  const sdk::HostView x(operands[inputs_[0]]);
  // The second factor: b for dot, x itself for norm2's squares.
  const sdk::HostView y(operands[inputs_[spec_.term == Term::Product ? 1 : 0]]);
  sdk::HostView out(operands[out_]);
  if (is_complex(dtype)) {  // sums only
    ref::Complex acc = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      const ref::Complex v = ref::complex_value(x, i, dtype);
      acc += spec_.term == Term::Value ? v : std::conj(v) * ref::complex_value(y, i, dtype);
    }
    out.set_complex(0, {static_cast<double>(acc.real()), static_cast<double>(acc.imag())});
  } else if (sdk::is_float(dtype)) {
    using ref::Real;
    Real acc = spec_.combine == Combine::Sum ? 0 : std::numeric_limits<Real>::quiet_NaN();
    for (int64_t i = 0; i < x.size(); ++i) {
      const Real v = ref::value(x, i, dtype);
      const Real term = spec_.term == Term::Value ? v : v * ref::value(y, i, dtype);
      acc = combined(spec_.combine, acc, term);
    }
    out.set(0, static_cast<double>(spec_.root ? std::sqrt(acc) : acc));
  } else {
    int64_t acc = spec_.combine == Combine::Sum   ? 0
                  : spec_.combine == Combine::Min ? highest_integer(dtype)
                                                  : lowest_integer(dtype);
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t v = x.get_int(i);
      const int64_t term = spec_.term == Term::Value ? v : ref::wrapping(v, '*', y.get_int(i));
      acc = combined(spec_.combine, acc, term);
    }
    out.set_int(0, acc);  // the sum modulo 2^64 wraps to the dtype here
  }
}

std::vector<std::unique_ptr<sdk::Operation>> reduction_operations() {
  std::vector<std::unique_ptr<sdk::Operation>> ops;
  for (const ReductionSpec& spec : specs()) ops.push_back(std::make_unique<Reduction>(spec));
  return ops;
}

}  // namespace fugue::array
