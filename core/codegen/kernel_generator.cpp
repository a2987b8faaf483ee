#include "codegen/kernel_generator.h"

#include <algorithm>
#include <functional>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "codegen/emit_context.h"
#include "codegen/function_writer.h"
#include "errors.h"

namespace fugue {

std::string c_literal(double value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return value < 0 ? "(" + s + ")" : s;
}

std::string c_identifier(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) s += ch;
    else if (ch == '_') s += "__";
    else s += std::string("_") + hex[c >> 4] + hex[c & 15];
  }
  return s;
}

std::string stem_identifier(const char* stem) {
  std::string s = c_identifier(stem ? stem : "");
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "t" + s;
  return s;
}

namespace {

// Indents every line of `code` by `pad`.
std::string indent(const std::string& code, const std::string& pad) {
  std::string out;
  bool at_start = true;
  for (char ch : code) {
    if (at_start && ch != '\n') out += pad;
    out += ch;
    at_start = ch == '\n';
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

// A row or column beyond the grid counted around it (tile stages), for any distance.
const char* const kWrapHelper =
    "long fugue_wrap(long v, long n) {\n  if (v >= 0 && v < n) return v;\n  v %= n;\n  return v < 0 ? v + n : v;\n}\n";

std::string workspace_name(size_t op, uint32_t k) { return "ws" + std::to_string(k) + "_" + std::to_string(op); }

}  // namespace

// Writes one fused kernel: parameters, registers, and each op's code through the accessors.
class KernelWriter {
 public:
  KernelWriter(const Program& program, const FusedGroup& group, const Launch& launch)
      : program_(program), group_(group), launch_(launch) {}

  // Where symbol `s` is read from right now: its register once an op of this kernel wrote it.
  bool in_register(const std::string& s) const { return registers_now_.count(s) > 0; }
  static std::string param(const std::string& s) { return "g_" + c_identifier(s); }
  static std::string shadow(const std::string& s) { return "g_" + c_identifier(s) + "_next"; }
  static std::string reg(const std::string& s) { return "v_" + c_identifier(s); }
  static std::string local(const std::string& s) { return "l_" + c_identifier(s); }
  bool batched() const { return group_.plan.level == FUGUE_LEVEL_BLOCK; }
  // Several entries per work-group, a team of work-items each (Launch::team).
  bool teams() const { return batched() && launch_.team > 0; }
  // Elements between neighbouring entries of a value held in local memory: with teams, odd, so that the
  // items of a team-of-one reading the same element of their entries reach different banks.
  // A CPU's (launch_.blocked) have no banks: entries stay packed, their rows as aligned as the data's.
  // Rows padded by one element (FusedGroup::padded_rows) count in it.
  int64_t slot_stride(const std::string& s) const {
    int64_t elements = group_.local_values.at(s);
    if (auto row = group_.padded_rows.find(s); row != group_.padded_rows.end()) elements += elements / row->second;
    return teams() && !launch_.blocked && elements % 2 == 0 ? elements + 1 : elements;
  }
  // Element `at` of the current entry of a value held in local memory (element j of a padded entry is
  // j + j / row).
  std::string local_entry(const std::string& s, const std::string& at) const {
    if (!teams()) return local(s) + "[" + at + "]";
    std::string place = at;
    if (auto row = group_.padded_rows.find(s); row != group_.padded_rows.end())
      place = "(" + at + ") + (" + at + ") / " + std::to_string(row->second);
    return local(s) + "[fugue_slot * " + std::to_string(slot_stride(s)) + " + " + place + "]";
  }

  const char* keep(fugue_emit_context* c, std::string s) { return c->strings.emplace_back(std::move(s)).c_str(); }

  // Tile stages (FusedGroup::stage_of): the cell (fugue_by, fugue_bx) of the current stage's widened
  // tile; value s's tile covers the widened tile of the stage that first writes it.
  bool stages() const { return launch_.tile_stages && !group_.stage_of.empty(); }
  bool in_tile(const std::string& s) const { return stages() && in_tile_now_.count(s) > 0; }
  static std::string tile_name(const std::string& s) { return "l_" + c_identifier(s) + "_stage"; }
  std::pair<int64_t, int64_t> tile_reach(const std::string& s) const { return group_.stage_reach.at(group_.tile_values.at(s)); }
  int64_t tile_width(const std::string& s) const { return launch_.tile_cols + 2 * tile_reach(s).second; }
  int64_t tile_height(const std::string& s) const { return launch_.tile_rows + 2 * tile_reach(s).first; }
  // Element of s's tile `rows`, `cols` away from the current cell.
  std::string tile_cell(const std::string& s, int64_t rows = 0, int64_t cols = 0) const {
    const auto [ry, rx] = tile_reach(s);
    const auto [ey, ex] = group_.stage_reach.at(stage_);
    return tile_name(s) + "[(fugue_by + " + std::to_string(ry - ey + rows) + ") * " + std::to_string(tile_width(s)) +
           " + fugue_bx + " + std::to_string(rx - ex + cols) + "]";
  }
  // The grid's extent along axis 0 (rows) or 1 (columns): an argument where the launch says so.
  std::string grid_extent(uint32_t axis) {
    if (!launch_.extent_arguments) return "(" + std::to_string(axis == 0 ? launch_.grid_rows : launch_.grid_cols) + "L)";
    // A value of the grid's shape (the one read around its element is; others crossing stages may only
    // have as many elements).
    std::string s = group_.tile_values.begin()->first;
    for (const auto& [value, stage] : group_.tile_values) {
      const Shape& shape = program_.symbol(value).shape;
      if (shape.size() == 2 && shape[0] == launch_.grid_rows && shape[1] == launch_.grid_cols) {
        s = value;
        break;
      }
    }
    if (std::find(extent_args_.begin(), extent_args_.end(), std::make_pair(s, axis)) == extent_args_.end())
      extent_args_.emplace_back(s, axis);
    return extent_name(s, axis);
  }

  const PlannedOp& op(const fugue_emit_context* c) const { return *group_.ops[c->op]; }

  bool valid_operand(fugue_emit_context* c, uint32_t k) {
    if (k < op(c).statement->operands.size()) return true;
    if (c->misuse.empty()) c->misuse = "accessor asked for operand " + std::to_string(k) + ", which does not exist";
    return false;
  }

  const char* access(fugue_emit_context* c, uint32_t k, bool write) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const fugue_type& t = p.types[k];
    const std::string& s = p.statement->operands[k];
    if (t.kind == FUGUE_KIND_PLUGIN) {
      c->misuse = "accessor asked for operand " + std::to_string(k) + ", a " + std::string(t.kind_name ? t.kind_name : "") +
                  " known when kernels are generated, which has no device value (read its metadata instead)";
      return "0";
    }
    if (t.kind == FUGUE_KIND_FUNCTION) {
      c->misuse = "accessor asked for operand " + std::to_string(k) + ", a function: call it with call_function";
      return "0";
    }
    if (t.kind == FUGUE_KIND_CONST) {
      if (write) c->misuse = "accessor asked to write const operand " + std::to_string(k);
      return keep(c, c_literal(t.const_value));
    }
    if (p.partition(k).kind == FUGUE_PARTITION_NONE) {
      if (c->misuse.empty())
        c->misuse = "accessor asked for operand " + std::to_string(k) +
                    ", whose partition is NONE (the op promised not to touch it)";
      return "0";
    }
    const bool element = c->phase == FUGUE_PHASE_ELEMENT;
    if (p.partition(k).kind == FUGUE_PARTITION_BATCH) {
      c->misuse = "read/write on operand " + std::to_string(k) + ", a BATCH operand: reach its entry with read_at / write_at";
      return "0";
    }
    if (pointwise_access(p, k) && element) {
      if (write) {
        written_now_.insert(s);
        return keep(c, reg(s));
      }
      if (in_register(s)) return keep(c, reg(s));
      if (batched() && in_local_now_.count(s)) return keep(c, local_entry(s, local_index_));
      if (in_tile(s)) return keep(c, tile_cell(s));
    } else if (element && !write && in_tile(s) && !in_register(s)) {
      return keep(c, tile_cell(s));
    } else if (in_register(s) || group_.promoted.count(s)) {
      c->misuse = "operand " + std::to_string(k) + " ('" + s + "') is accessed outside its own element, but its value "
                  "lives in a register of this kernel";
      return "0";
    }
    std::string base = write && group_.shadowed.count(s) ? shadow(s) : param(s);
    if (t.kind == FUGUE_KIND_SCALAR) return keep(c, base + "[0]");
    // Loaded for every trip before the trips run (see preload_), so a branch on one value does not
    // hold back the next load.
    if (element && preload_ && !write && t.kind == FUGUE_KIND_ARRAY) {
      preloaded_.insert(s);
      return keep(c, "p" + param(s) + "[trip]");
    }
    if (element) return keep(c, base + "[" + index_ + "]");
    return keep(c, base);  // outside the element loop an array is its pointer
  }

  const char* read_at(fugue_emit_context* c, uint32_t k, const char* index) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const std::string& s = p.statement->operands[k];
    if (p.types[k].kind != FUGUE_KIND_ARRAY) {
      c->misuse = "read_at on operand " + std::to_string(k) + ", which is not an array";
      return "0";
    }
    const auto& part = p.partition(k);
    const std::string at = std::string("(") + (index && *index ? index : "0") + ")";
    if (part.kind == FUGUE_PARTITION_BATCH) return keep(c, entry_element(c, k, at, false));
    if (part.kind != FUGUE_PARTITION_ELEMENTWISE && part.kind != FUGUE_PARTITION_WHOLE && part.kind != FUGUE_PARTITION_TILE) {
      c->misuse = "read_at on operand " + std::to_string(k) + ", whose partition is neither ELEMENTWISE, TILE, BATCH nor WHOLE";
      return "0";
    }
    if (in_tile(s) && !in_register(s) && c->phase == FUGUE_PHASE_ELEMENT) {
      // The tile's cell of the same grid cell, rows and columns counted around the grid (periodic
      // borders reach the other side; the tile's cells beyond the grid hold the wrapped-around values),
      // within the widened tile of the stage that wrote the value last: cells of the tile beyond it
      // may hold an older value of the same symbol.
      const auto [ry, rx] = tile_reach(s);
      const auto [wy, wx] = group_.stage_reach.at(tile_written_at_.at(s));
      helpers_["fugue_wrap"] = kWrapHelper;
      const std::string R = grid_extent(0), C = grid_extent(1);
      auto n = [](int64_t v) { return std::to_string(v); };
      return keep(c, tile_name(s) + "[(int)((" + n(ry - wy) + " + min(fugue_wrap(" + at + " / " + C + " - (fugue_row0 - " + n(wy) + "), " + R +
                         "), " + n(launch_.tile_rows + 2 * wy - 1) + "L)) * " + n(tile_width(s)) + " + " + n(rx - wx) + " + min(fugue_wrap(" + at +
                         " % " + C + " - (fugue_col0 - " + n(wx) + "), " + C + "), " + n(launch_.tile_cols + 2 * wx - 1) + "L))]");
    }
    if (in_register(s) || group_.promoted.count(s)) {
      c->misuse = "read_at on '" + s + "', whose value lives in a register of this kernel";
      return "0";
    }
    return keep(c, param(s) + "[" + (index && *index ? index : "0") + "]");
  }

