// cholesky.cpp: see cholesky.h.
#include "cholesky.h"

#include <cmath>
#include <map>

#include "kernel_text.h"
#include "matrices.h"

namespace fugue::linalg {

std::string register_cholesky(const Scalars& sc, int64_t n, const std::string& f, const std::string& info) {
  std::map<std::string, std::string> v = {{"rt", sc.real_type}, {"N", std::to_string(n)}, {"f", f}, {"info", info}, {"zero", sc.real(0)}};
  for (const char* name : {"k", "i", "j", "d", "s", "r"}) v[name] = f + "_" + name;  // f is unique in the kernel
  v["one"] = sc.real(1);
  const std::string fkk = f + "[" + v["k"] + " * " + v["N"] + " + " + v["k"] + "]";
  v["d_of"] = sc.real_part(fkk);
  v["root"] = sc.from_real(v["s"]);
  v["update"] = sc.mul(f + "[" + v["i"] + " * " + v["N"] + " + " + v["k"] + "]", sc.conj(f + "[" + v["j"] + " * " + v["N"] + " + " + v["k"] + "]"));
  return fill("int $info = 0;\n"
              "#pragma unroll\nfor (int $k = 0; $k < $N; ++$k) {\n"
              "  const $rt $d = $d_of;\n"
              "  if ($info == 0 && !($d > $zero)) $info = $k + 1;\n"
              "  if ($info == 0) {\n"
              "    const $rt $s = sqrt($d), $r = $one / $s;\n"
              "    $f[$k * $N + $k] = $root;\n"
              "    #pragma unroll\n    for (int $i = $k + 1; $i < $N; ++$i) $f[$i * $N + $k] *= $r;\n"
              "    #pragma unroll\n    for (int $i = $k + 1; $i < $N; ++$i)\n"
              "      #pragma unroll\n      for (int $j = $k + 1; $j <= $i; ++$j) $f[$i * $N + $j] -= $update;\n"
              "  }\n}\n",
              v);
}

std::string rows_cholesky(const sdk::Emitter& em, const Scalars& sc, int64_t n, const std::string& a, const std::string& row,
                          const std::string& info) {
  const std::string t = sc.type, rt = sc.real_type, N = std::to_string(n), sync = em.barrier() + "\n";
  const std::string col = em.local_array(sc.dtype, n, "column");
  const std::string d = em.name("d"), s = em.name("s"), l = em.name("l"), r = em.name("r"), lr = em.name("lr");
  auto el = [&](int64_t j) { return a + "[" + std::to_string(j) + "]"; };
  std::string code = "int " + info + " = 0;\n";
  for (int64_t k = 0; k < n; ++k) {
    const std::string K = std::to_string(k);
    code += "if (" + row + " < " + N + ") " + col + "[" + row + "] = " + el(k) + ";\n" + sync;
    code += "{\n  const " + rt + " " + d + " = " + sc.real_part(col + "[" + K + "]") + ";\n";
    code += "  if (" + info + " == 0 && !(" + d + " > " + sc.real(0) + ")) " + info + " = " + std::to_string(k + 1) + ";\n";
    code += "  const " + rt + " " + s + " = sqrt(" + d + "), " + r + " = " + sc.real(1) + " / " + s + ";\n";
    code += "  if (" + info + " == 0 && " + row + " == " + K + ") " + el(k) + " = " + sc.from_real(s) + ";\n";
    code += "  if (" + info + " == 0 && " + row + " > " + K + " && " + row + " < " + N + ") {\n";
    // One division per step; the column's elements are scaled by multiplying (f64 divisions are slow).
    code += "    const " + t + " " + l + " = " + el(k) + " * " + r + ";\n    " + el(k) + " = " + l + ";\n";
    code += "    const " + t + " " + lr + " = " + l + " * " + r + ";\n";
    for (int64_t j = k + 1; j < n; ++j)
      code += "    if (" + std::to_string(j) + " <= " + row + ") " + el(j) + " -= " + sc.mul(lr, sc.conj(col + "[" + std::to_string(j) + "]")) + ";\n";
    code += "  }\n}\n" + sync;  // the column is overwritten next
  }
  return code;
}

std::string loop_cholesky(const Scalars& sc, int64_t n, bool lower, const std::function<std::string(const std::string&, const std::string&)>& A,
                          const std::function<std::string(const std::string&, const std::string&)>& U,
                          const std::function<std::string(const char*)>& name, const std::string& info) {
  std::map<std::string, std::string> vars = {{"t", sc.type},        {"rt", sc.real_type}, {"N", std::to_string(n)},
                                             {"rzero", sc.real(0)}, {"one", sc.real(1)},  {"info", info}};
  for (const char* v : {"r", "c"}) vars[v] = name(v);
  const std::string r = vars["r"], c = vars["c"];
  std::string code = lower ? fill("for (int $r = 0; $r < $N; ++$r)\n  for (int $c = 0; $c <= $r; ++$c) ", vars) + U(c, r) + " = " + sc.conj(A(r, c)) + ";\n"
                           : fill("for (int $r = 0; $r < $N; ++$r)\n  for (int $c = $r; $c < $N; ++$c) ", vars) + U(r, c) + " = " + A(r, c) + ";\n";
  for (const char* v : {"k0", "kend", "k", "i", "j", "d", "s", "rs", "u"}) vars[v] = name(v);
  const std::string k0 = vars["k0"], k = vars["k"], i = vars["i"], j = vars["j"];
  // Rows a block: 4, from order 64 on 8 (PoCL, 2,000 f64 matrices: 32: 6.6 ms by 1, 5.5-6.6 by 4,
  // 7.2-9.4 by 8; 64: 40-44, 30-33, 24-29; 128: 184-220, 145-150, 135-144).
  const int64_t kb = n >= 64 ? 8 : 4;
  vars["KB"] = std::to_string(kb);
  vars["wkk"] = U(k, k);
  vars["wkj"] = U(k, j);
  vars["wij"] = U(i, j);
  vars["d_of"] = sc.real_part(U(k, k));
  vars["root"] = sc.from_real(vars["s"]);
  vars["u_of"] = sc.conj(U(k, i));
  vars["update"] = sc.mul(vars["u"], U(k, j));
  // Blocks of KB rows of U: each block factored row by row, then the rows below it updated by the
  // block's KB rows at once, so that each element below is read and written once a block, not once a row.
  std::string block_u, block_update;
  for (int64_t t = 0; t < kb; ++t) {
    const std::string row = t == 0 ? k0 : k0 + " + " + std::to_string(t), u = vars["u"] + "_" + std::to_string(t);
    block_u += (t == 0 ? "    const $t " : ", ") + u + " = " + sc.conj(U(row, i));
    block_update += (t == 0 ? "" : " + ") + sc.mul(u, U(row, j));
  }
  vars["block_u"] = fill(block_u, vars) + ";\n";
  vars["block_update"] = "(" + block_update + ")";
  return code + fill("int $info = 0;\n"
              "for (int $k0 = 0; $k0 < $N; $k0 += $KB) {\n"
              "  const int $kend = min($k0 + $KB, $N);\n"
              "  for (int $k = $k0; $k < $kend; ++$k) {\n"
              "    const $rt $d = $d_of;\n"
              "    if (!($d > $rzero)) { $info = $k + 1; break; }\n"
              "    const $rt $s = sqrt($d), $rs = $one / $s;\n"
              "    $wkk = $root;\n"
              "    for (int $j = $k + 1; $j < $N; ++$j) $wkj *= $rs;\n"
              "    for (int $i = $k + 1; $i < $kend; ++$i) {\n"
              "      const $t $u = $u_of;\n"
              "      for (int $j = $i; $j < $N; ++$j) $wij -= $update;\n"
              "    }\n"
              "  }\n"
              "  if ($info != 0) break;\n"
              "  for (int $i = $kend; $i < $N; ++$i) {  /* rows past the last block: none */\n"
              "$block_u"
              "    for (int $j = $i; $j < $N; ++$j) $wij -= $block_update;\n"
              "  }\n"
              "}\n",
              vars);
}

std::string team_cholesky(const sdk::Emitter& em, const Scalars& sc, int64_t n,
                          const std::function<std::string(const std::string&)>& read,
                          const std::function<std::string(const std::string&)>& write, const std::string& info) {
  const std::string N = std::to_string(n), lane = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
  const int64_t team = em.local_size();
  std::map<std::string, std::string> vars = {{"t", sc.type}, {"rt", sc.real_type}, {"N", N}, {"info", info}, {"zero", sc.real(0)},
                                             {"one", sc.real(1)}};
  for (const char* v : {"q", "c", "k", "i", "li", "d", "s", "rs", "ok", "ps", "prs", "pdo"}) vars[v] = em.name(v);
  const std::string c = vars["c"], k = vars["k"], i = vars["i"];
  auto L = [&](const std::string& row, const std::string& col) { return write("(" + row + ") * " + N + " + " + col); };
  auto Lr = [&](const std::string& row, const std::string& col) { return read("(" + row + ") * " + N + " + " + col); };
  auto each = [&](const std::string& body) { return team_loop(vars["q"], lane, team, c, n, N, body); };
  vars["d_of"] = sc.real_part(Lr(k, k));
  std::string code = fill("int $info = 0;\n$rt $ps = $zero, $prs = $zero;\nbool $pdo = false;  /* the previous step's root, its reciprocal, success */\n"
                          "for (int $k = 0; $k < $N; ++$k) {\n"
                          "  const $rt $d = $d_of;\n"
                          "  if ($info == 0 && !($d > $zero)) $info = $k + 1;\n"
                          "  const bool $ok = $info == 0;\n"
                          "  const $rt $s = sqrt($d), $rs = $one / $s;\n",
                          vars);
  // Column k - 1's deferred pivot and scaling (rows k and below), then the update from column k.
  code += each("    if (" + c + " == " + k + " - 1 && " + vars["pdo"] + ") " + L(c, c) + " = " + sc.from_real(vars["ps"]) + ";\n");
  // Row i's element of the pivot column, scaled once per row (the same in every work-item).
  code += fill("  for (int $i = $k; $i < $N; ++$i) {\n    const $t $li = ", vars) + Lr(i, k) + " * " + vars["rs"] + ";\n";
  code += each("    if (" + c + " == " + k + " - 1 && " + vars["pdo"] + ") " + L(i, c) + " *= " + vars["prs"] + ";\n" +
               "    if (" + vars["ok"] + " && " + c + " > " + k + " && " + i + " >= " + c + ") " + L(i, c) + " -= " +
               sc.mul(vars["li"], sc.conj("(" + Lr(c, k) + " * " + vars["rs"] + ")")) + ";\n");  // scaled before multiplying: no overflow
  code += "  }\n";
  code += fill("  $ps = $s;\n  $prs = $rs;\n  $pdo = $ok;\n", vars);
  code += "  " + sync + "}\n";
  // The last column's pivot (no rows below it).
  code += each("    if (" + c + " == " + N + " - 1 && " + vars["pdo"] + ") " + L(c, c) + " = " + sc.from_real(vars["ps"]) + ";\n");
  return code + sync;
}

int64_t cholesky_reference(std::vector<Complex>& f, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const long double d = f[k * n + k].real();
    if (!(d > 0)) return k + 1;
    const long double s = std::sqrt(d);
    f[k * n + k] = s;
    for (int64_t i = k + 1; i < n; ++i) f[i * n + k] /= s;
    for (int64_t i = k + 1; i < n; ++i)
      for (int64_t j = k + 1; j <= i; ++j) f[i * n + j] -= f[i * n + k] * std::conj(f[j * n + k]);
  }
  return 0;
}

void cholesky_solve_reference(const std::vector<Complex>& f, int64_t n, std::vector<Complex>& y) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) y[i] -= f[i * n + j] * y[j];
    y[i] /= f[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    for (int64_t j = i + 1; j < n; ++j) y[i] -= std::conj(f[j * n + i]) * y[j];
    y[i] /= std::conj(f[i * n + i]);
  }
}

}  // namespace fugue::linalg
