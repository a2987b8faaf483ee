// householder.cpp: see householder.h.
#include "householder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernel_text.h"
#include "matrices.h"

namespace fugue::linalg {

namespace {

// The code of householder.h for a team (`one` false) or for one work-item with everything unrolled.
std::string householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, bool one) {
  const bool f64 = dtype == FUGUE_DTYPE_F64;
  std::map<std::string, std::string> v = {
      {"t", abi::dtype_ctype(dtype)}, {"M", std::to_string(w.m)}, {"K", std::to_string(w.steps)},
      {"zero", real_literal(dtype, 0)}, {"one", real_literal(dtype, 1)},
      // Sums of squares outside [lo, hi] may have lost digits to underflow or overflowed: recomputed scaled.
      {"lo", f64 ? "(DBL_MIN / DBL_EPSILON)" : "(FLT_MIN / FLT_EPSILON)"},
      {"hi", f64 ? "(DBL_MAX * DBL_EPSILON)" : "(FLT_MAX * FLT_EPSILON)"},
      {"unroll", one ? "#pragma unroll" : ""}};
  for (const char* n : {"k", "i", "c", "q", "x", "ss", "xn", "mx", "rm", "alpha", "go", "beta", "tau", "sc", "pb", "ps", "pdo", "wd"})
    v[n] = em.name(n);
  const std::string k = v["k"], i = v["i"], c = v["c"];
  v["Wkk"] = w.read(k, k);
  v["Wik"] = w.read(i, k);
  v["Wkc"] = w.read(k, c);
  v["Wic"] = w.read(i, c);
  v["Wkc_"] = w.write(k, c);
  v["Wic_"] = w.write(i, c);
  v["Wcc_"] = w.write(c, c);
  const std::string lane = one ? "0" : em.builtin(FUGUE_BUILTIN_LOCAL_ID);
  const std::string sync = one ? "" : em.barrier() + "\n";
  auto columns = [&](const std::string& body) {
    if (one) return fill("#pragma unroll\nfor (int $c = 0; $c < ", v) + std::to_string(w.columns) + "; ++" + c + ") {\n" + body + "}\n";
    return team_loop(v["q"], lane, em.local_size(), c, w.columns, std::to_string(w.columns), body);
  };
  // Column c (the previous step's) takes its beta and its scaled v: rows `from` onwards are v.
  auto finish_previous = [&](const std::string& step, const std::string& from) {
    return fill("    if ($c == " + step + " - 1 && $pdo) $Wcc_ = $pb;\n"
                "    $unroll\n    for (int $i = " + from + "; $i < $M; ++$i) if ($c == " + step + " - 1 && $pdo) $Wic_ *= $ps;\n",
                v);
  };
  std::string code = fill("$t $pb = $zero, $ps = $zero;\nbool $pdo = false;  /* the previous step's beta and v's scale, and whether it reflected */\n"
                          "$unroll\nfor (int $k = 0; $k < $K; ++$k) {\n"
                          "  const $t $alpha = $Wkk;\n"
                          "  $t $ss = $zero;\n"
                          "  $unroll\n  for (int $i = $k + 1; $i < $M; ++$i) { const $t $x = $Wik; $ss += $x * $x; }\n"
                          "  $t $xn = sqrt($ss);\n"
                          "  if (!($ss >= $lo && $ss <= $hi)) {\n"
                          "    $t $mx = $zero;\n"
                          "    $unroll\n    for (int $i = $k + 1; $i < $M; ++$i) $mx = fmax($mx, fabs($Wik));\n"
                          "    $ss = $zero;\n"
                          "    if ($mx > $zero) {\n"
                          "      const $t $rm = $one / $mx;\n"
                          "      $unroll\n      for (int $i = $k + 1; $i < $M; ++$i) { const $t $x = $Wik * $rm; $ss += $x * $x; }\n"
                          "    }\n"
                          "    $xn = $mx * sqrt($ss);\n"
                          "  }\n"
                          "  const bool $go = $xn != $zero;  /* x = 0: H = I, tau = 0 */\n"
                          "  const $t $beta = $go ? -copysign(hypot($alpha, $xn), $alpha) : $alpha;\n"
                          "  const $t $tau = $go ? ($beta - $alpha) / $beta : $zero;\n"
                          "  const $t $sc = $go ? $one / ($alpha - $beta) : $zero;\n",
                          v);
  if (w.keep_tau) code += "  if (" + lane + " == 0) " + w.keep_tau(k, v["tau"]) + ";\n";
  // v_i = W(i, k) * sc as read: the same rounding as the value stored at the next step.
  code += columns(finish_previous(k, k) +
                  fill("    if ($go && $c > $k) {\n"
                       "      $t $wd = $Wkc;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; ++$i) $wd += ($Wik * $sc) * $Wic;\n"
                       "      $wd *= $tau;\n"
                       "      $Wkc_ -= $wd;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; ++$i) $Wic_ -= $wd * ($Wik * $sc);\n"
                       "    }\n",
                       v));
  code += sync + fill("  $pb = $beta;\n  $ps = $sc;\n  $pdo = $go;\n}\n", v);
  code += columns(finish_previous(v["K"], v["K"]));
  return code + sync;
}

}  // namespace

std::string team_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w) {
  return householder(em, dtype, w, false);
}

std::string register_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w) {
  return householder(em, dtype, w, true);
}

void householder_reference(std::vector<long double>& w, int64_t m, int64_t columns, int64_t steps,
                           std::vector<long double>* tau) {
  auto W = [&](int64_t i, int64_t j) -> long double& { return w[static_cast<size_t>(i * columns + j)]; };
  for (int64_t k = 0; k < steps; ++k) {
    const long double alpha = W(k, k);
    long double scale = 0;
    for (int64_t i = k + 1; i < m; ++i) scale = std::max(scale, std::fabs(W(i, k)));
    long double ss = 0;
    if (scale > 0)
      for (int64_t i = k + 1; i < m; ++i) ss += (W(i, k) / scale) * (W(i, k) / scale);
    const long double xnorm = scale * std::sqrt(ss);
    long double t = 0;
    if (xnorm != 0) {
      const long double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
      t = (beta - alpha) / beta;
      for (int64_t i = k + 1; i < m; ++i) W(i, k) /= alpha - beta;
      W(k, k) = beta;
      for (int64_t j = k + 1; j < columns; ++j) {
        long double d = W(k, j);
        for (int64_t i = k + 1; i < m; ++i) d += W(i, k) * W(i, j);
        d *= t;
        W(k, j) -= d;
        for (int64_t i = k + 1; i < m; ++i) W(i, j) -= d * W(i, k);
      }
    }
    if (tau) (*tau)[static_cast<size_t>(k)] = t;
  }
}

}  // namespace fugue::linalg