  // Element `at` of the current entry of BATCH operand k: in local memory once the kernel holds the
  // entry there, else in global memory.
  std::string entry_element(fugue_emit_context* c, uint32_t k, const std::string& at, bool write) {
    const PlannedOp& p = op(c);
    const std::string& s = p.statement->operands[k];
    if (c->phase != FUGUE_PHASE_BODY) {
      c->misuse = "operand " + std::to_string(k) + " is a BATCH operand, reached only in the BODY phase";
      return "0";
    }
    if (write && group_.local_values.count(s)) {
      written_now_.insert(s);
      return local_entry(s, at);
    }
    // An output read back (the operation's own results so far) is where the operation writes it.
    const bool own_result = p.writes(k) && !p.reads(k) && group_.local_values.count(s);
    if (!write && (in_local_now_.count(s) || own_result)) return local_entry(s, at);
    const int64_t per_entry = entry_elements(p.types[k], p.partition(k));
    return param(s) + "[" + entry_ + " * " + std::to_string(per_entry) + "L + " + at + "]";
  }

  const char* write_at(fugue_emit_context* c, uint32_t k, const char* index) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const int32_t partition = p.partition(k).kind;
    if (!p.writes(k) || p.types[k].kind != FUGUE_KIND_ARRAY ||
        (partition != FUGUE_PARTITION_BATCH && partition != FUGUE_PARTITION_SCATTER)) {
      c->misuse = "write_at on operand " + std::to_string(k) + ", which is not an array output partitioned BATCH or SCATTER";
      return "0";
    }
    const std::string at = std::string("(") + (index && *index ? index : "0") + ")";
    // SCATTER (2.7): a plain store into the whole array, where the operation's data decide.
    if (partition == FUGUE_PARTITION_SCATTER) return keep(c, param(p.statement->operands[k]) + "[" + at + "]");
    return keep(c, entry_element(c, k, at, true));
  }

  // 2.8: element `index` of part `part` of a kind with storage the plan reads WHOLE.
  const char* read_part_at(fugue_emit_context* c, uint32_t k, uint32_t part, const char* index) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const Symbol& s = program_.symbol(p.statement->operands[k]);
    if (!s.compound() || p.writes(k) || p.partition(k).kind != FUGUE_PARTITION_WHOLE) {
      c->misuse = "read_part_at on operand " + std::to_string(k) + ", which is not a kind with storage the plan reads WHOLE";
      return "0";
    }
    if (part >= s.parts.size()) {
      c->misuse = "read_part_at: operand " + std::to_string(k) + " has " + std::to_string(s.parts.size()) + " parts, not part " +
                  std::to_string(part);
      return "0";
    }
    return keep(c, param(s.parts[part]) + "[(" + (index && *index ? index : "0") + ")]");
  }

  // 2.22: the count of a kind with storage whose parts have a run-time length, read WHOLE: the buffer the
  // count is held in (its counted parts share it), passed as an argument of its own.
  const char* count(fugue_emit_context* c, uint32_t k) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const Symbol& s = program_.symbol(p.statement->operands[k]);
    const std::vector<std::string> counted = s.counted_parts();
    if (counted.empty() || p.writes(k) || p.partition(k).kind != FUGUE_PARTITION_WHOLE) {
      c->misuse = "count of operand " + std::to_string(k) + ", which is not a value whose count is left to the run the plan reads WHOLE";
      return "0";
    }
    // The finalize kernel takes the main kernel's arguments, gathered before its code is written.
    if (c->phase == FUGUE_PHASE_FINALIZE) {
      c->misuse = "count of operand " + std::to_string(k) + " in the FINALIZE phase: read it in the phases of the main kernel";
      return "0";
    }
    if (std::find(count_args_.begin(), count_args_.end(), counted.front()) == count_args_.end()) count_args_.push_back(counted.front());
    return keep(c, "(" + count_name(counted.front()) + "[0])");
  }
  static std::string count_name(const std::string& part) { return "fugue_count_" + c_identifier(part); }

  const char* local_array(fugue_emit_context* c, fugue_dtype dtype, int64_t count, const char* stem) {
    const PlannedOp& p = op(c);
    if (!fugue_dtype_supported(dtype) || count < 1) {
      c->misuse = "local_array of " + std::to_string(count) + " elements of dtype " + std::to_string(dtype);
      return "0";
    }
    const std::string s = stem_identifier(stem);
    // The same stem in another phase (or again) of the same call: the same array.
    const auto key = std::make_pair(c->op, s);
    if (auto it = local_arrays_.find(key); it != local_arrays_.end()) {
      if (it->second.dtype != dtype || it->second.count != count)
        c->misuse = "local_array '" + s + "' asked for again with another dtype or count";
      return keep(c, it->second.name);
    }
    if (c->phase == FUGUE_PHASE_ELEMENT || c->phase == FUGUE_PHASE_FINALIZE || p.level() == FUGUE_LEVEL_ELEMENT) {
      c->misuse = "local_array declared in the ELEMENT or FINALIZE phase or at ELEMENT level (an array the "
                  "PROLOGUE declared may be named there again)";
      return "0";
    }
    uint64_t& used = local_used_[c->op];
    used += static_cast<uint64_t>(count) * dtype_size(static_cast<DType>(dtype));
    if (used > p.plan.local_mem_bytes) {
      c->misuse = "local arrays of " + std::to_string(used) + " bytes, more than the plan's local_mem_bytes (" +
                  std::to_string(p.plan.local_mem_bytes) + ")";
      return "0";
    }
    std::string name = "lm_" + s + "_" + std::to_string(c->op);
    // With teams, each team has its own array: one slice per entry of the work-group.
    const int64_t slices = teams() && p.level() == FUGUE_LEVEL_BLOCK ? launch_.entries_per_group : 1;
    local_decls_.push_back("__local " + std::string(dtype_ctype(static_cast<DType>(dtype))) + " " + name + "[" +
                           std::to_string(count * slices) + "];");
    if (slices > 1) name = "(" + name + " + fugue_slot * " + std::to_string(count) + ")";
    local_arrays_[key] = {name, dtype, count};
    return keep(c, name);
  }

  const char* barrier(fugue_emit_context* c) {
    const bool item = op(c).level() == FUGUE_LEVEL_ITEM &&
                      (c->phase == FUGUE_PHASE_PROLOGUE || c->phase == FUGUE_PHASE_EPILOGUE);
    if (c->phase != FUGUE_PHASE_BODY && !item) {
      c->misuse = "barrier outside the BODY phase and an ITEM-level PROLOGUE or EPILOGUE";
      return "";
    }
    return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);";
  }

  // The helper that updates one element of `dtype` (a real dtype, or a complex one's part) in memory
  // `space` ("__global" or "__local") atomically: its name, its definition added to the kernel's source.
  std::string atomic_helper(int32_t op, DType dtype, const std::string& space) {
    const char* what = op == FUGUE_ATOMIC_ADD ? "add" : op == FUGUE_ATOMIC_MIN ? "min" : "max";
    const std::string t(dtype_ctype(dtype)), name = std::string("fugue_atomic_") + what + "_" + std::string(dtype_name(dtype)) +
                                                     (space == "__local" ? "_local" : "_global");
    if (helpers_.count(name)) return name;
    const bool wide = dtype_size(dtype) == 8, real = dtype == DType::F32 || dtype == DType::F64;
    if (wide) uses_int64_atomics_ = true;
    std::string code = "void " + name + "(volatile " + space + " " + t + "* p, " + t + " v) {\n";
    if (!real && !wide) {  // 32-bit integers: native
      code += std::string("  atomic_") + what + "(p, v);\n";
    } else if (!real && op == FUGUE_ATOMIC_ADD) {  // 64-bit integers: cl_khr_int64_base_atomics
      code += "  atom_add(p, v);\n";
    } else {  // a compare-and-swap loop on the bits
      const std::string bits = wide ? "ulong" : "uint", cas = wide ? "atom_cmpxchg" : "atomic_cmpxchg";
      // f32 addition is native where the compiler says so: OpenCL 3.0's float atomics, or NVIDIA's
      // (cl_nv_pragma_unroll marks its compiler) through one PTX reduction instruction.
      if (dtype == DType::F32 && op == FUGUE_ATOMIC_ADD) {
        const bool global = space == "__global";
        code += std::string("#if defined(__opencl_c_ext_fp32_") + (global ? "global" : "local") + "_atomic_add)\n" +
                "  atomic_fetch_add_explicit((volatile " + space + " atomic_float*)p, v, memory_order_relaxed);\n" +
                "#elif defined(cl_nv_pragma_unroll)\n" + "  asm volatile(\"red." + (global ? "global" : "shared") +
                ".add.f32 [%0], %1;\" :: \"l\"(p), \"f\"(v) : \"memory\");\n#else\n";
      }
      const std::string next = op == FUGUE_ATOMIC_ADD ? "old.v + v"
                               : real                 ? std::string(op == FUGUE_ATOMIC_MIN ? "fmin" : "fmax") + "(old.v, v)"
                                                      : std::string(op == FUGUE_ATOMIC_MIN ? "min" : "max") + "(old.v, v)";
      code += "  union { " + bits + " u; " + t + " v; } old, next;\n  do {\n    old.v = *p;\n    next.v = " + next +
              ";\n  } while (" + cas + "((volatile " + space + " " + bits + "*)p, old.u, next.u) != old.u);\n";
      if (dtype == DType::F32 && op == FUGUE_ATOMIC_ADD) code += "#endif\n";
    }
    code += "}\n";
    helpers_[name] = code;
    return name;
  }

  // `pointer` (an address in `space`) updated with `value` by `op`; complex dtypes part by part.
  std::string atomic_update(fugue_emit_context* c, int32_t op, fugue_dtype dtype, const std::string& space,
                            const std::string& pointer, const std::string& value) {
    if (op != FUGUE_ATOMIC_ADD && op != FUGUE_ATOMIC_MIN && op != FUGUE_ATOMIC_MAX) {
      c->misuse = "unknown atomic operation " + std::to_string(op);
      return "";
    }
    if (!fugue_dtype_supported(dtype) || dtype == FUGUE_DTYPE_U8 || (abi::is_complex(dtype) && op != FUGUE_ATOMIC_ADD)) {
      c->misuse = "no atomic update of this kind for dtype " + std::to_string(dtype) + " (u8 has none; complex only ADD)";
      return "";
    }
    if (abi::is_complex(dtype)) {
      const DType part = static_cast<DType>(abi::component_dtype(dtype));
      const std::string f = atomic_helper(op, part, space), pt = "(volatile " + space + " " + std::string(dtype_ctype(part)) + "*)(" + pointer + ")";
      return "{ const " + std::string(dtype_ctype(static_cast<DType>(dtype))) + " fugue_v = " + value + "; " + f + "(" + pt +
             ", fugue_v.x); " + f + "(" + pt + " + 1, fugue_v.y); }";
    }
    return atomic_helper(op, static_cast<DType>(dtype), space) + "(" + pointer + ", " + value + ");";
  }

  const char* atomic_at(fugue_emit_context* c, int32_t update, uint32_t k, const char* index, const char* value) {
    if (!valid_operand(c, k)) return "";
    const PlannedOp& p = op(c);
    if (p.partition(k).kind != FUGUE_PARTITION_SCATTER) {
      c->misuse = "atomic_at on operand " + std::to_string(k) + ", which is not partitioned SCATTER";
      return "";
    }
    const std::string at = std::string("(") + (index && *index ? index : "0") + ")";
    return keep(c, atomic_update(c, update, p.types[k].dtype, "__global", "&" + param(p.statement->operands[k]) + "[" + at + "]",
                                 std::string("(") + (value ? value : "0") + ")"));
  }

  const char* atomic_local(fugue_emit_context* c, int32_t op, fugue_dtype dtype, const char* element, const char* value) {
    if (!element || !*element) {
      c->misuse = "atomic_local without an element";
      return "";
    }
    return keep(c, atomic_update(c, op, dtype, "__local", std::string("&(") + element + ")",
                                 std::string("(") + (value ? value : "0") + ")"));
  }

  static std::string extent_name(const std::string& s, uint32_t axis) {
    return "fugue_ext_" + c_identifier(s) + "_" + std::to_string(axis);
  }

  // Extent `axis` of array operand k: a kernel argument where the launch says so (one compiled kernel
  // then serves every size), else a literal.
  const char* extent(fugue_emit_context* c, uint32_t k, uint32_t axis) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const fugue_type& t = p.types[k];
    if (t.kind != FUGUE_KIND_ARRAY || axis >= t.rank) {
      c->misuse = "extent of operand " + std::to_string(k) + " along axis " + std::to_string(axis) +
                  ", which it does not have";
      return "0";
    }
    if (!launch_.extent_arguments) return keep(c, "(" + std::to_string(t.shape[axis]) + "L)");
    const std::string& s = p.statement->operands[k];
    if (std::find(extent_args_.begin(), extent_args_.end(), std::make_pair(s, axis)) == extent_args_.end())
      extent_args_.emplace_back(s, axis);
    return keep(c, extent_name(s, axis));
  }

  const char* builtin(fugue_emit_context* c, int32_t which) {
    // Where the code stands in the whole launch: a split by rows (placement.h) would move it.
    if (which == FUGUE_BUILTIN_INDEX || which == FUGUE_BUILTIN_ENTRY || which == FUGUE_BUILTIN_GROUP_ID ||
        which == FUGUE_BUILTIN_GROUP_ID_1 || which == FUGUE_BUILTIN_GROUP_ID_2)
      asks_position_.insert(op(c).statement);
    switch (which) {
      case FUGUE_BUILTIN_ENTRY:
        if (!batched()) {
          c->misuse = "builtin ENTRY outside a BLOCK-level operation";
          return "0";
        }
        return keep(c, entry_);
      case FUGUE_BUILTIN_INDEX: return keep(c, index_);
      case FUGUE_BUILTIN_LOCAL_ID:
        // A team's body: the item's place in its team.
        if (teams() && c->phase == FUGUE_PHASE_BODY) return "fugue_lane";
        return "((int)get_local_id(0))";
      case FUGUE_BUILTIN_GROUP_ID: return c->finalize ? "0" : "((int)get_group_id(0))";  // FINALIZE: one group
      case FUGUE_BUILTIN_LOCAL_SIZE:
        return keep(c, std::to_string(teams() && c->phase == FUGUE_PHASE_BODY ? launch_.team : launch_.local_size));
      case FUGUE_BUILTIN_NUM_GROUPS: return c->finalize ? "fugue_groups" : "((int)get_num_groups(0))";
      // 2.9: dimensions 1 and 2 (a finalize kernel is 1-D).
      case FUGUE_BUILTIN_LOCAL_ID_1: return c->finalize ? "0" : "((int)get_local_id(1))";
      case FUGUE_BUILTIN_LOCAL_ID_2: return c->finalize ? "0" : "((int)get_local_id(2))";
      case FUGUE_BUILTIN_GROUP_ID_1: return c->finalize ? "0" : "((int)get_group_id(1))";
      case FUGUE_BUILTIN_GROUP_ID_2: return c->finalize ? "0" : "((int)get_group_id(2))";
      case FUGUE_BUILTIN_LOCAL_SIZE_1:
      case FUGUE_BUILTIN_LOCAL_SIZE_2: {
        const size_t d = which == FUGUE_BUILTIN_LOCAL_SIZE_1 ? 1 : 2;
        return keep(c, std::to_string(!c->finalize && launch_.work_dim > d ? launch_.local_dims[d] : 1));
      }
      case FUGUE_BUILTIN_NUM_GROUPS_1: return c->finalize ? "1" : "((int)get_num_groups(1))";
      case FUGUE_BUILTIN_NUM_GROUPS_2: return c->finalize ? "1" : "((int)get_num_groups(2))";
      case FUGUE_BUILTIN_SUB_GROUP_SIZE: {
        const fugue_device_desc& d = op(c).device;
        return keep(c, std::to_string(d.num_subgroup_sizes > 0 && d.subgroup_sizes ? d.subgroup_sizes[0] : 1));
      }
      default:
        c->misuse = "unknown builtin " + std::to_string(which);
        return "0";
    }
  }

  const char* workspace(fugue_emit_context* c, uint32_t k) {
    if (k >= op(c).plan.workspaces.size()) {
      c->misuse = "workspace " + std::to_string(k) + " was not declared in the plan";
      return "0";
    }
    // BLOCK level: the entry slot's own part (a team's with teams, else the work-group's), which the
    // slot's next entries reuse. (No bundled operation meets teams here yet: an entry large enough to need
    // a workspace does not share a work-group.)
    if (c->phase == FUGUE_PHASE_BODY) {
      const std::string per = std::to_string(std::max<int64_t>(op(c).plan.workspaces[k].elements_per_group, 1));
      const std::string slot = teams() ? "((long)get_group_id(0) * " + std::to_string(launch_.entries_per_group) + " + fugue_slot)"
                                       : "(long)get_group_id(0)";
      return keep(c, "(" + workspace_name(c->op, k) + " + " + slot + " * " + per + "L)");
    }
    return keep(c, workspace_name(c->op, k));
  }

  // A call of function operand k: its definition is written once per kernel and argument dtypes,
  // before the kernel; the call is an expression of its result's type.
  const char* call_function(fugue_emit_context* c, uint32_t k, uint32_t num_args, const fugue_dtype* arg_dtypes,
                            const char* const* args) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const UserFunction* f = k < p.descriptor.functions.size() ? p.descriptor.functions[k].get() : nullptr;
    if (p.types[k].kind != FUGUE_KIND_FUNCTION || !f) {
      c->misuse = "call_function on operand " + std::to_string(k) + ", which is not a function";
      return "0";
    }
    if (num_args != f->params.size() || (num_args && (!arg_dtypes || !args))) {
      c->misuse = "call_function of '" + f->name + "' with " + std::to_string(num_args) + " argument(s); it takes " +
                  std::to_string(f->params.size());
      return "0";
    }
    std::vector<DType> dtypes;
    std::string name = "fugue_fn_" + c_identifier(f->name);
    for (uint32_t i = 0; i < num_args; ++i) {
      if (!fugue_dtype_supported(arg_dtypes[i])) {
        c->misuse = "call_function with argument " + std::to_string(i) + " of no supported dtype";
        return "0";
      }
      dtypes.push_back(static_cast<DType>(arg_dtypes[i]));
      name += "_" + std::string(dtype_name(dtypes.back()));
    }
    // Nothing may be thrown through the plugin's emit: failures wait in the context.
    try {
      if (!helpers_.count(name)) {
        const TypedFunction typed = type_function(*f, dtypes);
        for (const auto& [value, dtype] : typed.dtypes)
          if (abi::component_dtype(static_cast<fugue_dtype>(dtype)) == FUGUE_DTYPE_F64) {
            if (!(p.device.features & FUGUE_DEVICE_FP64))
              throw UserError(f->where + ": function '" + f->name + "' computes '" + value + "' in " +
                              std::string(dtype_name(dtype)) + ", but " + (p.device.name ? p.device.name : "the device") +
                              " has no double precision; choose another device with --device or compute in f32");
            functions_use_fp64_ = true;
          }
        helpers_[name] = write_function(*f, typed, name, &p.device);
      }
    } catch (const UserError& e) {
      if (c->user_error.empty()) c->user_error = e.what();
      return "0";
    } catch (const std::exception& e) {
      if (c->misuse.empty()) c->misuse = std::string("calling function '") + f->name + "': " + e.what();
      return "0";
    }
    std::string call = name + "(";
    for (uint32_t i = 0; i < num_args; ++i) call += (i ? ", " : "") + std::string(args[i] ? args[i] : "0");
    return keep(c, call + ")");
  }

  // Element of array operand k `offsets` away from the current one (the operation keeps it inside the
  // array): the flat index plus a displacement. (Rows kept in registers along a column strip, loading each
  // element once, were slower on the H100 than these loads, which hit the compute unit's cache: 9-point
  // stencil 0.78x copy against 0.82x, Jacobi 0.93x against 0.99x, scripts/gpu_stencil_sweep.sh.)
  const char* read_offset(fugue_emit_context* c, uint32_t k, uint32_t rank, const int64_t* offsets) {
    if (!valid_operand(c, k)) return "0";
    const PlannedOp& p = op(c);
    const fugue_type& t = p.types[k];
    const std::string& s = p.statement->operands[k];
    if (t.kind != FUGUE_KIND_ARRAY || rank != t.rank || (rank > 0 && !offsets)) {
      c->misuse = "read_offset on operand " + std::to_string(k) + " with " + std::to_string(rank) +
                  " offsets: it takes an array and one offset per axis";
      return "0";
    }
    const auto& part = p.partition(k);
    if (c->phase != FUGUE_PHASE_ELEMENT ||
        (part.kind != FUGUE_PARTITION_ELEMENTWISE && part.kind != FUGUE_PARTITION_TILE)) {
      c->misuse = "read_offset on operand " + std::to_string(k) + " outside the ELEMENT phase or of a partition other "
                  "than ELEMENTWISE or TILE";
      return "0";
    }
    for (uint32_t d = 0; d < rank; ++d)
      if (std::abs(offsets[d]) > abi::Partition::at(part.halo, d)) {
        c->misuse = "read_offset on operand " + std::to_string(k) + " beyond the halo its partition declares (axis " +
                    std::to_string(d) + ")";
        return "0";
      }
    if (in_tile(s) && !in_register(s) && rank == 2) return keep(c, tile_cell(s, offsets[0], offsets[1]));
    if (in_register(s) || group_.promoted.count(s)) {
      c->misuse = "read_offset on '" + s + "', whose value lives in a register of this kernel";
      return "0";
    }
    auto staged = launch_.staged.find(s);
    if (staged != launch_.staged.end() && rank == 2 && std::abs(offsets[0]) <= staged->second.first &&
        std::abs(offsets[1]) <= staged->second.second) {  // the work-group's tile, which holds the offsets
      const auto& [hy, hx] = staged->second;
      const int64_t width = launch_.tile_cols + 2 * hx;
      return keep(c, local(s) + "_tile[(ly + " + std::to_string(hy + offsets[0]) + ") * " + std::to_string(width) +
                         " + lx + " + std::to_string(hx + offsets[1]) + "]");
    }
    // The flat index plus the displacement: one literal, or Horner over the extents the core passes.
    std::string displacement;
    if (!launch_.extent_arguments) {
      int64_t value = 0, stride = 1;
      for (uint32_t d = rank; d-- > 0;) {
        value += offsets[d] * stride;
        stride *= t.shape[d];
      }
      displacement = std::to_string(value);
    } else {
      displacement = "(long)" + std::to_string(rank ? offsets[0] : 0);
      for (uint32_t d = 1; d < rank; ++d)
        displacement = "(" + displacement + ") * " + extent(c, k, d) + " + " + std::to_string(offsets[d]);
    }
    return keep(c, param(s) + "[" + index_ + " + (" + displacement + ")]");
  }

  // The arrays the launch stages (read as TILE), each with its halo in a local array before the tile's
  // cells are computed: every work-item of the group loads a share, clamping to the grid (cells beyond
  // it are never read by read_offset, which the operations keep inside the array).
  std::string stage_tiles(const std::string& it, int64_t tiles_x) {
    auto n = [](int64_t v) { return std::to_string(v); };
    std::string code;
    for (const auto& [s, halo] : launch_.staged) {
      const auto [hy, hx] = halo;
      const int64_t width = launch_.tile_cols + 2 * hx, cells = width * (launch_.tile_rows + 2 * hy);
      const std::string t(dtype_ctype(program_.symbol(s).dtype)), tile = local(s) + "_tile";
      local_decls_.push_back("__local " + t + " " + tile + "[" + n(cells) + "];");
      code += "    for (int fugue_t = (int)get_local_id(0); fugue_t < " + n(cells) + "; fugue_t += " + n(launch_.local_size) +
              ") {\n";
      code += "      const " + it + " r = min(max((tile / " + n(tiles_x) + ") * " + n(launch_.tile_rows) + " - " + n(hy) +
              " + fugue_t / " + n(width) + ", (" + it + ")0), (" + it + ")" + n(launch_.grid_rows - 1) + ");\n";
      code += "      const " + it + " c = min(max((tile % " + n(tiles_x) + ") * " + n(launch_.tile_cols) + " - " + n(hx) +
              " + fugue_t % " + n(width) + ", (" + it + ")0), (" + it + ")" + n(launch_.grid_cols - 1) + ");\n";
      code += "      " + tile + "[fugue_t] = " + param(s) + "[r * " + n(launch_.grid_cols) + " + c];\n    }\n";
    }
    if (!code.empty()) code += "    barrier(CLK_LOCAL_MEM_FENCE);\n";
    return code;
  }

  // Runs op o's emit for one phase; returns its code.
  std::string emit(size_t o, uint32_t phase, bool finalize);

  GeneratedKernel write(const std::string& kernel_name);

 private:
  // The tile-stage walk (Launch::tile_stages): each work-group's tiles, stage by stage.
  std::string tile_stages_body(const std::string& index_type);
  std::string phase_code(uint32_t phase, const std::string& pad, bool finalize);
  std::string last_group_finalize();
  // The FINALIZE phase runs at the end of the main kernel: its names must differ from the other phases'.
  bool folded_finalize_ = false;

 public:
  bool folded_finalize() const { return folded_finalize_; }

 private:
  std::string element_loop_body(const std::string& pad);
  // A batched kernel's entry loop: its segments, with barriers between them.
  std::string batched_body(const std::string& index_type);
  std::string op_code(size_t o, uint32_t phase, const std::string& pad, bool finalize);

  const Program& program_;
  const FusedGroup& group_;
  const Launch& launch_;
  std::string index_ = "i";
  std::set<std::string> registers_now_;  // symbols whose current value is in a register
  std::set<std::string> written_now_;    // written to a register by the op being emitted
  // Unrolled element loops of kernels that update data-dependent places (SCATTER): the element reads
  // of global arrays are loaded for all trips first (into p<param>[trip]); otherwise the branch on one
  // trip's value (which bin, whether in range) keeps the next trip's load from issuing, and every
  // work-item has one load in flight (on the H200 a 2^28 f32 histogram ran at half the copy bandwidth).
  bool preload_ = false;
  std::set<std::string> preloaded_;
  // Batched kernels
  std::string entry_ = "fugue_entry", local_index_ = "fugue_j";
  std::set<std::string> in_local_now_;   // local arrays holding the current entry's value
  // Tile stages: the stage being written, and the values whose tiles hold them by now.
  int stage_ = 0;
  std::set<std::string> in_tile_now_;
  std::map<std::string, int> tile_written_at_;  // the stage that last wrote each value's tile
  std::vector<std::string> local_decls_; // the ops' own local arrays (local_array)
  std::map<size_t, uint64_t> local_used_;
  struct LocalArray {
    std::string name;
    fugue_dtype dtype;
    int64_t count;
  };
  std::map<std::pair<size_t, std::string>, LocalArray> local_arrays_;  // by op and stem
  // Functions the kernel's code calls (atomic updates), defined before it.
  std::map<std::string, std::string> helpers_;
  std::vector<std::pair<std::string, uint32_t>> extent_args_;  // (symbol, axis) passed as arguments
  std::vector<std::string> count_args_;                         // counted parts whose count buffer is passed
  bool uses_int64_atomics_ = false;
  std::set<const Statement*> asks_position_;  // ops that asked for INDEX, ENTRY or a GROUP_ID
  bool functions_use_fp64_ = false;  // a user function's values are doubles
};

