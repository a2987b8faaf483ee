// householder.cpp: see householder.h.
#include "householder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernel_text.h"
#include "matrices.h"
#include "scalars.h"

namespace fugue::linalg {

namespace {

// Column k's norm below the diagonal, beta, tau and v's scale, every work-item alike, $Xi being row i's
// element of column k (rows k + 1 .. m - 1 read): declares $alpha's companions $go, $beta (real), $tau,
// and $sv and $sc with v_i = (x_i * sv) * sc. Sums of squares outside [lo, hi] (digits lost to
// underflow, or overflow) are recomputed scaled by the largest part. A tiny column (below $tiny, where
// 1 / (alpha - beta) would overflow) is reflected as if scaled up by $big, a power of two (tau and v do
// not change with the column's scale; beta is scaled back): LAPACK's larfg rescales so too. Complex
// (zlarfg): beta = -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha) / beta, nothing to do only when
// x = 0 and alpha is real.
// `norms`: the sum of squares comes from the local array $nrm (left there by column k's owner at the
// previous step), but at step 0.
std::string reflector(const Scalars& sc, std::map<std::string, std::string>& v, const std::string& xi, bool norms) {
  v["Xi"] = xi;
  v["x2"] = sc.abs2(v["x"]);
  v["Xi_part"] = sc.max_part(xi);
  v["alpha_part"] = sc.max_part(v["alpha"]);
  // alpha * sv and its real part; for complex numbers also whether alpha has an imaginary part.
  v["as_re"] = sc.real_part(v["as"]);
  v["alpha_im"] = sc.complex ? " || (" + v["alpha"] + ").y != " + sc.real(0) : "";
  v["tau_of"] = sc.complex ? "(" + sc.type + ")(($bs - " + v["as"] + ".x) / $bs, -" + v["as"] + ".y / $bs)" : "($bs - $as) / $bs";
  std::string code = fill("  $rt $ss = $zero;\n" +
                              std::string(norms ? "  if ($k > 0) $ss = $nrm[$k & 1]; else\n" : "") +
                              "  $unroll\n  for (int $i = $from; $i < $to; ++$i) { const $t $x = $Xi; $ss += $x2; }\n"
                          "  $rt $xn = sqrt($ss);\n"
                          "  if (!($ss >= $lo && $ss <= $hi)) {\n"
                          "    $rt $mx = $zero;\n"
                          "    $unroll\n    for (int $i = $from; $i < $to; ++$i) $mx = fmax($mx, $Xi_part);\n"
                          "    $ss = $zero;\n"
                          "    if ($mx > $zero) {\n"
                          "      $unroll\n      for (int $i = $from; $i < $to; ++$i) { const $t $x = $Xi / $mx; $ss += $x2; }\n"
                          "    }\n"
                          "    $xn = $mx * sqrt($ss);\n"
                          "  }\n",
                          v);
  v["tau_of"] = fill(v["tau_of"], v);
  v["abs_as"] = sc.complex ? "hypot(" + v["as"] + ".x, " + v["as"] + ".y)" : v["as"];
  code += fill("  const bool $go = $xn != $zero$alpha_im;  /* nothing to reflect: H = I, tau = 0 */\n"
               "  const $rt $sv = fmax($alpha_part, $xn) < $tiny ? $big : $one;\n"
               "  const $t $as = $alpha * $sv;\n"
               "  const $rt $bs = $go ? -copysign(hypot($abs_as, $xn * $sv), $as_re) : $as_re;\n"
               "  const $rt $beta = $bs / $sv;\n"
               "  const $t $tau = $go ? $tau_of : $tzero;\n",
               v);
  // 1 / (alpha - beta), scaled: |alpha - beta| >= |beta| >= |alpha|, no cancellation.
  const std::string d = v["sc"] + "_d", r = v["sc"] + "_r";
  code += "  const " + sc.type + " " + d + " = " + v["go"] + " ? " + v["as"] + " - " + sc.from_real(v["bs"]) + " : " + sc.literal(1) + ";\n";
  code += "  " + sc.declare_reciprocal(r, d);
  code += fill("  const $t $sc = $go ? ", v) + r + fill(" : $tzero;\n", v);
  return code;
}

// The holes every Householder pattern fills: types, sizes, constants.
std::map<std::string, std::string> base_vars(const Scalars& sc, const HouseholderWork& w, bool unrolled) {
  const ReflectorLimits limits = reflector_limits(sc.dtype);
  return {{"t", sc.type}, {"rt", sc.real_type}, {"M", std::to_string(w.m)}, {"K", std::to_string(w.steps)},
          {"C", std::to_string(w.columns)}, {"zero", sc.real(0)}, {"one", sc.real(1)}, {"tzero", sc.literal(0)},
          {"lo", limits.lo}, {"hi", limits.hi}, {"tiny", limits.tiny}, {"big", limits.big},
          {"unroll", unrolled ? "#pragma unroll" : ""}};
}

// The code of householder.h for a team (`one` false) or for one work-item with everything unrolled.
// Complex: W is updated by H^H = I - conj(tau) v v^H, as zgeqr2 applies it.
std::string householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, bool one) {
  const Scalars sc(dtype);
  std::map<std::string, std::string> v = base_vars(sc, w, one);
  for (const char* n : {"k", "i", "c", "q", "x", "ss", "xn", "mx", "alpha", "go", "beta", "tau", "sc", "sv", "as", "bs", "pb", "ps", "pv", "pdo",
                        "wd", "we", "sn", "u", "vi", "vj"})
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
  // The products of the update, through Scalars (complex: conjugates where H^H needs them).
  v["vi_of"] = sc.mul("(" + v["Wik"] + ") * " + v["sv"], v["sc"]);
  v["vj_of"] = sc.mul("(" + v["Wi1k"] + ") * " + v["sv"], v["sc"]);
  v["dot_i"] = sc.mul(sc.conj(v["vi"]), v["Wic"]);
  v["dot_j"] = sc.mul(sc.conj(v["vj"]), v["Wi1c"]);
  v["scaled"] = sc.mul(sc.conj(v["tau"]), "(" + v["wd"] + " + " + v["we"] + ")");
  v["minus"] = sc.mul(v["wd"], v["vi"]);
  v["u2"] = sc.abs2(v["u"]);
  v["v_of_prev"] = sc.mul("(" + v["Wic"] + ") * " + v["pv"], v["ps"]);
  v["beta_t"] = sc.from_real(v["beta"]);
  const std::string lane = one ? "0" : em.builtin(FUGUE_BUILTIN_LOCAL_ID);
  const std::string sync = one ? "" : em.barrier() + "\n";
  auto columns = [&](const std::string& body) {
    if (one) return fill("#pragma unroll\nfor (int $c = 0; $c < ", v) + std::to_string(w.columns) + "; ++" + c + ") {\n" + body + "}\n";
    return team_loop(v["q"], lane, em.local_size(), c, w.columns, std::to_string(w.columns), body);
  };
  // Column c (the previous step's) takes its beta and its scaled v: rows `from` onwards are v.
  auto finish_previous = [&](const std::string& step, const std::string& from) {
    return fill("    if ($c == " + step + " - 1 && $pdo) $Wcc_ = $pb;\n"
                "    $unroll\n    for (int $i = " + from + "; $i < $M; ++$i) if ($c == " + step + " - 1 && $pdo) $Wic_ = $v_of_prev;\n",
                v);
  };
  std::string code = fill("$t $pb = $tzero, $ps = $tzero;\n$rt $pv = $one;\nbool $pdo = false;  /* the previous step's beta and v's scales, and whether it reflected */\n"
                          "$unroll\nfor (int $k = 0; $k < $K; ++$k) {\n"
                          "  const $t $alpha = $Wkk;\n",
                          v);
  // A team: column k + 1's owner leaves its sum of squares below the diagonal in local memory as it
  // updates it (two slots alternating), so the others need not walk it again.
  if (!one) v["nrm"] = em.local_array(part_dtype(dtype), 2, "norms");
  v["from"] = k + " + 1";
  v["to"] = v["M"];
  code += reflector(sc, v, v["Wik"], !one);
  if (w.keep_tau) code += "  if (" + lane + " == 0) " + w.keep_tau(k, v["tau"]) + ";\n";
  // v_i = (W(i, k) * sv) * sc as read: the same rounding as the value stored at the next step.
  code += columns(finish_previous(k, k) +
                  fill("    $rt $sn = $zero;\n"
                       "    if ($go && $c > $k) {\n"
                       // Two partial sums: half the chain of dependent additions.
                       "      $t $wd = $Wkc, $we = $tzero;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; $i += 2) {\n"
                       "        const $t $vi = $vi_of;\n"
                       "        $wd += $dot_i;\n"
                       "        if ($i + 1 < $M) { const $t $vj = $vj_of; $we += $dot_j; }\n"
                       "      }\n"
                       "      $wd = $scaled;\n"
                       "      $Wkc_ -= $wd;\n"
                       "      $unroll\n      for (int $i = $k + 1; $i < $M; ++$i) {\n"
                       "        const $t $vi = $vi_of;\n"
                       "        const $t $u = $Wic - $minus;\n"
                       "        $Wic_ = $u;\n"
                       "        if ($i > $k + 1) $sn += $u2;\n"
                       "      }\n"
                       "    } else {\n"
                       "      $unroll\n      for (int $i = $k + 2; $i < $M; ++$i) { const $t $u = $Wic; $sn += $u2; }\n"
                       "    }\n" +
                       std::string(one ? "" : "    if ($c == $k + 1) $nrm[($k + 1) & 1] = $sn;\n"),
                       v));
  code += sync + fill("  $pb = $beta_t;\n  $ps = $sc;\n  $pv = $sv;\n  $pdo = $go;\n}\n", v);
  code += columns(finish_previous(v["K"], v["K"]));
  return code + sync;
}

}  // namespace

