// cholesky.cpp: see cholesky.h.
#include "cholesky.h"

#include <map>

#include "kernel_text.h"
#include "matrices.h"

namespace fugue::linalg {

std::string register_cholesky(fugue_dtype dtype, int64_t n, const std::string& f, const std::string& info) {
  std::map<std::string, std::string> v = {{"t", abi::dtype_ctype(dtype)}, {"N", std::to_string(n)}, {"f", f}, {"info", info},
                                          {"zero", real_literal(dtype, 0)}};
  for (const char* name : {"k", "i", "j", "d", "s"}) v[name] = f + "_" + name;  // f is unique in the kernel
  return fill("int $info = 0;\n"
              "#pragma unroll\nfor (int $k = 0; $k < $N; ++$k) {\n"
              "  const $t $d = $f[$k * $N + $k];\n"
              "  if ($info == 0 && !($d > $zero)) $info = $k + 1;\n"
              "  if ($info == 0) {\n"
              "    const $t $s = sqrt($d);\n"
              "    $f[$k * $N + $k] = $s;\n"
              "    #pragma unroll\n    for (int $i = $k + 1; $i < $N; ++$i) $f[$i * $N + $k] /= $s;\n"
              "    #pragma unroll\n    for (int $i = $k + 1; $i < $N; ++$i)\n"
              "      #pragma unroll\n      for (int $j = $k + 1; $j <= $i; ++$j) $f[$i * $N + $j] -= $f[$i * $N + $k] * $f[$j * $N + $k];\n"
              "  }\n}\n",
              v);
}

std::string team_cholesky(const sdk::Emitter& em, fugue_dtype dtype, int64_t n,
                          const std::function<std::string(const std::string&)>& read,
                          const std::function<std::string(const std::string&)>& write, const std::string& info) {
  const std::string N = std::to_string(n), lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
  const int64_t team = em.local_size();
  std::map<std::string, std::string> vars = {{"t", abi::dtype_ctype(dtype)}, {"N", N}, {"info", info},
                                             {"zero", real_literal(dtype, 0)}, {"one", real_literal(dtype, 1)}};
  for (const char* v : {"q", "c", "k", "i", "li", "d", "s", "rs", "ok", "ps", "prs", "pdo"}) vars[v] = em.name(v);
  const std::string c = vars["c"], k = vars["k"], i = vars["i"];
  auto L = [&](const std::string& row, const std::string& col) { return write("(" + row + ") * " + N + " + " + col); };
  auto Lr = [&](const std::string& row, const std::string& col) { return read("(" + row + ") * " + N + " + " + col); };
  auto each = [&](const std::string& body) { return team_loop(vars["q"], lane, team, c, n, N, body); };
  vars["Lkk"] = Lr(k, k);
  std::string code = fill("int $info = 0;\n$t $ps = $zero, $prs = $zero;\nbool $pdo = false;  /* the previous step's root, its reciprocal, success */\n"
                          "for (int $k = 0; $k < $N; ++$k) {\n"
                          "  const $t $d = $Lkk;\n"
                          "  if ($info == 0 && !($d > $zero)) $info = $k + 1;\n"
                          "  const bool $ok = $info == 0;\n"
                          "  const $t $s = sqrt($d), $rs = $one / $s;\n",
                          vars);
  // Column k - 1's deferred pivot and scaling (rows k and below), then the update from column k.
  code += each("    if (" + c + " == " + k + " - 1 && " + vars["pdo"] + ") " + L(c, c) + " = " + vars["ps"] + ";\n");
  // Row i's element of the pivot column, scaled once per row (the same in every work-item).
  code += fill("  for (int $i = $k; $i < $N; ++$i) {\n    const $t $li = ", vars) + Lr(i, k) + " * " + vars["rs"] + ";\n";
  code += each("    if (" + c + " == " + k + " - 1 && " + vars["pdo"] + ") " + L(i, c) + " *= " + vars["prs"] + ";\n" +
               "    if (" + vars["ok"] + " && " + c + " > " + k + " && " + i + " >= " + c + ") " + L(i, c) + " -= " + vars["li"] +
               " * (" + Lr(c, k) + " * " + vars["rs"] + ");\n");  // scaled before multiplying: no overflow
  code += "  }\n";
  code += fill("  $ps = $s;\n  $prs = $rs;\n  $pdo = $ok;\n", vars);
  code += "  " + sync + "}\n";
  // The last column's pivot (no rows below it).
  code += each("    if (" + c + " == " + N + " - 1 && " + vars["pdo"] + ") " + L(c, c) + " = " + vars["ps"] + ";\n");
  return code + sync;
}

}  // namespace fugue::linalg