namespace {

KernelWriter* writer(fugue_emit_context* c) { return static_cast<KernelWriter*>(c->writer); }
const char* read_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->access(c, k, false); }
const char* write_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->access(c, k, true); }
const char* read_at_fn(fugue_emit_context* c, uint32_t k, const char* index) {
  return writer(c)->read_at(c, k, index);
}
const char* ctype_fn(fugue_emit_context* c, fugue_dtype dtype) {
  try {
    return writer(c)->keep(c, std::string(dtype_ctype(static_cast<DType>(dtype))));
  } catch (const std::exception&) {
    c->misuse = "ctype of unknown dtype " + std::to_string(dtype);
    return "void";
  }
}
const char* name_fn(fugue_emit_context* c, const char* stem) {
  // A FINALIZE phase in the main kernel declares its names beside the other phases' of the same op.
  const bool apart = c->finalize && writer(c)->folded_finalize();
  return writer(c)->keep(c, stem_identifier(stem) + "_" + std::to_string(c->op) + (apart ? "_f" : ""));
}
const char* builtin_fn(fugue_emit_context* c, int32_t which) { return writer(c)->builtin(c, which); }
const char* workspace_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->workspace(c, k); }
const char* write_at_fn(fugue_emit_context* c, uint32_t k, const char* index) { return writer(c)->write_at(c, k, index); }
const char* local_array_fn(fugue_emit_context* c, fugue_dtype dtype, int64_t count, const char* stem) {
  return writer(c)->local_array(c, dtype, count, stem);
}
const char* barrier_fn(fugue_emit_context* c) { return writer(c)->barrier(c); }
const char* extent_fn(fugue_emit_context* c, uint32_t k, uint32_t axis) { return writer(c)->extent(c, k, axis); }
const char* atomic_at_fn(fugue_emit_context* c, int32_t op, uint32_t k, const char* index, const char* value) {
  return writer(c)->atomic_at(c, op, k, index, value);
}
const char* atomic_local_fn(fugue_emit_context* c, int32_t op, fugue_dtype dtype, const char* element, const char* value) {
  return writer(c)->atomic_local(c, op, dtype, element, value);
}
const char* read_part_at_fn(fugue_emit_context* c, uint32_t k, uint32_t part, const char* index) {
  return writer(c)->read_part_at(c, k, part, index);
}
const char* count_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->count(c, k); }
const char* read_offset_fn(fugue_emit_context* c, uint32_t k, uint32_t rank, const int64_t* offsets) {
  return writer(c)->read_offset(c, k, rank, offsets);
}
const char* call_function_fn(fugue_emit_context* c, uint32_t k, uint32_t num_args, const fugue_dtype* arg_dtypes,
                             const char* const* args) {
  return writer(c)->call_function(c, k, num_args, arg_dtypes, args);
}
void append_fn(fugue_emit_context* c, const char* code) {
  if (code) *c->code += code;
}

}  // namespace