ReflectorLimits reflector_limits(fugue_dtype dtype) {
  const bool f64 = part_dtype(dtype) == FUGUE_DTYPE_F64;
  return {f64 ? "(DBL_MIN/DBL_EPSILON)" : "(FLT_MIN/FLT_EPSILON)", f64 ? "(DBL_MAX*DBL_EPSILON)" : "(FLT_MAX*FLT_EPSILON)",
          real_literal(part_dtype(dtype), std::ldexp(1.0, f64 ? -500 : -60)), real_literal(part_dtype(dtype), std::ldexp(1.0, f64 ? 600 : 80))};
}

Reflector declare_reflector(const sdk::Emitter& em, fugue_dtype dtype, const std::string& stem, const std::string& alpha,
                            const std::function<std::string(const std::string&)>& x, const std::string& from, const std::string& to,
                            std::string& code, bool unrolled) {
  const Scalars sc(dtype);
  std::map<std::string, std::string> v = base_vars(sc, HouseholderWork{}, unrolled);
  for (const char* n : {"i", "x", "ss", "xn", "mx", "go", "beta", "tau", "sc", "sv", "as", "bs"}) v[n] = em.name(stem + "_" + n);
  v["alpha"] = alpha;
  v["from"] = from;
  v["to"] = to;
  code += reflector(sc, v, x(v["i"]), false);
  return {v["go"], v["beta"], v["tau"], v["sv"], v["sc"]};
}

