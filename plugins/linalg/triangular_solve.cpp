// triangular_solve.cpp: see triangular_solve.h.
#include "triangular_solve.h"

#include "kernel_text.h"

namespace fugue::linalg {

std::string team_solve(const sdk::Emitter& em, const Scalars& sc, const Triangle& t, const RightHandSides& x) {
  const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
  const int64_t team = em.local_size();
  const std::string s = em.name("s"), k = em.name("k"), h = em.name("h"), o = em.name("o"), q = em.name("q"), i = em.name("i"),
                    c = em.name("c");
  const std::string N = std::to_string(x.n), C = std::to_string(x.columns);
  const std::string solved = t.unit ? x.read(k, c) : sc.div(x.read(k, c), t.at(k, k));
  std::map<std::string, std::string> vars = {{"s", s}, {"k", k}, {"h", h}, {"o", o}, {"i", i}, {"c", c}, {"N", N}, {"C", C},
                                             {"first", t.lower ? k + " + 1" : "0"}, {"Xic", x.write(i, c)},
                                             {"update", sc.mul(t.at(i, k), solved)}, {"divided", sc.div(x.read(i, c), t.at(i, i))}};
  std::string code = fill("for (int $s = 0; $s < $N; ++$s) {\n", vars);
  code += t.lower ? fill("const int $k = $s, $h = $N - 1 - $s;  /* the solved row, the rows below it */\n", vars)
                  : fill("const int $k = $N - 1 - $s, $h = $k;  /* the solved row, the rows above it */\n", vars);
  code += team_loop(q, lane, team, o, x.n * x.columns, h + " * " + C,
                    fill("    const int $i = $first + $o / $C, $c = $o % $C;\n    $Xic -= $update;\n", vars));
  code += sync + "}\n";
  if (!t.unit) {
    code += team_loop(q, lane, team, o, x.n * x.columns, std::to_string(x.n * x.columns),
                      fill("    const int $i = $o / $C, $c = $o % $C;\n    $Xic = $divided;\n", vars));
    code += sync;
  }
  return code;
}

std::string register_solve(const Scalars& sc, const Triangle& t, int64_t n, const std::string& x) {
  auto el = [&](int64_t i) { return x + "[" + std::to_string(i) + "]"; };
  auto at = [&](int64_t i, int64_t j) { return t.at(std::to_string(i), std::to_string(j)); };
  std::string code;
  for (int64_t s = 0; s < n; ++s) {
    const int64_t k = t.lower ? s : n - 1 - s;
    if (!t.unit) code += el(k) + " = " + sc.div(el(k), at(k, k)) + ";\n";
    for (int64_t i = t.lower ? k + 1 : 0; i < (t.lower ? n : k); ++i) code += el(i) + " -= " + sc.mul(at(i, k), el(k)) + ";\n";
  }
  return code;
}

std::string solve_all(const sdk::Emitter& em, fugue_dtype dtype, const ElementAt& b, const RightHandSides& x,
                      const std::vector<Triangle>& triangles, const std::string& scale, bool in_local, bool registers) {
  const Scalars sc(dtype);
  auto scaled = [&](const std::string& value) { return scale.empty() ? value : scale + " * " + value; };
  if (registers) {
    const std::string r = em.name("x"), c = em.name("c");
    std::string code = "for (int " + c + " = 0; " + c + " < " + std::to_string(x.columns) + "; ++" + c + ") {\n";
    code += std::string(abi::dtype_ctype(dtype)) + " " + r + "[" + std::to_string(x.n) + "];\n";
    for (int64_t i = 0; i < x.n; ++i) code += r + "[" + std::to_string(i) + "] = " + scaled(b(std::to_string(i), c)) + ";\n";
    for (const Triangle& t : triangles) code += register_solve(sc, t, x.n, r);
    for (int64_t i = 0; i < x.n; ++i) code += x.write(std::to_string(i), c) + " = " + r + "[" + std::to_string(i) + "];\n";
    return code + "}\n";
  }
  const std::string e = em.name("e"), q = em.name("q"), i = em.name("i"), j = em.name("j"), C = std::to_string(x.columns);
  const std::string lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), all = std::to_string(x.n * x.columns);
  const std::string at = "    const int " + i + " = " + e + " / " + C + ", " + j + " = " + e + " % " + C + ";\n";
  // The solution in a local array of its own where it fits, written out once at the end.
  const std::string w = in_local ? em.local_array(dtype, x.n * x.columns, "solution") : "";
  const ElementAt w_at = [&](const std::string& r, const std::string& c) { return w + "[(" + r + ") * " + C + " + (" + c + ")]"; };
  const RightHandSides work = in_local ? RightHandSides{w_at, w_at, x.n, x.columns} : x;
  std::string code = team_loop(q, lane, em.local_size(), e, x.n * x.columns, all,
                               at + "    " + work.write(i, j) + " = " + scaled(b(i, j)) + ";\n");
  code += em.barrier() + "\n";
  for (const Triangle& t : triangles) code += team_solve(em, sc, t, work);
  if (in_local) code += team_loop(q, lane, em.local_size(), e, x.n * x.columns, all, at + "    " + x.write(i, j) + " = " + w_at(i, j) + ";\n");
  return code;
}

}  // namespace fugue::linalg
