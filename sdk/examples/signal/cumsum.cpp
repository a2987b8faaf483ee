// cumsum.cpp: signal.cumsum, the inclusive prefix sum of a 1-D array. A DEVICE-level operation: a scan
// needs every element before i, which no per-element code can see, so the operation enqueues its own
// kernels (kernels/cumsum.cl) through the core's services, with fugue/sdk_device.hpp.
#include <fugue/sdk_device.hpp>

#include <algorithm>
#include <string>

#include "cumsum_cl.h"  // kernel_source_cumsum, embedded from kernels/cumsum.cl by fugue_add_plugin
#include "signal_ops.h"

namespace signal_plugin {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
// Elements per tile the cost model assumes (the device may use smaller tiles).
constexpr int64_t kNominalTile = 256 * 8;

// The two kernels of one build, and the tile they were built for.
struct ScanKernels {
  Kernel tiles, add;
  size_t local = 0, items = 0;
};

class CumSum : public Operation {
 public:
  CumSum() {
    name = "signal.cumsum";
    doc = "y[i] = x[0] + ... + x[i] (inclusive prefix sum of a 1-D array)";
    operands = {in("x", kArray, FUGUE_DTYPES_FLOAT, "the 1-D array to sum"),
                out("y", kArray, FUGUE_DTYPES_FLOAT, "the running sums: x's dtype and shape")};
    // The device adds in a different order than the reference: within a tile sequentially per
    // work-item, then in a log2(work-group) tree, then tile totals the same way, one level per factor
    // of ~2048 elements. With inputs >= 0 every partial sum is at most the final one, so the error
    // stays below ~40 roundings of |y| (~2.4e-6 relative for f32); 1e-5 leaves room, for any n.
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    test_low = 0;  // non-negative inputs keep the sums well-conditioned
    test_high = 1;
    // One tile; one tile with most of it empty; ~49 tiles, so totals are scanned and added back.
    test_cases = R"([
      {"name": "degenerate", "shape": [1]},
      {"name": "odd", "shape": [7]},
      {"name": "large", "shape": [100003]}
    ])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    types[call.index("y")] = float_array(call, name, "x", 1);
  }

  Plan plan(const Call& call) const override {
    // DEVICE level: the core runs execute instead of generating code, and never fuses it; NONE
    // partitions tell it no generated code touches the operands.
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, elements(call.operand("x")));
    for (uint32_t i = 0; i < call.size(); ++i) p.partitions[i] = partition(FUGUE_PARTITION_NONE);
    return p;
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    const fugue_type& x = float_array(call, name, "x", 1);
    const int64_t n = elements(x);
    if (n == 0) return;
    require_dtype(s, x.dtype, name);
    const size_t size = dtype_bytes(x.dtype);

    // The largest power-of-two work-group up to 256 whose tile (8 elements per work-item) and partial
    // sums fit the device's local memory.
    size_t local = 1;
    while (local * 2 <= std::min<size_t>(256, max_work_group_size(s))) local *= 2;
    size_t items = 8;
    const cl_ulong budget = local_memory_bytes(s);
    while (local > 1 && (local * items + local) * size > budget) local /= 2;
    ScanKernels k = build(s, x.dtype, local, items);
    // A kernel may run with fewer work-items than the device allows (registers): rebuild once smaller.
    const size_t limit = std::min(k.tiles.work_group_size(s.device), k.add.work_group_size(s.device));
    if (limit < local) {
      while (local > limit) local /= 2;
      k = build(s, x.dtype, std::max<size_t>(local, 1), items);
    }
    scan(s, k, buffer(s, call, "x"), buffer(s, call, "y"), n, size, 0);
  }

  fugue_cost cost(const Call& call) const override {
    const fugue_type& x = call.operand("x");
    const double n = static_cast<double>(elements(x));
    const double size = x.dtype == FUGUE_DTYPE_F64 ? 8 : 4;
    // Read x and write y; past one tile, the add-back pass reads and writes y again.
    const double passes = elements(x) > kNominalTile ? 2 : 1;
    return {sizeof(fugue_cost), passes * 2 * n * size, passes * n};
  }

  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[call.index("x")]), y(a[call.index("y")]);
    long double sum = 0;  // sequential, in more precision than the device has
    for (int64_t i = 0; i < x.size(); ++i) {
      sum += x.get(i);
      y.set(i, static_cast<double>(sum));
    }
  }

 private:
  static ScanKernels build(const fugue_device_services& s, fugue_dtype dtype, size_t local, size_t items) {
    // The tile is baked in (local arrays need constant sizes); the core caches each variant.
    std::string options = "-DLOCAL=" + std::to_string(local) + " -DITEMS=" + std::to_string(items);
    if (dtype == FUGUE_DTYPE_F64) options += " -DFUGUE_F64";
    cl_program program = build_program(s, kernel_source_cumsum, options);
    ScanKernels k;
    k.tiles = Kernel(program, "cumsum_tiles");
    k.add = Kernel(program, "cumsum_add");
    k.local = local;
    k.items = items;
    return k;
  }

  // out = the inclusive scan of in (n elements; in may be out). The queue is in order, so each pass
  // sees the previous one's results.
  void scan(const fugue_device_services& s, ScanKernels& k, cl_mem in, cl_mem out, int64_t n, size_t size,
            int level) const {
    const int64_t tile = static_cast<int64_t>(k.local * k.items);
    const int64_t tiles = (n + tile - 1) / tile;
    const size_t global = static_cast<size_t>(tiles) * k.local;
    const std::string at = " (level " + std::to_string(level) + ")";
    if (tiles == 1) {
      k.tiles.args(in, out, cl_mem{nullptr}, cl_long{n}).enqueue(s, global, k.local, "cumsum tiles" + at);
      return;
    }
    // Each tile's total, scanned in place: totals[g] becomes the sum of tiles 0..g.
    cl_mem totals = scratch(s, static_cast<size_t>(tiles) * size);
    k.tiles.args(in, out, totals, cl_long{n}).enqueue(s, global, k.local, "cumsum tiles" + at);
    scan(s, k, totals, totals, tiles, size, level + 1);
    k.add.args(out, totals, cl_long{n}).enqueue(s, global, k.local, "cumsum add" + at);
  }
};

}  // namespace

std::unique_ptr<fugue::sdk::Operation> make_cumsum() { return std::make_unique<CumSum>(); }

}  // namespace signal_plugin
