// checkerboard.cpp: stencil.red and stencil.black.
#include "checkerboard.h"

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {
enum : uint32_t { kLike, kMask };
}

Checkerboard::Checkerboard(int parity) : parity_(parity) {
  const char* colour = parity == 0 ? "red" : "black";
  name = std::string("stencil.") + colour;
  doc = std::string("mask = 1 where the sum of the element's indices is ") +
        (parity == 0 ? "even" : "odd") + " (the " + colour +
        " cells of a red-black ordering), else 0";
  operands = {
      sdk::in("like", kArray, kAll, "lends its shape (rank 1 or more); never read"),
      sdk::out("mask", kArray, kAll, "1 on the " + std::string(colour) + " cells, 0 elsewhere"),
  };
  attrs = {{"dtype", FUGUE_ATTR_DTYPE, false, 0, "u8", "the dtype of mask"}};
  tolerance_f32 = 0;
  tolerance_f64 = 0;
}

void Checkerboard::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kLike, 0);
  fugue_dtype dtype = call.dtype("dtype");
  if (dtype == FUGUE_DTYPE_NONE) dtype = FUGUE_DTYPE_U8;
  types[kMask] = array_type(dtype, shape_of(call.operand(kLike)));
}

sdk::Plan Checkerboard::plan(const sdk::Call& call) const {
  const fugue_type& mask = call.operand(kMask);
  sdk::Plan plan = grid_plan(call, sdk::elements(mask));
  plan.partitions[kMask] = elementwise(mask.rank);  // like stays NONE: only its shape counts
  plan.registers = 2 + mask.rank;
  return plan;
}

void Checkerboard::emit(const sdk::Call& call, const sdk::Plan&,
                        const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& mask = call.operand(kMask);
  if (sdk::elements(mask) == 0) return;
  GridCode grid(emitter, shape_of(mask), index_ctype(sdk::elements(mask)), "", kMask);
  std::string code = grid.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  // The parity of a sum is the exclusive or of the parities: no overflow, however large the grid.
  std::string parity;
  for (uint32_t d = 0; d < mask.rank; ++d) parity += (d ? " ^ " : "") + grid.coordinate(d);
  code += "  " + emitter.write(kMask) + " = ((" + parity + ") & " + grid.lit(1) +
          ") == " + grid.lit(parity_) + " ? " + literal(mask.dtype, 1) + " : " +
          literal(mask.dtype, 0) + ";\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Checkerboard::cost(const sdk::Call& call) const {
  const fugue_type& mask = call.operand(kMask);
  fugue_cost cost{};
  cost.bytes = array_bytes(mask);
  cost.flops = static_cast<double>(mask.rank) * static_cast<double>(sdk::elements(mask));
  return cost;
}

void Checkerboard::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const std::vector<int64_t> shape = shape_of(call.operand(kMask));
  sdk::HostView mask(operands[kMask]);
  for (int64_t i = 0; i < mask.size(); ++i) {
    int64_t sum = 0;
    for (int64_t c : unflatten(i, shape)) sum += c;
    mask.set_int(i, sum % 2 == parity_ ? 1 : 0);
  }
}

}  // namespace fugue::stencil
