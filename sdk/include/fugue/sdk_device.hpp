// sdk_device.hpp: header-only helpers for DEVICE-level operations, whose `execute` enqueues their own
// kernels through the core's fugue_device_services (see fugue_plugin.h).
//
// Every OpenCL failure becomes fugue::sdk::DeviceFailure naming the call, the kernel and the error
// code; Operation's guard turns that into FUGUE_ERROR_DEVICE with the message at the ABI boundary.
//
//   void execute(const Call& call, const fugue_device_services& s) const override {
//     using namespace fugue::sdk;
//     cl_program program = build_program(s, kernel_source_scale, "-DT=" + opencl_type(dtype));
//     Kernel scale(program, "scale");
//     scale.args(buffer(s, call, "x"), buffer(s, call, "out"), 2.0f, cl_long{n});
//     scale.enqueue(s, static_cast<size_t>(n));  // global rounded up to the local size, event tracked
//   }
//
// Link against Fugue::sdk (it brings OpenCL). Kernels are launched over a global size rounded up to a
// multiple of the work-group size: they must ignore work-items past the end (`if (i < n)`).
#pragma once

#include <fugue/cl_errors.hpp>
#include <fugue/sdk.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fugue::sdk {

// ---------------------------------------------------------------------------------------------
// Errors

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "unknown OpenCL error": one table,
// fugue/cl_errors.hpp, shared with the core.
using fugue::cl_error_code_name;
inline const char* cl_error_name(cl_int err) { return cl_error_code_name(err); }

// "clCreateKernel(scan) failed: CL_INVALID_KERNEL_NAME (-46)".
inline std::string cl_error_text(const std::string& what, cl_int err) {
  return what + " failed: " + cl_error_name(err) + " (" + std::to_string(err) + ")";
}

// Throws DeviceFailure unless `err` is CL_SUCCESS; `what` names the call ("clSetKernelArg(scan, 2)").
inline void check_cl(cl_int err, const std::string& what) {
  if (err != CL_SUCCESS) throw DeviceFailure(cl_error_text(what, err));
}

// ---------------------------------------------------------------------------------------------
// Dtypes on the device

// The OpenCL C type of a dtype ("float", "uchar", "float2" for c64), e.g. for -DT=...
inline std::string opencl_type(fugue_dtype d) { return dtype_ctype(d); }
// Bytes per element.
inline size_t dtype_bytes(fugue_dtype d) { return dtype_size(d); }

// ---------------------------------------------------------------------------------------------
// The device

