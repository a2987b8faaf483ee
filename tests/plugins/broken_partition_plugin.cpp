// Fault: outputs written outside the declared partition (smear: neighbour element; overrun: one past the end); caught by conformance's partition-honesty check (every-third-element sampling; guard regions).
//
// broken_partition_plugin.cpp: a plugin for the conformance suite's own tests. Both operations compute
// the right values and have correct references; only the promise their plans make about where they
// write is false.
//   broken.smear   ELEMENT level, y = 2 * x, y declared ELEMENTWISE, but element i also stores
//                  element i + 1 of y (with the value that element has, so full runs stay correct).
//   broken.overrun DEVICE level, y = x + 1 (f32, 1-D), but its kernel writes n + 1 elements of y.
//   broken.rows    ELEMENT level, y[r, c] = x[r, c] + r (f32, 2-D), x read TILE with a halo and its plan
//                  saying reads past the ends stay inside (fugue_plan.ends), though it uses the row number
//                  for more than finding the ends: a share of the rows would number them from 0.
//   broken.cut     ELEMENT level, y[i] = x[i] + x[0] (f32, 1-D), x read WHOLE, its plan saying its rows
//                  cut x and y (fugue_plan.split_rows), though every row reads x's first: a share of the
//                  rows would read its own first row.
#include <CL/cl.h>

#include <string>

#include <fugue/sdk.hpp>

namespace {

using namespace fugue::sdk;

constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);

class Smear : public Operation {
 public:
  enum : uint32_t { kX, kY };

  Smear() {
    name = "broken.smear";
    doc = "y = 2 * x, declared element-wise, but element i also writes element i + 1 of y";
    operands = {in("x", kArray, FUGUE_DTYPES_FLOAT, "the input"),
                out("y", kArray, FUGUE_DTYPES_FLOAT, "2 * x, of x's shape and dtype")};
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    if (x.kind != FUGUE_KIND_ARRAY || !is_float(x.dtype))
      throw InvalidArgument("operand x: expected an f32 or f64 array, found " + type_string(x));
    types[kY] = x;
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(kX)));
    // Reading x at i + 1 (a flat index, so across rows too) is declared honestly: x is WHOLE.
    p.partitions[kX] = partition(FUGUE_PARTITION_WHOLE, call.operand(kX).rank);
    // The lie: y stays ELEMENTWISE (element i touches element i only). The halo of 1 on y means nothing
    // for writes (halos widen reads), but it makes the core treat y's access as beyond its own element,
    // so y always lives in global memory (never a register of a fused kernel, where the prologue could
    // not take its pointer): the op then fuses with nothing after it, and only partition honesty fails.
    for (uint32_t d = 0; d < call.operand(kY).rank; ++d) p.partitions[kY].halo[d] = 1;
    p.phases = FUGUE_PHASE_PROLOGUE | FUGUE_PHASE_ELEMENT;
    p.registers = 4;
    return p;
  }

  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    const std::string n = std::to_string(elements(call.operand(kY)));
    switch (e.phase()) {
      case FUGUE_PHASE_PROLOGUE:
        // Outside the element loop an array reads as its pointer: keep y's base under our own name.
        e.emit("__global ${T:y}* ${@y_base} = (__global ${T:y}*)(${y});\n");
        return;
      case FUGUE_PHASE_ELEMENT: {
        const std::string i = e.builtin(FUGUE_BUILTIN_INDEX);
        std::string code = "const ${T:y} ${@two} = (${T:y})2;\n";
        code += "${y=} = ${@two} * ${x};\n";
        code += "if (" + i + " + 1 < " + n + ") ${@y_base}[" + i + " + 1] = ${@two} * " +
                e.read_at(kX, i + " + 1") + ";\n";
        e.append("{\n" + e.format(code) + "}\n");
        return;
      }
    }
    throw std::logic_error(name + ": asked to emit phase " + std::to_string(e.phase()) +
                           ", which it does not plan");
  }

  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(kX)));
    const double bytes = call.operand(kX).dtype == FUGUE_DTYPE_F64 ? 8 : 4;
    return {sizeof(fugue_cost), 2 * bytes * n, n};
  }

  void reference(const Call&, fugue_host_array* a) const override {
    const HostView x(a[kX]);
    HostView y(a[kY]);
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, 2.0 * x.get(i));
  }
};

const char* kOverrunSource = R"(
__kernel void overrun(__global const float* x, __global float* y, const long n) {
  long i = get_global_id(0);
  if (i <= n) y[i] = (i < n ? x[i] : 0.0f) + 1.0f;  /* i == n: one element past the end of y */
}
)";

class Overrun : public Operation {
 public:
  enum : uint32_t { kX, kY };

