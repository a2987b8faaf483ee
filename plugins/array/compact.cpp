// compact.cpp: array.compact. A DEVICE-level operation (kernels/array/compact.cl: count per block,
// prefix sums of the counts, scatter), which sets its result's run-time length on the device: no
// host round trip, so the operations that follow start without waiting.
#include "compact.h"

#include <cstring>
#include <string>
#include <vector>

#include "compact_cl.h"
#include "dtypes.h"
#include "fugue/sdk_device.hpp"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kX = 0, kMask = 1, kOut = 2;
constexpr size_t kItems = 8;  // consecutive elements per work-item

class Compact final : public sdk::Operation {
 public:
  Compact() {
    name = "array.compact";
    doc = "The elements of x whose mask is not zero, in row-major order: a 1-D array whose length is "
          "known at run time (at most x's size), as NumPy's x[mask != 0]";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("x", array, kAllDtypes, "the values"),
                sdk::in("mask", array, FUGUE_DTYPES_REAL, "which to keep (not zero: kept; NaN counts as not zero)"),
                sdk::out("out", array, kAllDtypes, "the kept values, in order; its length is the number kept")};
    test_cases = R"([
      {"name": "half", "shape": [1000], "inputs": {"mask": {"dtype": "u8", "from": {"random": {"low": 0, "high": 1}}}}},
      {"name": "2-D, few kept", "shape": [37, 29],
       "inputs": {"mask": {"dtype": "i32", "from": {"random": {"low": -6, "high": 1}}}}},
      {"name": "many blocks", "shape": [100003],
       "inputs": {"mask": {"dtype": "f32", "from": {"random": {"low": -1, "high": 1}}}}},
      {"name": "none kept", "shape": [5], "inputs": {"mask": {"dtype": "u8", "from": {"zeros": {}}}}},
      {"name": "empty", "shape": [0], "inputs": {"mask": {"dtype": "u8", "from": {"zeros": {}}}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    const fugue_type& mask = call.operand(kMask);
    if (!sdk::same_shape(x, mask))
      throw rejection(name, "operand mask", "an array of x's shape " + sdk::shape_string(x), describe(mask));
    sdk::Type out = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, {sdk::elements(x)});
    out.runtime_axes = 1;  // as many as are kept
    types[kOut] = out;
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, sdk::elements(call.operand(kX)));
    for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
    return p;
  }

  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const fugue_type& x = call.operand(kX);
    const cl_long n = sdk::elements(x);
    cl_mem length = s.extent(s.context, kOut);
    if (!length) throw sdk::DeviceFailure("the core gave no buffer for out's run-time length");
    if (n == 0) {
      const cl_long zero = 0;
      sdk::check_cl(clEnqueueFillBuffer(s.queue, length, &zero, sizeof zero, 0, sizeof zero, 0, nullptr, nullptr),
                    "clEnqueueFillBuffer(length of out)");
      return;
    }
    // The largest power of two up to 256 the device runs in one work-group.
    size_t max_local = 0;
    sdk::check_cl(clGetDeviceInfo(s.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_local, &max_local, nullptr),
                  "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
    size_t local = 256;
    while (local > 1 && local > max_local) local /= 2;
    const size_t block = local * kItems;
    const cl_long groups = (n + static_cast<cl_long>(block) - 1) / static_cast<cl_long>(block);
    const std::string options = "-DT=" + ctype(x.dtype) + " -DM=" + ctype(call.operand(kMask).dtype) +
                                " -DLOCAL=" + std::to_string(local) + " -DITEMS=" + std::to_string(kItems);
    const bool fp64 = abi::component_dtype(x.dtype) == FUGUE_DTYPE_F64 || call.operand(kMask).dtype == FUGUE_DTYPE_F64;
    const std::string source =
        std::string(fp64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_compact;
    cl_program program = sdk::build_program(s, source, options);
    // One count per block, kept for the next call of the same size: a compaction in a loop allocates once.
    cl_mem counts = sdk::workspace(s, "compact counts " + std::to_string(groups),
                                   static_cast<size_t>(groups) * sizeof(cl_long));
    cl_mem xb = s.buffer(s.context, kX), mb = s.buffer(s.context, kMask), ob = s.buffer(s.context, kOut);
    sdk::Kernel count(program, "count"), offsets(program, "offsets"), scatter(program, "scatter");
    count.args(mb, n, counts);
    count.enqueue(s, static_cast<size_t>(groups) * local, local, "compact count");
    offsets.args(counts, groups, length);
    offsets.enqueue(s, local, local, "compact offsets");
    scatter.args(xb, mb, n, counts, ob);
    scatter.enqueue(s, static_cast<size_t>(groups) * local, local, "compact scatter");
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type& x = call.operand(kX);
    const double n = static_cast<double>(sdk::elements(x));
    // The mask twice, x and the result once each (at most all of x).
    const double bytes = 2 * n * static_cast<double>(dtype_bytes(call.operand(kMask).dtype)) +
                         2 * n * static_cast<double>(dtype_bytes(x.dtype));
    return {sizeof(fugue_cost), bytes, 0};
  }

  void reference(const sdk::Call& /*call*/, fugue_host_array* arrays) const override {
    sdk::HostView x(arrays[kX]), mask(arrays[kMask]);
    const size_t size = dtype_bytes(x.dtype());
    int64_t kept = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      if (mask.get(i) == 0) continue;  // NaN != 0: kept
      std::memcpy(static_cast<char*>(arrays[kOut].data) + kept * size,
                  static_cast<const char*>(arrays[kX].data) + i * size, size);
      ++kept;
    }
    arrays[kOut].length = kept;
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> compact_operation() { return std::make_unique<Compact>(); }

}  // namespace fugue::array
