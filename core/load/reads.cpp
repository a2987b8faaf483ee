// reads.cpp: the count of reads.h, statement by statement over the body's JSON.
#include "load/reads.h"

#include <algorithm>
#include <cmath>

namespace fugue::load {

namespace {

constexpr int64_t kMost = int64_t{1} << 53;
constexpr int64_t kUnknown = -1;

int64_t saturated_sum(int64_t a, int64_t b) { return (a == kUnknown || b == kUnknown) ? kUnknown : std::min(kMost, a + b); }

int64_t saturated_product(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a == kUnknown || b == kUnknown) return kUnknown;
  return a > kMost / b ? kMost : std::min(kMost, a * b);
}

int64_t reads_of_list(const nlohmann::json& list, const std::string& name,
                      const std::function<std::optional<double>(const std::string&)>& count_of);

int64_t reads_of_statement(const nlohmann::json& st, const std::string& name,
                           const std::function<std::optional<double>(const std::string&)>& count_of) {
  if (!st.is_object()) return 0;
  if (st.contains("for")) {
    const int64_t body = st.contains("body") ? reads_of_list(st["body"], name, count_of) : 0;
    if (body == 0) return 0;
    const nlohmann::json& count = st.contains("count") ? st["count"] : nlohmann::json();
    std::optional<double> n;
    if (count.is_number()) n = count.get<double>();
    if (count.is_string()) n = count_of(count.get<std::string>());
    if (!n) return kUnknown;
    if (!(*n >= 0) || !std::isfinite(*n)) return 0;  // the loader refuses it
    return saturated_product(static_cast<int64_t>(std::min(std::round(*n), static_cast<double>(kMost))), body);
  }
  if (st.contains("if")) {
    const int64_t then = st.contains("then") ? reads_of_list(st["then"], name, count_of) : 0;
    const int64_t otherwise = st.contains("else") ? reads_of_list(st["else"], name, count_of) : 0;
    return (then == kUnknown || otherwise == kUnknown) ? kUnknown : std::max(then, otherwise);
  }
  if (st.contains("op") && st.contains("in") && st["in"].is_array()) {
    int64_t n = 0;
    for (const nlohmann::json& in : st["in"])
      if (in.is_string() && in.get_ref<const std::string&>() == name) ++n;
    return n;
  }
  return 0;
}

int64_t reads_of_list(const nlohmann::json& list, const std::string& name,
                      const std::function<std::optional<double>(const std::string&)>& count_of) {
  if (!list.is_array()) return 0;  // the document's nesting was checked before (kMaxJsonDepth)
  int64_t total = 0;
  for (const nlohmann::json& st : list) total = saturated_sum(total, reads_of_statement(st, name, count_of));
  return total;
}

}  // namespace

int64_t reads_in(const nlohmann::json& body, const std::string& name,
                 const std::function<std::optional<double>(const std::string&)>& count_of) {
  return reads_of_list(body, name, count_of);
}

}  // namespace fugue::load
