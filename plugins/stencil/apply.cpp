// apply.cpp: stencil.apply.
#include "apply.h"

#include <algorithm>
#include <cstdlib>

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {

enum : uint32_t { kR, kX, kY };

// The farthest point of the stencil along each axis: the halo of x it reads.
std::vector<int64_t> reach(const Stencil& s) {
  std::vector<int64_t> r(s.rank, 0);
  for (uint32_t p = 0; p < s.points(); ++p)
    for (uint32_t d = 0; d < s.rank; ++d)
      r[d] = std::max<int64_t>(r[d], std::llabs(s.offsets[p * s.rank + d]));
  return r;
}

}  // namespace

Apply::Apply() {
  name = "stencil.apply";
  doc =
      "y[p] = sum of w_k * x[p + offset_k] over the points of stencil R, reads outside x "
      "following R's border rule (clamp, zero, periodic or mirror); x has R's rank";
  operands = {
      sdk::in_kind(
          "R", "stencil", kFloat,
          "the stencil: offsets in row-major axis order, weights (rounded to x's dtype), border"),
      sdk::in("x", kArray, kFloat, "the grid, of R's rank (1 to 8)"),
      sdk::out("y", kArray, kFloat, "the result, of x's shape and dtype"),
  };
  // A handful of products summed in x's dtype, in another order than the reference's.
  tolerance_f32 = 1e-5;
  tolerance_f64 = 1e-12;
  // Grids of rank 1 to 3, every border, a reach beyond a short grid, and a stencil without symmetry.
  test_cases = R"([
    {"name": "5-point clamp", "shape": [257, 129], "inputs": {"R": {"kind": "stencil", "border": "clamp",
      "points": [{"offset": [-1, 0], "weight": 0.2}, {"offset": [1, 0], "weight": 0.15},
                 {"offset": [0, -1], "weight": 0.25}, {"offset": [0, 1], "weight": 0.1},
                 {"offset": [0, 0], "weight": -0.7}]}}},
    {"name": "radius 2 zero", "shape": [7, 5], "inputs": {"R": {"kind": "stencil", "border": "zero",
      "points": [{"offset": [-2, 1], "weight": 0.05}, {"offset": [-1, -1], "weight": 0.1},
                 {"offset": [0, 0], "weight": 0.5}, {"offset": [1, 2], "weight": -0.2},
                 {"offset": [2, -2], "weight": 0.3}]}}},
    {"name": "radius 2 periodic", "shape": [1, 1], "inputs": {"R": {"kind": "stencil", "border": "periodic",
      "points": [{"offset": [-2, 1], "weight": 0.05}, {"offset": [0, 0], "weight": 0.5},
                 {"offset": [2, -2], "weight": 0.3}]}}},
    {"name": "1-D mirror", "shape": [2], "inputs": {"R": {"kind": "stencil", "border": "mirror",
      "points": [{"offset": [-3], "weight": 0.25}, {"offset": [0], "weight": -1}, {"offset": [2], "weight": 0.75}]}}},
    {"name": "3-D periodic", "shape": [9, 8, 7], "inputs": {"R": {"kind": "stencil", "border": "periodic",
      "points": [{"offset": [0, 0, 0], "weight": -1.5}, {"offset": [-1, 0, 0], "weight": 0.1},
                 {"offset": [0, 1, 0], "weight": 0.4}, {"offset": [0, 0, -1], "weight": 0.5}]}}}
  ])";
}

void Apply::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kX, 0);
  const fugue_type& x = call.operand(kX);
  const Stencil s = stencil_of(call, kR);
  if (s.rank != x.rank)
    throw rejection(
        "operand R",
        "a stencil of rank " + std::to_string(x.rank) + " like operand x (" + describe(x) + ")",
        "a stencil of rank " + std::to_string(s.rank));
  types[kY] = array_type(x.dtype, shape_of(x));
}

sdk::Plan Apply::plan(const sdk::Call& call) const {
  const fugue_type& x = call.operand(kX);
  sdk::Plan plan = grid_plan(call, sdk::elements(x));
  // R has no device value: it lives in the code.
  // Its neighbourhood: the core may stage x tile by tile in local memory for the interior's read_offset.
  plan.partitions[kX] = tile(x.rank, reach(stencil_of(call, kR)));
  plan.partitions[kY] = elementwise(x.rank);
  plan.registers = 4 + x.rank;
  // The border rule is the only use of an element's position: a device holding some rows of x and
  // its neighbours' computes its own rows as the whole grid would.
  plan.ends = stencil_of(call, kR).border == FUGUE_BORDER_PERIODIC ? FUGUE_ENDS_WRAP : FUGUE_ENDS_INSIDE;
  return plan;
}

