// mtx.cpp: libFuzzer target for the sparse plugin's Matrix Market reader (plugins/sparse/matrix_market):
// a file read into its entries, then, for matrices small enough to hold here, stored in every layout and
// turned back into entries, which must be the file's (padding aside).
// A clean refusal is sdk::InvalidArgument; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_support.h"
#include "layouts.h"
#include "matrix_market.h"

namespace {

// The value of `f` in host arrays (as the core would allocate them), filled by store().
struct Value {
  std::vector<fugue_type> part_types;
  std::vector<std::vector<int64_t>> part_shapes;
  std::vector<std::vector<unsigned char>> bytes;
  std::vector<fugue_host_array> parts;
  fugue_type type{};
  fugue_host_array host{};
  explicit Value(const fugue::sparse::Facts& f) {
    const fugue::sdk::Declared d = fugue::sparse::declared_type(f);
    const size_t n = d.parts.size();
    part_types.resize(n);
    part_shapes.resize(n);
    bytes.resize(n);
    parts.resize(n);
    for (size_t k = 0; k < n; ++k) {
      part_shapes[k] = d.parts[k].shape;
      part_types[k] = fugue_type{};
      part_types[k].struct_size = sizeof(fugue_type);
      part_types[k].kind = FUGUE_KIND_ARRAY;
      part_types[k].dtype = d.parts[k].dtype;
      part_types[k].rank = 1;
      part_types[k].shape = part_shapes[k].data();
      bytes[k].assign(static_cast<size_t>(part_shapes[k][0]) * fugue::sdk::dtype_size(d.parts[k].dtype), 0);
      parts[k] = {sizeof(fugue_host_array), &part_types[k], bytes[k].data(), bytes[k].size(), 0, 0, nullptr};
    }
    type.struct_size = sizeof(fugue_type);
    type.kind = FUGUE_KIND_PLUGIN;
    type.dtype = f.dtype;
    host = {sizeof(fugue_host_array), &type, nullptr, 0, 0, static_cast<uint32_t>(n), parts.data()};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fugue::sparse;
  const auto path = fugue::fuzz::write_input("input.mtx", data, size);
  try {
    const Coordinates m = read_matrix_market(path);
    if (m.rows + m.cols > (int64_t{1} << 16)) return 0;  // the layouts hold arrays of rows: too large to try here
    for (Layout layout : every_layout()) {
      Facts f;
      try {
        Cut cut;  // small slices sorted in windows, 2 x 4 blocks
        cut.slice = 4;
        cut.sigma = 8;
        f = facts_for(m, layout, FUGUE_DTYPE_F64, FUGUE_DTYPE_NONE, cut);
      } catch (const fugue::sdk::InvalidArgument&) {
        continue;  // too much padding for this layout
      }
      Value value(f);
      store(f, m, fugue::sdk::HostView(value.host));
      const Coordinates back = entries_of(f, fugue::sdk::HostView(value.host));
      // Layouts that pad may drop zero values (hyb keeps those of its coo part): compare the rest.
      const bool pads = layout != Layout::Csr && layout != Layout::Coo;
      std::vector<std::tuple<int64_t, int64_t, double>> want, got;
      for (int64_t e = 0; e < m.entries(); ++e)
        if (!pads || m.value[e] != 0) want.emplace_back(m.row[e], m.col[e], m.value[e]);
      for (int64_t e = 0; e < back.entries(); ++e)
        if (!pads || back.value[e] != 0) got.emplace_back(back.row[e], back.col[e], back.value[e]);
      if (want != got) fugue::fuzz::unexpected("mtx", (std::string(layout_name(layout)) + " did not give back the file's entries").c_str());
    }
  } catch (const fugue::sdk::InvalidArgument&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("mtx", e.what());
  }
  return 0;
}