std::string KernelWriter::emit(size_t o, uint32_t phase, bool finalize) {
  std::string code;
  fugue_emit_context context;
  context.writer = this;
  context.op = o;
  context.phase = phase;
  context.finalize = finalize;
  context.code = &code;
  fugue_emit_api api{};
  api.struct_size = sizeof(fugue_emit_api);
  api.context = &context;
  api.phase = phase;
  api.read = &read_fn;
  api.write = &write_fn;
  api.ctype = &ctype_fn;
  api.name = &name_fn;
  api.builtin = &builtin_fn;
  api.workspace = &workspace_fn;
  api.append = &append_fn;
  api.read_at = &read_at_fn;
  api.write_at = &write_at_fn;
  api.local_array = &local_array_fn;
  api.barrier = &barrier_fn;
  api.atomic_at = &atomic_at_fn;
  api.atomic_local = &atomic_local_fn;
  api.extent = &extent_fn;
  api.call_function = &call_function_fn;
  api.read_offset = &read_offset_fn;
  api.read_part_at = &read_part_at_fn;
  api.count = &count_fn;
  const PlannedOp& p = *group_.ops[o];
  try {
    p.statement->op->emit(p.call, p.plan, api);
  } catch (const UserError& e) {
    // A call the plugin refuses only when it writes the code (an output over an input it still reads):
    // named by the statement's place in the program, as errors of infer and plan are.
    std::string message = e.what();
    const std::string own = p.statement->op->name() + ": ";
    if (message.compare(0, own.size(), own) == 0) message.erase(0, own.size());
    throw UserError(p.label + ": " + message);
  }
  if (!context.user_error.empty()) throw UserError(context.user_error);
  if (!context.misuse.empty())
    throw DeviceError(p.label + ": the plugin's emit misused an accessor: " + context.misuse);
  return code;
}

