#include "sparse_tuner.h"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "format_choice.h"

namespace fugue::sparse {

namespace {

using nlohmann::json;

class SparseTuner final : public sdk::Tuner {
 public:
  SparseTuner() {
    name = "sparse";
    doc = "the sparse format choice: SpMV of every layout but hyb (csr, coo, ell, sell, dia, bdia, and bcsr, bell and sbell of 2 x 4 "
          "blocks) on dense banded matrices of 1, 4, 16 and 64 entries a row, f32 (seed 003's offline benchmark)";
  }

  std::string programs(const fugue_device_desc& device, uint32_t flags) const override {
    const int64_t rows = rows_for(device, flags);
    json list = json::array();
    for (const char* layout : kTableLayouts)
      for (int width : kTableWidths) {
        json a = {{"kind", layout}, {"dtype", "f32"}, {"from", {{"banded", {{"rows", rows}, {"width", width}, {"seed", 1}}}}}};
        if (std::string(layout) == "sell" || std::string(layout) == "sbell") a["slice"] = sell_slice_for(&device);
        const json program = {
            {"fugue", 1},
            {"symbols",
             {{"A", a},
              {"x", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {rows}}, {"from", {{"random", {{"seed", 7}, {"low", -1}, {"high", 1}}}}}}}}},
            {"body", json::array({{{"op", "sparse.spmv"}, {"out", {"y"}}, {"in", {"A", "x"}}}})},
            {"outputs", {{"y", "y.npy"}}}};
        list.push_back({{"label", std::string(layout) + " " + std::to_string(width)}, {"program", program}});
      }
    return list.dump();
  }

  std::string table(const fugue_device_desc& device, const std::string& measurements) const override {
    const json given = json::parse(measurements);
    json gbps = json::object();
    size_t k = 0;
    for (const char* layout : kTableLayouts) {
      json row = json::array();
      for (int width : kTableWidths) {
        const std::string label = std::string(layout) + " " + std::to_string(width);
        if (k >= given.size() || given[k].value("label", "") != label)
          throw sdk::InvalidArgument("the measurements do not follow the programs (expected '" + label + "')");
        const double seconds = given[k].value("seconds", 0.0), bytes = given[k].value("bytes", 0.0);
        if (!(seconds > 0) || !(bytes > 0) || !std::isfinite(bytes / seconds))
          throw sdk::InvalidArgument("'" + label + "' took no measurable time");
        row.push_back(std::round(bytes / seconds / 1e8) / 10);  // GB/s, to 0.1
        ++k;
      }
      gbps[layout] = row;
    }
    return json({{"tuner", "sparse"},
                 {"device", device.name ? device.name : ""},
                 {"driver", device.driver_version ? device.driver_version : ""},
                 {"what", "GB/s of the bytes sparse.spmv moves (the layout's parts, x and y), f32"},
                 {"widths", kTableWidths},
                 {"gbps", gbps}})
        .dump();
  }

 private:
  static int64_t rows_for(const fugue_device_desc& device, uint32_t flags) {
    if (flags & FUGUE_TUNE_QUICK) return 4096;
    return device.type == FUGUE_DEVICE_GPU ? int64_t{1} << 21 : int64_t{1} << 20;
  }
};

}  // namespace

std::unique_ptr<sdk::Tuner> sparse_tuner() { return std::make_unique<SparseTuner>(); }

}  // namespace fugue::sparse
