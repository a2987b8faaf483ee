// flo.cpp: libFuzzer target for the stencil plugin's .flo reader (plugins/stencil/flow_files): the
// shape from the header (read_flo_shape), then the flow itself (read_flo) into a buffer of that size,
// then the colour of each vector (flow_colour, as the flow_picture format draws it).
// A clean refusal is sdk::InvalidArgument; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "flow_files.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fugue::fuzz::write_input("input.flo", data, size);
  try {
    const std::vector<int64_t> shape = fugue::stencil::read_flo_shape(path);
    if (shape.size() != 3 || shape[2] != 2 || shape[0] <= 0 || shape[1] <= 0)
      fugue::fuzz::unexpected("flo", "read_flo_shape gave a shape other than [H, W, 2]");
    // read_flo_shape checked the header against the file's size: the buffer is at most the file.
    const uint64_t floats = static_cast<uint64_t>(shape[0]) * static_cast<uint64_t>(shape[1]) * 2;
    if (floats * sizeof(float) > size) fugue::fuzz::unexpected("flo", "a shape larger than the file");
    std::vector<float> flow(static_cast<size_t>(floats));
    fugue::stencil::read_flo(path, flow.data(), shape);
    // The colour of every vector read (as the flow_picture format draws them), raw and scaled down:
    // any float bits (NaN, infinities, subnormals) must give a colour without undefined behaviour.
    for (size_t i = 0; i + 1 < flow.size(); i += 2) {
      (void)fugue::stencil::flow_colour(flow[i], flow[i + 1]);
      (void)fugue::stencil::flow_colour(flow[i] * 1e-3, flow[i + 1] * 1e-3);
    }
  } catch (const fugue::sdk::InvalidArgument&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("flo", e.what());
  }
  return 0;
}