// The FINALIZE phase at the end of the main kernel, run by the work-group that finishes last: each
// group's partials are stored (the epilogue) before it counts itself done, and the last one to count
// reads them all. The groups that are not last return; the rest of the kernel stays at its outermost
// scope, where the phase's __local arrays must be declared. The last group sets the count back to 0
// as soon as it knows it is last (every group has counted by then), so that nothing in the phase can
// keep the next launch from finding its last group.
std::string KernelWriter::last_group_finalize() {
  std::string code =
      "  /* The last work-group to finish combines the work-groups' partials. */\n"
      "  __local int fugue_last_group;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
      "  if (get_local_id(0) == 0) {\n"
      "    mem_fence(CLK_GLOBAL_MEM_FENCE);  /* this group's partials before its count */\n"
      "    fugue_last_group = atomic_inc(fugue_groups_done) == (int)get_num_groups(0) - 1;\n"
      "    if (fugue_last_group) atomic_xchg(fugue_groups_done, 0);  /* ready for the next launch */\n"
      "    mem_fence(CLK_GLOBAL_MEM_FENCE);  /* the count before the others' partials are read */\n"
      "  }\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  if (!fugue_last_group) return;\n"
      "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
      "  const int fugue_groups = (int)get_num_groups(0);\n";
  return code + phase_code(FUGUE_PHASE_FINALIZE, "  ", true);
}

// In the element loop, one scope per operation, named by its call; a register written by an op is
// stored right after it when the value is needed beyond the kernel. Other phases stay at the outer
// scope: accumulators and __local arrays declared there must be visible to later phases.
std::string KernelWriter::phase_code(uint32_t phase, const std::string& pad, bool finalize) {
  std::string code;
  for (size_t o = 0; o < group_.ops.size(); ++o)
    if (group_.ops[o]->plan.phases & phase) code += op_code(o, phase, pad, finalize);
  return code;
}

std::string KernelWriter::op_code(size_t o, uint32_t phase, const std::string& pad, bool finalize) {
  std::string code;
  const PlannedOp& p = *group_.ops[o];
  written_now_.clear();
  std::string body = emit(o, phase, finalize);
  auto colon = p.label.find(' ');
  std::string name = colon == std::string::npos ? p.label : p.label.substr(colon + 1);
  if (phase == FUGUE_PHASE_ELEMENT || phase == FUGUE_PHASE_BODY)
    code += pad + "{ /* " + name + " */\n" + indent(body, pad + "  ") + pad + "}\n";
  else
    code += pad + "/* " + name + " */\n" + indent(body, pad);
  if (phase == FUGUE_PHASE_BODY) {  // written through write_at: into local memory or global memory
    for (const auto& s : written_now_) in_local_now_.insert(s);
    return code;
  }
  for (const auto& s : written_now_) {
    registers_now_.insert(s);
    if (batched() && group_.local_values.count(s)) {
      code += pad + local_entry(s, local_index_) + " = " + reg(s) + ";\n";
      in_local_now_.insert(s);
    }
    if (stages() && group_.tile_values.count(s)) {
      code += pad + tile_cell(s) + " = " + reg(s) + ";\n";
      in_tile_now_.insert(s);
      tile_written_at_[s] = stage_;
    }
    if (!group_.stored.count(s)) continue;
    const Symbol& sym = program_.symbol(s);
    std::string base = group_.shadowed.count(s) ? shadow(s) : param(s);
    // Tile stages store the tile's own cells only (the widened cells are other tiles').
    code += pad + (stages() ? "if (fugue_own) " : "") + base + (sym.kind == SymbolKind::Scalar ? "[0]" : "[" + index_ + "]") +
            " = " + reg(s) + ";\n";
  }
  return code;
}

