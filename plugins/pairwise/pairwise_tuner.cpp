#include "pairwise_tuner.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tiles.h"

namespace fugue::pairwise {

namespace {

using nlohmann::json;

// Each class of measure, timed on the operation and measure that stand for it.
struct Sample {
  const char* cls;  // kBlockingClasses
  const char* op;
  const char* metric;
};
const Sample kSamples[] = {{"cheap", "pairwise.distance", "euclidean"},
                           {"dear", "pairwise.distance", "chi2"},
                           {"normed", "pairwise.distance", "cosine"},
                           {"per_row", "pairwise.nearest", "euclidean"}};

class PairwiseTuner final : public sdk::Tuner {
 public:
  PairwiseTuner() {
    name = "pairwise";
    doc = "the register blocking of pairwise.distance, kernel, nearest and kernel_sum: the 64 blockings timed for a cheap measure "
          "(euclidean), a dear one (chi2), cosine and 16 nearest, f32 (seed 003 §6.4's offline sampling); on CPUs blocks in vectors too";
  }

  std::string programs(const fugue_device_desc& device, uint32_t flags) const override {
    const bool quick = flags & FUGUE_TUNE_QUICK;
    // The figure's size on GPUs; a size PoCL times in well under a second on CPUs.
    const int64_t rows = quick ? 384 : device.type == FUGUE_DEVICE_GPU ? 8192 : 2048, k = quick ? 64 : 128;
    json list = json::array();
    // The blockings: the 64 tiles, and on CPUs blocks in vectors (row_vectors.h).
    std::vector<std::string> blockings;
    for (int64_t r : kBlockSides)
      for (int64_t c : kBlockSides)
        if (!quick || ((r == 32 || r == 64) && (c == 32 || c == 64))) blockings.push_back(std::to_string(r) + "x" + std::to_string(c));
    for (const Sample& sample : kSamples) {
      const bool per_row = std::string(sample.op) == "pairwise.nearest";
      std::vector<std::string> tried = blockings;
      if (device.type == FUGUE_DEVICE_CPU) tried.push_back("vectors");
      for (const std::string& blocking : tried) {
        json attrs = {{"metric", sample.metric}, {"blocking", blocking}};
        json out = {"D"}, outputs = {{"D", "D.npy"}};
        if (per_row) {
          attrs["count"] = 16;
          out = {"d", "index"};
          outputs = {{"d", "d.npy"}, {"index", "index.npy"}};
        }
        auto random = [&](int seed) {
          return json{{"kind", "array"}, {"dtype", "f32"}, {"shape", {rows, k}}, {"from", {{"random", {{"seed", seed}, {"low", 0}, {"high", 1}}}}}};
        };
        const json program = {{"fugue", 1},
                              {"symbols", {{"X", random(1)}, {"Y", random(2)}}},
                              {"body", json::array({{{"op", sample.op}, {"out", out}, {"in", {"X", "Y"}}, {"attrs", attrs}}})},
                              {"outputs", outputs}};
        list.push_back({{"label", std::string(sample.cls) + " " + blocking}, {"program", program}});
      }
    }
    return list.dump();
  }

  std::string table(const fugue_device_desc& device, const std::string& measurements) const override {
    const json given = json::parse(measurements);
    json table = {{"tuner", "pairwise"},
                  {"device", device.name ? device.name : ""},
                  {"driver", device.driver_version ? device.driver_version : ""},
                  {"what", "per class of measure, the fastest [rows, cols] of D per 16 x 16 work-group (or \"vectors\": blocks in vectors, CPUs); "
                           "ms: every blocking's time"}};
    json ms = json::object();
    for (const char* cls : kBlockingClasses) {
      double best = std::numeric_limits<double>::infinity();
      json chosen;
      for (const json& m : given) {
        const std::string label = m.value("label", "");
        if (label.rfind(std::string(cls) + " ", 0) != 0) continue;
        const std::string blocking = label.substr(std::string(cls).size() + 1);
        const double seconds = m.value("seconds", 0.0);
        if (!(seconds > 0)) throw sdk::InvalidArgument("'" + label + "' took no measurable time");
        ms[label] = std::round(seconds * 1e7) / 1e4;
        if (seconds < best) {
          best = seconds;
          const size_t x = blocking.find('x');
          chosen = blocking == "vectors" ? json("vectors") : json{std::stoll(blocking.substr(0, x)), std::stoll(blocking.substr(x + 1))};
        }
      }
      if (chosen.is_null()) throw sdk::InvalidArgument(std::string("no measurement of class ") + cls);
      table[cls] = chosen;
    }
    table["ms"] = ms;
    return table.dump();
  }
};

}  // namespace

std::unique_ptr<sdk::Tuner> pairwise_tuner() { return std::make_unique<PairwiseTuner>(); }

}  // namespace fugue::pairwise
