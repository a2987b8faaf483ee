// The SDK's Kernel::enqueue against fugue_device_services.wants_events (ABI 2.20): an event handed to
// the core where it keeps them, no event where it does not, and one always for a core before 2.20,
// whose services end before the field.
#include <gtest/gtest.h>

#include <fugue/sdk_device.hpp>

#include <vector>

#include "device/device_manager.h"

namespace {

struct Tracked {
  int calls = 0, events = 0;
};

void count_tracks(fugue_services_context* context, cl_event event, const char*) {
  Tracked& tracked = *reinterpret_cast<Tracked*>(context);
  ++tracked.calls;
  if (event) ++tracked.events, clReleaseEvent(event);
}

TEST(SdkEvents, EnqueueKeepsAnEventOnlyWhereTheCoreWantsOne) {
  const std::vector<fugue::DeviceInfo> devices = fugue::list_devices();
  fugue::Device device(fugue::select_device(devices, fugue::device_spec("")));
  const char* source =
      "__kernel void twice(__global float* x, const long n) { long i = get_global_id(0); if (i < n) x[i] *= 2; }";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device.context(), 1, &source, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_device_id id = device.info.device();
  ASSERT_EQ(clBuildProgram(program, 1, &id, "", nullptr, nullptr), CL_SUCCESS);
  fugue::sdk::Kernel kernel(program, "twice");
  const cl_long n = 1000;
  std::vector<float> values(static_cast<size_t>(n), 1.0f);
  cl::Buffer buffer(device.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(float), values.data());
  kernel.args(buffer(), n);

  struct Case {
    const char* what;
    uint32_t struct_size;
    int32_t wants_events;
    int events;
  };
  const Case cases[] = {{"a 2.20 core keeping no events", sizeof(fugue_device_services), 0, 0},
                        {"a 2.20 core keeping events", sizeof(fugue_device_services), 1, 1},
                        {"a core before 2.20 (the field past struct_size)", FUGUE_SIZE_UP_TO(fugue_device_services, part), 0, 1}};
  for (const Case& c : cases) {
    Tracked tracked;
    fugue_device_services s{};
    s.struct_size = c.struct_size;
    s.context = reinterpret_cast<fugue_services_context*>(&tracked);
    s.cl_context = device.context();
    s.device = id;
    s.queue = device.queue();
    s.track = &count_tracks;
    s.wants_events = c.wants_events;
    kernel.enqueue(s, static_cast<size_t>(n));
    EXPECT_EQ(tracked.calls, c.events) << c.what;
    EXPECT_EQ(tracked.events, c.events) << c.what;
  }
  // Each enqueue ran: three doublings.
  device.queue.enqueueReadBuffer(buffer, CL_TRUE, 0, values.size() * sizeof(float), values.data());
  for (float v : values) ASSERT_EQ(v, 8.0f);
  clReleaseProgram(program);
}

}  // namespace
