// median.cpp: stencil.median3 and stencil.median5.
#include "median.h"

#include <algorithm>

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {
enum : uint32_t { kX, kY };
}

Median::Median(int radius)
    : radius_(radius),
      window_((2 * radius + 1) * (2 * radius + 1)),
      network_(median_network(window_)) {
  const std::string side = std::to_string(2 * radius + 1);
  name = "stencil.median" + side;
  doc = "y[r, c] = the median of the " + side + " x " + side +
        " window of x around (r, c), clamped at the border; exact";
  const uint32_t dtypes = FUGUE_DTYPES_FLOAT | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32);
  operands = {
      sdk::in("x", kArray, dtypes, "the image, [H, W]"),
      sdk::out("y", kArray, dtypes, "the filtered image, x's shape and dtype"),
  };
  // It selects one of the inputs: nothing rounds.
  tolerance_f32 = 0;
  tolerance_f64 = 0;
}

void Median::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kX, 2);
  const fugue_type& x = call.operand(kX);
  types[kY] = array_type(x.dtype, shape_of(x));
}

sdk::Plan Median::plan(const sdk::Call& call) const {
  sdk::Plan plan = grid_plan(call, sdk::elements(call.operand(kX)));
  plan.partitions[kX] = elementwise(2, {radius_, radius_});
  plan.partitions[kY] = elementwise(2);
  plan.registers = static_cast<uint32_t>(window_ + 6);
  return plan;
}

void Median::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& x = call.operand(kX);
  if (sdk::elements(x) == 0) return;
  const fugue_dtype dtype = x.dtype;
  const std::string t = ctype(dtype);
  const bool real = sdk::is_float(dtype);
  const std::string lo = real ? "fmin" : "min", hi = real ? "fmax" : "max";
  GridCode grid(emitter, shape_of(x), index_ctype(sdk::elements(x)), "", kX);
  std::string code = grid.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  const int side = 2 * radius_ + 1;
  std::vector<std::string> rows, cols;
  for (int k = -radius_; k <= radius_; ++k) {
    rows.push_back(grid.neighbour(0, k, FUGUE_BORDER_CLAMP, code));
    cols.push_back(grid.neighbour(1, k, FUGUE_BORDER_CLAMP, code));
  }
  std::vector<std::string> v;
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      v.push_back(emitter.name("v" + std::to_string(v.size())));
      code += "  " + t + " " + v.back() + " = " +
              emitter.read_at(kX, grid.flat({rows[r], cols[c]})) + ";\n";
    }
  const std::string tmp = emitter.name("lo");
  for (const Comparator& k : network_) {
    const std::string& a = v[k.low];
    const std::string& b = v[k.high];
    if (k.keep_min && k.keep_max)
      code += "  { const " + t + " " + tmp + " = " + lo + "(" + a + ", " + b + "); " + b + " = " +
              hi + "(" + a + ", " + b + "); " + a + " = " + tmp + "; }\n";
    else if (k.keep_min)
      code += "  " + a + " = " + lo + "(" + a + ", " + b + ");\n";
    else
      code += "  " + b + " = " + hi + "(" + a + ", " + b + ");\n";
  }
  code += "  " + emitter.write(kY) + " = " + v[window_ / 2] + ";\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Median::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  cost.bytes = array_bytes(call.operand(kX)) + array_bytes(call.operand(kY));
  double operations = 0;
  for (const Comparator& k : network_) operations += (k.keep_min ? 1 : 0) + (k.keep_max ? 1 : 0);
  cost.flops = operations * static_cast<double>(sdk::elements(call.operand(kX)));
  return cost;
}

void Median::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& xt = call.operand(kX);
  const int64_t rows = xt.shape[0], cols = xt.shape[1];
  const sdk::HostView x(operands[kX]);
  sdk::HostView y(operands[kY]);
  std::vector<Real> window(window_);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      size_t k = 0;
      for (int dr = -radius_; dr <= radius_; ++dr)
        for (int dc = -radius_; dc <= radius_; ++dc)
          window[k++] = host_value(x, std::clamp<int64_t>(r + dr, 0, rows - 1) * cols +
                                          std::clamp<int64_t>(c + dc, 0, cols - 1));
      std::nth_element(window.begin(), window.begin() + window_ / 2, window.end());
      y.set(r * cols + c, static_cast<double>(window[window_ / 2]));
    }
}

}  // namespace fugue::stencil