std::string team_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w) {
  return householder(em, dtype, w, false);
}

std::string loop_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, const std::string& row_sums) {
  const Scalars sc(dtype);
  std::map<std::string, std::string> v = base_vars(sc, w, false);
  for (const char* n : {"k", "i", "c", "vi", "ui", "ct", "ct2", "d"}) v[n] = em.name(n);
  const std::string k = v["k"], i = v["i"], c = v["c"], k1 = k + " + 1";
  v["k1"] = k1;
  // H = I - ct v v^H on W's columns first..end - 1, rows kk.. (v_kk = 1, v_i = W(i, kk) below it).
  auto reflect = [&](const std::string& kk, const std::string& first, const std::string& end, const std::string& ct) {
    std::map<std::string, std::string> u = v;
    u["kk"] = kk;
    u["first"] = first;
    u["end"] = end;
    u["wc"] = row_sums + "[" + c + "]";
    u["Wkc"] = w.read(kk, c);
    u["Wkc_"] = w.write(kk, c);
    u["Wic_"] = w.write(i, c);
    u["vi_conj"] = sc.conj(w.read(i, kk));
    u["vi_of"] = w.read(i, kk);
    u["sum"] = sc.mul(v["vi"], w.read(i, c));
    u["scaled"] = sc.mul(ct, u["wc"]);
    u["minus"] = sc.mul(v["vi"], u["wc"]);
    return fill("    for (int $c = $first; $c < $end; ++$c) $wc = $Wkc;\n"
                "    for (int $i = $kk + 1; $i < $M; ++$i) {\n"
                "      const $t $vi = $vi_conj;\n"
                "      for (int $c = $first; $c < $end; ++$c) $wc += $sum;\n"
                "    }\n"
                "    for (int $c = $first; $c < $end; ++$c) { $wc = $scaled; $Wkc_ -= $wc; }\n"
                "    for (int $i = $kk + 1; $i < $M; ++$i) {\n"
                "      const $t $vi = $vi_of;\n"
                "      for (int $c = $first; $c < $end; ++$c) $Wic_ -= $minus;\n"
                "    }\n",
                u);
  };
  // Steps two at a time: H_k's reflection of column k + 1 alone, then H_k+1's reflector, then both applied
  // to the columns right of them in one pass that forms both sums and one that updates (H_k+1^H H_k^H W =
  // W - v z1 - u z2, z1 = conj(tau_k) v^H W, z2 = conj(tau_k+1) (u^H W - (u^H v) z1)), each element of W
  // read twice a pair of steps instead of four times.
  std::string code = fill("for (int $k = 0; $k < $K; $k += 2) {\n", v);
  const Reflector h = declare_reflector(em, dtype, "h", w.read(k, k), [&](const std::string& x) { return w.read(x, k); }, k1, v["M"], code);
  if (w.keep_tau) code += "  " + w.keep_tau(k, h.tau) + ";\n";
  v["go"] = h.go;
  v["ct_of"] = sc.conj(h.tau);
  v["Wik_"] = w.write(i, k);
  v["v_of"] = sc.mul("(" + w.read(i, k) + ") * " + h.sv, h.sc);  // v_i, as the team's code rounds it
  v["Wkk_"] = w.write(k, k);
  v["beta"] = sc.from_real(h.beta);
  code += fill("  const $t $ct = $ct_of;\n"
               "  if ($go) for (int $i = $k1; $i < $M; ++$i) $Wik_ = $v_of;\n"
               "  if ($k1 == $K) {  /* the last step of an odd count: H_k alone */\n"
               "    if ($go) {\n",
               v);
  code += reflect(k, k1, v["C"], v["ct"]);
  code += fill("    }\n    $Wkk_ = $beta;\n    break;\n  }\n", v);
  // Column k + 1 by H_k, then H_k+1 from it.
  code += fill("  if ($go) {\n", v) + reflect(k, k1, k + " + 2", v["ct"]) + fill("  }\n  $Wkk_ = $beta;\n", v);
  const Reflector g = declare_reflector(em, dtype, "g", w.read(k1, k1), [&](const std::string& x) { return w.read(x, k1); }, k + " + 2", v["M"], code);
  if (w.keep_tau) code += "  " + w.keep_tau("(" + k1 + ")", g.tau) + ";\n";
  {
    std::map<std::string, std::string> u = v;
    u["go2"] = g.go;
    u["ct2_of"] = sc.conj(g.tau);
    u["Wi1_"] = w.write(i, k1);
    u["u_of"] = sc.mul("(" + w.read(i, k1) + ") * " + g.sv, g.sc);
    u["W11_"] = w.write(k1, k1);
    u["beta2"] = sc.from_real(g.beta);
    // d = u^H v: u_k = 0, u_k+1 = 1.
    u["d_of"] = w.read(k1, k);
    u["d_add"] = sc.mul(sc.conj(w.read(i, k1)), w.read(i, k));
    u["y1"] = row_sums + "[" + c + "]";
    u["y2"] = row_sums + "[" + std::to_string(w.columns) + " + " + c + "]";
    u["y1_of"] = w.read(k, c) + " + " + sc.mul(sc.conj(w.read(k1, k)), w.read(k1, c));
    u["y2_of"] = w.read(k1, c);
    u["add1"] = sc.mul(v["vi"], w.read(i, c));
    u["add2"] = sc.mul(v["ui"], w.read(i, c));
    u["vi_conj"] = sc.conj(w.read(i, k));
    u["ui_conj"] = sc.conj(w.read(i, k1));
    u["vi_of"] = w.read(i, k);
    u["ui_of"] = w.read(i, k1);
    u["z1_of"] = sc.mul(v["ct"], u["y1"]);
    u["z2_of"] = sc.mul(v["ct2"], "(" + u["y2"] + " - " + sc.mul(v["d"], u["y1"]) + ")");
    u["Wkc_"] = w.write(k, c);
    u["W1c_"] = w.write(k1, c);
    u["row1"] = sc.mul(w.read(k1, k), u["y1"]);
    u["Wic_"] = w.write(i, c);
    u["both"] = sc.mul(v["vi"], u["y1"]) + " + " + sc.mul(v["ui"], u["y2"]);
    code += fill("  const $t $ct2 = $ct2_of;\n"
                 "  if ($go2) for (int $i = $k + 2; $i < $M; ++$i) $Wi1_ = $u_of;\n"
                 "  if ($go && $go2) {\n"
                 "    $t $d = $d_of;\n"
                 "    for (int $i = $k + 2; $i < $M; ++$i) $d += $d_add;\n"
                 "    for (int $c = $k + 2; $c < $C; ++$c) { $y1 = $y1_of; $y2 = $y2_of; }\n"
                 "    for (int $i = $k + 2; $i < $M; ++$i) {\n"
                 "      const $t $vi = $vi_conj, $ui = $ui_conj;\n"
                 "      for (int $c = $k + 2; $c < $C; ++$c) { $y1 += $add1; $y2 += $add2; }\n"
                 "    }\n"
                 "    for (int $c = $k + 2; $c < $C; ++$c) {\n"
                 "      $y1 = $z1_of;\n"
                 "      $y2 = $z2_of;\n"
                 "      $Wkc_ -= $y1;\n"
                 "      $W1c_ -= $row1 + $y2;\n"
                 "    }\n"
                 "    for (int $i = $k + 2; $i < $M; ++$i) {\n"
                 "      const $t $vi = $vi_of, $ui = $ui_of;\n"
                 "      for (int $c = $k + 2; $c < $C; ++$c) $Wic_ -= $both;\n"
                 "    }\n"
                 "  } else if ($go) {\n",
                 u);
    code += reflect(k, k + " + 2", v["C"], v["ct"]);
    code += fill("  } else if ($go2) {\n", u);
    code += reflect(k1, k + " + 2", v["C"], v["ct2"]);
    code += fill("  }\n  $W11_ = $beta2;\n}\n", u);
  }
  return code;
}