std::string KernelWriter::batched_body(const std::string& it) {
  const auto& ops = group_.ops;
  const std::string L = std::to_string(launch_.local_size);
  const std::string sync = "    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n";
  std::string code;
  // A block run by the work-items of the group for indices `index` < `count` (an expression, at least 1
  // where max_count is, and at most max_count), `body` its statements: one index per work-item where
  // the group covers them, else a loop with the same trip count in every work-item. PoCL miscompiled
  // loops whose trip counts differed between the work-items of a group between barriers, and blocks
  // that only some work-items ran: values copied into local memory read back as zeros. So a copy
  // (`copy`: the block only copies values) runs in every work-item, those past the end taking the last
  // index again (doing one twice writes the same value); other blocks (operations' element code, which
  // may update a value in place) test the index.
  auto spread = [&](const std::string& index, const std::string& count, int64_t max_count, bool copy, const std::string& body) -> std::string {
    if (max_count <= 0) return "if (0) {\n      const int " + index + " = 0;\n" + body + "    }\n";
    const int64_t L_ = launch_.local_size;
    const std::string last = "(int)(" + count + ") - 1", id = "(int)get_local_id(0)";
    const std::string trips = std::to_string((max_count + L_ - 1) / L_);
    if (copy) {
      if (count == std::to_string(max_count)) {
        // A known count: whole trips take unclamped indices, the rest one clamped trip. On a CPU
        // (launch_.blocked) each work-item's whole trips are one contiguous run, which its compiler turns
        // into vector loads and stores (walked L apart, every index was a gather: 60% of a CPU gemm's time
        // went to copying its matrices in); the runs start at a multiple of the work-item's number
        // (clamped, min(id * run, count - run), PoCL read the copies back as zeros).
        const int64_t whole = max_count / L_, rest = max_count % L_;
        const std::string step = launch_.blocked ? id + " * " + std::to_string(whole) + " + fugue_q" : "fugue_q * " + L + " + " + id;
        std::string code;
        if (whole == 1) code += "{\n      const int " + index + " = " + id + ";\n" + body + "    }\n";
        else if (whole > 1)
          code += "for (int fugue_q = 0; fugue_q < " + std::to_string(whole) + "; ++fugue_q) {\n      const int " + index + " = " + step + ";\n" + body +
                  "    }\n";
        if (rest)
          code += std::string(whole ? "    " : "") + "{\n      const int " + index + " = min(" + std::to_string(whole * L_) + " + " + id + ", " + last +
                  ");\n" + body + "    }\n";
        return code;
      }
      if (max_count <= L_) return "{\n      const int " + index + " = min(" + id + ", " + last + ");\n" + body + "    }\n";
      return "for (int fugue_q = 0; fugue_q < " + trips + "; ++fugue_q) {\n      const int " + index + " = min(fugue_q * " + L +
             " + " + id + ", " + last + ");\n" + body + "    }\n";
    }
    if (max_count <= L_) return "if (" + id + " < " + count + ") {\n      const int " + index + " = " + id + ";\n" + body + "    }\n";
    return "for (int " + index + " = " + id + ", fugue_q = 0; fugue_q < " + trips + "; ++fugue_q, " + index + " += " + L + ") if (" +
           index + " < " + count + ") {\n" + body + "    }\n";
  };
  // walk(per_entry, copy, body) runs `body` over element j (local_index_) of the entries of `per_entry`
  // elements (copy: the walk only copies values, see spread);
  // flat(per_entry) is then the element's index in global memory. stage(s, per_entry) copies input s's
  // entries into local memory.
  std::function<std::string(int64_t, bool, const std::string&)> walk;
  std::function<std::string(int64_t)> flat;
  std::function<std::string(const std::string&, int64_t)> stage;
  // A CPU's copies (launch_.blocked) walk the entries one after another, each as spread walks a copy
  // (a contiguous run per work-item): the runs' loads and stores are consecutive, which its compiler
  // vectorizes. (Walked as one sequence, the division finding each element's entry
  // kept every copy scalar: on PoCL, gemm of 2,000 products of 32 took 22 ms, against 4 with a
  // work-group per product.) `entries`: how many, the same in every work-item.
  auto blocked_runs = [&](const std::string& entries, int64_t per_entry, const std::string& body) {
    const std::string n = std::to_string(per_entry);
    return "    for (int fugue_s = 0; fugue_s < " + entries + "; ++fugue_s) {\n    " +
           spread(local_index_, n, per_entry, true, "      const int fugue_slot = fugue_s, fugue_t = fugue_s * " + n + " + " + local_index_ + ";\n" + body) +
           "    }\n";
  };
  const bool runs = launch_.blocked;
  if (teams()) {
    // Entries side by side: fugue_first is the work-group's first entry of this round, and the whole
    // group walks the round's elements in order (its entries are neighbours in global memory). A team
    // (fugue_slot, fugue_lane) whose entry is past the last one gets a copy of the last entry's inputs
    // and its number (values produced in the kernel are its slot's stale or zero ones); its results
    // are never copied out.
    const std::string E = std::to_string(launch_.entries_per_group), T = std::to_string(launch_.team);
    code += "  const int fugue_slot = (int)get_local_id(0) / " + T + ", fugue_lane = (int)get_local_id(0) % " + T + ";\n";
    for (const auto& [s, per_entry] : group_.local_values) {
      if (group_.staged.count(s)) continue;  // every slot is copied in before it is read
      const int64_t count = launch_.entries_per_group * slot_stride(s);
      code += "  " + spread("fugue_t", std::to_string(count), count, true,
                            "    " + local(s) + "[fugue_t] = (" + std::string(dtype_ctype(program_.symbol(s).dtype)) + ")(0);\n");
    }
    code += "  barrier(CLK_LOCAL_MEM_FENCE);\n";
    code += "  for (long fugue_first = (long)get_group_id(0) * " + E + "; fugue_first < fugue_n; fugue_first += (long)get_num_groups(0) * " +
            E + ") {\n";
    code += "    const int fugue_live = (int)min((long)" + E + ", fugue_n - fugue_first);  /* entries this round */\n";
    code += "    const long " + entry_ + " = min(fugue_first + fugue_slot, fugue_n - 1);\n";
    walk = [&](int64_t per_entry, bool copy, const std::string& body) {
      if (copy && runs && per_entry >= launch_.local_size) return blocked_runs("fugue_live", per_entry, body);
      const std::string n = std::to_string(per_entry);
      // fugue_slot shadows the team's: local_entry reads the walked element's entry.
      return "    " + spread("fugue_t", "fugue_live * " + n, launch_.entries_per_group * per_entry, copy,
                             "      const int fugue_slot = fugue_t / " + n + ", " + local_index_ + " = fugue_t % " + n + ";\n" + body);
    };
    flat = [&](int64_t per_entry) { return "fugue_first * " + std::to_string(per_entry) + "L + fugue_t"; };
    stage = [&](const std::string& s, int64_t per_entry) {
      const std::string n = std::to_string(per_entry);
      const std::string copy = "      " + local_entry(s, local_index_) + " = " + param(s) + "[min(fugue_first + fugue_slot, fugue_n - 1) * " + n +
                               "L + " + local_index_ + "];\n";
      if (runs && per_entry >= launch_.local_size) return blocked_runs(std::to_string(launch_.entries_per_group), per_entry, copy);
      const int64_t count = launch_.entries_per_group * per_entry;
      return "    " + spread("fugue_t", std::to_string(count), count, true,
                             "      const int fugue_slot = fugue_t / " + n + ", " + local_index_ + " = fugue_t % " + n + ";\n" + copy);
    };
  } else {
    // A CPU's work-group takes a contiguous run of entries (LaunchTuning::entry_runs), which its core's
    // prefetchers follow.
    if (launch_.entry_runs)
      code += "  const long fugue_run = (fugue_n + (long)get_num_groups(0) - 1) / (long)get_num_groups(0), fugue_run_end = min(((long)get_group_id(0) + 1) * "
              "fugue_run, fugue_n);\n  for (long " + entry_ + " = (long)get_group_id(0) * fugue_run; " + entry_ + " < fugue_run_end; ++" + entry_ + ") {\n";
    else
      code += "  for (long " + entry_ + " = get_group_id(0); " + entry_ + " < fugue_n; " + entry_ + " += get_num_groups(0)) {\n";
    // Walks element j of an entry of `per_entry` elements, by the work-items of the group in turn.
    walk = [&](int64_t per_entry, bool copy, const std::string& body) {
      return "    " + spread(local_index_, std::to_string(per_entry), per_entry, copy, body);
    };
    flat = [&](int64_t per_entry) { return entry_ + " * " + std::to_string(per_entry) + "L + " + local_index_; };
    stage = [&](const std::string& s, int64_t per_entry) {
      return walk(per_entry, true, "      " + local_entry(s, local_index_) + " = " + param(s) + "[" + flat(per_entry) + "];\n");
    };
  }
  bool first = true;
  for (size_t o = 0; o < ops.size();) {
    if (!first) code += sync;
    first = false;
    const PlannedOp& p = *ops[o];
    if (p.level() == FUGUE_LEVEL_BLOCK) {
      // Inputs kept in local memory: copied in before the first block-level read.
      std::string staging;
      for (size_t k = 0; k < p.statement->operands.size(); ++k) {
        const std::string& s = p.statement->operands[k];
        if (!group_.staged.count(s) || in_local_now_.count(s) || !p.reads(k)) continue;
        staging += stage(s, group_.local_values.at(s));
        in_local_now_.insert(s);
      }
      if (!staging.empty()) code += staging + sync;
      code += op_code(o, FUGUE_PHASE_BODY, "    ", false);
      // Values it wrote into local memory that live on after the kernel: copied out.
      std::string out;
      for (size_t k = 0; k < p.statement->operands.size(); ++k) {
        const std::string& s = p.statement->operands[k];
        if (!p.writes(k) || !group_.local_values.count(s) || !group_.stored.count(s)) continue;
        const int64_t per_entry = group_.local_values.at(s);
        out += walk(per_entry, true, "      " + param(s) + "[" + flat(per_entry) + "] = " + local_entry(s, local_index_) + ";\n");
      }
      if (!out.empty()) code += sync + out;
      ++o;
      continue;
    }
    // A run of element-wise operations over the same elements: one loop.
    const int64_t n = p.plan.launch.iteration[0];
    const int64_t per_entry = n / group_.entries;
    size_t end = o;
    while (end < ops.size() && ops[end]->level() != FUGUE_LEVEL_BLOCK && ops[end]->plan.launch.iteration[0] == n) ++end;
    registers_now_.clear();
    std::string body;
    for (size_t e = o; e < end; ++e) body += op_code(e, FUGUE_PHASE_ELEMENT, "      ", false);
    std::string regs;
    for (const auto& s : registers_now_)
      regs += "      " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " " + reg(s) + ";\n";
    registers_now_.clear();
    code += walk(per_entry, false, "      const " + it + " " + index_ + " = " + flat(per_entry) + ";\n" + regs + body);
    o = end;
  }
  code += sync + "  }\n";  // the next entry reuses the local arrays
  return code;
}

