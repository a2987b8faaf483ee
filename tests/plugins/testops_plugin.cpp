// testops_plugin.cpp: a plugin for the registry and executor tests: one DEVICE-level operation that
// builds and enqueues its own kernel through the core's services (test.scale: out = factor * x).
#include <CL/cl.h>

#include <fugue/sdk.hpp>

namespace {

using namespace fugue::sdk;

const char* kScaleSource = R"(
__kernel void scale(__global const float* x, __global float* out, const float factor, const long n) {
  long i = get_global_id(0);
  if (i < n) out[i] = factor * x[i];
}
)";

class Scale : public Operation {
 public:
  Scale() {
    name = "test.scale";
    doc = "out = factor * x, enqueued by the plugin itself (device level)";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
    attrs = {{"factor", FUGUE_ATTR_NUMBER, false, 2.0, "", "the scale factor"}};
  }
  void infer(const Call& call, std::vector<Type>& types) const override { types[1] = call.operand(0); }
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, elements(call.operand(0)));
    p.partitions[0] = partition(FUGUE_PARTITION_NONE);
    p.partitions[1] = partition(FUGUE_PARTITION_NONE);
    return p;
  }
  void execute(const Call& call, const fugue_device_services& s) const override {
    cl_program program = nullptr;
    fugue::abi::ErrorBuffer error;
    if (s.program(s.context, kScaleSource, "", &program, error.get()) != FUGUE_OK) throw DeviceFailure(error.text());
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    if (err != CL_SUCCESS) throw DeviceFailure("clCreateKernel failed: " + std::to_string(err));
    cl_mem x = s.buffer(s.context, 0), out = s.buffer(s.context, 1);
    float factor = static_cast<float>(call.number("factor"));
    cl_long n = elements(call.operand(0));
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &x);
    clSetKernelArg(kernel, 1, sizeof(cl_mem), &out);
    clSetKernelArg(kernel, 2, sizeof(float), &factor);
    clSetKernelArg(kernel, 3, sizeof(cl_long), &n);
    size_t local = 64, global = (static_cast<size_t>(n) + local - 1) / local * local;
    cl_event event = nullptr;
    if (global > 0) err = clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &event);
    clReleaseKernel(kernel);
    if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueNDRangeKernel failed: " + std::to_string(err));
    s.track(s.context, event, "scale");
  }
  fugue_cost cost(const Call& call) const override {
    double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, n};
  }
  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[0]), out(a[1]);
    for (int64_t i = 0; i < x.size(); ++i) out.set(i, static_cast<float>(call.number("factor")) * x.get(i));
  }
};

}  // namespace

FUGUE_SDK_PLUGIN("testops", "1.0.0", "Operations for Fugue's own tests", [](fugue::sdk::Plugin& p) {
  p.add(std::make_unique<Scale>());
})
