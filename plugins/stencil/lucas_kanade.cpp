// lucas_kanade.cpp: stencil.lucas_kanade.
#include "lucas_kanade.h"

#include <algorithm>

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {

enum : uint32_t { kIt, kIx, kIy, kU, kV };

// The normal equations' sums over one window.
struct Sums {
  Real xx = 0, xy = 0, yy = 0, xt = 0, yt = 0;
};

}  // namespace

LucasKanade::LucasKanade() {
  name = "stencil.lucas_kanade";
  doc =
      "(u, v) = -A^-1 [sum Ix It, sum Iy It], A = sum [[Ix^2, Ix Iy], [Ix Iy, Iy^2]], sums over "
      "the window x window neighbourhood of each pixel (clamped at the border): the least-squares "
      "solution of Ix u + Iy v + It = 0. With It = warp(I2, u0, v0) - I1 it is the increment to "
      "the flow (u0, v0) of stencil.warp (u along columns, v along rows); 0 where det A <= 1e-4 "
      "trace(A)^2 (a flat window, or one whose gradients all point one way)";
  operands = {
      sdk::in("It", kArray, kFloat, "the temporal difference I2 (warped) - I1, [H, W]"),
      sdk::in("Ix", kArray, kFloat, "the derivative along columns, It's shape and dtype"),
      sdk::in("Iy", kArray, kFloat, "the derivative along rows, It's shape and dtype"),
      sdk::out("u", kArray, kFloat, "the flow along columns, It's shape and dtype"),
      sdk::out("v", kArray, kFloat, "the flow along rows, It's shape and dtype"),
  };
  attrs = {{"window", FUGUE_ATTR_INT, false, 9, "",
            "the side of the square window, odd, 1 to " + std::to_string(kLargestWindow)}};
  // Sums of window^2 products in the dtype, in another order than the reference, through a 2 x 2
  // solve, whose error grows with A's condition number. Random gradients in [-1, 1] over windows
  // of distinct pixels keep A well conditioned: a few 1e-6 in f32 (windows 3 to 63). Windows of
  // real images reach conditions of 1e3 and errors of 2e-4 in f32 (3e-13 in f64). The singular test
  // (det <= 1e-4 trace^2) lets conditions reach 1e4, errors of about 1e-3 in f32: random windows of
  // a few distinct pixels do (the one-row case clamps its window onto 3 to 5 of them), above 1e-4
  // on about 0.3% of seeds. A window of one pixel (or a 1 x 1 image) is exactly singular, and 0 on
  // both sides.
  tolerance_f32 = 2e-3;
  tolerance_f64 = 1e-11;
  test_cases = R"([
    {"name": "default window", "shape": [7, 5]},
    {"name": "large", "shape": [257, 129]},
    {"name": "single pixel: singular", "shape": [1, 1]},
    {"name": "one pixel window: singular", "shape": [7, 5], "attrs": {"window": 1}},
    {"name": "window 3", "shape": [64, 33], "attrs": {"window": 3}},
    {"name": "window beyond the image", "shape": [7, 5], "attrs": {"window": 15}},
    {"name": "one row", "shape": [1, 9], "attrs": {"window": 5}}
  ])";
}

void LucasKanade::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kIt, 2);
  require_like(call, kIx, kIt);
  require_like(call, kIy, kIt);
  const int64_t window = call.integer("window");
  if (window < 1 || window > kLargestWindow || window % 2 == 0)
    throw rejection("attribute window",
                    "an odd side from 1 to " + std::to_string(kLargestWindow) +
                        " (the window is centred on its pixel)",
                    std::to_string(window));
  const fugue_type& it = call.operand(kIt);
  types[kU] = array_type(it.dtype, shape_of(it));
  types[kV] = array_type(it.dtype, shape_of(it));
}

sdk::Plan LucasKanade::plan(const sdk::Call& call) const {
  const fugue_type& it = call.operand(kIt);
  const int64_t reach = call.integer("window") / 2;
  sdk::Plan plan = grid_plan(call, sdk::elements(it));
  for (uint32_t k : {kIt, kIx, kIy}) plan.partitions[k] = elementwise(2, {reach, reach});
  plan.partitions[kU] = elementwise(2);
  plan.partitions[kV] = elementwise(2);
  plan.registers = 16;  // five sums, three reads, coordinates and the loop's indices
  return plan;
}