std::string KernelWriter::tile_stages_body(const std::string& it) {
  auto n = [](int64_t v) { return std::to_string(v); };
  const std::string R = grid_extent(0), C = grid_extent(1);
  const int64_t TR = launch_.tile_rows, TC = launch_.tile_cols, L = launch_.local_size;
  // A row or column beyond the grid, counted around it: one addition or subtraction where the grid is
  // known to be at least a tile and the stage's reach (widened cells then lie within one grid of it),
  // else the general helper (a remainder).
  auto wrap = [&](const std::string& v, const std::string& extent, int64_t known, int64_t tile, int64_t reach) {
    if (!launch_.extent_arguments && known >= tile + reach)
      return "(" + v + " < 0 ? " + v + " + " + extent + " : (" + v + " >= " + extent + " ? " + v + " - " + extent + " : " + v + "))";
    helpers_["fugue_wrap"] = kWrapHelper;
    return "(" + it + ")fugue_wrap(" + v + ", " + extent + ")";
  };
  std::string code;
  code += "  const int fugue_lid = (int)(get_local_id(1) * " + n(launch_.local_dims[0]) + " + get_local_id(0));\n";
  code += "  const long fugue_tiles_y = (" + R + " + " + n(TR - 1) + ") / " + n(TR) + ";\n";
  code += "  for (long fugue_ty = get_group_id(1); fugue_ty < fugue_tiles_y; fugue_ty += get_num_groups(1)) {\n";
  code += "    const " + it + " fugue_row0 = (" + it + ")fugue_ty * " + n(TR) + ", fugue_col0 = (" + it + ")get_group_id(0) * " + n(TC) + ";\n";
  for (stage_ = 0; stage_ < static_cast<int>(group_.stage_reach.size()); ++stage_) {
    const auto [ey, ex] = group_.stage_reach[stage_];
    const int64_t width = TC + 2 * ex, height = TR + 2 * ey, trips = (width * height + L - 1) / L;
    code += "    /* stage " + n(stage_) + ": the tile and " + n(ey) + " row(s), " + n(ex) + " column(s) around it */\n";
    // The work-group's items take the widened tile's cells in row-major order, L apart; a cell's place
    // (fugue_by, fugue_bx) comes from its number by a division by a constant. (Advanced by additions
    // from trip to trip instead, PoCL miscompiled the walk and lost a stage's stores.) The same trip
    // count in every work-item between barriers (see batched_body's spread).
    code += "    {\n    for (int fugue_q = 0; fugue_q < " + n(trips) + "; ++fugue_q) {\n";
    code += "    const int fugue_t = fugue_q * " + n(L) + " + fugue_lid;\n";
    code += "    const int fugue_by = fugue_t / " + n(width) + ", fugue_bx = fugue_t % " + n(width) + ";\n";
    code += "    if (fugue_by < " + n(height) + ") {\n";
    code += "    const " + it + " fugue_r = fugue_row0 + (fugue_by - " + n(ey) + "), fugue_c = fugue_col0 + (fugue_bx - " + n(ex) + ");\n";
    code += "    const " + it + " i = " + wrap("fugue_r", R, launch_.grid_rows, TR, ey) + " * " + C + " + " +
            wrap("fugue_c", C, launch_.grid_cols, TC, ex) + ";\n";
    std::string own = "fugue_r < " + R + " && fugue_c < " + C;
    if (ey > 0 || ex > 0)
      own = "fugue_by >= " + n(ey) + " && fugue_by < " + n(ey + TR) + " && fugue_bx >= " + n(ex) + " && fugue_bx < " + n(ex + TC) +
            " && " + own;
    if (launch_.sample_modulus > 1)
      own += " && i % " + n(launch_.sample_modulus) + " == " + n(launch_.sample_residue);
    code += "    const bool fugue_own = " + own + ";\n";
    registers_now_.clear();
    std::string body;
    for (size_t o = 0; o < group_.ops.size(); ++o)
      if (group_.stage_of[o] == stage_ && (group_.ops[o]->plan.phases & FUGUE_PHASE_ELEMENT))
        body += op_code(o, FUGUE_PHASE_ELEMENT, "    ", false);
    std::string regs;
    for (const auto& s : registers_now_) regs += "    " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " " + reg(s) + ";\n";
    registers_now_.clear();
    code += regs + body + "    }\n";
    // Global memory too: a value stored by two stages is stored to the same cells by other work-items.
    code += "    }\n    }\n    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n";
  }
  stage_ = static_cast<int>(group_.stage_reach.size()) - 1;
  code += "  }\n";
  for (const auto& [s, stage] : group_.tile_values)
    local_decls_.push_back("__local " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " " + tile_name(s) + "[" +
                           n(tile_width(s) * tile_height(s)) + "];");
  return code;
}

