// conformance_report.h: the verdicts of `fugue conformance`, printed as they come and kept for the
// summary and the JSON report.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fugue::conformance {

enum class Verdict { Pass, Fail, Skip };
const char* verdict_name(Verdict verdict);

// One check of one operation ("reference", "partition honesty", ...); `op` is empty for checks of
// the plugin as a whole. `detail` says what was run, or what failed and where.
struct CheckResult {
  std::string op;
  std::string check;
  Verdict verdict = Verdict::Pass;
  std::string detail;
  nlohmann::json calls = nlohmann::json::array();  // per call: label and outcome (the JSON report)

  // As it crosses from a child process to the parent (one line of JSON).
  nlohmann::json to_json() const;
  static CheckResult from_json(const nlohmann::json& j);
};

class Report {
 public:
  explicit Report(std::FILE* out) : out_(out) {}
  // In a child process: every result goes to `sink` (to be added to the parent's report) instead.
  explicit Report(std::function<void(const CheckResult&)> sink) : out_(nullptr), sink_(std::move(sink)) {}
  // Records the result and prints "PASS  op  check  detail".
  void add(CheckResult result);
  void add(const std::string& op, const std::string& check, Verdict verdict, const std::string& detail);

  int count(Verdict verdict) const;
  bool failed() const { return count(Verdict::Fail) > 0; }
  // "array: 198 PASS, 0 FAIL, 12 SKIP over 33 operations".
  void print_summary(const std::string& plugin, size_t operations) const;
  nlohmann::json to_json(const nlohmann::json& header) const;

 private:
  std::FILE* out_;
  std::function<void(const CheckResult&)> sink_;
  std::vector<CheckResult> results_;
};

}  // namespace fugue::conformance