void LucasKanade::emit(const sdk::Call& call, const sdk::Plan&,
                       const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& image = call.operand(kIt);
  if (sdk::elements(image) == 0) return;  // the element loop never runs
  const fugue_dtype dtype = image.dtype;
  const std::string t = ctype(dtype);
  const int64_t reach = call.integer("window") / 2;
  GridCode grid(emitter, shape_of(image), index_ctype(sdk::elements(image)), "", kIt);
  const std::string& it = grid.index_type();
  std::string code = grid.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  auto id = [&](const std::string& stem) { return emitter.name(stem); };
  const std::string xx = id("sxx"), xy = id("sxy"), yy = id("syy"), xt = id("sxt"), yt = id("syt");
  const std::string zero = literal(dtype, 0);
  code += "  " + t + " " + xx + " = " + zero + ", " + xy + " = " + zero + ", " + yy + " = " + zero +
          ", " + xt + " = " + zero + ", " + yt + " = " + zero + ";\n";
  // A loop, not window^2 unrolled reads: the compiler unrolls what pays.
  const std::string dr = id("dr"), dc = id("dc"), row = id("row"), col = id("col"), at = id("at");
  const std::string gx = id("gx"), gy = id("gy"), gt = id("gt");
  code += "  for (" + it + " " + dr + " = " + grid.lit(-reach) + "; " + dr + " <= " +
          grid.lit(reach) + "; ++" + dr + ") {\n";
  code += "    const " + it + " " + row + " = " + grid.clamped(0, grid.coordinate(0) + " + " + dr) +
          ";\n";
  code += "    for (" + it + " " + dc + " = " + grid.lit(-reach) + "; " + dc + " <= " +
          grid.lit(reach) + "; ++" + dc + ") {\n";
  code += "      const " + it + " " + col + " = " +
          grid.clamped(1, grid.coordinate(1) + " + " + dc) + ";\n";
  code += "      const " + it + " " + at + " = " + grid.flat({row, col}) + ";\n";
  code += "      const " + t + " " + gx + " = " + emitter.read_at(kIx, at) + ";\n";
  code += "      const " + t + " " + gy + " = " + emitter.read_at(kIy, at) + ";\n";
  code += "      const " + t + " " + gt + " = " + emitter.read_at(kIt, at) + ";\n";
  code += "      " + xx + " += " + gx + " * " + gx + ";\n";
  code += "      " + xy + " += " + gx + " * " + gy + ";\n";
  code += "      " + yy + " += " + gy + " * " + gy + ";\n";
  code += "      " + xt + " += " + gx + " * " + gt + ";\n";
  code += "      " + yt + " += " + gy + " * " + gt + ";\n";
  code += "    }\n  }\n";
  const std::string det = id("det"), trace = id("trace"), singular = id("singular");
  code += "  const " + t + " " + det + " = " + xx + " * " + yy + " - " + xy + " * " + xy + ";\n";
  code += "  const " + t + " " + trace + " = " + xx + " + " + yy + ";\n";
  // As the reference: a NaN compares false and flows through the solve.
  code += "  const int " + singular + " = " + det + " <= " + literal(dtype, kSingular) + " * " +
          trace + " * " + trace + ";\n";
  code += "  " + emitter.write(kU) + " = " + singular + " ? " + zero + " : (" + xy + " * " + yt +
          " - " + yy + " * " + xt + ") / " + det + ";\n";
  code += "  " + emitter.write(kV) + " = " + singular + " ? " + zero + " : (" + xy + " * " + xt +
          " - " + xx + " * " + yt + ") / " + det + ";\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost LucasKanade::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  // Each input is fetched once from memory; the neighbours' reads of it hit the cache.
  for (uint32_t k : {kIt, kIx, kIy, kU, kV}) cost.bytes += array_bytes(call.operand(k));
  const double window = static_cast<double>(call.integer("window"));
  // Five products and five sums per window cell, then the determinant, test and solve.
  cost.flops =
      (10.0 * window * window + 20.0) * static_cast<double>(sdk::elements(call.operand(kU)));
  return cost;
}

void LucasKanade::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& type = call.operand(kIt);
  const int64_t rows = type.shape[0], cols = type.shape[1];
  const int64_t reach = call.integer("window") / 2;
  const sdk::HostView t(operands[kIt]), x(operands[kIx]), y(operands[kIy]);
  sdk::HostView u(operands[kU]), v(operands[kV]);
  // The threshold as the device's literal holds it, so that both apply one rule.
  const Real singular_below = rounded(type.dtype, kSingular);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      Sums s;
      for (int64_t dr = -reach; dr <= reach; ++dr)
        for (int64_t dc = -reach; dc <= reach; ++dc) {
          const int64_t k = std::clamp<int64_t>(r + dr, 0, rows - 1) * cols +
                            std::clamp<int64_t>(c + dc, 0, cols - 1);
          const Real gx = host_value(x, k), gy = host_value(y, k), gt = host_value(t, k);
          s.xx += gx * gx;
          s.xy += gx * gy;
          s.yy += gy * gy;
          s.xt += gx * gt;
          s.yt += gy * gt;
        }
      const Real det = s.xx * s.yy - s.xy * s.xy, trace = s.xx + s.yy;
      const bool singular = det <= singular_below * trace * trace;
      const int64_t i = r * cols + c;
      u.set(i, singular ? 0.0 : static_cast<double>((s.xy * s.yt - s.yy * s.xt) / det));
      v.set(i, singular ? 0.0 : static_cast<double>((s.xy * s.xt - s.xx * s.yt) / det));
    }
}

}  // namespace fugue::stencil