std::string column_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, const std::string& column,
                               const std::string& lane) {
  const Scalars sc(dtype);
  const std::string M = std::to_string(w.m), C = std::to_string(w.columns), sync = em.barrier() + "\n";
  const std::string vs = em.local_array(dtype, 2 * w.m, "reflectors"), taus = em.local_array(dtype, 2, "taus");
  const std::string i = em.name("i"), tau = em.name("tau"), wd = em.name("wd"), we = em.name("we"), vi = em.name("vi");
  auto el = [&](const std::string& r) { return column + "[" + r + "]"; };
  // tau is 0 exactly where there is nothing to reflect (H = I): the others skip the update then, as
  // the team's code does, so that an infinity in their columns is not multiplied by 0.
  const std::string reflects = sc.complex ? "(" + tau + ".x != " + sc.real(0) + " || " + tau + ".y != " + sc.real(0) + ")"
                                          : tau + " != " + sc.real(0);
  std::string code;
  for (int64_t k = 0; k < w.steps; ++k) {
    const std::string K = std::to_string(k), slot = std::to_string((k & 1) * w.m), S = std::to_string(k & 1);
    auto v_at = [&](const std::string& r) { return vs + "[" + slot + " + " + r + "]"; };
    code += "if (" + lane + " == " + K + ") {\n";
    const Reflector h = declare_reflector(em, dtype, "h" + K, el(K), el, std::to_string(k + 1), M, code, true);
    // v_i = (x_i * sv) * sc, stored below the diagonal and shared; beta on it.
    code += "  #pragma unroll\n  for (int " + i + " = " + std::to_string(k + 1) + "; " + i + " < " + M + "; ++" + i + ") {\n";
    code += "    if (" + h.go + ") " + el(i) + " = " + sc.mul("(" + el(i) + ") * " + h.sv, h.sc) + ";\n";
    code += "    " + v_at(i) + " = " + el(i) + ";\n  }\n";
    code += "  if (" + h.go + ") " + el(K) + " = " + sc.from_real(h.beta) + ";\n";
    code += "  " + taus + "[" + S + "] = " + h.tau + ";\n";
    if (w.keep_tau) code += "  " + w.keep_tau(K, h.tau) + ";\n";
    code += "}\n" + sync;
    code += "if (" + lane + " > " + K + " && " + lane + " < " + C + ") {\n";
    code += "  const " + sc.type + " " + tau + " = " + taus + "[" + S + "];\n";
    code += "  if (" + reflects + ") {\n";
    // w = v^H W(k.., c) in two partial sums (half the chain of dependent additions), then
    // W(k.., c) -= v conj(tau) w.
    code += "    " + sc.type + " " + wd + " = " + el(K) + ", " + we + " = " + sc.literal(0) + ";\n";
    code += "    #pragma unroll\n    for (int " + i + " = " + std::to_string(k + 1) + "; " + i + " < " + M + "; ++" + i + ") {\n";
    code += "      const " + sc.type + " " + vi + " = " + v_at(i) + ";\n";
    code += "      if (((" + i + " - " + std::to_string(k + 1) + ") & 1) == 0) " + wd + " += " + sc.mul(sc.conj(vi), el(i)) + ";\n";
    code += "      else " + we + " += " + sc.mul(sc.conj(vi), el(i)) + ";\n    }\n";
    code += "    " + wd + " = " + sc.mul(sc.conj(tau), "(" + wd + " + " + we + ")") + ";\n";
    code += "    " + el(K) + " -= " + wd + ";\n";
    code += "    #pragma unroll\n    for (int " + i + " = " + std::to_string(k + 1) + "; " + i + " < " + M + "; ++" + i + ") " + el(i) +
            " -= " + sc.mul(wd, v_at(i)) + ";\n";
    code += "  }\n}\n";
  }
  return code;
}