GeneratedKernel KernelWriter::write(const std::string& kernel_name) {
  const auto& ops = group_.ops;
  if (ops.empty()) throw std::logic_error("generate_kernel: no operations");
  GeneratedKernel k;
  k.launch = launch_;
  k.main_name = kernel_name;
  const int64_t n = group_.plan.launch.iteration[0];
  const fugue_level level = group_.plan.level;

  // Parameters: every symbol the kernel touches in global memory, in order of first use; a shadowed
  // symbol also gets the buffer its new value goes to.
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (const auto* op : ops)
    for (const auto& s : op->statement->operands)
      if ((group_.global_reads.count(s) || group_.stored.count(s)) && seen.insert(s).second) order.push_back(s);
  std::vector<std::string> decls;
  // A kind with storage the kernel reads is its parts, each a buffer of its own (read_part_at).
  // (A part the kernel also names itself, "A.data", is one parameter.)
  std::vector<std::string> expanded;
  std::set<std::string> listed;
  for (const auto& s : order)
    for (const auto& held : program_.storage_of(s))
      if (listed.insert(held).second) expanded.push_back(held);
  order = std::move(expanded);
  for (const auto& s : order) {
    const Symbol& sym = program_.symbol(s);
    std::string type = std::string(dtype_ctype(sym.dtype));
    bool in_place = group_.stored.count(s) && !group_.shadowed.count(s);
    decls.push_back("__global " + std::string(in_place ? "" : "const ") + type + "* restrict " + param(s));
    k.main_args.push_back({KernelArg::Kind::Symbol, s, 0, 0});
    if (group_.shadowed.count(s)) {
      decls.push_back("__global " + type + "* restrict " + shadow(s));
      k.main_args.push_back({KernelArg::Kind::Shadow, s, 0, 0});
    }
  }
  bool any_finalize = false;
  for (size_t o = 0; o < ops.size(); ++o) {
    const auto& plan = ops[o]->plan;
    any_finalize |= (plan.phases & FUGUE_PHASE_FINALIZE) != 0;
    for (uint32_t w = 0; w < plan.workspaces.size(); ++w) {
      DType dtype = static_cast<DType>(plan.workspaces[w].dtype);
      if (abi::component_dtype(plan.workspaces[w].dtype) == FUGUE_DTYPE_F64) k.uses_fp64 = true;
      decls.push_back("__global " + std::string(dtype_ctype(dtype)) + "* restrict " + workspace_name(o, w));
      k.main_args.push_back({KernelArg::Kind::Workspace, "", o, w});
    }
  }
  // The last work-group to finish runs the FINALIZE phase where the launch says so (choose_group_launch
  // decides: 1-D launches only, so never a batched kernel or one in tile stages).
  const bool fold_finalize = any_finalize && launch_.last_group_finalizes;
  folded_finalize_ = fold_finalize;
  if (fold_finalize) {
    decls.push_back("__global volatile int* restrict fugue_groups_done");
    k.main_args.push_back({KernelArg::Kind::GroupsDone, "", 0, 0});
  }
  k.launch.last_group_finalizes = fold_finalize;
  // A run-time length bounds the elements walked: the count argument is then the capacity's.
  const bool runtime = !group_.extent_symbol.empty();
  if (runtime) {
    decls.push_back("__global const long* restrict fugue_extent");
    k.main_args.push_back({KernelArg::Kind::Extent, group_.extent_symbol, 0, 0});
  }
  for (const auto* op : ops)
    for (const auto& t : op->types)
      if (t.kind != FUGUE_KIND_CONST && fugue_dtype_supported(t.dtype) &&
          abi::component_dtype(t.dtype) == FUGUE_DTYPE_F64)
        k.uses_fp64 = true;
  // A batched kernel counts entries and indexes elements with longs.
  const bool wide = level == FUGUE_LEVEL_BLOCK || n > std::numeric_limits<int32_t>::max() / 2;
  const std::string index_type = wide ? "long" : "int";
  size_t preload_at = 0;  // where the unrolled loop's loads go (preload_)
  auto signature = [&](const std::string& name, const std::string& count_decl) {
    const bool dims = launch_.work_dim > 1 && name == kernel_name;  // the finalize kernel is 1-D
    std::string sig = "__kernel __attribute__((reqd_work_group_size(" +
                      (dims ? std::to_string(launch_.local_dims[0]) + ", " + std::to_string(launch_.local_dims[1]) + ", " +
                                  std::to_string(launch_.work_dim > 2 ? launch_.local_dims[2] : 1)
                            : std::to_string(launch_.local_size) + ", 1, 1") +
                      ")))\nvoid " + name + "(";
    std::vector<std::string> all = decls;
    all.push_back(count_decl);
    for (size_t i = 0; i < all.size(); ++i) sig += (i ? ",\n    " : "") + all[i];
    return sig + ")\n";
  };

  std::string src = "/* Generated by Fugue. */\n";
  if (k.uses_fp64) src += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  // The extents the operations ask for as arguments go before the count, once the code is written.
  const std::string count_decl = "const " + index_type + (runtime ? " fugue_capacity" : " fugue_n");
  src += "\n" + signature(kernel_name, count_decl) + "{\n";
  const size_t extents_at = src.rfind(count_decl);
  if (runtime)
    src += "  const " + index_type + " fugue_n = (" + index_type + ")clamp(fugue_extent[0] * " +
           std::to_string(group_.extent_row) + "L, 0L, (long)fugue_capacity);\n";
  if (level == FUGUE_LEVEL_BLOCK) {
    std::string body = batched_body("long");
    std::string locals;
    for (const auto& entry : group_.local_values) {
      const std::string& s = entry.first;
      locals += "  __local " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " " + local(s) + "[" +
                std::to_string(slot_stride(s) * (teams() ? launch_.entries_per_group : 1)) + "];\n";
    }
    for (const auto& d : local_decls_) locals += "  " + d + "\n";
    src += locals + body;
  } else if (stages()) {
    const size_t body_start = src.size();
    src += phase_code(FUGUE_PHASE_PROLOGUE, "  ", false);
    src += tile_stages_body(index_type);
    src += phase_code(FUGUE_PHASE_EPILOGUE, "  ", false);
    std::string locals;
    for (const auto& d : local_decls_) locals += "  " + d + "\n";
    src.insert(body_start, locals);
  } else {
    const size_t body_start = src.size();
    src += phase_code(FUGUE_PHASE_PROLOGUE, "  ", false);
    if (launch_.work_dim == 3) {
      // A cell of the 3-D grid per work-item.
      auto n = [](int64_t v) { return std::to_string(v); };
      src += "  const long fugue_x = get_global_id(0), fugue_y = get_global_id(1), fugue_z = get_global_id(2);\n";
      const std::string flat = "((fugue_z * " + n(launch_.grid_dims[1]) + " + fugue_y) * " + n(launch_.grid_dims[2]) + " + fugue_x)";
      std::string guard = "fugue_x < " + n(launch_.grid_dims[2]) + " && fugue_y < " + n(launch_.grid_dims[1]) + " && fugue_z < " +
                          n(launch_.grid_dims[0]);
      if (launch_.sample_modulus > 1)
        guard += " && " + flat + " % " + n(launch_.sample_modulus) + " == " + n(launch_.sample_residue);
      src += "  if (" + guard + ") {\n";
      src += "    const " + index_type + " i = (" + index_type + ")" + flat + ";\n";
    } else if (launch_.blocked) {
      src += "  const " + index_type + " chunk = (fugue_n + (" + index_type + ")get_global_size(0) - 1) / (" +
             index_type + ")get_global_size(0);\n";
      src += "  const " + index_type + " begin = (" + index_type + ")get_global_id(0) * chunk;\n";
      src += "  const " + index_type + " end = min(begin + chunk, fugue_n);\n";
      src += "  for (" + index_type + " i = begin; i < end; ++i) {\n";
    } else if (launch_.strip_rows > 0) {
      // Column strips: work-item lx takes one column of the group's block of local_size columns and
      // walks strip_rows rows down it.
      const std::string it = index_type;
      auto n = [](int64_t v) { return std::to_string(v); };
      const int64_t blocks = (launch_.grid_cols + launch_.tile_cols - 1) / launch_.tile_cols;
      const int64_t tiles = blocks * ((launch_.grid_rows + launch_.strip_rows - 1) / launch_.strip_rows);
      src += "  const int lx = (int)get_local_id(0);\n";
      src += "  for (" + it + " tile = (" + it + ")get_group_id(0); tile < " + n(tiles) + "; tile += (" + it +
             ")get_num_groups(0)) {\n";
      src += "    const " + it + " col = (tile % " + n(blocks) + ") * " + n(launch_.tile_cols) + " + lx;\n";
      src += "    if (col >= " + n(launch_.grid_cols) + ") continue;\n";
      src += "    const " + it + " row0 = (tile / " + n(blocks) + ") * " + n(launch_.strip_rows) + ";\n";
      src += "    const " + it + " row_end = min(row0 + " + n(launch_.strip_rows) + ", (" + it + ")" + n(launch_.grid_rows) +
             ");\n";
      if (launch_.unroll > 1) src += "    #pragma unroll " + n(launch_.unroll) + "\n";
      src += "    for (" + it + " row = row0; row < row_end; ++row) {\n";
      src += "    const " + it + " i = row * " + n(launch_.grid_cols) + " + col;\n";
    } else if (launch_.tile_cols > 0) {
      // Tile by tile: work-item (ly, lx) of a group takes cell (ly, lx) of each of the group's tiles.
      const std::string it = index_type;
      auto n = [](int64_t v) { return std::to_string(v); };
      const int64_t tiles_x = (launch_.grid_cols + launch_.tile_cols - 1) / launch_.tile_cols;
      const int64_t tiles = tiles_x * ((launch_.grid_rows + launch_.tile_rows - 1) / launch_.tile_rows);
      // Staged tiles: each work-item takes tile_passes cells, the group's rows apart (ly is the cell's row
      // in the tile, read_offset's too).
      const int64_t passes = launch_.stage_tiles() ? launch_.tile_passes : 1, pass_rows = launch_.tile_rows / passes;
      src += "  const int lx = (int)get_local_id(0) % " + n(launch_.tile_cols) + ", ly0 = (int)get_local_id(0) / " +
             n(launch_.tile_cols) + ";\n";
      src += "  for (" + it + " tile = (" + it + ")get_group_id(0); tile < " + n(tiles) + "; tile += (" + it +
             ")get_num_groups(0)) {\n";
      if (launch_.stage_tiles()) src += stage_tiles(it, tiles_x);
      if (passes > 1) src += "    for (int fugue_pass = 0; fugue_pass < " + n(passes) + "; ++fugue_pass) {\n";
      src += "    const int ly = ly0" + (passes > 1 ? " + fugue_pass * " + n(pass_rows) : std::string()) + ";\n";
      src += "    const " + it + " row = (tile / " + n(tiles_x) + ") * " + n(launch_.tile_rows) + " + ly;\n";
      src += "    const " + it + " col = (tile % " + n(tiles_x) + ") * " + n(launch_.tile_cols) + " + lx;\n";
      std::string guard = "row < " + n(launch_.grid_rows) + " && col < " + n(launch_.grid_cols);
      if (launch_.stage_tiles()) {
        // Every work-item reaches the barriers: the sample of a conformance run joins the guard.
        if (launch_.sample_modulus > 1)
          guard += " && (row * " + n(launch_.grid_cols) + " + col) % " + n(launch_.sample_modulus) + " == " +
                   n(launch_.sample_residue);
      }
      src += "    if (" + guard + ") {\n";
      src += "    const " + it + " i = row * " + n(launch_.grid_cols) + " + col;\n";
    } else if (launch_.unroll <= 1) {
      src += "  for (" + index_type + " i = (" + index_type + ")get_global_id(0); i < fugue_n; i += (" + index_type +
             ")get_global_size(0)) {\n";
    } else {
      // Several elements per trip, a grid apart: their loads are independent, so they overlap.
      std::string u = std::to_string(launch_.unroll);
      src += "  const " + index_type + " stride = (" + index_type + ")get_global_size(0);\n";
      src += "  for (" + index_type + " first = (" + index_type + ")get_global_id(0); first < fugue_n; first += " + u +
             " * stride) {\n";
      preload_at = src.size();
      src += "    #pragma unroll\n    for (int trip = 0; trip < " + u + "; ++trip) {\n";
      src += "    const " + index_type + " i = first + trip * stride;\n    if (i < fugue_n) {\n";
      preload_ = updates_by_atomics(group_);
    }
    // Registers of the values this kernel writes element by element.
    std::string loop = phase_code(FUGUE_PHASE_ELEMENT, "    ", false);
    preload_ = false;
    if (!preloaded_.empty()) {
      const std::string u = std::to_string(launch_.unroll);
      std::string loads;
      for (const auto& s : preloaded_) loads += "    " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " p" + param(s) + "[" + u + "];\n";
      loads += "    #pragma unroll\n    for (int trip = 0; trip < " + u + "; ++trip) {\n      const " + index_type + " i = first + trip * stride;\n";
      for (const auto& s : preloaded_)
        loads += "      p" + param(s) + "[trip] = i < fugue_n ? " + param(s) + "[i] : (" + std::string(dtype_ctype(program_.symbol(s).dtype)) + ")0;\n";
      src.insert(preload_at, loads + "    }\n");
    }
    std::string regs;
    for (const auto& s : registers_now_)
      regs += "    " + std::string(dtype_ctype(program_.symbol(s).dtype)) + " " + reg(s) + ";\n";
    bool inner_scopes = !launch_.blocked && (launch_.tile_cols > 0 || launch_.unroll > 1);
    if (launch_.sample_modulus > 1 && !launch_.stage_tiles() && launch_.work_dim != 3)
      src += "    if (i % " + std::to_string(launch_.sample_modulus) + " != " + std::to_string(launch_.sample_residue) +
             ") continue;\n";
    src += regs + loop +
           (inner_scopes ? std::string(launch_.tile_cols > 0 ? "    }\n" : "    }\n    }\n") : "") +
           (launch_.stage_tiles() && launch_.tile_passes > 1 ? "    }\n" : "") +
           (launch_.stage_tiles() ? "    barrier(CLK_LOCAL_MEM_FENCE);  /* the next tile overwrites this one's */\n" : "") +
           "  }\n";
    src += phase_code(FUGUE_PHASE_EPILOGUE, "  ", false);
    if (fold_finalize) src += last_group_finalize();
    // The operations' local arrays, declared at kernel scope before any of their code.
    std::string locals;
    for (const auto& d : local_decls_) locals += "  " + d + "\n";
    src.insert(body_start, locals);
  }
  src += "}\n";
  std::string extent_decls;  // in the order of main_args
  for (const auto& [symbol, axis] : extent_args_) {
    const std::string decl = "const long " + extent_name(symbol, axis);
    extent_decls += decl + ",\n    ";
    decls.push_back(decl);
    KernelArg arg{KernelArg::Kind::Dimension, symbol, 0, 0};
    arg.axis = axis;
    k.main_args.push_back(arg);
  }
  for (const std::string& part : count_args_) {  // the counts read (2.22): the buffer each is held in
    const std::string decl = "__global const long* restrict " + count_name(part);
    extent_decls += decl + ",\n    ";
    decls.push_back(decl);
    k.main_args.push_back({KernelArg::Kind::Extent, part, 0, 0});
  }
  src.insert(extents_at, extent_decls);
  // The finalize kernel, written before the helpers are gathered: its code may call helpers too.
  if (any_finalize && !fold_finalize) {
    k.finalize_name = kernel_name + "_finalize";
    k.finalize_args = k.main_args;
    src += "\n" + signature(k.finalize_name, "const int fugue_groups") + "{\n" +
           phase_code(FUGUE_PHASE_FINALIZE, "  ", true) + "}\n";
  }
  // The atomic updates' and user functions' helpers, known once the code is written, go before the kernel.
  std::string helpers;
  if (uses_int64_atomics_) helpers += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
  if (functions_use_fp64_ && !k.uses_fp64) {
    k.uses_fp64 = true;
    helpers += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  }
  for (const auto& [name, code] : helpers_) helpers += "\n" + code;
  if (!helpers.empty()) {
    const size_t at = src.find("\n__kernel");
    src.insert(at == std::string::npos ? 0 : at, helpers);
  }
  k.elements = n;
  k.wide_index = wide;
  k.source = src;
  k.asks_position = asks_position_;
  return k;
}

GeneratedKernel generate_kernel(const Program& program, const FusedGroup& group, const Launch& launch,
                                const std::string& kernel_name) {
  KernelWriter writer(program, group, launch);
  return writer.write(kernel_name);
}

}  // namespace fugue
