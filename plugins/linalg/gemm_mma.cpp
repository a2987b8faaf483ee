// gemm_mma.cpp: see gemm_mma.h.
#include "gemm_mma.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "kernel_text.h"

namespace fugue::linalg {

namespace {

// Local layout of the stages: op(A)(ii, kk) at a_slot, op(B)(kk, jj) at b_slot, each along the axis that
// is contiguous in global memory (consecutive work-items store consecutive words), unpadded, with
// columns 4 to 15 of each group of 16 in a row swapped by XOR with 4 times the row's index modulo 4:
// the 16 lanes of a half warp loading a fragment read rows r + g and columns c + t (g, t in 0..3; r and
// c multiples of 4) and so meet 16 different 8-byte banks either way round.
struct Layout {
  bool a_rows, b_rows;  // A staged a row of k per ii (A's k contiguous); B a row of j per kk (B's j contiguous)
  int64_t pm, pn, kc;
  Layout(const MmaShape& s, bool a_k_contiguous, bool b_j_contiguous)
      : a_rows(a_k_contiguous), b_rows(b_j_contiguous), pm(s.panel_rows()), pn(s.panel_columns()), kc(s.depth) {}
  static std::string slot(const std::string& row, const std::string& column, int64_t length) {
    return "(" + row + ") * " + std::to_string(length) + " + ((" + column + ") ^ (((" + row + ") & 3) << 2))";
  }
  std::string a_slot(const std::string& ii, const std::string& kk) const { return a_rows ? slot(ii, kk, kc) : slot(kk, ii, pm); }
  std::string b_slot(const std::string& kk, const std::string& jj) const { return b_rows ? slot(kk, jj, pn) : slot(jj, kk, kc); }
};

}  // namespace

uint64_t MmaShape::local_bytes() const { return static_cast<uint64_t>((panel_rows() + panel_columns()) * depth * 8); }

bool has_f64_mma(const fugue_device_desc& device) {
  // sm_90 alone: where it was measured (later architectures take mma.sync m16n8k8 f64 too, at rates of
  // their own, and keep the tiles until measured).
  return sdk::nvidia_compute_capability(&device) == 90 && sdk::has_warps_of_32(&device);
}

MmaShape mma_shape(const Tuning& t, int64_t m, int64_t n, int64_t k, const fugue_device_desc& device) {
  const int64_t side = std::min({m, n, t.mma_panel});
  // Panels of 128 x 128 in 8 warps of 64 x 32 (4 x 4 tiles: 64 accumulators a lane), 64 x 64 in 4
  // warps of 32 x 32, 32 x 32 in 4 warps of 16 x 16. (16 warps of 32 x 32 would need teams of 512, more
  // than a compute unit's registers hold at this plan's use.) k staged 32 at a time where three
  // quarters of local memory hold it and k spans two such chunks, so that one is read ahead while the
  // other is multiplied; else 16 (H200, 2,000 products: n = 64 0.0958 -> 0.0874 ms; n = 32, one chunk of
  // 32, 0.0203 -> 0.0227; 128 x 128 panels of 32 need 64 KB).
  MmaShape s = side > 64 ? MmaShape{2, 4, 4, 4, 32} : side > 32 ? MmaShape{2, 2, 2, 4, 32} : MmaShape{2, 2, 1, 2, 32};
  if (s.local_bytes() * 4 > device.local_mem_bytes * 3 || k < 64) s.depth = 16;
  return s;
}

bool mma_plan(const Tuning& t, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device) {
  if (dtype != FUGUE_DTYPE_F64 || t.mma_order == 0 || std::min(m, n) < t.mma_order || !has_f64_mma(device)) return false;
  const MmaShape s = mma_shape(t, m, n, k, device);
  return s.team() <= t.team_max && static_cast<uint64_t>(s.team()) <= device.max_work_group_size &&
         s.local_bytes() * 4 <= device.local_mem_bytes * 3;
}

std::string mma_variant(const MmaShape& s, const Tuning& t, const fugue_device_desc& device) {
  return "tensor cores: C in panels of " + std::to_string(s.panel_rows()) + " x " + std::to_string(s.panel_columns()) + ", " +
         std::to_string(s.wm * s.wn) + " warps (" + std::to_string(s.wm) + " x " + std::to_string(s.wn) + ") each " +
         std::to_string(s.tm * 16) + " x " + std::to_string(s.tn * 8) + " of it as " + std::to_string(s.tm) + " x " + std::to_string(s.tn) +
         " tiles of mma.sync m16n8k8 f64 (" + sdk::architecture(&device) + "), k staged " + std::to_string(s.depth) +
         " at a time in local memory, the next read ahead (m, n >= " + std::to_string(t.mma_order) + "); " + t.row;
}

std::string mma_product(const sdk::Emitter& em, const Scalars& sc, const MmaShape& s, const TileOperands& ops, const std::string& lane) {
  // The swizzle keeps a slot inside its row only for rows of whole groups of 16 values.
  if (s.depth % 16 || s.panel_rows() % 16 || s.panel_columns() % 16)
    throw std::logic_error("gemm_mma: stages of " + std::to_string(s.panel_rows()) + " x " + std::to_string(s.depth) + " and " +
                           std::to_string(s.depth) + " x " + std::to_string(s.panel_columns()) + " are not whole groups of 16");
  const Layout lay(s, ops.a_k_contiguous, ops.b_j_contiguous);
  const int64_t pm = s.panel_rows(), pn = s.panel_columns(), kc = s.depth, team = s.team();
  const std::string la = em.local_array(sc.dtype, pm * kc, "a_mma"), lb = em.local_array(sc.dtype, pn * kc, "b_mma");
  std::map<std::string, std::string> v = {{"t", sc.type}, {"lane", lane}, {"M", std::to_string(ops.m)}, {"N", std::to_string(ops.n)},
                                          {"K", std::to_string(ops.k)}, {"KC", std::to_string(kc)}, {"PM", std::to_string(pm)},
                                          {"PN", std::to_string(pn)}, {"WN", std::to_string(s.wn)}, {"la", la}, {"lb", lb},
                                          {"zero", sc.literal(0)}};
  for (const char* name : {"w", "g", "t4", "wr", "wc", "panel", "i0", "j0", "k0", "kk", "acc", "fa", "fb", "f", "ii", "jj", "i", "j", "k",
                           "pa", "pb", "k_next"})
    v[name] = em.name(name);
  std::string code = fill("const int $w = $lane / 32, $g = ($lane % 32) / 4, $t4 = $lane % 4;\nconst int $wr = $w / $WN, $wc = $w % $WN;\n", v);

  // Staging, as the tiles: consecutive work-items take consecutive addresses of A's and B's storage.
  const std::string a_place = ops.a_k_contiguous ? fill("const int $ii = $f / $KC, $kk = $f % $KC;\n", v) : fill("const int $kk = $f / $PM, $ii = $f % $PM;\n", v);
  const std::string a_value = fill("$i0 + $ii < $M && $k0 + $kk < $K ? ", v) + ops.a_at(v["i0"] + " + " + v["ii"], v["k0"] + " + " + v["kk"]) + " : " + v["zero"];
  const std::string b_place = ops.b_j_contiguous ? fill("const int $kk = $f / $PN, $jj = $f % $PN;\n", v) : fill("const int $jj = $f / $KC, $kk = $f % $KC;\n", v);
  const std::string b_value = fill("$j0 + $jj < $N && $k0 + $kk < $K ? ", v) + ops.b_at(v["k0"] + " + " + v["kk"], v["j0"] + " + " + v["jj"]) + " : " + v["zero"];
  const int64_t trips_a = (pm * kc + team - 1) / team, trips_b = (pn * kc + team - 1) / team;
  auto trip = [&](int64_t t, int64_t count, const std::string& place, const std::string& then) {
    const std::string f = "const int " + v["f"] + " = " + std::to_string(t * team) + " + " + lane + ";\n";
    const bool whole = (t + 1) * team <= count;
    return "{\n" + f + (whole ? "" : "if (" + v["f"] + " < " + std::to_string(count) + ") ") + "{\n" + place + then + "}\n}\n";
  };
  auto load = [&](const std::string& k0) {
    std::string text = "{\nconst int " + v["k0"] + " = " + k0 + ";\n";
    for (int64_t t = 0; t < trips_a; ++t) text += trip(t, pm * kc, a_place, v["pa"] + "[" + std::to_string(t) + "] = " + a_value + ";\n");
    for (int64_t t = 0; t < trips_b; ++t) text += trip(t, pn * kc, b_place, v["pb"] + "[" + std::to_string(t) + "] = " + b_value + ";\n");
    return text + "}\n";
  };

  const int64_t tiles = s.tm * s.tn;
  std::string body = v["t"] + " " + v["acc"] + "[" + std::to_string(tiles * 4) + "];\n";
  for (int64_t e = 0; e < tiles * 4; ++e) body += v["acc"] + "[" + std::to_string(e) + "] = " + v["zero"] + ";\n";
  body += v["t"] + " " + v["pa"] + "[" + std::to_string(trips_a) + "], " + v["pb"] + "[" + std::to_string(trips_b) + "];\n" + load("0");
  const int64_t chunks = (ops.k + kc - 1) / kc;
  body += chunks == 1 ? "{\nconst int " + v["k_next"] + " = 0;\n" : fill("for (int $k_next = 0; $k_next < $K; $k_next += $KC) {\n", v);
  for (int64_t t = 0; t < trips_a; ++t)
    body += trip(t, pm * kc, a_place, la + "[" + lay.a_slot(v["ii"], v["kk"]) + "] = " + v["pa"] + "[" + std::to_string(t) + "];\n");
  for (int64_t t = 0; t < trips_b; ++t)
    body += trip(t, pn * kc, b_place, lb + "[" + lay.b_slot(v["kk"], v["jj"]) + "] = " + v["pb"] + "[" + std::to_string(t) + "];\n");
  body += em.barrier() + "\n";
  if (chunks > 1) body += "if (" + v["k_next"] + " + " + v["KC"] + " < " + v["K"] + ") " + load(v["k_next"] + " + " + v["KC"]);
  // The chunk's steps of 8 along k: each lane loads its values of the warp's A and B fragments (PTX's
  // m16n8k8 .f64 layout: A's a_i at row g + 8 (i % 2), column t + 4 (i / 2); B's b_i at row t + 4 i,
  // column g), then the warp multiplies every pair of tiles.
  const std::string warp_row = "(" + v["wr"] + " * " + std::to_string(s.tm * 16) + ")", warp_col = "(" + v["wc"] + " * " + std::to_string(s.tn * 8) + ")";
  for (int64_t step = 0; step < kc; step += 8) {
    body += "{\n" + v["t"] + " " + v["fa"] + "[" + std::to_string(s.tm * 4) + "], " + v["fb"] + "[" + std::to_string(s.tn * 2) + "];\n";
    for (int64_t a = 0; a < s.tm; ++a)
      for (int64_t i = 0; i < 4; ++i) {
        const std::string row = warp_row + " + " + v["g"] + " + " + std::to_string(a * 16 + 8 * (i % 2)), k = v["t4"] + " + " + std::to_string(step + 4 * (i / 2));
        body += v["fa"] + "[" + std::to_string(a * 4 + i) + "] = " + la + "[" + lay.a_slot(row, k) + "];\n";
      }
    for (int64_t b = 0; b < s.tn; ++b)
      for (int64_t i = 0; i < 2; ++i) {
        const std::string col = warp_col + " + " + v["g"] + " + " + std::to_string(b * 8), k = v["t4"] + " + " + std::to_string(step + 4 * i);
        body += v["fb"] + "[" + std::to_string(b * 2 + i) + "] = " + lb + "[" + lay.b_slot(k, col) + "];\n";
      }
    for (int64_t a = 0; a < s.tm; ++a)
      for (int64_t b = 0; b < s.tn; ++b) {
        auto acc = [&](int64_t c) { return "\"+d\"(" + v["acc"] + "[" + std::to_string((a * s.tn + b) * 4 + c) + "])"; };
        auto fa = [&](int64_t i) { return "\"d\"(" + v["fa"] + "[" + std::to_string(a * 4 + i) + "])"; };
        auto fb = [&](int64_t i) { return "\"d\"(" + v["fb"] + "[" + std::to_string(b * 2 + i) + "])"; };
        body += "asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\" : " + acc(0) +
                ", " + acc(1) + ", " + acc(2) + ", " + acc(3) + " : " + fa(0) + ", " + fa(1) + ", " + fa(2) + ", " + fa(3) + ", " + fb(0) + ", " +
                fb(1) + ");\n";
      }
    body += "}\n";
  }
  body += em.barrier() + "\n}\n";
  // The accumulators: tile (a, b)'s c_i at row g + 8 (i / 2), column 2 t + i % 2.
  for (int64_t a = 0; a < s.tm; ++a)
    for (int64_t b = 0; b < s.tn; ++b)
      for (int64_t c = 0; c < 4; ++c) {
        const std::string i = "(" + v["i0"] + " + " + warp_row + " + " + v["g"] + " + " + std::to_string(a * 16 + 8 * (c / 2)) + ")",
                          j = "(" + v["j0"] + " + " + warp_col + " + 2 * " + v["t4"] + " + " + std::to_string(b * 8 + c % 2) + ")";
        body += "if (" + i + " < " + v["M"] + " && " + j + " < " + v["N"] + ") " +
                ops.store(i, j, v["acc"] + "[" + std::to_string((a * s.tn + b) * 4 + c) + "]") + "\n";
      }
  return panels_in_turn(code, body, ops.m, ops.n, pm, pn, v["panel"], v["i0"], v["j0"]);
}

}  // namespace fugue::linalg