std::string register_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w) {
  return householder(em, dtype, w, true);
}

void householder_reference(std::vector<Complex>& w, int64_t m, int64_t columns, int64_t steps, std::vector<Complex>* tau) {
  auto W = [&](int64_t i, int64_t j) -> Complex& { return w[static_cast<size_t>(i * columns + j)]; };
  for (int64_t k = 0; k < steps; ++k) {
    const Complex alpha = W(k, k);
    long double scale = 0;
    for (int64_t i = k + 1; i < m; ++i) scale = std::max(scale, std::abs(W(i, k)));
    long double ss = 0;
    if (scale > 0)
      for (int64_t i = k + 1; i < m; ++i) ss += std::norm(W(i, k) / scale);
    const long double xnorm = scale * std::sqrt(ss);
    Complex t = 0;
    if (xnorm != 0 || alpha.imag() != 0) {
      const long double beta = -std::copysign(std::hypot(std::abs(alpha), xnorm), alpha.real());
      t = Complex((beta - alpha.real()) / beta, -alpha.imag() / beta);
      const Complex r = Complex(1) / (alpha - beta);
      for (int64_t i = k + 1; i < m; ++i) W(i, k) *= r;
      W(k, k) = beta;
      // H^H = I - conj(tau) v v^H on the columns right of k.
      for (int64_t j = k + 1; j < columns; ++j) {
        Complex d = W(k, j);
        for (int64_t i = k + 1; i < m; ++i) d += std::conj(W(i, k)) * W(i, j);
        d *= std::conj(t);
        W(k, j) -= d;
        for (int64_t i = k + 1; i < m; ++i) W(i, j) -= d * W(i, k);
      }
    }
    if (tau) (*tau)[static_cast<size_t>(k)] = t;
  }
}

}  // namespace fugue::linalg
