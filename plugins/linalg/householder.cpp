// householder.cpp: see householder.h.
#include "householder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernel_text.h"
#include "matrices.h"

namespace fugue::linalg {

namespace {

// Column k's norm below the diagonal, beta, tau and v's scale, every work-item alike, $Xi being row i's
// element of column k (rows k + 1 .. m - 1 read): declares $alpha's companions $go, $beta, $tau, and $sv
// and $sc with v_i = (x_i * sv) * sc. Sums of squares outside [lo, hi] (digits lost to underflow, or
// overflow) are recomputed scaled by the largest element. A tiny column (below $tiny, where 1 / (alpha -
// beta) would overflow) is reflected as if scaled up by $big, a power of two (tau and v do not change
// with the column's scale; beta is scaled back): LAPACK's larfg rescales so too.
// `norms`: the sum of squares comes from the local array $nrm (left there by column k's owner at the
// previous step), but at step 0.
std::string reflector(std::map<std::string, std::string>& v, const std::string& xi, bool norms) {
  v["Xi"] = xi;
  return fill("  $t $ss = $zero;\n" +
                  std::string(norms ? "  if ($k > 0) $ss = $nrm[$k & 1]; else\n" : "") +
                  "  $unroll\n  for (int $i = $from; $i < $to; ++$i) { const $t $x = $Xi; $ss += $x * $x; }\n"
              "  $t $xn = sqrt($ss);\n"
              "  if (!($ss >= $lo && $ss <= $hi)) {\n"
              "    $t $mx = $zero;\n"
              "    $unroll\n    for (int $i = $from; $i < $to; ++$i) $mx = fmax($mx, fabs($Xi));\n"
              "    $ss = $zero;\n"
              "    if ($mx > $zero) {\n"
              "      $unroll\n      for (int $i = $from; $i < $to; ++$i) { const $t $x = $Xi / $mx; $ss += $x * $x; }\n"
              "    }\n"
              "    $xn = $mx * sqrt($ss);\n"
              "  }\n"
              "  const bool $go = $xn != $zero;  /* x = 0: H = I, tau = 0 */\n"
              "  const $t $sv = fmax(fabs($alpha), $xn) < $tiny ? $big : $one;\n"
              "  const $t $as = $alpha * $sv, $bs = $go ? -copysign(hypot($as, $xn * $sv), $as) : $as;\n"
              "  const $t $beta = $bs / $sv;\n"
              "  const $t $tau = $go ? ($bs - $as) / $bs : $zero;\n"
              "  const $t $sc = $go ? $one / ($as - $bs) : $zero;\n",
              v);
}

// The holes every Householder pattern fills: types, sizes, constants.
std::map<std::string, std::string> base_vars(fugue_dtype dtype, const HouseholderWork& w, bool unrolled) {
  const bool f64 = dtype == FUGUE_DTYPE_F64;
  return {{"t", abi::dtype_ctype(dtype)}, {"M", std::to_string(w.m)}, {"K", std::to_string(w.steps)},
          {"C", std::to_string(w.columns)}, {"zero", real_literal(dtype, 0)}, {"one", real_literal(dtype, 1)},
          {"lo", f64 ? "(DBL_MIN / DBL_EPSILON)" : "(FLT_MIN / FLT_EPSILON)"},
          {"hi", f64 ? "(DBL_MAX * DBL_EPSILON)" : "(FLT_MAX * FLT_EPSILON)"},
          {"tiny", real_literal(dtype, std::ldexp(1.0, f64 ? -500 : -60))}, {"big", real_literal(dtype, std::ldexp(1.0, f64 ? 600 : 80))},
          {"unroll", unrolled ? "#pragma unroll" : ""}};
}

// The code of householder.h for a team (`one` false) or for one work-item with everything unrolled.
std::string householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, bool one) {
  std::map<std::string, std::string> v = base_vars(dtype, w, one);
  for (const char* n : {"k", "i", "c", "q", "x", "ss", "xn", "mx", "alpha", "go", "beta", "tau", "sc", "sv", "as", "bs", "pb", "ps", "pv", "pdo",
                        "wd", "we", "sn", "u"})
    v[n] = em.name(n);
  const std::string k = v["k"], i = v["i"], c = v["c"];
  v["Wkk"] = w.read(k, k);
  v["Wik"] = w.read(i, k);
  v["Wkc"] = w.read(k, c);
  v["Wic"] = w.read(i, c);
  v["Wi1k"] = w.read(i + " + 1", k);
  v["Wi1c"] = w.read(i + " + 1", c);
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
                "    $unroll\n    for (int $i = " + from + "; $i < $M; ++$i) if ($c == " + step + " - 1 && $pdo) $Wic_ = ($Wic * $pv) * $ps;\n",
                v);
  };
  std::string code = fill("$t $pb = $zero, $ps = $zero, $pv = $one;\nbool $pdo = false;  /* the previous step's beta and v's scales, and whether it reflected */\n"
                          "$unroll\nfor (int $k = 0; $k < $K; ++$k) {\n"
                          "  const $t $alpha = $Wkk;\n",
                          v);
  // A team: column k + 1's owner leaves its sum of squares below the diagonal in local memory as it
  // updates it (two slots alternating), so the others need not walk it again.
  if (!one) v["nrm"] = em.local_array(dtype, 2, "norms");
  v["from"] = k + " + 1";
  v["to"] = v["M"];
  code += reflector(v, v["Wik"], !one);
  if (w.keep_tau) code += "  if (" + lane + " == 0) " + w.keep_tau(k, v["tau"]) + ";\n";
  // v_i = (W(i, k) * sv) * sc as read: the same rounding as the value stored at the next step.
  code += columns(finish_previous(k, k) +
                  fill("    $t $sn = $zero;\n"
                       "    if ($go && $c > $k) {\n"
                       // Two partial sums: half the chain of dependent additions.
                       "      $t $wd = $Wkc, $we = $zero;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; $i += 2) {\n"
                       "        $wd += (($Wik * $sv) * $sc) * $Wic;\n"
                       "        if ($i + 1 < $M) $we += (($Wi1k * $sv) * $sc) * $Wi1c;\n"
                       "      }\n"
                       "      $wd = ($wd + $we) * $tau;\n"
                       "      $Wkc_ -= $wd;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; ++$i) {\n"
                       "        const $t $u = $Wic - $wd * (($Wik * $sv) * $sc);\n"
                       "        $Wic_ = $u;\n"
                       "        if ($i > $k + 1) $sn += $u * $u;\n"
                       "      }\n"
                       "    } else {\n"
                       "      $unroll\n      for (int $i = $k + 2; $i < $M; ++$i) { const $t $u = $Wic; $sn += $u * $u; }\n"
                       "    }\n" +
                       std::string(one ? "" : "    if ($c == $k + 1) $nrm[($k + 1) & 1] = $sn;\n"),
                       v));
  code += sync + fill("  $pb = $beta;\n  $ps = $sc;\n  $pv = $sv;\n  $pdo = $go;\n}\n", v);
  code += columns(finish_previous(v["K"], v["K"]));
  return code + sync;
}

}  // namespace

Reflector declare_reflector(const sdk::Emitter& em, fugue_dtype dtype, const std::string& stem, const std::string& alpha,
                            const std::function<std::string(const std::string&)>& x, const std::string& from, const std::string& to,
                            std::string& code) {
  std::map<std::string, std::string> v = base_vars(dtype, HouseholderWork{}, false);
  for (const char* n : {"i", "x", "ss", "xn", "mx", "go", "beta", "tau", "sc", "sv", "as", "bs"}) v[n] = em.name(stem + "_" + n);
  v["alpha"] = alpha;
  v["from"] = from;
  v["to"] = to;
  code += reflector(v, x(v["i"]), false);
  return {v["go"], v["beta"], v["tau"], v["sv"], v["sc"]};
}

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
