// scatter.cpp: array.scatter_add. A DEVICE-level operation: one work-item per index, atomic
// additions into h (kernels/array/scatter_add.cl), so that repeated indices all count. Its reference
// adds in index order; floats therefore agree within the rounding of a reordered sum.
#include "scatter.h"

#include <string>
#include <vector>

#include "dtypes.h"
#include "fugue/sdk_device.hpp"
#include "opencl_c.h"
#include "scatter_add_cl.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kH = 0, kIndex = 1, kValues = 2;

// What OpenCL C can add atomically: 32-bit integers and, with compare-and-swap, floats; 64-bit ones
// with cl_khr_int64_base_atomics. u8 has no atomics of its own.
constexpr uint32_t kScatterDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) |
                                    FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) |
                                    FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32) | FUGUE_DTYPES_COMPLEX;
constexpr uint32_t kIndexDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64);

bool needs_int64_atomics(fugue_dtype dtype) {
  const fugue_dtype component = abi::component_dtype(dtype);
  return component == FUGUE_DTYPE_F64 || component == FUGUE_DTYPE_I64;
}

// The add_* function of scatter_add.cl for one element (or one part of a complex one).
std::string add_function(fugue_dtype dtype) {
  switch (abi::component_dtype(dtype)) {
    case FUGUE_DTYPE_F32: return "add_f32";
    case FUGUE_DTYPE_F64: return "add_f64";
    case FUGUE_DTYPE_I32: return "add_i32";
    case FUGUE_DTYPE_U32: return "add_u32";
    case FUGUE_DTYPE_I64: return "add_i64";
    default: throw std::logic_error("scatter_add: no atomic addition for this dtype");
  }
}

class ScatterAdd final : public sdk::Operation {
 public:
  ScatterAdd() {
    name = "array.scatter_add";
    doc = "h[index[i]] += values[i] for every i, in place; repeated indices all add up (atomically: "
          "floats sum in an unspecified order), indices outside h are skipped. index holds flat "
          "(row-major) element numbers of h";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::inout("h", array, kScatterDtypes, "the array added into, updated in place"),
                sdk::in("index", array, kIndexDtypes, "where each value goes: a flat element number of h"),
                sdk::in("values", kArrayScalarOrConst, kScatterDtypes,
                        "what is added: an array of index's shape, or one value for every index")};
    set_tolerance(*this, kSummation);
    traits = FUGUE_OP_UNORDERED;
    test_cases = R"([
      {"name": "bins", "shape": [1000],
       "inputs": {"h": {"shape": [37]},
                  "index": {"dtype": "i32", "from": {"random": {"low": -2, "high": 40}}}}},
      {"name": "2-D grid, i64 index", "shape": [50, 40],
       "inputs": {"h": {"shape": [8, 8]},
                  "index": {"dtype": "i64", "from": {"random": {"low": 0, "high": 64}}}}},
      {"name": "counts", "shape": [513],
       "inputs": {"h": {"shape": [5]},
                  "index": {"dtype": "i32", "from": {"random": {"low": 0, "high": 5}}},
                  "values": {"kind": "const", "value": 1}}},
      {"name": "one bin, many hits", "shape": [20000],
       "inputs": {"h": {"shape": [1]},
                  "index": {"dtype": "i64", "from": {"fill": 0}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& /*types*/) const override {
    // h keeps its type (INOUT); values must agree with it, and with index's shape.
    common_dtype(call, name, {kH, kValues});
    const fugue_type& values = call.operand(kValues);
    if (values.kind == FUGUE_KIND_ARRAY && sdk::shape_of(values) != sdk::shape_of(call.operand(kIndex)))
      throw rejection(name, "operand values", "an array of index's shape " +
                                                  sdk::shape_string(sdk::shape_of(call.operand(kIndex))) +
                                                  " or one value",
                      describe(values));
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& h = call.operand(kH);
    const fugue_device_desc& device = call.device();
    if (needs_int64_atomics(h.dtype) && !(device.features & FUGUE_DEVICE_INT64_ATOMICS))
      throw sdk::Unsupported(std::string("operand h is ") + sdk::dtype_name(h.dtype) +
                             ": adding 64-bit values atomically needs cl_khr_int64_base_atomics, which " +
                             device.name + " lacks; use a 32-bit dtype or another device");
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, sdk::elements(call.operand(kIndex)));
    for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
    return p;
  }

  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const fugue_type& h = call.operand(kH);
    const fugue_type& index = call.operand(kIndex);
    const fugue_type& values = call.operand(kValues);
    const cl_long n = sdk::elements(index), size = sdk::elements(h);
    if (n == 0) return;
    const std::string t = ctype(h.dtype);
    std::string value = "((values)[i])";
    if (values.kind == FUGUE_KIND_SCALAR) value = "((values)[0])";
    if (values.kind == FUGUE_KIND_CONST) value = opencl::literal(h.dtype, values.const_value);
    std::string defines = "#define T " + t + "\n#define I " + ctype(index.dtype) + "\n#define ADD " +
                          add_function(h.dtype) + "\n#define VALUE(values, i) " + value + "\n";
    if (abi::is_complex(h.dtype)) defines += "#define COMPONENT " + ctype(abi::component_dtype(h.dtype)) + "\n";
    if (needs_int64_atomics(h.dtype)) defines += "#define INT64_ATOMICS 1\n";
    if (abi::component_dtype(h.dtype) == FUGUE_DTYPE_F64) defines += "#define FP64 1\n";
    sdk::Kernel kernel(sdk::build_program(s, defines + kernel_source_scatter_add), "scatter_add");
    // A const has no buffer; the kernel never reads `values` then, so h stands in for it.
    cl_mem values_buffer = values.kind == FUGUE_KIND_CONST ? s.buffer(s.context, kH) : s.buffer(s.context, kValues);
    kernel.args(s.buffer(s.context, kH), size, s.buffer(s.context, kIndex), values_buffer, n);
    kernel.enqueue(s, static_cast<size_t>(n));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& index = call.operand(kIndex);
    const double n = static_cast<double>(sdk::elements(index));
    // Each index read once, each value once, and a read-modify-write of h per index at worst.
    const double bytes = traffic_bytes(index, FUGUE_ROLE_IN) + traffic_bytes(call.operand(kValues), FUGUE_ROLE_IN) +
                         n * 2 * static_cast<double>(dtype_bytes(call.operand(kH).dtype));
    return {sizeof(fugue_cost), bytes, n * (abi::is_complex(call.operand(kH).dtype) ? 2 : 1)};
  }

  void reference(const sdk::Call& /*call*/, fugue_host_array* arrays) const override {
    sdk::HostView h(arrays[kH]), index(arrays[kIndex]), values(arrays[kValues]);
    const int64_t size = h.size(), n = index.size();
    const fugue_dtype dtype = h.dtype();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = index.get_int(i);
      if (k < 0 || k >= size) continue;
      if (abi::is_complex(dtype)) {
        h.set_complex(k, h.get_complex(k) + values.get_complex(i));
      } else if (is_integer(dtype)) {
        // Two's complement wrap-around, as the device's atomic addition.
        h.set_int(k, static_cast<int64_t>(static_cast<uint64_t>(h.get_int(k)) + static_cast<uint64_t>(values.get_int(i))));
      } else {
        h.set(k, h.get(k) + values.get(i));
      }
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> scatter_add_operation() { return std::make_unique<ScatterAdd>(); }

}  // namespace fugue::array
