#include "runtime/reference_executor.h"

#include <cstring>

#include "errors.h"
#include "io/initial_values.h"

namespace fugue {

void ReferenceExecutor::run() {
  values_.clear();
  for (const auto& [name, s] : program_.symbols) {
    if (s.compile_time() || s.source.kind == SymbolSource::Kind::None) continue;
    HostArray initial = initial_value(s);
    if (!s.compound()) {
      values_[name] = std::move(initial);
      continue;
    }
    if (initial.parts.size() != s.parts.size())
      throw DeviceError(s.where + ": the file gave " + std::to_string(initial.parts.size()) + " parts, '" + name +
                        "' has " + std::to_string(s.parts.size()));
    for (size_t k = 0; k < s.parts.size(); ++k) values_[s.parts[k]] = std::move(initial.parts[k]);
  }
  for (const auto& [name, s] : program_.symbols)
    check_given_parts(s, [&](const std::string& part) -> const HostArray* {
      auto it = values_.find(part);
      return it == values_.end() ? nullptr : &it->second;
    });
  interpret(program_, program_.body, *this);
}

const HostArray& ReferenceExecutor::value(const std::string& symbol) const {
  const Symbol& s = program_.symbol(symbol);
  if (s.compound()) {
    HostArray whole;
    whole.dtype = s.dtype;
    whole.shape = s.shape;
    whole.kind_name = s.kind_name;
    for (const auto& part : s.parts) whole.parts.push_back(value(part));
    return assembled_[symbol] = std::move(whole);
  }
  auto it = values_.find(symbol);
  if (it == values_.end()) throw UserError(s.where + ": '" + symbol + "' was never written at run time, so it has no value to read");
  return it->second;
}

namespace {
constexpr uint8_t kGuard = 0xA5;  // what the guard regions hold; any other byte there was written

// An array handed to a reference as a copy between guard regions: an operand, or a part of one.
struct GuardedView {
  std::vector<uint8_t> copy;  // guard, the array's bytes, guard
  uint8_t* original = nullptr;
  size_t bytes = 0;
  size_t operand = 0;
  int part = -1;  // a kind with storage: which part
};

std::vector<GuardedView> guard_views(size_t guard_bytes, std::vector<fugue_host_array>& views) {
  std::vector<GuardedView> guarded;
  auto guard = [&](fugue_host_array& view, size_t operand, int part) {
    if (!view.data) return;
    GuardedView g;
    g.original = static_cast<uint8_t*>(view.data);
    g.bytes = view.bytes;
    g.operand = operand;
    g.part = part;
    g.copy.assign(guard_bytes + g.bytes + guard_bytes, kGuard);
    std::memcpy(g.copy.data() + guard_bytes, g.original, g.bytes);
    guarded.push_back(std::move(g));
    view.data = guarded.back().copy.data() + guard_bytes;  // the vector's buffer, which does not move
  };
  for (size_t i = 0; i < views.size(); ++i) {
    guard(views[i], i, -1);
    for (uint32_t k = 0; k < views[i].num_parts && views[i].parts; ++k)
      guard(*FUGUE_NTH_MUTABLE(fugue_host_array, views[i].parts, k), i, static_cast<int>(k));
  }
  return guarded;
}

// Copies what the reference wrote back (outputs, in-place operands); returns what it damaged.
std::vector<std::string> check_guards(const Statement& st, size_t guard_bytes, std::vector<GuardedView>& guarded) {
  std::vector<std::string> damage;
  for (GuardedView& g : guarded) {
    const size_t i = g.operand;
    const auto role = st.op->role(i);
    const uint8_t* data = g.copy.data() + guard_bytes;
    const std::string what = st.where + ": the reference of " + st.op->name() + ", " +
                             (role == FUGUE_ROLE_IN ? "input '" : role == FUGUE_ROLE_OUT ? "output '" : "operand '") +
                             st.operands[i] + "'" + (g.part >= 0 ? " part " + std::to_string(g.part) : std::string()) +
                             " (" + std::to_string(g.bytes) + " bytes): ";
    for (size_t b = guard_bytes; b-- > 0;)  // nearest the data first
      if (g.copy[b] != kGuard) {
        damage.push_back(what + "byte " + std::to_string(guard_bytes - b) + " before the start was written");
        break;
      }
    for (size_t b = 0; b < guard_bytes; ++b)
      if (data[g.bytes + b] != kGuard) {
        damage.push_back(what + "byte " + std::to_string(b) + " past the end was written");
        break;
      }
    if (role != FUGUE_ROLE_IN) std::memcpy(g.original, data, g.bytes);
    else if (std::memcmp(g.original, data, g.bytes) != 0) damage.push_back(what + "an input was written");
  }
  return damage;
}
}  // namespace

void ReferenceExecutor::run_op(const Statement& st) {
  CallDescriptor call;
  program_.call(st, call);
  // Run-time lengths: the reference sees the rows present (the device sees the capacity). Inputs
  // with run-time lengths must agree; an operation that follows them gives its results their length,
  // one that makes a length (array.compact) says it.
  int64_t common = -1;
  std::string common_symbol;
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Symbol& s = program_.symbol(st.operands[i]);
    if (!s.runtime_axes || !st.op->reads(i)) continue;
    auto it = values_.find(s.name);
    if (it == values_.end()) continue;
    const int64_t rows = it->second.shape[0];
    call.values[i].shape[0] = rows;
    if (common >= 0 && rows != common)
      throw UserError(st.where + ": run-time lengths differ: '" + common_symbol + "' has " + std::to_string(common) +
                      " rows, '" + s.name + "' " + std::to_string(rows));
    common = rows;
    common_symbol = s.name;
  }
  // A value whose count is left to the run (ABI 2.21): its counted parts hold that many rows, and the
  // reference sees them as its types' lengths too.
  std::vector<int64_t> counts(st.operands.size(), -1);
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Symbol& s = program_.symbol(st.operands[i]);
    if (!s.counted_at_run_time() || !st.op->reads(i)) continue;
    for (size_t k = 0; k < s.parts.size(); ++k) {
      if (!s.part_types[k].runtime_axes) continue;
      auto it = values_.find(s.parts[k]);
      if (it == values_.end()) continue;  // unwritten: said below
      counts[i] = it->second.shape[0];
      call.values[i].parts[k].shape[0] = counts[i];
    }
  }
  const bool follows = st.op->traits() & FUGUE_OP_RUNTIME_EXTENTS;
  for (uint32_t o : st.op->outputs())
    if (st.op->role(o) == FUGUE_ROLE_OUT && program_.symbol(st.operands[o]).runtime_axes && follows) {
      if (common < 0)
        throw DeviceError(st.where + ": " + st.op->name() + " gives '" + st.operands[o] +
                          "' a run-time length, but no input of the call has one to follow");
      call.values[o].shape[0] = common;
    }
  call.bind(st.attrs, nullptr);
  // Outputs are fresh arrays, moved into place afterwards, so an output that is also an input never
  // sees a half-written value; inputs are read where they are stored, and an in-place (INOUT)
  // operand is updated where it is stored.
  std::vector<HostArray> outputs(st.operands.size());
  std::vector<fugue_host_array> views(st.operands.size());
  std::vector<std::vector<fugue_host_array>> part_views(st.operands.size());
  auto view_of = [](const HostArray& a, const fugue_type* type) {
    return fugue_host_array{sizeof(fugue_host_array), type,
                            a.bytes.empty() ? nullptr : const_cast<uint8_t*>(a.bytes.data()), a.bytes.size(), 0, 0,
                            nullptr};
  };
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Symbol& s = program_.symbol(st.operands[i]);
    HostArray* array = nullptr;
    if (s.compound()) {  // its parts: fresh ones for an output, else where they are stored
      const fugue_type& type = call.types[i];
      for (size_t k = 0; k < s.parts.size(); ++k) {
        const fugue_type* part_type = FUGUE_NTH(fugue_type, type.parts, k);
        if (st.op->role(i) == FUGUE_ROLE_OUT) {
          outputs[i].parts.emplace_back(s.part_types[k].dtype, s.part_types[k].shape);
          continue;
        }
        auto it = values_.find(s.parts[k]);
        if (it == values_.end())
          throw UserError(st.where + ": '" + s.parts[k] + "' is read before anything wrote it at run time");
        part_views[i].push_back(view_of(it->second, part_type));
      }
      if (st.op->role(i) == FUGUE_ROLE_OUT)
        for (size_t k = 0; k < s.parts.size(); ++k)
          part_views[i].push_back(view_of(outputs[i].parts[k], FUGUE_NTH(fugue_type, type.parts, k)));
      const bool counted = s.counted_at_run_time();
      for (size_t k = 0; k < part_views[i].size(); ++k)
        if (counted && s.part_types[k].runtime_axes) part_views[i][k].length = counts[i];
      views[i] = fugue_host_array{sizeof(fugue_host_array), &call.types[i], nullptr, 0, counted ? counts[i] : 0,
                                  static_cast<uint32_t>(part_views[i].size()), part_views[i].data()};
      continue;
    }
    if (st.op->role(i) == FUGUE_ROLE_OUT) {
      Shape shape = s.kind == SymbolKind::Array ? s.shape : Shape{};
      if (s.runtime_axes && follows) shape[0] = common;
      outputs[i] = HostArray(s.dtype, shape);
      array = &outputs[i];
    } else if (!s.compile_time()) {
      auto it = values_.find(s.name);
      if (it == values_.end())
        throw UserError(st.where + ": '" + s.name + "' is read before anything wrote it at run time");
      array = &it->second;
    }
    views[i].struct_size = sizeof(fugue_host_array);
    views[i].type = &call.types[i];
    views[i].data = array && !array->bytes.empty() ? array->bytes.data() : nullptr;
    views[i].bytes = array ? array->bytes.size() : 0;
    views[i].length = s.runtime_axes && array ? (st.op->reads(i) || follows ? array->shape[0] : -1) : 0;
  }
  std::vector<GuardedView> guarded;
  if (guard_bytes_ > 0) guarded = guard_views(guard_bytes_, views);
  try {  // the statement at fault, as the device run names it
    st.op->reference(call.call, views.data());
  } catch (const UserError& e) {
    throw UserError(st.where + st.pointer_of(e.what()) + ": " + e.what());
  } catch (const DeviceError& e) {
    throw DeviceError(st.where + ": " + e.what());
  }
  if (guard_bytes_ > 0)
    for (auto& d : check_guards(st, guard_bytes_, guarded)) guard_damage_.push_back(std::move(d));
  for (uint32_t o : st.op->outputs()) {
    if (st.op->role(o) != FUGUE_ROLE_OUT) continue;
    const Symbol& s = program_.symbol(st.operands[o]);
    if (s.compound()) {
      if (s.counted_at_run_time()) {  // the reference says how many entries it wrote
        const int64_t count = views[o].length;
        for (size_t k = 0; k < s.parts.size(); ++k) {
          if (!s.part_types[k].runtime_axes) continue;
          HostArray& a = outputs[o].parts[k];
          if (count < 0 || count > a.shape[0])
            throw DeviceError(st.where + ": the reference of " + st.op->name() + " gave '" + s.name + "' the count " +
                              std::to_string(count) + ", outside its capacity " + std::to_string(a.shape[0]));
          const size_t row_bytes = a.shape[0] ? a.bytes.size() / static_cast<size_t>(a.shape[0]) : 0;
          a.shape[0] = count;
          a.bytes.resize(row_bytes * static_cast<size_t>(count));
        }
      }
      for (size_t k = 0; k < s.parts.size(); ++k) values_[s.parts[k]] = std::move(outputs[o].parts[k]);
      continue;
    }
    if (s.runtime_axes) {
      // The reference says how many rows it wrote.
      const int64_t rows = views[o].length;
      if (rows < 0 || rows > s.shape[0])
        throw DeviceError(st.where + ": the reference of " + st.op->name() + " gave '" + s.name + "' the length " +
                          std::to_string(rows) + ", outside its capacity " + s.shape_text());
      HostArray& a = outputs[o];
      const size_t row_bytes = a.shape[0] ? a.bytes.size() / static_cast<size_t>(a.shape[0]) : 0;
      a.shape[0] = rows;
      a.bytes.resize(row_bytes * static_cast<size_t>(rows));
    }
    values_[st.operands[o]] = std::move(outputs[o]);
  }
}

double ReferenceExecutor::scalar_value(const std::string& symbol) { return value(symbol).get(0); }

void ReferenceExecutor::set_loop_variable(const std::string& symbol, int64_t v) {
  HostArray a(DType::I64, {});
  a.set(0, static_cast<double>(v));
  values_[symbol] = std::move(a);
}

}  // namespace fugue
