#include "device_checks.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "runtime/array_comparison.h"
#include "ranked_comparison.h"
#include "errors.h"
#include "runtime/executor.h"
#include "load/program_loader.h"
#include "runtime/reference_executor.h"
#include "io/initial_values.h"
#include "passes/lower.h"
#include "passes/placement.h"
#include "runtime/split_run.h"

namespace fugue::conformance {

using json = nlohmann::json;

namespace {

// A complex dtype is held to its parts' tolerance (compare_arrays measures complex errors).
double tolerance_for(const Operation& op, DType dtype) {
  if (dtype_is_complex(dtype)) dtype = static_cast<DType>(dtype_info(dtype).component);
  if (!dtype_is_float(dtype)) return 0;
  return dtype == DType::F32 ? op.desc().tolerance_f32 : op.desc().tolerance_f64;
}

// The tolerance of an output of a call: the call's dtype's, or where the call's dtype is an integer one
// and the output is of floats (sums of float weights at integer bins), the output's.
double tolerance_for(const Operation& op, DType call, DType output) {
  const bool call_float = dtype_is_float(call) || dtype_is_complex(call);
  return tolerance_for(op, call_float ? call : output);
}

// Accumulates the outcome of one check over many calls: the first failure is the detail.
struct Tally {
  CheckResult result;
  int passed = 0, skipped = 0;
  std::set<std::string> dtypes;
  std::vector<std::string> failures, skips;
  Tally(const Operation& op, const std::string& check) : result{op.name(), check, Verdict::Pass, ""} {}
  void pass(const TestCall& c, const std::string& note = "ok") {
    ++passed;
    dtypes.insert(std::string(dtype_name(c.dtype)));
    result.calls.push_back({{"call", c.label}, {"outcome", note}});
  }
  void fail(const TestCall& c, const std::string& why) {
    failures.push_back(c.label + ": " + why);
    result.calls.push_back({{"call", c.label}, {"outcome", "FAIL: " + why}});
  }
  void skip(const TestCall& c, const std::string& why) {
    ++skipped;
    skips.push_back(c.label + ": " + why);
    result.calls.push_back({{"call", c.label}, {"outcome", "SKIP: " + why}});
  }
  void finish(Report& report, const std::string& pass_text) {
    if (!failures.empty()) {
      result.verdict = Verdict::Fail;
      result.detail = failures.front();
      if (failures.size() > 1) result.detail += " (and " + std::to_string(failures.size() - 1) + " more)";
    } else if (passed == 0) {
      result.verdict = Verdict::Skip;
      result.detail = skips.empty() ? "nothing to run" : skips.front();
    } else {
      std::string types;
      for (const auto& t : dtypes) types += (types.empty() ? "" : " ") + t;
      result.detail = std::to_string(passed) + " calls (" + types + ")" + (pass_text.empty() ? "" : ", " + pass_text);
      if (skipped) result.detail += "; " + std::to_string(skipped) + " skipped (" + skips.front() + ")";
    }
    report.add(std::move(result));
  }
};

struct Run {
  std::unique_ptr<Program> program;
  std::unique_ptr<Executor> executor;
  std::map<std::string, HostArray> outputs;
};

// The program planned and its kernels built, nothing run yet.
Run prepare_program(const json& document, DeviceSession& s, const PlanOptions& options,
                    const Instrumentation* instrumentation = nullptr) {
  Run r;
  r.program = std::make_unique<Program>(parse_program(document, "conformance.json", s.registry));
  r.executor = std::make_unique<Executor>(*r.program, s.device, s.cache, s.profiler, options);
  if (instrumentation) r.executor->instrument(*instrumentation);
  r.executor->prepare();
  return r;
}

Run run_program(const json& document, DeviceSession& s, const PlanOptions& options,
                const Instrumentation* instrumentation = nullptr) {
  Run r = prepare_program(document, s, options, instrumentation);
  r.executor->initialize();
  r.executor->run();
  for (const auto& out : r.program->outputs) r.outputs[out.symbol] = r.executor->read(out.symbol);
  return r;
}

std::map<std::string, HostArray> reference_outputs(const Program& program, ReferenceExecutor& reference) {
  reference.run();
  std::map<std::string, HostArray> out;
  for (const auto& o : program.outputs) out[o.symbol] = reference.value(o.symbol);
  return out;
}

// Why the device cannot run `call` at all (f64 on a device without doubles), or "".
std::string unrunnable(const TestCall& call, const DeviceSession& s) {
  if (s.device.info.fp64) return {};
  bool f64 = call.dtype == DType::F64 || call.dtype == DType::C128;
  for (const auto& [name, symbol] : call.program.at("symbols").items())
    f64 = f64 || (symbol.is_object() && (symbol.value("dtype", "") == "f64" || symbol.value("dtype", "") == "c128"));
  return f64 ? "the device has no fp64" : "";
}

// A call that infer accepted must run: any later refusal (plan, emit, execute, reference) is a FAIL.
std::string refused(const std::string& where, const std::exception& e) {
  const bool user = dynamic_cast<const UserError*>(&e) != nullptr;
  return std::string(user ? "infer accepted the call, but it was refused " : "failed ") + where + ": " + e.what();
}

void step(DeviceSession& s, const std::string& check, const TestCall& call) {
  if (s.progress) s.progress(check + "|" + call.label);
}

// "" when the guard regions of every buffer of the run are intact; otherwise the first damage.
std::string device_guard_damage(Run& run) {
  for (const auto& [name, symbol] : run.program->symbols) {
    if (symbol.compile_time()) continue;
    const std::string damage = run.executor->guard_damage(name);
    if (!damage.empty()) return "device buffer of '" + name + "': " + damage;
  }
  if (!run.executor->scratch_damage().empty()) return run.executor->scratch_damage().front();
  return {};
}

// The calls the more expensive checks use: per dtype, the first "odd" (or declared) call.
std::vector<const TestCall*> one_per_dtype(const std::vector<TestCall>& calls) {
  std::vector<const TestCall*> out;
  std::set<DType> seen;
  for (const auto& c : calls)
    if ((c.declared || c.size_class == "odd") && seen.insert(c.dtype).second) out.push_back(&c);
  return out;
}

bool poisoned(const uint8_t* bytes, size_t offset, size_t size) {
  const uint8_t* poison = reinterpret_cast<const uint8_t*>(&Instrumentation::kPoison);
  for (size_t b = 0; b < size; ++b)
    if (bytes[b] != poison[(offset + b) % 4]) return false;
  return true;
}

// "" when the op kept to its partitions in an instrumented run; otherwise what it wrote where.
std::string partition_violation(const Operation& op, const TestCall& call, DeviceSession& s, bool* sampled) {
  // Copies stay kernels here: a swap would move no data, and hide the operation's own code; an
  // operation that runs as its own kernels where it is alone (ABI 2.19) runs its generated kernel, which
  // its neighbours join elsewhere.
  PlanOptions options{true, false};
  options.own_kernels_alone = false;
  Run plain = run_program(call.program, s, options);
  const PlannedOp& planned = *plain.executor->plan().ops.front();
  const Statement& st = *planned.statement;
  // Sampling tells apart an op that writes only its own elements when every array output is
  // ELEMENTWISE and all its code is in the core's element loop (ELEMENT level; an ITEM op may also
  // write after the loop).
  bool sample = planned.level() == FUGUE_LEVEL_ELEMENT;
  bool array_outputs = false;
  for (uint32_t o : op.outputs())
    if (planned.types[o].kind == FUGUE_KIND_ARRAY) {
      array_outputs = true;
      if (planned.partition(o).kind != FUGUE_PARTITION_ELEMENTWISE) sample = false;
    }
  sample = sample && array_outputs;
  *sampled = sample;
  Instrumentation inst;
  inst.guard_bytes = kGuardBytes;
  if (sample) inst.sample_modulus = 3, inst.sample_residue = 1;
  Run guarded = run_program(call.program, s, options, &inst);
  ReferenceExecutor reference(*guarded.program);  // holds the inputs' initial values
  reference_outputs(*guarded.program, reference);
  for (size_t k = 0; k < st.operands.size(); ++k) {
    const std::string& symbol = st.operands[k];
    if (guarded.program->symbol(symbol).compile_time()) continue;
    const std::string role = op.role(k) == FUGUE_ROLE_OUT ? "output " : op.role(k) == FUGUE_ROLE_IN ? "input " : "in-place operand ";
    std::string damage = guarded.executor->guard_damage(symbol);
    if (!damage.empty()) return role + symbol + ": " + damage;
    if (op.operands()[k]->role == FUGUE_ROLE_IN) {
      std::string changed = compare_bitwise(guarded.executor->read(symbol), reference.value(symbol));
      if (!changed.empty()) return "input " + symbol + " was written (" + changed + ")";
    }
  }
  if (!sample) return {};
  for (uint32_t o : op.outputs()) {
    const std::string& symbol = st.operands[o];
    if (planned.types[o].kind != FUGUE_KIND_ARRAY) continue;
    const HostArray& got = guarded.outputs.at(symbol);
    const size_t size = dtype_size(got.dtype);
    // An element not computed keeps what was there: the poison, or an in-place operand's old value.
    const bool in_place = op.role(o) == FUGUE_ROLE_INOUT;
    const HostArray old = in_place ? initial_value(guarded.program->symbol(symbol)) : HostArray();
    const double tol = tolerance_for(op, call.dtype, got.dtype);
    for (int64_t i = 0; i < got.elements(); ++i) {
      const bool computed = i % 3 == 1;
      const bool kept = in_place ? std::memcmp(got.bytes.data() + i * size, old.bytes.data() + i * size, size) == 0
                                 : poisoned(got.bytes.data() + i * size, i * size, size);
      if (!computed && !kept)
        return "output " + symbol + ": element " + std::to_string(i) +
               " was written, but only elements i % 3 == 1 were computed (ELEMENTWISE promises element i "
               "writes element i alone)";
      if (computed) {
        // Computed among fewer elements, an element must not change (the reference check covers values).
        const std::complex<double> a = got.get_complex(i), e = plain.outputs.at(symbol).get_complex(i);
        const bool nans = (std::isnan(a.real()) || std::isnan(a.imag())) && (std::isnan(e.real()) || std::isnan(e.imag()));
        if (!nans && !(std::abs(a - e) <= tol * std::max(1.0, std::abs(e))))
          return "output " + symbol + ": element " + std::to_string(i) + " is " + std::to_string(a.real()) +
                 (dtype_is_complex(got.dtype) ? " + " + std::to_string(a.imag()) + "i" : "") +
                 " when every third element is computed, " + std::to_string(e.real()) +
                 (dtype_is_complex(got.dtype) ? " + " + std::to_string(e.imag()) + "i" : "") + " when all are";
      }
    }
  }
  return {};
}

// "split by rows": an operation that says how it treats the ends of the arrays it reads around each
// element (fugue_plan.ends) must compute, on a share of the rows with its neighbours' rows around it
// (none past the ends where its reads stay inside, the other end's where they wrap), the rows the whole
// gives: what a program split across devices relies on. The rows are cut in two at the middle; "" when
// both halves agree with the whole, else the first difference; `skip` says why a call cannot tell.
std::string split_violation(const TestCall& call, DeviceSession& s, double tolerance, std::string& skip) {
  const PlanOptions options{false, false};
  // Planned first, without building anything: most operations read nothing around their elements.
  const Program parsed = parse_program(call.program, "conformance.json", s.registry);
  const ExecutionPlan plan = lower(parsed, s.device.info, options);
  const PlannedOp& planned = *plan.ops.front();
  const Statement& st = *planned.statement;
  int64_t reach = 0;
  for (size_t k = 0; k < st.operands.size(); ++k) {
    const abi::Partition& p = planned.partition(k);
    if ((p.kind == FUGUE_PARTITION_ELEMENTWISE || p.kind == FUGUE_PARTITION_TILE) && st.op->reads(k))
      reach = std::max(reach, abi::Partition::at(p.halo, 0));
  }
  if (reach == 0) {
    skip = "reads nothing around its elements along axis 0";
    return {};
  }
  if (planned.plan.ends != FUGUE_ENDS_INSIDE && planned.plan.ends != FUGUE_ENDS_WRAP) {
    skip = "does not say how it treats the arrays' ends (fugue_plan.ends), so it is never split across devices";
    return {};
  }
  int64_t rows = -1;
  std::vector<std::string> split;  // the arrays cut by rows: every array operand
  for (size_t k = 0; k < st.operands.size(); ++k) {
    const Symbol& sym = parsed.symbol(st.operands[k]);
    if (sym.compile_time() || sym.kind == SymbolKind::Scalar) continue;
    const abi::Partition& p = planned.partition(k);
    if (sym.kind != SymbolKind::Array || sym.shape.empty() ||
        (p.kind != FUGUE_PARTITION_ELEMENTWISE && p.kind != FUGUE_PARTITION_TILE)) {
      skip = "operand '" + st.operands[k] + "' is " + partition_text(p) + ", not split by rows";
      return {};
    }
    if (rows >= 0 && sym.shape[0] != rows) {
      skip = "its arrays' axis 0 differ";
      return {};
    }
    rows = sym.shape[0];
    split.push_back(st.operands[k]);
  }
  if (rows < 2 * reach) {
    skip = std::to_string(rows) + " rows: fewer than two shares of its reach (" + std::to_string(reach) + ")";
    return {};
  }
  const bool wrap = planned.plan.ends == FUGUE_ENDS_WRAP;
  Run whole = run_program(call.program, s, options);
  const int64_t middle = rows / 2;
  const DeviceShare halves[] = {{0, middle, wrap ? reach : 0, reach}, {middle, rows - middle, reach, wrap ? reach : 0}};
  for (const DeviceShare& share : halves) {
    json document = call.program;
    json& symbols = document.at("symbols");
    for (const auto& name : split)  // results are not declared: they take x's rows
      if (auto it = symbols.find(name); it != symbols.end() && it->is_object() && it->contains("shape"))
        (*it)["shape"][0] = share.held();
    Run part = prepare_program(document, s, options);
    for (const auto& name : split)
      if (whole.program->symbol(name).source.kind != SymbolSource::Kind::None)
        part.executor->give_initial(
            name, rows_of(initial_value(whole.program->symbol(name)), share.first - share.before, share.held()));
    part.executor->initialize();
    part.executor->run();
    const std::string rows_text = "rows " + std::to_string(share.first) + ".." + std::to_string(share.first + share.count - 1);
    for (const auto& out : whole.program->outputs) {
      if (std::find(split.begin(), split.end(), out.symbol) == split.end()) continue;
      const std::string mismatch = compare_arrays(rows_of(part.executor->read(out.symbol), share.before, share.count),
                                                  rows_of(whole.outputs.at(out.symbol), share.first, share.count), tolerance);
      if (!mismatch.empty())
        return rows_text + " computed with " + std::to_string(share.before) + " rows before them and " +
               std::to_string(share.after) + " after (reads past the ends " + (wrap ? "wrapping" : "staying inside") +
               ") differ from the whole's: " + out.symbol + " " + mismatch;
    }
  }
  return {};
}

// "rows cut": an operation that says which operands its rows cut (fugue_plan.split_rows) must compute, on
// each half of the rows (its marked operands cut to them, a kind with storage by its kind's rows, the
// others whole), the whole's rows of its outputs: what a program split across devices relies on. ""
// when both halves agree with the whole, else the first difference; `skip` says why a call cannot tell.
std::string rows_cut_violation(const TestCall& call, DeviceSession& s, double tolerance, std::string& skip) {
  const PlanOptions options{false, false};
  const Program parsed = parse_program(call.program, "conformance.json", s.registry);
  const ExecutionPlan plan = lower(parsed, s.device.info, options);
  const PlannedOp& planned = *plan.ops.front();
  const Statement& st = *planned.statement;
  if (planned.plan.split_rows == 0) {
    skip = "says no operands its rows cut";
    return {};
  }
  int64_t rows = -1;
  std::vector<std::string> cut;
  for (size_t k = 0; k < st.operands.size() && k < 64; ++k) {
    if (!((planned.plan.split_rows >> k) & 1u)) continue;
    const Symbol& sym = parsed.symbol(st.operands[k]);
    if (sym.compile_time() || sym.kind == SymbolKind::Scalar) continue;  // a number for y0: nothing to cut
    if (sym.shape.empty() || (sym.compound() && !(sym.kind_object && sym.kind_object->cuts_rows())) ||
        (sym.kind != SymbolKind::Array && !sym.compound())) {
      skip = "operand '" + st.operands[k] + "' is marked, but is no array and no kind that gives its rows";
      return {};
    }
    if (rows >= 0 && sym.shape[0] != rows) {
      skip = "its marked operands' axis 0 differ";
      return {};
    }
    rows = sym.shape[0];
    cut.push_back(st.operands[k]);
  }
  if (rows < 2) {
    skip = std::to_string(rows) + " rows: fewer than two halves";
    return {};
  }
  Run whole = run_program(call.program, s, options);
  const int64_t middle = rows / 2;
  for (const auto& [first, count] : {std::pair<int64_t, int64_t>{0, middle}, {middle, rows - middle}}) {
    Program part = parse_program(call.program, "conformance.json", s.registry);
    std::vector<std::pair<std::string, HostArray>> given;
    for (const auto& name : cut) {
      const Symbol& w = whole.program->symbol(name);
      if (w.compound()) {
        DeclaredType type;
        given.emplace_back(name, kind_rows(w, whole_value(*whole.program, w), first, count, type));
        take_rows_type(part, name, type);
        continue;
      }
      part.symbols.at(name).shape[0] = count;
      if (w.source.kind != SymbolSource::Kind::None) given.emplace_back(name, rows_of(initial_value(w), first, count));
    }
    // An operand read only at the columns of a cut matrix's entries (fugue_plan.read_at_columns) is given
    // whole with its other rows NaN (or a byte pattern): they must not reach the outputs.
    std::string poisoned;
    const size_t by = planned.plan.columns_of;
    for (size_t k = 0; k < st.operands.size() && k < 64 && by < st.operands.size(); ++k) {
      if (!((planned.plan.read_at_columns >> k) & 1u) || std::find(cut.begin(), cut.end(), st.operands[k]) != cut.end()) continue;
      const Symbol& m = whole.program->symbol(st.operands[by]);
      const Symbol& x = whole.program->symbol(st.operands[k]);
      if (!m.compound() || !m.kind_object || !m.kind_object->gives_columns() ||
          std::find(cut.begin(), cut.end(), m.name) == cut.end() || x.kind != SymbolKind::Array || x.shape.empty() ||
          x.source.kind == SymbolSource::Kind::None)
        continue;
      const auto [begin, end] = m.kind_object->columns(whole_value(*whole.program, m), m.metadata, first, count);
      HostArray value = initial_value(x);
      const size_t row = x.row_bytes();
      for (int64_t r = 0; r < x.shape[0]; ++r) {
        if (r >= begin && r < end) continue;
        uint8_t* at = value.bytes.data() + row * static_cast<size_t>(r);
        if (x.dtype == DType::F32) std::fill_n(reinterpret_cast<float*>(at), row / 4, std::numeric_limits<float>::quiet_NaN());
        else if (x.dtype == DType::F64) std::fill_n(reinterpret_cast<double*>(at), row / 8, std::numeric_limits<double>::quiet_NaN());
        else std::fill_n(at, row, uint8_t{0x5a});
      }
      poisoned += "; '" + x.name + "' given with its rows outside " + std::to_string(begin) + ".." + std::to_string(end - 1) +
                  " (the columns those rows of '" + m.name + "' reach, fugue_kind_desc.rows_columns) NaN";
      given.emplace_back(x.name, std::move(value));
    }
    Executor executor(part, s.device, s.cache, s.profiler, options);
    for (auto& [name, value] : given) {
      if (part.symbol(name).compound()) give_rows(executor, part.symbol(name), std::move(value));
      else executor.give_initial(name, std::move(value));
    }
    executor.prepare();
    executor.initialize();
    executor.run();
    for (const auto& out : whole.program->outputs) {
      if (std::find(cut.begin(), cut.end(), out.symbol) == cut.end()) continue;
      const std::string mismatch = compare_arrays(executor.read(out.symbol), rows_of(whole.outputs.at(out.symbol), first, count), tolerance);
      if (!mismatch.empty())
        return "rows " + std::to_string(first) + ".." + std::to_string(first + count - 1) +
               " computed alone (the operands fugue_plan.split_rows marks cut to them" + poisoned + ") differ from the whole's: " + out.symbol +
               " " + mismatch;
    }
  }
  return {};
}

// One of the checks of an operation's rows split across devices (`violation` gives "" or the first
// difference, and says why a call cannot tell), over the declared and odd calls: a line named `check`,
// none where every call skips as `unconcerned` (the operation does not split that way).
void check_rows_split(const Operation& op, const std::vector<TestCall>& calls, DeviceSession& s, Report& report, const char* check,
                      std::string (*violation)(const TestCall&, DeviceSession&, double, std::string&), const std::string& unconcerned,
                      const std::string& passed) {
  Tally tally(op, check);
  bool concerned = false;
  for (const auto& call : calls) {
    if (!call.declared && call.size_class != "odd") continue;
    if (const std::string why = unrunnable(call, s); !why.empty()) continue;
    try {
      step(s, check, call);
      std::string skip;
      const std::string found = violation(call, s, tolerance_for(op, call.dtype), skip);
      if (skip == unconcerned) continue;
      concerned = true;
      if (!skip.empty()) tally.skip(call, skip);
      else if (found.empty()) tally.pass(call);
      else tally.fail(call, found);
    } catch (const std::exception& e) {
      concerned = true;
      tally.fail(call, refused(check, e));
    }
  }
  if (concerned) tally.finish(report, passed);
}

// The fusion-neutrality program, or a reason there is none.
std::string neighbour_program(const Operation& op, const TestCall& call, DeviceSession& s, json& program) {
  // Multiplying by 1 changes no value of any dtype; array.mul itself gets an addition of 0.
  const bool is_mul = op.name() == "array.mul";
  const std::string neighbour_name = is_mul ? "array.add" : "array.mul";
  auto neighbour = s.registry.find(neighbour_name);
  if (!neighbour) return "the array plugin (" + neighbour_name + ", the neighbour) is not loaded";
  Run plain = prepare_program(call.program, s, PlanOptions{false, false});  // its plan is all that is needed
  const PlannedOp& planned = *plain.executor->plan().ops.front();
  if (planned.level() == FUGUE_LEVEL_DEVICE) return "device-level operations enqueue their own kernels";
  const uint32_t mul_dtypes = neighbour->operands()[0]->dtypes;
  std::vector<uint32_t> inputs, outputs;
  for (uint32_t i : op.inputs()) {
    const abi::Partition& p = planned.partition(i);
    // Element-wise producers fuse with element-wise reads and with batch entries alike.
    const bool fusable = (p.kind == FUGUE_PARTITION_ELEMENTWISE && !p.has_halo()) || p.kind == FUGUE_PARTITION_BATCH;
    if (planned.types[i].kind == FUGUE_KIND_ARRAY && fusable &&
        (mul_dtypes & FUGUE_DTYPE_BIT(planned.types[i].dtype)))
      inputs.push_back(i);
  }
  for (uint32_t o : op.outputs())
    if (planned.types[o].kind == FUGUE_KIND_ARRAY &&
        (planned.partition(o).kind == FUGUE_PARTITION_ELEMENTWISE || planned.partition(o).kind == FUGUE_PARTITION_BATCH) &&
        (mul_dtypes & FUGUE_DTYPE_BIT(planned.types[o].dtype)))
      outputs.push_back(o);
  if (inputs.empty() && outputs.empty()) return "no element-wise array operand to fuse a neighbour with";
  program = with_neighbours(op, call.program, neighbour_name, is_mul ? 0.0 : 1.0, inputs, outputs);
  return {};
}

}  // namespace

void check_on_device(const Operation& op, const std::vector<TestCall>& calls, DeviceSession& s, Report& report) {
  Tally reference(op, "reference"), determinism(op, "determinism"), guards(op, "guard regions");
  const bool unordered = op.traits() & FUGUE_OP_UNORDERED;
  Instrumentation guarded;
  guarded.guard_bytes = kGuardBytes;
  for (const auto& call : calls) {
    if (const std::string why = unrunnable(call, s); !why.empty()) {
      reference.skip(call, why);
      determinism.skip(call, why);
      guards.skip(call, why);
      continue;
    }
    // Device first: its failure says nothing about the reference, and the other way round.
    Run run;
    std::string damage;
    try {
      step(s, "device run", call);
      run = run_program(call.program, s, PlanOptions{}, &guarded);
      damage = device_guard_damage(run);
    } catch (const std::exception& e) {
      reference.fail(call, refused("on the device", e));
      determinism.skip(call, "the first run failed");
      guards.skip(call, "the first run failed");
      continue;
    }
    try {
      step(s, "reference", call);
      ReferenceExecutor ref(*run.program);
      ref.guard_host_arrays(kGuardBytes);
      auto expected = reference_outputs(*run.program, ref);
      if (damage.empty() && !ref.guard_damage().empty()) damage = "host array: " + ref.guard_damage().front();
      auto differs = [&](const std::map<std::string, HostArray>& outputs, const std::string& device) {
        for (const auto& [symbol, value] : expected) {
          const auto by = call.ranked.find(symbol);
          const std::string mismatch = by == call.ranked.end()
                                           ? compare_arrays(outputs.at(symbol), value, tolerance_for(op, call.dtype, value.dtype))
                                           : compare_ranked(outputs.at(symbol), value, expected.at(by->second),
                                                            tolerance_for(op, call.dtype, expected.at(by->second).dtype));
          if (!mismatch.empty()) return device + " and reference differ: " + symbol + " " + mismatch;
        }
        return std::string();
      };
      std::string mismatch = differs(run.outputs, "device");
      // An operation that ran its own kernels alone (ABI 2.19) offers its neighbours a generated kernel:
      // that kernel, run alone, must give the reference's result too.
      if (mismatch.empty() && !run.executor->plan().alone_own_kernels.empty()) {
        step(s, "reference (generated kernel)", call);
        PlanOptions generated;
        generated.own_kernels_alone = false;
        mismatch = differs(run_program(call.program, s, generated).outputs, "the generated kernel (its own kernels run it alone)");
      }
      if (mismatch.empty()) reference.pass(call);
      else reference.fail(call, mismatch);
    } catch (const std::exception& e) {
      reference.fail(call, refused("by the reference", e));
    }
    try {
      // A second run on the same buffers must give the same bits (an UNORDERED op's floats: the
      // same values within its tolerance).
      step(s, "second run", call);
      run.executor->initialize();
      run.executor->run();
      if (damage.empty()) damage = device_guard_damage(run);
      std::string differs;
      for (const auto& [symbol, first] : run.outputs) {
        differs = unordered && (dtype_is_float(first.dtype) || dtype_is_complex(first.dtype))
                      ? compare_arrays(run.executor->read(symbol), first, tolerance_for(op, call.dtype, first.dtype))
                      : compare_bitwise(run.executor->read(symbol), first);
        if (!differs.empty()) {
          differs = "a second run changed " + symbol + ": " + differs;
          break;
        }
      }
      if (differs.empty()) determinism.pass(call);
      else determinism.fail(call, differs);
    } catch (const std::exception& e) {
      determinism.fail(call, refused("on its second run", e));
    }
    if (damage.empty()) guards.pass(call);
    else guards.fail(call, damage);
  }
  reference.finish(report, "within tolerance f32 " + json(op.desc().tolerance_f32).dump() + ", f64 " +
                               json(op.desc().tolerance_f64).dump() + ", integers exact");
  determinism.finish(report, unordered ? "equal on a second run (floats within tolerance: UNORDERED)"
                                       : "bitwise equal on a second run");
  guards.finish(report, "nothing written around any device buffer (" + std::to_string(kGuardBytes) +
                            " bytes each side) or host array of the reference, nor into the reference's inputs");

  Tally partitions(op, "partition honesty"), fusion(op, "fusion neutrality");
  bool any_sampled = false;
  for (const TestCall* call : one_per_dtype(calls)) {
    if (const std::string why = unrunnable(*call, s); !why.empty()) {
      partitions.skip(*call, why);
      fusion.skip(*call, why);
      continue;
    }
    try {
      step(s, "partition honesty", *call);
      bool sampled = false;
      std::string violation = partition_violation(op, *call, s, &sampled);
      any_sampled |= sampled;
      if (violation.empty()) partitions.pass(*call, sampled ? "guards intact, sampled elements only" : "guards intact");
      else partitions.fail(*call, violation);
    } catch (const std::exception& e) {
      partitions.fail(*call, refused("in the instrumented run", e));
    }
    try {
      step(s, "fusion neutrality", *call);
      json program;
      std::string why_not = neighbour_program(op, *call, s, program);
      if (!why_not.empty()) {
        fusion.skip(*call, why_not);
        continue;
      }
      Run fused = run_program(program, s, PlanOptions{});
      const ExecutionPlan& plan = fused.executor->plan();
      const Statement* statement = nullptr;
      for (const auto& st : fused.program->body)
        if (st.op && st.op->name() == op.name()) statement = &st;
      const Step& step = plan.steps.at(statement);
      if (step.kind != Step::Kind::Kernel || plan.groups.at(step.group).ops.size() < 2) {
        std::string reason = "the planner kept it apart";
        for (const auto& note : plan.not_fused) reason += "; " + note.text;
        fusion.skip(*call, reason);
        continue;
      }
      Run unfused = run_program(program, s, PlanOptions{false, false});
      std::string mismatch;
      for (const auto& [symbol, value] : unfused.outputs) {
        mismatch = compare_arrays(fused.outputs.at(symbol), value, tolerance_for(op, call->dtype, value.dtype));
        if (!mismatch.empty()) {
          mismatch = "fused with " + std::to_string(plan.groups.at(step.group).ops.size() - 1) +
                     " element-wise neighbours, " + symbol + " differs from the unfused run: " + mismatch;
          break;
        }
      }
      if (mismatch.empty())
        fusion.pass(*call, "fused into one kernel with " + std::to_string(plan.groups.at(step.group).ops.size() - 1) +
                               " neighbours");
      else fusion.fail(*call, mismatch);
    } catch (const std::exception& e) {
      fusion.fail(*call, refused("beside its neighbours", e));
    }
  }
  partitions.finish(report, any_sampled ? "outputs poisoned, only every third element computed, nothing written "
                                          "outside; guards around every buffer intact; inputs unchanged"
                                        : "guards around every buffer intact; inputs unchanged");
  fusion.finish(report, "fused with element-wise neighbours, same result as unfused");

  // Only operations that read around their elements along axis 0, or say which operands their rows
  // cut, get these lines.
  check_rows_split(op, calls, s, report, "split by rows", split_violation, "reads nothing around its elements along axis 0",
                   "each half of the rows, with its neighbours' rows around it as fugue_plan.ends says, gives the whole's rows");
  check_rows_split(op, calls, s, report, "rows cut", rows_cut_violation, "says no operands its rows cut",
                   "each half of the rows, the operands fugue_plan.split_rows marks cut to them and the others whole, gives "
                   "the whole's rows");
}

void check_cost(const Operation& op, const std::vector<TestCall>& calls, const PluginRegistry& registry,
                Report& report) {
  Tally tally(op, "cost");
  std::map<DType, std::pair<int64_t, double>> largest;  // per dtype: elements and bytes of the largest call so far
  for (const auto& call : calls) {
    try {
      Program program = parse_program(call.program, "conformance.json", registry);
      const Statement& st = program.body.front();
      CallDescriptor c;
      program.call(st, c);
      const auto& types = c.types;
      fugue_cost cost = op.cost(c.call);
      double out_bytes = 0, all_bytes = 0;
      int64_t elements = 0;
      for (size_t k = 0; k < types.size(); ++k) {
        const Symbol& sym = program.symbol(st.operands[k]);
        if (sym.compile_time()) continue;
        double bytes = static_cast<double>(sym.kind == SymbolKind::Array ? shape_elements(sym.shape) : 1) *
                       static_cast<double>(dtype_size(sym.dtype));
        all_bytes += bytes;
        if (op.operands()[k]->role == FUGUE_ROLE_OUT) out_bytes += bytes;
        if (sym.kind == SymbolKind::Array) elements = std::max(elements, shape_elements(sym.shape));
      }
      std::string problem;
      if (!std::isfinite(cost.bytes) || !std::isfinite(cost.flops) || cost.bytes < 0 || cost.flops < 0)
        problem = "bytes " + std::to_string(cost.bytes) + ", flops " + std::to_string(cost.flops) + ": not finite and non-negative";
      else if (cost.bytes < out_bytes)
        problem = "bytes " + std::to_string(cost.bytes) + " is less than the outputs' " + std::to_string(out_bytes) +
                  " (an operation writes at least its outputs)";
      else if (cost.bytes > 64 * all_bytes + (1 << 20))
        problem = "bytes " + std::to_string(cost.bytes) + " is more than 64 times all operands' " + std::to_string(all_bytes);
      auto& [prev_elements, prev_bytes] = largest[call.dtype];
      if (problem.empty() && elements > prev_elements && cost.bytes < prev_bytes)
        problem = "bytes fall from " + std::to_string(prev_bytes) + " to " + std::to_string(cost.bytes) +
                  " as the arrays grow to " + std::to_string(elements) + " elements";
      if (elements >= prev_elements) prev_elements = elements, prev_bytes = cost.bytes;
      if (problem.empty()) tally.pass(call, "bytes " + json(cost.bytes).dump() + ", flops " + json(cost.flops).dump());
      else tally.fail(call, problem);
    } catch (const std::exception& e) {
      tally.fail(call, e.what());
    }
  }
  tally.finish(report, "finite, at least the outputs' bytes, growing with the arrays");
}

}  // namespace fugue::conformance
