// generators.cpp: the array plugin's generators.
#include "generators.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "dtypes.h"

namespace fugue::array {

namespace {

struct Range {
  double start = 0, stop = 1;
};

Range parse(const std::string& text) {
  const nlohmann::json p = nlohmann::json::parse(text, nullptr, false);
  if (!p.is_object()) throw sdk::InvalidArgument("expected an object {\"start\": a, \"stop\": b}, found " + text);
  for (const auto& [key, value] : p.items())
    if (key != "start" && key != "stop") throw sdk::InvalidArgument("/" + key + ": unknown key (expected start, stop)");
  Range r;
  for (const char* key : {"start", "stop"}) {
    if (!p.contains(key)) throw sdk::InvalidArgument(std::string("/") + key + ": missing (linspace needs start and stop)");
    const auto& v = p[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw sdk::InvalidArgument(std::string("/") + key + ": expected a finite number, found " + v.dump());
    (std::string(key) == "start" ? r.start : r.stop) = v.get<double>();
  }
  return r;
}

class Linspace final : public sdk::Generator {
 public:
  Linspace() {
    name = "linspace";
    doc = "{\"start\": a, \"stop\": b}: evenly spaced from a to b, both included, in row-major order";
    dtypes = FUGUE_DTYPES_FLOAT;
  }
  void check(const std::string& parameters, const fugue_type& type) const override {
    const Range r = parse(parameters);
    if (type.dtype == FUGUE_DTYPE_F32 && (std::fabs(r.start) > FLT_MAX || std::fabs(r.stop) > FLT_MAX))
      throw sdk::InvalidArgument("/" + std::string(std::fabs(r.start) > FLT_MAX ? "start" : "stop") +
                                 ": beyond f32's range");
  }
  void generate(const std::string& parameters, fugue_host_array& array) const override {
    const Range r = parse(parameters);
    sdk::HostView out(array);
    const int64_t n = out.size();
    // start + i * step, except the last, which is exactly stop (as NumPy).
    const long double step = n > 1 ? (static_cast<long double>(r.stop) - r.start) / static_cast<long double>(n - 1) : 0;
    for (int64_t i = 0; i < n; ++i)
      out.set(i, i == n - 1 && n > 1 ? r.stop : static_cast<double>(r.start + step * static_cast<long double>(i)));
  }
};

}  // namespace

std::vector<std::unique_ptr<sdk::Generator>> generators() {
  std::vector<std::unique_ptr<sdk::Generator>> out;
  out.push_back(std::make_unique<Linspace>());
  return out;
}

}  // namespace fugue::array
