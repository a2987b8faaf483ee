// faulty_op_plugin.cpp: one f32 operation with one fault, chosen by FUGUE_FAULT when it is built, for
// the conformance suite's isolation tests. Each loads soundly (the registry cannot tell); only
// running it shows the fault, and the suite must report it as a FAIL and go on:
//   1 faulty.execute   device level, execute dereferences a null pointer
//   2 faulty.reference element level, the reference dereferences a null pointer
//   3 faulty.overrun   device level, its kernel writes one element past its output
//   4 faulty.host      element level, the reference writes one element past its output
//   5 array.add        a sound operation under the name the bundled array plugin already has
//   6 faulty.hang      element level, the reference never returns
//   7 faulty.scratch   device level, its kernel writes one element past a scratch buffer it asked for
//   8 faulty.negative  device level, split by rows across devices; execute fails (an error status, as a
//                      device that fails mid-run does) where its rows of x hold a negative number, so a
//                      split run fails on the devices holding such rows alone (the several-device tests)
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fugue/sdk.hpp>

#ifndef FUGUE_FAULT
#error "FUGUE_FAULT selects the fault"
#endif

namespace {

using namespace fugue::sdk;

volatile uintptr_t null_address = 0;
void crash() { *reinterpret_cast<volatile int*>(null_address) = 1; }

constexpr bool kDeviceLevel = FUGUE_FAULT == 1 || FUGUE_FAULT == 3 || FUGUE_FAULT == 7 || FUGUE_FAULT == 8;

// y = 2 x on the device; with `overrun`, also at y[n] (one element past the end).
const char* kSource = R"(
__kernel void twice(__global const float* x, __global float* y, const long n, const long last) {
  long i = get_global_id(0);
  if (i < n) y[i] = 2.0f * x[i];
  else if (i == last) y[i] = 12345.0f;
}
)";

class Twice : public Operation {
 public:
  Twice() {
    name = FUGUE_FAULT == 1 ? "faulty.execute" : FUGUE_FAULT == 2 ? "faulty.reference"
         : FUGUE_FAULT == 3 ? "faulty.overrun" : FUGUE_FAULT == 4 ? "faulty.host"
         : FUGUE_FAULT == 5 ? "array.add" : FUGUE_FAULT == 6 ? "faulty.hang"
         : FUGUE_FAULT == 7 ? "faulty.scratch" : "faulty.negative";
    doc = "y = 2 x, with one fault (see the file)";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    if (call.operand(0).kind != FUGUE_KIND_ARRAY || call.operand(0).dtype != FUGUE_DTYPE_F32)
      throw InvalidArgument("operand x: expected an f32 array, found " + type_string(call.operand(0)));
    types[1] = call.operand(0);
  }
  Plan plan(const Call& call) const override {
    if (!kDeviceLevel) return elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(0)));
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, elements(call.operand(0)));
    p.partitions[0] = partition(FUGUE_PARTITION_NONE);
    p.partitions[1] = partition(FUGUE_PARTITION_NONE);
    if (FUGUE_FAULT == 8) p.split_rows = 0b11;  // y's row r is 2 x's row r
    return p;
  }
  void emit(const Call&, const Plan&, const Emitter& e) const override { e.emit("${y=} = 2.0f * ${x};\n"); }
  void execute(const Call& call, const fugue_device_services& s) const override {
    if (FUGUE_FAULT == 1) crash();
    cl_program program = nullptr;
    fugue::abi::ErrorBuffer error;
    if (s.program(s.context, kSource, "", &program, error.get()) != FUGUE_OK) throw DeviceFailure(error.text());
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "twice", &err);
    if (err != CL_SUCCESS) throw DeviceFailure("clCreateKernel failed: " + std::to_string(err));
    cl_mem x = s.buffer(s.context, 0), y = s.buffer(s.context, 1);
    cl_long n = elements(call.operand(0)), last = FUGUE_FAULT == 3 ? n : -1;  // fault 3: y[n] is written too
    if (FUGUE_FAULT == 8) {  // the fault: x's values looked at on the host, a negative one refused
      std::vector<float> values(static_cast<size_t>(n));
      err = clEnqueueReadBuffer(s.queue, x, CL_TRUE, 0, values.size() * sizeof(float), values.data(), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueReadBuffer failed: " + std::to_string(err));
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i] < 0)
          throw DeviceFailure("x holds " + std::to_string(values[i]) + " at element " + std::to_string(i) +
                              " of these rows, and faulty.negative refuses negative numbers");
    }
    if (FUGUE_FAULT == 7) {  // the fault: 2 x into a scratch buffer of n floats, and its element n
      fugue::abi::ErrorBuffer scratch_error;
      if (s.scratch(s.context, static_cast<size_t>(n) * sizeof(float), &y, scratch_error.get()) != FUGUE_OK)
        throw DeviceFailure(scratch_error.text());
      last = n;
    }
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &x);
    clSetKernelArg(kernel, 1, sizeof(cl_mem), &y);
    clSetKernelArg(kernel, 2, sizeof(cl_long), &n);
    clSetKernelArg(kernel, 3, sizeof(cl_long), &last);
    size_t local = 64, global = (static_cast<size_t>(n) + 1 + local - 1) / local * local;
    cl_event event = nullptr;
    err = clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &event);
    clReleaseKernel(kernel);
    if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueNDRangeKernel failed: " + std::to_string(err));
    s.track(s.context, event, "twice");
    if (FUGUE_FAULT == 7) {  // the output itself, written correctly
      cl_mem out = s.buffer(s.context, 1);
      cl_long none = -1;
      kernel = clCreateKernel(program, "twice", &err);
      clSetKernelArg(kernel, 0, sizeof(cl_mem), &x);
      clSetKernelArg(kernel, 1, sizeof(cl_mem), &out);
      clSetKernelArg(kernel, 2, sizeof(cl_long), &n);
      clSetKernelArg(kernel, 3, sizeof(cl_long), &none);
      err = clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &event);
      clReleaseKernel(kernel);
      if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueNDRangeKernel failed: " + std::to_string(err));
      s.track(s.context, event, "twice into the output");
    }
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, n};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    if (FUGUE_FAULT == 2) crash();
    while (FUGUE_FAULT == 6) sleep(1);
    HostView x(a[0]), y(a[1]);
    for (int64_t i = 0; i < x.size(); ++i) y.set(i, 2.0 * x.get(i));
    if (FUGUE_FAULT == 4) static_cast<float*>(a[1].data)[x.size()] = 12345.0f;  // the fault
  }
};

}  // namespace

FUGUE_SDK_PLUGIN("faulty", "0.1.0", "One operation with one fault (conformance isolation tests)",
                 [](fugue::sdk::Plugin& p) { p.add(std::make_unique<Twice>()); })