  Overrun() {
    name = "broken.overrun";
    doc = "y = x + 1 (f32, 1-D), enqueued by the plugin, whose kernel writes one element past y's end";
    operands = {in("x", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "the input, one-dimensional"),
                out("y", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "x + 1")};
    test_cases = R"([{"shape": [1000]}, {"shape": [1]}, {"shape": [4097]}])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    if (x.kind != FUGUE_KIND_ARRAY || x.dtype != FUGUE_DTYPE_F32 || x.rank != 1)
      throw InvalidArgument("operand x: expected a one-dimensional f32 array, found " + type_string(x));
    types[kY] = x;
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, elements(call.operand(kX)));
    p.partitions[kX] = partition(FUGUE_PARTITION_NONE);
    p.partitions[kY] = partition(FUGUE_PARTITION_NONE);
    return p;
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    cl_program program = nullptr;
    fugue::abi::ErrorBuffer error;
    if (s.program(s.context, kOverrunSource, "", &program, error.get()) != FUGUE_OK)
      throw DeviceFailure(error.text());
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "overrun", &err);
    if (err != CL_SUCCESS) throw DeviceFailure("clCreateKernel failed: " + std::to_string(err));
    cl_mem x = s.buffer(s.context, kX), y = s.buffer(s.context, kY);
    cl_long n = elements(call.operand(kX));
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &x);
    clSetKernelArg(kernel, 1, sizeof(cl_mem), &y);
    clSetKernelArg(kernel, 2, sizeof(cl_long), &n);
    // n + 1 work-items at least, so that the one past the end runs.
    size_t local = 64, global = (static_cast<size_t>(n) + 1 + local - 1) / local * local;
    cl_event event = nullptr;
    err = clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &event);
    clReleaseKernel(kernel);
    if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueNDRangeKernel failed: " + std::to_string(err));
    s.track(s.context, event, "overrun");
  }

  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(kX)));
    return {sizeof(fugue_cost), 8 * n, n};
  }

  void reference(const Call&, fugue_host_array* a) const override {
    const HostView x(a[kX]);
    HostView y(a[kY]);
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, x.get(i) + 1.0);
  }
};

class Rows : public Operation {
 public:
  enum : uint32_t { kX, kY };

  Rows() {
    name = "broken.rows";
    doc = "y[r, c] = x[r, c] + r, declaring that reads past the ends stay inside and the position finds them only";
    operands = {in("x", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "a 2-D input"),
                out("y", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "x plus each element's row number")};
    test_cases = R"([{"name": "grid", "shape": [9, 4]}])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    if (call.operand(kX).rank != 2) throw InvalidArgument("operand x: expected a 2-D array");
    types[kY] = call.operand(kX);
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(kX)));
    p.partitions[kX] = partition(FUGUE_PARTITION_TILE, 2);
    p.partitions[kX].halo = {1, 0};
    p.ends = FUGUE_ENDS_INSIDE;  // the lie: the row number is the result's
    return p;
  }

  void emit(const Call&, const Plan&, const Emitter& e) const override {
    e.append(e.write(kY) + " = " + e.read_offset(kX, {0, 0}) + " + (float)(" + e.builtin(FUGUE_BUILTIN_INDEX) + " / " + e.extent(kX, 1) +
             ");\n");
  }

  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(kX)));
    return {sizeof(fugue_cost), 8 * n, n};
  }

  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[kX]), y(a[kY]);
    const int64_t cols = call.operand(kX).shape[1];
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, static_cast<float>(x.get(i)) + static_cast<float>(i / cols));
  }
};

class Cut : public Operation {
 public:
  enum : uint32_t { kX, kY };

  Cut() {
    name = "broken.cut";
    doc = "y[i] = x[i] + x[0], saying its rows cut x and y";
    operands = {in("x", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "a 1-D input"),
                out("y", kArray, FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "x plus its first element")};
    test_cases = R"([{"name": "vector", "shape": [9]}])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    if (call.operand(kX).rank != 1) throw InvalidArgument("operand x: expected a 1-D array");
    types[kY] = call.operand(kX);
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(kX)));
    p.partitions[kX] = partition(FUGUE_PARTITION_WHOLE, 1);
    p.split_rows = (uint64_t{1} << kX) | (uint64_t{1} << kY);  // the lie: row i reads x's row 0 too
    return p;
  }

  void emit(const Call&, const Plan&, const Emitter& e) const override {
    e.append(e.write(kY) + " = " + e.read_at(kX, e.builtin(FUGUE_BUILTIN_INDEX)) + " + " + e.read_at(kX, "0") + ";\n");
  }

  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(kX)));
    return {sizeof(fugue_cost), 8 * n, n};
  }

  void reference(const Call&, fugue_host_array* a) const override {
    HostView x(a[kX]), y(a[kY]);
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, static_cast<float>(x.get(i)) + static_cast<float>(x.get(0)));
  }
};

}  // namespace

FUGUE_SDK_PLUGIN("broken_partition", "0.1.0",
                 "Operations that write outside the partitions they declare (conformance tests)",
                 [](fugue::sdk::Plugin& p) {
                   p.add(std::make_unique<Smear>());
                   p.add(std::make_unique<Overrun>());
                   p.add(std::make_unique<Rows>());
                   p.add(std::make_unique<Cut>());
                 })
