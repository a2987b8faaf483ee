// warp.cpp: stencil.warp.
#include "warp.h"

#include <cmath>

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {
enum : uint32_t { kImage, kU, kV, kY };
}

Warp::Warp() {
  name = "stencil.warp";
  doc =
      "y[r, c] = image bilinearly sampled at (r + v[r, c], c + u[r, c]), the point clamped into "
      "the image";
  operands = {
      sdk::in("image", kArray, kFloat, "the image to sample, [H, W]"),
      sdk::in("u", kArray, kFloat, "the displacement along columns (horizontal), image's shape"),
      sdk::in("v", kArray, kFloat, "the displacement along rows (vertical), image's shape"),
      sdk::out("y", kArray, kFloat, "the warped image, image's shape and dtype"),
  };
  // The sample point is rounded the same way on both sides; what remains are the lerps' roundings.
  tolerance_f32 = 1e-5;
  tolerance_f64 = 1e-12;
  test_low = -4;  // displacements that reach past the borders
  test_high = 4;
}

void Warp::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kImage, 2);
  require_like(call, kU, kImage);
  require_like(call, kV, kImage);
  const fugue_type& image = call.operand(kImage);
  types[kY] = array_type(image.dtype, shape_of(image));
}

sdk::Plan Warp::plan(const sdk::Call& call) const {
  const fugue_type& image = call.operand(kImage);
  sdk::Plan plan = grid_plan(call, sdk::elements(image));
  plan.partitions[kImage] = whole(2);  // a displacement may reach anywhere
  plan.partitions[kU] = elementwise(2);
  plan.partitions[kV] = elementwise(2);
  plan.partitions[kY] = elementwise(2);
  plan.registers = 16;
  return plan;
}

void Warp::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& image = call.operand(kImage);
  if (sdk::elements(image) == 0) return;
  const std::string t = ctype(image.dtype);
  GridCode grid(emitter, shape_of(image), index_ctype(sdk::elements(image)), "", kImage);
  const std::string& it = grid.index_type();
  std::string code = grid.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  auto value = [&](const std::string& stem, const std::string& type, const std::string& expr) {
    const std::string id = emitter.name(stem);
    code += "  const " + type + " " + id + " = " + expr + ";\n";
    return id;
  };
  // The last row or column, in the image's dtype.
  auto last = [&](uint32_t d) {
    return grid.symbolic(d) ? "(" + t + ")" + grid.last(d) : literal(image.dtype, double(image.shape[d] - 1));
  };
  // fmax first: a NaN displacement lands on 0, never outside the image.
  const std::string sy =
      value("sy", t,
            "fmin(fmax((" + t + ")" + grid.coordinate(0) + " + " + emitter.read(kV) + ", " +
                literal(image.dtype, 0) + "), " + last(0) + ")");
  const std::string sx =
      value("sx", t,
            "fmin(fmax((" + t + ")" + grid.coordinate(1) + " + " + emitter.read(kU) + ", " +
                literal(image.dtype, 0) + "), " + last(1) + ")");
  const std::string fy = value("fy", t, "floor(" + sy + ")");
  const std::string fx = value("fx", t, "floor(" + sx + ")");
  const std::string ty = value("ty", t, sy + " - " + fy);
  const std::string tx = value("tx", t, sx + " - " + fx);
  const std::string r0 = value("row0", it, "(" + it + ")" + fy);
  const std::string c0 = value("col0", it, "(" + it + ")" + fx);
  const std::string r1 =
      value("row1", it, "min(" + r0 + " + " + grid.lit(1) + ", " + grid.last(0) + ")");
  const std::string c1 =
      value("col1", it, "min(" + c0 + " + " + grid.lit(1) + ", " + grid.last(1) + ")");
  auto at = [&](const std::string& r, const std::string& c) {
    return emitter.read_at(kImage, grid.flat({r, c}));
  };
  const std::string a = value("p00", t, at(r0, c0)), b = value("p01", t, at(r0, c1));
  const std::string c = value("p10", t, at(r1, c0)), d = value("p11", t, at(r1, c1));
  const std::string top = value("top", t, a + " + " + tx + " * (" + b + " - " + a + ")");
  const std::string bottom = value("bottom", t, c + " + " + tx + " * (" + d + " - " + c + ")");
  code +=
      "  " + emitter.write(kY) + " = " + top + " + " + ty + " * (" + bottom + " - " + top + ");\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Warp::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  for (uint32_t i : {kImage, kU, kV, kY}) cost.bytes += array_bytes(call.operand(i));
  // Two coordinates (add, clamp, floor, fraction) and three lerps.
  cost.flops = 17.0 * static_cast<double>(sdk::elements(call.operand(kY)));
  return cost;
}

void Warp::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& type = call.operand(kImage);
  const fugue_dtype dtype = type.dtype;
  const int64_t rows = type.shape[0], cols = type.shape[1];
  const sdk::HostView image(operands[kImage]), u(operands[kU]), v(operands[kV]);
  sdk::HostView y(operands[kY]);
  auto lerp = [](Real a, Real b, Real t) { return a + t * (b - a); };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      // The sample point as the device computes it: one addition in the dtype.
      const Real sy =
          std::fmin(std::fmax(rounded(dtype, r + host_value(v, i)), Real(0)), Real(rows - 1));
      const Real sx =
          std::fmin(std::fmax(rounded(dtype, c + host_value(u, i)), Real(0)), Real(cols - 1));
      const int64_t r0 = static_cast<int64_t>(std::floor(sy)),
                    c0 = static_cast<int64_t>(std::floor(sx));
      const int64_t r1 = std::min(r0 + 1, rows - 1), c1 = std::min(c0 + 1, cols - 1);
      const Real ty = sy - r0, tx = sx - c0;
      auto px = [&](int64_t rr, int64_t cc) { return host_value(image, rr * cols + cc); };
      const Real top = lerp(px(r0, c0), px(r0, c1), tx), bottom = lerp(px(r1, c0), px(r1, c1), tx);
      y.set(i, static_cast<double>(lerp(top, bottom, ty)));
    }
}

}  // namespace fugue::stencil
