#include "timing_report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace fugue {

namespace {
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spread(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {median, v.front(), v.back()};
}
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}
std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }
}  // namespace

RepetitionTimes summarize(const std::vector<ProfileRecord>& records) {
  RepetitionTimes t;
  for (const auto& r : records) {
    if (r.category != "kernel") continue;
    t.seconds[r.name] += static_cast<double>(r.duration()) * 1e-9;
    t.bytes[r.name] += r.bytes;
    t.flops[r.name] += r.flops;
    t.count[r.name] += 1;
  }
  return t;
}

std::string stats_table(const RepetitionTimes& t) {
  std::string out = format("%-64s %6s %11s %11s %9s\n", "kernel", "runs", "total ms", "mean us", "GB/s");
  double total = 0, bytes = 0;
  for (const auto& [name, seconds] : t.seconds) {
    int n = t.count.at(name);
    double b = t.bytes.at(name);
    out += format("%-64s %6d %11.3f %11.2f %9.1f\n", shorten(name, 64).c_str(), n, seconds * 1e3, seconds * 1e6 / n,
                  seconds > 0 ? b / seconds * 1e-9 : 0.0);
    total += seconds;
    bytes += b;
  }
  out += format("%-64s %6s %11.3f %11s %9.1f\n", "total", "", total * 1e3, "", total > 0 ? bytes / total * 1e-9 : 0.0);
  return out;
}

std::string bench_table(const std::vector<RepetitionTimes>& reps) {
  if (reps.empty()) return "no repetitions\n";
  std::string out = format("%-56s %5s %10s %10s %10s %9s %9s\n", "kernel", "runs", "median ms", "min ms", "max ms",
                           "GB/s", "GFLOP/s");
  auto row = [&](const std::string& name, int runs, const std::vector<double>& secs, double bytes, double flops) {
    Spread s = spread(secs);
    out += format("%-56s %5d %10.4f %10.4f %10.4f %9.1f %9.1f\n", shorten(name, 56).c_str(), runs, s.median * 1e3,
                  s.min * 1e3, s.max * 1e3, s.median > 0 ? bytes / s.median * 1e-9 : 0.0,
                  s.median > 0 ? flops / s.median * 1e-9 : 0.0);
  };
  std::vector<double> totals(reps.size(), 0.0);
  for (size_t r = 0; r < reps.size(); ++r)
    for (const auto& [name, seconds] : reps[r].seconds) totals[r] += seconds;
  double total_bytes = 0, total_flops = 0;
  for (const auto& [name, seconds] : reps.front().seconds) {
    std::vector<double> secs;
    for (const auto& rep : reps) secs.push_back(rep.seconds.count(name) ? rep.seconds.at(name) : 0.0);
    row(name, reps.front().count.at(name), secs, reps.front().bytes.at(name), reps.front().flops.at(name));
    total_bytes += reps.front().bytes.at(name);
    total_flops += reps.front().flops.at(name);
  }
  row("total", 0, totals, total_bytes, total_flops);
  return out;
}

std::string bench_json(const std::vector<RepetitionTimes>& reps, const std::string& program, const std::string& device) {
  nlohmann::json j = {{"program", program}, {"device", device}, {"repetitions", reps.size()}};
  std::vector<double> totals(reps.size(), 0.0);
  double bytes = 0, flops = 0;
  for (size_t r = 0; r < reps.size(); ++r)
    for (const auto& [name, seconds] : reps[r].seconds) totals[r] += seconds;
  if (!reps.empty()) {
    for (const auto& [name, seconds] : reps.front().seconds) {
      std::vector<double> secs;
      for (const auto& rep : reps) secs.push_back(rep.seconds.count(name) ? rep.seconds.at(name) : 0.0);
      Spread s = spread(secs);
      double b = reps.front().bytes.at(name), f = reps.front().flops.at(name);
      bytes += b;
      flops += f;
      j["kernels"].push_back({{"name", name}, {"median_s", s.median}, {"min_s", s.min}, {"max_s", s.max},
                              {"bytes", b}, {"flops", f}, {"gbps", s.median > 0 ? b / s.median * 1e-9 : 0.0}});
    }
  }
  Spread s = spread(totals);
  j["total"] = {{"median_s", s.median}, {"min_s", s.min}, {"max_s", s.max}, {"bytes", bytes}, {"flops", flops},
                {"gbps", s.median > 0 ? bytes / s.median * 1e-9 : 0.0},
                {"gflops", s.median > 0 ? flops / s.median * 1e-9 : 0.0}};
  return j.dump();
}

}  // namespace fugue
