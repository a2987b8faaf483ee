#include "conformance_report.h"

#include <algorithm>

namespace fugue::conformance {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Pass: return "PASS";
    case Verdict::Fail: return "FAIL";
    case Verdict::Skip: return "SKIP";
  }
  return "?";
}

nlohmann::json CheckResult::to_json() const {
  return {{"op", op}, {"check", check}, {"verdict", verdict_name(verdict)}, {"detail", detail}, {"calls", calls}};
}

CheckResult CheckResult::from_json(const nlohmann::json& j) {
  CheckResult r;
  r.op = j.at("op").get<std::string>();
  r.check = j.at("check").get<std::string>();
  const std::string verdict = j.at("verdict").get<std::string>();
  r.verdict = verdict == "PASS" ? Verdict::Pass : verdict == "SKIP" ? Verdict::Skip : Verdict::Fail;
  r.detail = j.at("detail").get<std::string>();
  r.calls = j.at("calls");
  return r;
}

void Report::add(CheckResult result) {
  if (sink_) {
    sink_(result);
    return;
  }
  std::fprintf(out_, "%s  %-22s %-20s %s\n", verdict_name(result.verdict),
               result.op.empty() ? "(plugin)" : result.op.c_str(), result.check.c_str(), result.detail.c_str());
  std::fflush(out_);
  results_.push_back(std::move(result));
}

void Report::add(const std::string& op, const std::string& check, Verdict verdict, const std::string& detail) {
  CheckResult r;
  r.op = op;
  r.check = check;
  r.verdict = verdict;
  r.detail = detail;
  add(std::move(r));
}

int Report::count(Verdict verdict) const {
  return static_cast<int>(
      std::count_if(results_.begin(), results_.end(), [&](const CheckResult& r) { return r.verdict == verdict; }));
}

void Report::print_summary(const std::string& plugin, size_t operations) const {
  std::fprintf(out_, "\n%s: %d PASS, %d FAIL, %d SKIP over %zu operation%s: %s\n", plugin.c_str(),
               count(Verdict::Pass), count(Verdict::Fail), count(Verdict::Skip), operations,
               operations == 1 ? "" : "s", failed() ? "FAILED" : "conforms");
  if (!failed()) return;
  std::fprintf(out_, "failures:\n");
  for (const auto& r : results_)
    if (r.verdict == Verdict::Fail)
      std::fprintf(out_, "  %s %s: %s\n", r.op.empty() ? "(plugin)" : r.op.c_str(), r.check.c_str(),
                   r.detail.c_str());
}

nlohmann::json Report::to_json(const nlohmann::json& header) const {
  nlohmann::json doc = header;
  doc["summary"] = {{"pass", count(Verdict::Pass)}, {"fail", count(Verdict::Fail)}, {"skip", count(Verdict::Skip)},
                    {"conforms", !failed()}};
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& r : results_) {
    nlohmann::json c = {{"op", r.op}, {"check", r.check}, {"verdict", verdict_name(r.verdict)}, {"detail", r.detail}};
    if (!r.calls.empty()) c["calls"] = r.calls;
    checks.push_back(std::move(c));
  }
  doc["checks"] = std::move(checks);
  return doc;
}

}  // namespace fugue::conformance
