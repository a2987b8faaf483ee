// scatter.cpp: array.scatter_add, h[index[i]] += values[i]. An ITEM-level operation whose h is
// partitioned SCATTER: its element loop fuses with the element-wise operations that produce index and
// values, and updates h with the core's atomic additions (native for 32-bit integers and, with
// cl_khr_int64_base_atomics, 64-bit ones; compare-and-swap loops for floats).
//
// Two things keep contention down whatever the indices. Each work-item adds up a run of equal indices
// in a register and updates h once per run (every index equal: one update per work-item). And where h
// fits in a share of local memory, each work-group adds into its own copy there and adds that copy into
// h at the end, skipping zeros: global updates are then per bin and work-group, not per value. Floats sum
// in an unspecified order (UNORDERED); integers are exact (wrapping, as the reference).
#include "scatter.h"

#include <string>
#include <vector>

#include "dtypes.h"
#include "opencl_c.h"
#include "reference_math.h"
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

// h in each work-group's local memory: up to half of what a work-group may have and 16 KiB (4,096 f32
// bins; beyond, zeroing and adding the copy cost more than it saves).
bool private_copy(const sdk::Call& call) {
  const fugue_type& h = call.operand(kH);
  const uint64_t bytes = static_cast<uint64_t>(sdk::elements(h)) * dtype_bytes(h.dtype);
  return bytes > 0 && bytes <= std::min<uint64_t>(16384, call.device().local_mem_bytes / 2);
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
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_ITEM, sdk::elements(call.operand(kIndex)));
    p.phases = FUGUE_PHASE_PROLOGUE | FUGUE_PHASE_ELEMENT | FUGUE_PHASE_EPILOGUE;
    p.partitions[kH] = sdk::partition(FUGUE_PARTITION_SCATTER, h.rank);
    if (private_copy(call)) p.local_mem_bytes = static_cast<uint64_t>(sdk::elements(h)) * dtype_bytes(h.dtype);
    p.registers = 6;
    return p;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& h = call.operand(kH);
    const std::string t = ctype(h.dtype), size = std::to_string(sdk::elements(h)) + "L";
    const std::string run_k = em.name("run_k"), run_v = em.name("run_v");
    const bool copy = private_copy(call);
    // A run's sum into h, or into the work-group's copy.
    auto update = [&](const std::string& k, const std::string& v) {
      return copy ? em.atomic_local(FUGUE_ATOMIC_ADD, h.dtype, em.local_array(h.dtype, sdk::elements(h), "bins") + "[" + k + "]", v)
                  : em.atomic_at(FUGUE_ATOMIC_ADD, kH, k, v);
    };
    const std::string zero = opencl::cast(h.dtype, "0");
    switch (em.phase()) {
      case FUGUE_PHASE_PROLOGUE: {
        // At kernel scope: the run so far (none), and the work-group's copy of h, zeroed.
        std::string code = "long " + run_k + " = -1;\n" + t + " " + run_v + " = " + zero + ";\n";
        if (copy) {
          const std::string bins = em.local_array(h.dtype, sdk::elements(h), "bins"), j = em.name("j");
          code += "for (long " + j + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + "; " + j + " < " + size + "; " + j +
                  " += " + em.builtin(FUGUE_BUILTIN_LOCAL_SIZE) + ") " + bins + "[" + j + "] = " + zero + ";\n" +
                  em.barrier() + "\n";
        }
        em.append(code);
        return;
      }
      case FUGUE_PHASE_ELEMENT: {
        const std::string k = em.name("k"), v = em.name("v");
        const fugue_type& values = call.operand(kValues);
        const std::string value = values.kind == FUGUE_KIND_CONST ? opencl::literal(h.dtype, values.const_value)
                                                                  : "(" + t + ")(" + em.read(kValues) + ")";
        em.append("const long " + k + " = (long)(" + em.read(kIndex) + ");\n" +  //
                  "if (" + k + " >= 0 && " + k + " < " + size + ") {\n" +        // outside h: skipped
                  "  const " + t + " " + v + " = " + value + ";\n" +              //
                  "  if (" + k + " == " + run_k + ") {\n    " + run_v + " = " + opencl::wrapping(h.dtype, run_v, '+', v) +
                  ";\n  } else {\n    if (" + run_k + " >= 0) " + update(run_k, run_v) + "\n    " + run_k + " = " + k +
                  ";\n    " + run_v + " = " + v + ";\n  }\n}\n");
        return;
      }
      case FUGUE_PHASE_EPILOGUE: {
        std::string code = "if (" + run_k + " >= 0) " + update(run_k, run_v) + "\n";
        if (copy) {  // the group's copy into h: one update per bin that received anything
          const std::string bins = em.local_array(h.dtype, sdk::elements(h), "bins"), j = em.name("j");
          const std::string nonzero = abi::is_complex(h.dtype) ? "(" + bins + "[" + j + "].x != 0 || " + bins + "[" + j + "].y != 0)"
                                                               : "(" + bins + "[" + j + "] != " + zero + ")";
          // Each group starts at its own bin, so that groups ending together do not all update bin 0 first.
          const std::string t_ = em.name("t"), start = em.name("start");
          code += em.barrier() + "\nconst long " + start + " = ((long)" + em.builtin(FUGUE_BUILTIN_GROUP_ID) + " * 977L) % " +
                  size + ";\nfor (long " + t_ + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + "; " + t_ + " < " + size + "; " +
                  t_ + " += " + em.builtin(FUGUE_BUILTIN_LOCAL_SIZE) + ") {\n  const long " + j + " = (" + t_ + " + " + start +
                  ") % " + size + ";\n  if " + nonzero + " " + em.atomic_at(FUGUE_ATOMIC_ADD, kH, j, bins + "[" + j + "]") +
                  "\n}\n";
        }
        em.append(code);
        return;
      }
    }
    throw std::logic_error(name + ": asked to emit phase " + std::to_string(em.phase()) + ", which it does not plan");
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
    if (is_integer(dtype)) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = index.get_int(i);
        if (k < 0 || k >= size) continue;
        // Two's complement wrap-around, as the device's atomic addition.
        h.set_int(k, static_cast<int64_t>(static_cast<uint64_t>(h.get_int(k)) + static_cast<uint64_t>(values.get_int(i))));
      }
      return;
    }
    // Floats: each bin's additions summed in higher precision, then added to it once (a sum of 2^26
    // values in [0, 1) kept in f32 would stop growing at 2^24).
    std::vector<ref::Complex> sums(static_cast<size_t>(size));
    std::vector<bool> hit(static_cast<size_t>(size));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = index.get_int(i);
      if (k < 0 || k >= size) continue;
      sums[static_cast<size_t>(k)] += ref::complex_value(values, i, dtype);
      hit[static_cast<size_t>(k)] = true;
    }
    for (int64_t k = 0; k < size; ++k) {
      if (!hit[static_cast<size_t>(k)]) continue;
      const ref::Complex total = ref::complex_value(h, k, dtype) + sums[static_cast<size_t>(k)];
      if (abi::is_complex(dtype)) h.set_complex(k, {static_cast<double>(total.real()), static_cast<double>(total.imag())});
      else h.set(k, static_cast<double>(total.real()));
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> scatter_add_operation() { return std::make_unique<ScatterAdd>(); }

}  // namespace fugue::array
