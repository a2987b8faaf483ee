// gemm_tiles.cpp: see gemm_tiles.h.
#include "gemm_tiles.h"

#include <algorithm>

#include "kernel_text.h"

namespace fugue::linalg {

TileShape tile_shape(const Tuning& t, int64_t m, int64_t n, int64_t value_bytes, const fugue_device_desc& device) {
  int64_t team = 1;
  while (team * 2 <= std::min<int64_t>({256, t.team_max, static_cast<int64_t>(device.max_work_group_size)})) team *= 2;
  TileShape s{};
  s.tq = 1;
  while (s.tq * s.tq * 4 <= team) s.tq *= 2;
  s.tp = team / s.tq;
  s.rr = std::min(t.tile_block, (m + s.tp - 1) / s.tp);
  s.cc = std::min(t.tile_block, (n + s.tq - 1) / s.tq);
  // tile_depth counts 4-byte values: wider ones stage half as many (H100, f64 n = 64: 0.104 ms with 16
  // against 0.127 with 32). Three quarters of local memory at most: the core may stage small entries
  // beside the tiles.
  s.depth = value_bytes > 4 ? std::max<int64_t>(4, t.tile_depth / 2) : t.tile_depth;
  s.prefetch = t.tile_prefetch;
  while (s.depth > 4 && s.local_bytes(value_bytes) * 4 > device.local_mem_bytes * 3) s.depth /= 2;
  return s;
}

bool tile_plan(const Tuning& t, int64_t m, int64_t n, int64_t value_bytes, const fugue_device_desc& device) {
  if (t.tile_order == 0 || std::min(m, n) < t.tile_order) return false;
  const TileShape s = tile_shape(t, m, n, value_bytes, device);
  return s.team() >= 16 && s.local_bytes(value_bytes) * 4 <= device.local_mem_bytes * 3;
}

std::string tiled_product(const sdk::Emitter& em, const Scalars& sc, const TileShape& s, const TileOperands& ops,
                          const std::string& lane) {
  const int64_t pm = s.panel_rows(), pn = s.panel_columns(), kc = s.depth;
  const std::string la = em.local_array(sc.dtype, kc * (pm + 1), "a_tile"), lb = em.local_array(sc.dtype, kc * (pn + 1), "b_tile");
  std::map<std::string, std::string> v = {{"t", sc.type}, {"lane", lane}, {"TP", std::to_string(s.tp)}, {"TQ", std::to_string(s.tq)},
                                          {"M", std::to_string(ops.m)}, {"N", std::to_string(ops.n)}, {"K", std::to_string(ops.k)},
                                          {"KC", std::to_string(kc)}, {"PM", std::to_string(pm)}, {"PN", std::to_string(pn)},
                                          {"LDA", std::to_string(pm + 1)}, {"LDB", std::to_string(pn + 1)}, {"la", la}, {"lb", lb},
                                          {"zero", sc.literal(0)}};
  for (const char* name : {"p", "q", "panel", "i0", "j0", "k0", "kk", "acc", "x", "y", "f", "ii", "jj", "i", "j", "k", "trip"}) v[name] = em.name(name);
  std::string code = fill("const int $p = $lane / $TQ, $q = $lane % $TQ;\n", v);

  // Stage op(A)(i0 .. i0 + PM, k0 .. k0 + KC) into la[kk][ii], zero outside the product; consecutive
  // work-items take consecutive addresses of A's storage.
  const std::string a_place = ops.a_k_contiguous ? fill("const int $ii = $f / $KC, $kk = $f % $KC;\n", v) : fill("const int $kk = $f / $PM, $ii = $f % $PM;\n", v);
  // The element of op(A) at the staged place (declared from ii, kk), zero outside the product.
  const std::string a_at = fill("const int $i = $i0 + $ii, $k = $k0 + $kk;\n", v), a_value = fill("$i < $M && $k < $K ? ", v) + ops.a_at(v["i"], v["k"]) + " : " + v["zero"];
  const std::string a_stage = a_place + a_at + fill("$la[$kk * $LDA + $ii] = ", v) + a_value + ";\n";
  const std::string b_place = ops.b_j_contiguous ? fill("const int $kk = $f / $PN, $jj = $f % $PN;\n", v) : fill("const int $jj = $f / $KC, $kk = $f % $KC;\n", v);
  const std::string b_at = fill("const int $j = $j0 + $jj, $k = $k0 + $kk;\n", v), b_value = fill("$j < $N && $k < $K ? ", v) + ops.b_at(v["k"], v["j"]) + " : " + v["zero"];
  const std::string b_stage = b_place + b_at + fill("$lb[$kk * $LDB + $jj] = ", v) + b_value + ";\n";
  const int64_t block = s.rr * s.cc;
  std::string body = fill("$t $acc[" + std::to_string(block) + "];\n", v);
  for (int64_t e = 0; e < block; ++e) body += v["acc"] + "[" + std::to_string(e) + "] = " + v["zero"] + ";\n";
  // Chunks of k in turn (one chunk takes no loop: PoCL miscompiled one-trip loops between barriers).
  const int64_t chunks = (ops.k + kc - 1) / kc;
  auto chunk_loop = [&](const std::string& k0) {
    return chunks == 1 ? "{\nconst int " + k0 + " = 0;\n" : "for (int " + k0 + " = 0; " + k0 + " < " + v["K"] + "; " + k0 + " += " + v["KC"] + ") {\n";
  };
  if (!s.prefetch) {
    body += chunk_loop(v["k0"]);
    body += team_loop(v["trip"] + "_a", lane, s.team(), v["f"], pm * kc, std::to_string(pm * kc), a_stage);
    body += team_loop(v["trip"] + "_b", lane, s.team(), v["f"], pn * kc, std::to_string(pn * kc), b_stage);
    body += em.barrier() + "\n";
  } else {
    // Prefetch: each work-item's share of the next chunk read into registers while this one is
    // multiplied, so that global memory's latency hides behind the multiply-adds (the stores into local
    // memory wait for the barrier after the chunk before).
    const int64_t trips_a = (pm * kc + s.team() - 1) / s.team(), trips_b = (pn * kc + s.team() - 1) / s.team();
    const std::string pa = em.name("pa"), pb = em.name("pb"), next = em.name("k_next");
    // Statements for trip t of a stage over `count` values: `place` declares ii/jj and kk from f, `then` the rest.
    auto trip = [&](int64_t t, int64_t count, const std::string& place, const std::string& then) {
      const std::string f = "const int " + v["f"] + " = " + std::to_string(t * s.team()) + " + " + lane + ";\n";
      const bool whole = (t + 1) * s.team() <= count;
      return "{\n" + f + (whole ? "" : "if (" + v["f"] + " < " + std::to_string(count) + ") ") + "{\n" + place + then + "}\n}\n";
    };
    auto load = [&](const std::string& k0) {
      std::string code = "{\nconst int " + v["k0"] + " = " + k0 + ";\n";
      for (int64_t t = 0; t < trips_a; ++t)
        code += trip(t, pm * kc, a_place, a_at + pa + "[" + std::to_string(t) + "] = " + a_value + ";\n");
      for (int64_t t = 0; t < trips_b; ++t)
        code += trip(t, pn * kc, b_place, b_at + pb + "[" + std::to_string(t) + "] = " + b_value + ";\n");
      return code + "}\n";
    };
    body += v["t"] + " " + pa + "[" + std::to_string(trips_a) + "], " + pb + "[" + std::to_string(trips_b) + "];\n" + load("0");
    body += chunk_loop(next);
    for (int64_t t = 0; t < trips_a; ++t) body += trip(t, pm * kc, a_place, fill("$la[$kk * $LDA + $ii] = ", v) + pa + "[" + std::to_string(t) + "];\n");
    for (int64_t t = 0; t < trips_b; ++t) body += trip(t, pn * kc, b_place, fill("$lb[$kk * $LDB + $jj] = ", v) + pb + "[" + std::to_string(t) + "];\n");
    body += em.barrier() + "\n";
    if (chunks > 1) body += "if (" + next + " + " + v["KC"] + " < " + v["K"] + ") " + load(next + " + " + v["KC"]);
  }
  // The chunk's multiply-adds; the last chunk's zeros past K add nothing.
  body += fill("#pragma unroll\nfor (int $kk = 0; $kk < $KC; ++$kk) {\n  $t $x[" + std::to_string(s.rr) + "], $y[" + std::to_string(s.cc) + "];\n", v);
  for (int64_t r = 0; r < s.rr; ++r)
    body += "  " + v["x"] + "[" + std::to_string(r) + "] = " + fill("$la[$kk * $LDA + $p + ", v) + std::to_string(r * s.tp) + "];\n";
  for (int64_t c = 0; c < s.cc; ++c)
    body += "  " + v["y"] + "[" + std::to_string(c) + "] = " + fill("$lb[$kk * $LDB + $q + ", v) + std::to_string(c * s.tq) + "];\n";
  for (int64_t r = 0; r < s.rr; ++r)
    for (int64_t c = 0; c < s.cc; ++c)
      body += "  " + v["acc"] + "[" + std::to_string(r * s.cc + c) + "] += " +
              sc.mul(v["x"] + "[" + std::to_string(r) + "]", v["y"] + "[" + std::to_string(c) + "]") + ";\n";
  body += "}\n" + em.barrier() + "\n}\n";
  for (int64_t r = 0; r < s.rr; ++r)
    for (int64_t c = 0; c < s.cc; ++c) {
      const std::string i = "(" + v["i0"] + " + " + v["p"] + " + " + std::to_string(r * s.tp) + ")",
                        j = "(" + v["j0"] + " + " + v["q"] + " + " + std::to_string(c * s.tq) + ")";
      body += "if (" + i + " < " + v["M"] + " && " + j + " < " + v["N"] + ") " + ops.store(i, j, v["acc"] + "[" + std::to_string(r * s.cc + c) + "]") + "\n";
    }
  return panels_in_turn(code, body, ops.m, ops.n, pm, pn, v["panel"], v["i0"], v["j0"]);
}

std::string panels_in_turn(const std::string& code, const std::string& body, int64_t m, int64_t n, int64_t pm, int64_t pn,
                           const std::string& panel, const std::string& i0, const std::string& j0) {
  const int64_t across = (n + pn - 1) / pn, panels = ((m + pm - 1) / pm) * across;
  if (panels == 1) return code + "{\nconst int " + i0 + " = 0, " + j0 + " = 0;\n" + body + "}\n";
  return code + "for (int " + panel + " = 0; " + panel + " < " + std::to_string(panels) + "; ++" + panel + ") {\nconst int " + i0 + " = (" + panel +
         " / " + std::to_string(across) + ") * " + std::to_string(pm) + ", " + j0 + " = (" + panel + " % " + std::to_string(across) + ") * " +
         std::to_string(pn) + ";\n" + body + "}\n";
}

}  // namespace fugue::linalg
