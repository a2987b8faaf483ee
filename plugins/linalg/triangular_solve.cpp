// triangular_solve.cpp: see triangular_solve.h.
#include "triangular_solve.h"

#include "kernel_text.h"

namespace fugue::linalg {

std::string team_solve(const sdk::Emitter& em, const Triangle& t, const RightHandSides& x) {
  const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
  const int64_t team = em.local_size();
  const std::string s = em.name("s"), k = em.name("k"), h = em.name("h"), o = em.name("o"), q = em.name("q"), i = em.name("i"),
                    c = em.name("c");
  const std::string N = std::to_string(x.n), C = std::to_string(x.columns);
  const std::string solved = t.unit ? x.read(k, c) : "(" + x.read(k, c) + " / " + t.at(k, k) + ")";
  std::map<std::string, std::string> vars = {{"s", s}, {"k", k}, {"h", h}, {"o", o}, {"i", i}, {"c", c}, {"N", N}, {"C", C},
                                             {"first", t.lower ? k + " + 1" : "0"}, {"Xic", x.write(i, c)},
                                             {"Tik", t.at(i, k)}, {"Xkc", solved}, {"Tii", t.at(i, i)},
                                             {"Xic_r", x.read(i, c)}};
  std::string code = fill("for (int $s = 0; $s < $N; ++$s) {\n", vars);
  code += t.lower ? fill("const int $k = $s, $h = $N - 1 - $s;  /* the solved row, the rows below it */\n", vars)
                  : fill("const int $k = $N - 1 - $s, $h = $k;  /* the solved row, the rows above it */\n", vars);
  code += team_loop(q, lane, team, o, x.n * x.columns, h + " * " + C,
                    fill("    const int $i = $first + $o / $C, $c = $o % $C;\n    $Xic -= $Tik * $Xkc;\n", vars));
  code += sync + "}\n";
  if (!t.unit) {
    code += team_loop(q, lane, team, o, x.n * x.columns, std::to_string(x.n * x.columns),
                      fill("    const int $i = $o / $C, $c = $o % $C;\n    $Xic = $Xic_r / $Tii;\n", vars));
    code += sync;
  }
  return code;
}

std::string register_solve(const Triangle& t, int64_t n, const std::string& x) {
  auto el = [&](int64_t i) { return x + "[" + std::to_string(i) + "]"; };
  auto at = [&](int64_t i, int64_t j) { return t.at(std::to_string(i), std::to_string(j)); };
  std::string code;
  for (int64_t s = 0; s < n; ++s) {
    const int64_t k = t.lower ? s : n - 1 - s;
    if (!t.unit) code += el(k) + " /= " + at(k, k) + ";\n";
    for (int64_t i = t.lower ? k + 1 : 0; i < (t.lower ? n : k); ++i) code += el(i) + " -= " + at(i, k) + " * " + el(k) + ";\n";
  }
  return code;
}

}  // namespace fugue::linalg