void Apply::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& x = call.operand(kX);
  if (sdk::elements(x) == 0) return;  // the element loop never runs
  const Stencil s = stencil_of(call, kR);
  const std::string t = ctype(x.dtype);
  GridCode grid(emitter, shape_of(x), index_ctype(sdk::elements(x)), "", kX);
  std::string code = grid.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  const std::string acc = emitter.name("acc");
  code += "  " + t + " " + acc + " = " + literal(x.dtype, 0) + ";\n";
  // Away from the borders every point is at a fixed displacement from the element (read_offset: one
  // address per element, or the work-group's tile where the core staged x); the border rule only near
  // the borders.
  std::vector<int64_t> below(s.rank, 0), above(s.rank, 0);
  for (uint32_t p = 0; p < s.points(); ++p)
    for (uint32_t d = 0; d < s.rank; ++d) {
      const int64_t o = s.offsets[p * s.rank + d];
      below[d] = std::max(below[d], -o);
      above[d] = std::max(above[d], o);
    }
  const std::string interior = grid.interior(below, above);
  if (interior != "0") {
    std::string fast;
    for (uint32_t p = 0; p < s.points(); ++p)
      fast += "    " + acc + " += " + literal(x.dtype, s.weights[p]) + " * " +
              emitter.read_offset(kX, std::vector<int64_t>(s.offsets.begin() + p * s.rank,
                                                           s.offsets.begin() + (p + 1) * s.rank)) +
              ";\n";
    if (interior == "1") {
      emitter.append("{\n" + code + fast + "  " + emitter.write(kY) + " = " + acc + ";\n}\n");
      return;
    }
    code += "  if (" + interior + ") {\n" + fast + "  } else {\n";
  } else {
    code += "  {\n";
  }
  for (uint32_t p = 0; p < s.points(); ++p) {
    std::vector<std::string> at(s.rank);
    std::string condition;
    bool never = false;
    for (uint32_t d = 0; d < s.rank; ++d) {
      const int64_t offset = s.offsets[p * s.rank + d];
      at[d] = grid.neighbour(d, offset, s.border, code);
      if (s.border != FUGUE_BORDER_ZERO) continue;
      const std::string in = grid.inside(d, offset);
      never |= in == "0";
      if (!in.empty()) condition += (condition.empty() ? "" : " && ") + in;
    }
    if (never) continue;  // outside the grid everywhere: it adds zero
    const std::string term = "  " + acc + " += " + literal(x.dtype, s.weights[p]) + " * " +
                             emitter.read_at(kX, grid.flat(at)) + ";\n";
    code += condition.empty() ? term : "  if (" + condition + ")\n  " + term;
  }
  code += "  }\n  " + emitter.write(kY) + " = " + acc + ";\n";
  // A scope of its own, so that the locals of fused operations never meet.
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Apply::cost(const sdk::Call& call) const {
  const fugue_type& x = call.operand(kX);
  fugue_cost cost{};
  // Each element of x is fetched once from memory; its neighbours' reads of it hit the cache.
  cost.bytes = array_bytes(x) + array_bytes(call.operand(kY));
  cost.flops = 2.0 * stencil_of(call, kR).points() * static_cast<double>(sdk::elements(x));
  return cost;
}

void Apply::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& xt = call.operand(kX);
  const Stencil s = stencil_of(call, kR);
  const std::vector<int64_t> shape = shape_of(xt);
  const sdk::HostView x(operands[kX]);
  sdk::HostView y(operands[kY]);
  std::vector<int64_t> at(s.rank);
  for (int64_t i = 0; i < y.size(); ++i) {
    const std::vector<int64_t> c = unflatten(i, shape);
    Real acc = 0;
    for (uint32_t p = 0; p < s.points(); ++p) {
      bool outside = false;
      for (uint32_t d = 0; d < s.rank; ++d) {
        at[d] = border_coordinate(c[d], s.offsets[p * s.rank + d], shape[d], s.border);
        outside |= at[d] < 0;
      }
      if (outside) continue;
      // The device multiplies by the weight as its literal holds it, in x's dtype.
      acc += rounded(xt.dtype, s.weights[p]) * host_value(x, flatten(at, shape));
    }
    y.set(i, static_cast<double>(acc));
  }
}

}  // namespace fugue::stencil