// A fixed-size clGetDeviceInfo value of the operation's device (cl_uint, cl_ulong, size_t, ...).
template <class T>
T device_info(const fugue_device_services& s, cl_device_info what) {
  static_assert(std::is_trivially_copyable_v<T>, "device_info reads fixed-size values");
  T value{};
  check_cl(clGetDeviceInfo(s.device, what, sizeof value, &value, nullptr),
           "clGetDeviceInfo(" + std::to_string(what) + ")");
  return value;
}
inline size_t max_work_group_size(const fugue_device_services& s) {
  return device_info<size_t>(s, CL_DEVICE_MAX_WORK_GROUP_SIZE);
}
inline cl_ulong local_memory_bytes(const fugue_device_services& s) {
  return device_info<cl_ulong>(s, CL_DEVICE_LOCAL_MEM_SIZE);
}
// Whether the device computes in double precision (cl_khr_fp64 or OpenCL 1.2's optional doubles).
inline bool supports_fp64(const fugue_device_services& s) {
  return device_info<cl_device_fp_config>(s, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
}
// Throws Unsupported when `dtype` is f64 and the device has no doubles; call it first in execute.
inline void require_dtype(const fugue_device_services& s, fugue_dtype dtype, const std::string& op) {
  if (component_dtype(dtype) == FUGUE_DTYPE_F64 && !supports_fp64(s))
    throw Unsupported(op + ": " + dtype_name(dtype) +
                      " needs a device with double precision (cl_khr_fp64); this one has none");
}

// ---------------------------------------------------------------------------------------------
// Buffers and programs (owned by the core: never release them)

// The buffer holding operand k (a scalar's is a one-element buffer).
inline cl_mem buffer(const fugue_device_services& s, uint32_t operand) {
  cl_mem b = s.buffer(s.context, operand);
  if (!b) throw DeviceFailure("the core holds no buffer for operand " + std::to_string(operand));
  return b;
}
inline cl_mem buffer(const fugue_device_services& s, const Call& call, const std::string& operand) {
  cl_mem b = s.buffer(s.context, call.index(operand));
  if (!b) throw DeviceFailure("the core holds no buffer for operand '" + operand + "'");
  return b;
}

// The buffer holding part `part` of operand k, a kind with storage.
inline cl_mem part(const fugue_device_services& s, const Call& call, const std::string& operand, uint32_t part) {
  cl_mem b = s.struct_size >= FUGUE_SIZE_UP_TO(fugue_device_services, part) && s.part
                 ? s.part(s.context, call.index(operand), part)
                 : nullptr;
  if (!b) throw DeviceFailure("the core holds no part " + std::to_string(part) + " of operand '" + operand + "'");
  return b;
}

// ABI 2.21: the buffer (one cl_long) holding the count of operand `operand`, a kind whose parts have a
// run-time length (or the run-time length of an array's axis 0): an input's to read, an OUT operand's to write.
inline cl_mem count_buffer(const fugue_device_services& s, const Call& call, const std::string& operand) {
  cl_mem b = s.extent ? s.extent(s.context, call.index(operand)) : nullptr;
  if (!b) throw DeviceFailure("the core holds no count of operand '" + operand + "'");
  return b;
}
// That count read back (waits for the work before it), checked against the capacity `most`.
inline int64_t read_count(const fugue_device_services& s, const Call& call, const std::string& operand, int64_t most) {
  cl_long count = 0;
  check_cl(clEnqueueReadBuffer(s.queue, count_buffer(s, call, operand), CL_TRUE, 0, sizeof count, &count, 0, nullptr, nullptr),
           "reading the count of '" + operand + "'");
  if (count < 0 || count > most)
    throw DeviceFailure("operand '" + operand + "' holds a count of " + std::to_string(count) + ", outside its capacity " +
                        std::to_string(most) + " (a fault of the operation that wrote it)");
  return count;
}
// An OUT operand's count, written from the host (in order with the work the operation enqueued).
inline void write_count(const fugue_device_services& s, const Call& call, const std::string& operand, int64_t count) {
  const cl_long value = count;
  check_cl(clEnqueueWriteBuffer(s.queue, count_buffer(s, call, operand), CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr),
           "writing the count of '" + operand + "'");
}

// A scratch buffer of `bytes`, released by the core once the operation's work has finished.
inline cl_mem scratch(const fugue_device_services& s, size_t bytes) {
  abi::ErrorBuffer error;
  cl_mem b = nullptr;
  if (s.scratch(s.context, bytes, &b, error.get()) != FUGUE_OK || !b)
    throw DeviceFailure("scratch of " + std::to_string(bytes) + " bytes: " + error.text());
  return b;
}

// A buffer of `bytes` that outlives the call, found again by `key` (see fugue_device_services.workspace);
// `fresh` (if given) says whether it was just made, its contents undefined.
inline cl_mem workspace(const fugue_device_services& s, const std::string& key, size_t bytes, bool* fresh = nullptr) {
  abi::ErrorBuffer error;
  cl_mem b = nullptr;
  int32_t made = 0;
  if (s.workspace(s.context, key.c_str(), bytes, &b, &made, error.get()) != FUGUE_OK || !b)
    throw DeviceFailure("workspace '" + key + "' of " + std::to_string(bytes) + " bytes: " + error.text());
  if (fresh) *fresh = made != 0;
  return b;
}

// A program built from OpenCL C `source` with `options` ("-DT=float"), through the core's cache
// (memory and disk), so repeated calls and later runs do not compile again. A build error throws
// DeviceFailure with the compiler's message.
inline cl_program build_program(const fugue_device_services& s, const std::string& source,
                                const std::string& options = {}) {
  abi::ErrorBuffer error;
  cl_program program = nullptr;
  if (s.program(s.context, source.c_str(), options.c_str(), &program, error.get()) != FUGUE_OK || !program)
    throw DeviceFailure(std::string("building the operation's OpenCL program") +
                        (options.empty() ? "" : " (options " + options + ")") + ": " + error.text());
  return program;
}

// Whether the core keeps an event of each kernel the operation enqueues (ABI 2.20; a core before it
// always did): where it does not, enqueue without one.
inline bool wants_events(const fugue_device_services& s) {
  return s.struct_size < FUGUE_SIZE_UP_TO(fugue_device_services, wants_events) || s.wants_events != 0;
}

// ---------------------------------------------------------------------------------------------
// Kernels

// A __local memory argument of `bytes` (kernel parameter `__local T* p`).
struct LocalMemory {
  size_t bytes;
};

// One kernel of a program, released when it goes out of scope. Arguments are captured by each
// enqueue, so one Kernel may be enqueued many times with different arguments.
class Kernel {
 public:
  Kernel() = default;
  Kernel(cl_program program, std::string name) : name_(std::move(name)) {
    cl_int err = CL_SUCCESS;
    kernel_ = clCreateKernel(program, name_.c_str(), &err);
    check_cl(err, "clCreateKernel(" + name_ + ")");
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  Kernel(Kernel&& other) noexcept
      : kernel_(std::exchange(other.kernel_, nullptr)), name_(std::move(other.name_)) {}
  Kernel& operator=(Kernel&& other) noexcept {
    if (this != &other) {
      reset();
      kernel_ = std::exchange(other.kernel_, nullptr);
      name_ = std::move(other.name_);
    }
    return *this;
  }
  ~Kernel() { reset(); }

  cl_kernel get() const { return kernel_; }
  const std::string& name() const { return name_; }

  // Argument `index`: a cl_mem, or a scalar whose C++ type has the size of the kernel's parameter
  // (cl_float/float, cl_double, cl_int, cl_long/int64_t, cl_uint, ...). A mismatch fails with
  // CL_INVALID_ARG_SIZE naming the kernel and the index.
  template <class T>
  Kernel& arg(cl_uint index, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are copied byte for byte");
    static_assert(!std::is_pointer_v<T> || std::is_same_v<T, cl_mem>,
                  "a host pointer is no kernel argument: pass a cl_mem");
    static_assert(!std::is_same_v<T, bool>, "bool has no defined size on the device: pass cl_int");
    check_cl(clSetKernelArg(kernel_, index, sizeof(T), &value),
             "clSetKernelArg(" + name_ + ", " + std::to_string(index) + ")");
    return *this;
  }
  Kernel& arg(cl_uint index, LocalMemory local) {
    check_cl(clSetKernelArg(kernel_, index, local.bytes, nullptr),
             "clSetKernelArg(" + name_ + ", " + std::to_string(index) + ", __local " +
                 std::to_string(local.bytes) + " bytes)");
    return *this;
  }
  // Arguments 0, 1, ... in order.
  template <class... Args>
  Kernel& args(const Args&... values) {
    cl_uint index = 0;
    (arg(index++, values), ...);
    (void)index;
    return *this;
  }

  // The largest work-group this kernel runs with on the device (may be below the device's limit).
  size_t work_group_size(cl_device_id device) const {
    size_t size = 0;
    check_cl(clGetKernelWorkGroupInfo(kernel_, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, nullptr),
             "clGetKernelWorkGroupInfo(" + name_ + ", CL_KERNEL_WORK_GROUP_SIZE)");
    return size;
  }
  // The work-group size multiple the device prefers for this kernel (a warp, a wavefront, a SIMD width).
  size_t preferred_multiple(cl_device_id device) const {
    size_t size = 0;
    check_cl(clGetKernelWorkGroupInfo(kernel_, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                      sizeof size, &size, nullptr),
             "clGetKernelWorkGroupInfo(" + name_ + ", CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)");
    return size ? size : 1;
  }
  // A work-group size for `global` items: 256 or the kernel's limit if smaller, a multiple of the
  // preferred multiple where possible, and no larger than `global` needs.
  size_t choose_local(cl_device_id device, size_t global) const {
    size_t limit = work_group_size(device), multiple = preferred_multiple(device);
    size_t local = limit < 256 ? limit : 256;
    if (local >= multiple) local -= local % multiple;
    size_t needed = (global + multiple - 1) / multiple * multiple;
    if (needed > 0 && needed < local) local = needed;
    return local > 0 ? local : 1;
  }

  // Enqueues the kernel over `global` work-items in one dimension on the operation's queue, in
  // work-groups of `local` (0: choose_local), the global size rounded up to a multiple of it, and hands
  // the event to the core (profiles, `fugue bench`) under `label` (default: the kernel's name) where
  // the core keeps events (wants_events). Nothing is enqueued when global is 0.
  void enqueue(const fugue_device_services& s, size_t global, size_t local = 0,
               const std::string& label = {}) const {
    if (global == 0) return;
    if (local == 0) local = choose_local(s.device, global);
    size_t rounded = (global + local - 1) / local * local;
    cl_event event = nullptr;
    const bool tracked = wants_events(s);
    check_cl(clEnqueueNDRangeKernel(s.queue, kernel_, 1, nullptr, &rounded, &local, 0, nullptr, tracked ? &event : nullptr),
             "clEnqueueNDRangeKernel(" + name_ + ", global " + std::to_string(rounded) + ", local " +
                 std::to_string(local) + ")");
    if (tracked) s.track(s.context, event, (label.empty() ? name_ : label).c_str());
  }

 private:
  void reset() {
    if (kernel_) clReleaseKernel(kernel_);
    kernel_ = nullptr;
  }
  cl_kernel kernel_ = nullptr;
  std::string name_;
};

}  // namespace fugue::sdk
