// channels.cpp: stencil.channel and stencil.stack.
#include "channels.h"

#include "support.h"

namespace fugue::stencil {

// ---------------------------------------------------------------------------------------------
// Channel

namespace {
enum : uint32_t { kChannelX, kChannelY };
}

Channel::Channel() {
  name = "stencil.channel";
  doc =
      "[..., C] -> [...]: y = x[..., index], one channel of a field stored interleaved along the "
      "last axis (u = channel(flow, 0) and v = channel(flow, 1) of a [H, W, 2] flow); exact";
  operands = {
      sdk::in("x", kArray, kAll, "the field, [..., C], rank 2 or more"),
      sdk::out("y", kArray, kAll, "the channel: x's shape without its last axis, x's dtype"),
  };
  attrs = {{"index", FUGUE_ATTR_INT, true, 0, "", "the channel, from 0 to C - 1"}};
  // It copies: nothing rounds.
  tolerance_f32 = 0;
  tolerance_f64 = 0;
  test_cases = R"([
    {"name": "u of a flow", "shape": [7, 5, 2], "attrs": {"index": 0}},
    {"name": "v of a flow", "shape": [257, 129, 2], "attrs": {"index": 1}},
    {"name": "single cell", "shape": [1, 1, 1], "attrs": {"index": 0}},
    {"name": "last of three, rank 2", "shape": [7, 3], "attrs": {"index": 2}},
    {"name": "rank 4", "shape": [3, 4, 2, 5], "attrs": {"index": 3}}
  ])";
}

void Channel::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kChannelX, 0);
  const fugue_type& x = call.operand(kChannelX);
  if (x.rank < 2)
    throw rejection("operand x", "an array of rank 2 or more (channels along the last axis)",
                    describe(x));
  const int64_t channels = x.shape[x.rank - 1];
  const int64_t index = call.integer("index");
  if (index < 0 || index >= channels)
    throw rejection("attribute index",
                    channels > 0 ? "a channel from 0 to " + std::to_string(channels - 1) +
                                       " (the last axis of operand x, " + describe(x) + ")"
                                 : "a channel, but the last axis of operand x (" + describe(x) +
                                       ") holds none",
                    std::to_string(index));
  std::vector<int64_t> shape = shape_of(x);
  shape.pop_back();
  types[kChannelY] = array_type(x.dtype, shape);
}

sdk::Plan Channel::plan(const sdk::Call& call) const {
  const fugue_type& x = call.operand(kChannelX);
  const fugue_type& y = call.operand(kChannelY);
  sdk::Plan plan = grid_plan(call, sdk::elements(y));
  plan.partitions[kChannelX] = whole(x.rank);  // element i reads i * C + index
  plan.partitions[kChannelY] = elementwise(y.rank);
  plan.registers = 3;
  return plan;
}

void Channel::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& x = call.operand(kChannelX);
  if (sdk::elements(x) == 0) return;  // the element loop never runs
  const int64_t channels = x.shape[x.rank - 1];
  const std::string it = index_ctype(sdk::elements(x));
  const std::string suffix = it == "long" ? "L" : "";
  const std::string at = "(" + it + ")(" + emitter.builtin(FUGUE_BUILTIN_INDEX) + ") * " +
                         std::to_string(channels) + suffix + " + " +
                         std::to_string(call.integer("index")) + suffix;
  emitter.append("{\n  " + emitter.write(kChannelY) + " = " + emitter.read_at(kChannelX, at) +
                 ";\n}\n");
}

fugue_cost Channel::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  // Strided reads of a few channels fetch every cache line of x: count x whole.
  cost.bytes = array_bytes(call.operand(kChannelX)) + array_bytes(call.operand(kChannelY));
  cost.flops = 0;
  return cost;
}

void Channel::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& x = call.operand(kChannelX);
  const int64_t channels = x.shape[x.rank - 1];
  const int64_t index = call.integer("index");
  const sdk::HostView in(operands[kChannelX]);
  sdk::HostView out(operands[kChannelY]);
  const bool real = sdk::is_float(x.dtype);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (real) out.set(i, in.get(i * channels + index));
    else out.set_int(i, in.get_int(i * channels + index));
  }
}

// ---------------------------------------------------------------------------------------------
// Stack

namespace {
enum : uint32_t { kStackA, kStackB, kStackY };
}

Stack::Stack() {
  name = "stencil.stack";
  doc =
      "[...] and [...] -> [..., 2]: y[..., 0] = a, y[..., 1] = b, two arrays interleaved along a "
      "new last axis (a [H, W, 2] flow of u and v); exact";
  operands = {
      sdk::in("a", kArray, kAll, "channel 0, [...], rank 1 to 7"),
      sdk::in("b", kArray, kAll, "channel 1, a's shape and dtype"),
      sdk::out("y", kArray, kAll, "the pair, [..., 2], a's dtype"),
  };
  tolerance_f32 = 0;
  tolerance_f64 = 0;
  test_cases = R"([
    {"name": "flow", "shape": [7, 5]},
    {"name": "single cell", "shape": [1, 1]},
    {"name": "large", "shape": [257, 129]},
    {"name": "vector", "shape": [7]},
    {"name": "rank 3", "shape": [3, 5, 7]}
  ])";
}

void Stack::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kStackA, 0);
  const fugue_type& a = call.operand(kStackA);
  require_rank(call, kStackB, 0);
  require_like(call, kStackB, kStackA);
  std::vector<int64_t> shape = shape_of(a);
  shape.push_back(2);
  types[kStackY] = array_type(a.dtype, shape);
}

sdk::Plan Stack::plan(const sdk::Call& call) const {
  const fugue_type& a = call.operand(kStackA);
  const fugue_type& y = call.operand(kStackY);
  sdk::Plan plan = grid_plan(call, sdk::elements(y));
  // Element i of y reads element i / 2 of a or b.
  plan.partitions[kStackA] = whole(a.rank);
  plan.partitions[kStackB] = whole(a.rank);
  plan.partitions[kStackY] = elementwise(y.rank);
  plan.registers = 3;
  return plan;
}

void Stack::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& y = call.operand(kStackY);
  if (sdk::elements(y) == 0) return;
  const std::string it = index_ctype(sdk::elements(y));
  const std::string i = emitter.name("i"), half = emitter.name("half");
  std::string code = "  const " + it + " " + i + " = (" + it + ")(" +
                     emitter.builtin(FUGUE_BUILTIN_INDEX) + ");\n";
  code += "  const " + it + " " + half + " = " + i + " >> 1;\n";
  // Even elements come from a, odd ones from b; only the one chosen is read.
  code += "  " + emitter.write(kStackY) + " = (" + i + " & 1) ? " +
          emitter.read_at(kStackB, half) + " : " + emitter.read_at(kStackA, half) + ";\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Stack::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  for (uint32_t k : {kStackA, kStackB, kStackY}) cost.bytes += array_bytes(call.operand(k));
  cost.flops = 0;
  return cost;
}

void Stack::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const bool real = sdk::is_float(call.operand(kStackA).dtype);
  const sdk::HostView a(operands[kStackA]), b(operands[kStackB]);
  sdk::HostView y(operands[kStackY]);
  for (int64_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < 2; ++k) {
      const sdk::HostView& from = k == 0 ? a : b;
      if (real) y.set(2 * i + k, from.get(i));
      else y.set_int(2 * i + k, from.get_int(i));
    }
}

}  // namespace fugue::stencil
