// kernel_text.cpp: see kernel_text.h.
#include "kernel_text.h"

#include <cctype>
#include <stdexcept>

namespace fugue::linalg {

std::string fill(const std::string& pattern, const std::map<std::string, std::string>& vars) {
  std::string out;
  out.reserve(pattern.size() * 2);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '$') {
      out += pattern[i];
      continue;
    }
    size_t end = i + 1;
    while (end < pattern.size() && (std::isalnum(static_cast<unsigned char>(pattern[end])) || pattern[end] == '_')) ++end;
    const std::string key = pattern.substr(i + 1, end - i - 1);
    auto it = vars.find(key);
    if (key.empty() || it == vars.end()) throw std::logic_error("kernel text: no value for $" + key + " in: " + pattern);
    out += it->second;
    i = end - 1;
  }
  return out;
}

std::string row_into_registers(const sdk::Emitter& em, uint32_t operand, const std::string& row, int64_t rows, int64_t columns,
                               const std::string& into, int64_t offset, const std::string& zero) {
  const std::string inside = row + " < " + std::to_string(rows), start = "min(" + row + ", " + std::to_string(rows - 1) + ") * " + std::to_string(columns);
  std::string code;
  for (int64_t j = 0; j < columns; ++j)
    code += into + "[" + std::to_string(offset + j) + "] = " + inside + " ? " + em.read_at(operand, start + " + " + std::to_string(j)) + " : " + zero + ";\n";
  return code;
}

std::string team_loop(const std::string& trip, const std::string& lane, int64_t team, const std::string& index,
                      int64_t count, const std::string& bound, const std::string& body) {
  const int64_t trips = count <= 0 ? 0 : (count + team - 1) / team;
  if (trips == 0) return "";
  // One index per work-item: no loop (PoCL miscompiled one-trip loops between barriers too).
  if (trips == 1)
    return fill("{\n  const int $i = $lane;\n  if ($i < ($bound)) {\n$body  }\n}\n", {{"lane", lane}, {"i", index}, {"bound", bound}, {"body", body}});
  return fill("for (int $q = 0; $q < $trips; ++$q) {\n  const int $i = $q * $team + $lane;\n  if ($i < ($bound)) {\n$body  }\n}\n",
              {{"q", trip}, {"trips", std::to_string(trips)}, {"team", std::to_string(team)}, {"lane", lane},
               {"i", index}, {"bound", bound}, {"body", body}});
}

GridCode::GridCode(const sdk::Emitter& em, const Grid& g, int64_t m, int64_t n)
    : P(g.rows), Q(g.columns), BR(g.block_rows(m)), BC(g.block_columns(n)), p(em.name("p")), q(em.name("q")), a(em.name("a")) {}

std::string GridCode::declarations(const std::string& lane, const std::string& type) const {
  std::string code = "const int " + p + " = " + lane + " / " + std::to_string(Q) + ", " + q + " = " + lane + " % " + std::to_string(Q) + ";\n";
  for (int64_t bi = 0; bi < BR; ++bi) code += "const int " + row(bi) + " = " + p + " + " + std::to_string(bi * P) + ";\n";
  for (int64_t bj = 0; bj < BC; ++bj) code += "const int " + col(bj) + " = " + q + " + " + std::to_string(bj * Q) + ";\n";
  return code + type + " " + a + "[" + std::to_string(BR * BC) + "];\n";
}

}  // namespace fugue::linalg
