#include "infer_checks.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>

#include "child_process.h"
#include "errors.h"
#include "load/program_loader.h"

namespace fugue::conformance {

namespace {

std::string one_line(std::string text) {
  for (auto& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text;
}

// A call of the program's one statement, with its own copies of types and attrs, passed straight
// through the C ABI (no SDK, no loader in between).
struct RawCall {
  std::vector<abi::Type> values;
  std::vector<fugue_attr_value> attrs;

  // Runs the plugin's infer straight through the C ABI.
  fugue_status infer(const Operation& op, std::vector<abi::Type>& result, abi::ErrorBuffer& error) const {
    std::vector<fugue_type> types;
    for (const abi::Type& t : values) types.push_back(t.view());
    fugue_call call{};
    call.struct_size = sizeof(fugue_call);
    call.num_operands = static_cast<uint32_t>(types.size());
    call.operands = types.data();
    call.num_attrs = static_cast<uint32_t>(attrs.size());
    call.attrs = attrs.empty() ? nullptr : attrs.data();
    return op.infer_status(call, result, error);
  }
};

struct Mutation {
  std::string label;
  RawCall raw;
};

std::vector<Mutation> invalid_calls(const Operation& op, const Program& program) {
  const Statement& st = program.body.front();
  RawCall base;
  CallDescriptor call;
  program.call(st, call);
  base.values = call.values;
  base.attrs = st.attrs;
  // OUT entries as the loader passes them: kind NONE, or the declaration of a kind with storage (ABI 2.18).
  for (uint32_t o : op.outputs())
    if (op.reads(o) || !program.symbol(st.operands[o]).compound() || op.plugin().abi_minor < 18) base.values[o] = abi::Type{};
  std::vector<Mutation> out;
  auto add = [&](const std::string& label, const std::function<void(RawCall&)>& change) {
    Mutation m{label, base};
    change(m.raw);
    out.push_back(std::move(m));
  };
  for (uint32_t i : op.inputs()) {
    const fugue_operand_desc& d = *op.operands()[i];
    const abi::Type& t = base.values[i];
    const std::string name = d.name;
    if (t.kind == FUGUE_KIND_ARRAY) {
      if (t.rank() >= 1) add(name + " one longer on axis 0", [&](RawCall& r) { r.values[i].shape[0] += 1; });
      if (t.rank() < kMaxRank)
        add(name + " with one more axis", [&](RawCall& r) { r.values[i].shape.push_back(3); });
      if (t.rank() > 1) add(name + " with one axis fewer", [&](RawCall& r) { r.values[i].shape.pop_back(); });
      if (t.rank() >= 1) add(name + " empty (extent 0)", [&](RawCall& r) { r.values[i].shape[0] = 0; });
    }
    // A kind with storage: its value's dtype one its signature excludes (the parts left as they are: infer
    // reads the type's dtype).
    if (t.kind == FUGUE_KIND_PLUGIN && program.symbol(st.operands[i]).compound())
      for (fugue_dtype other : {FUGUE_DTYPE_F32, FUGUE_DTYPE_F64, FUGUE_DTYPE_I32, FUGUE_DTYPE_U8, FUGUE_DTYPE_C64})
        if (!(d.dtypes & FUGUE_DTYPE_BIT(other))) {
          add(name + " as " + std::string(dtype_name(static_cast<DType>(other))) + " (outside its dtype mask)",
              [&](RawCall& r) { r.values[i].dtype = other; });
          break;
        }
    if (t.kind == FUGUE_KIND_ARRAY || t.kind == FUGUE_KIND_SCALAR) {
      for (fugue_dtype other : {FUGUE_DTYPE_F32, FUGUE_DTYPE_F64, FUGUE_DTYPE_I32, FUGUE_DTYPE_U8, FUGUE_DTYPE_C64}) {
        if (other == t.dtype) continue;
        bool in_mask = d.dtypes & FUGUE_DTYPE_BIT(other);
        add(name + " as " + std::string(dtype_name(static_cast<DType>(other))) + (in_mask ? "" : " (outside its dtype mask)"),
            [&](RawCall& r) { r.values[i].dtype = other; });
      }
    }
  }
  for (size_t a = 0; a < base.attrs.size(); ++a) {
    const std::string name = base.attrs[a].name ? base.attrs[a].name : "?";
    switch (base.attrs[a].type) {
      case FUGUE_ATTR_NUMBER:
        for (double v : {std::nan(""), -1e300, 0.0})
          add("attribute " + name + " = " + std::to_string(v), [&](RawCall& r) { r.attrs[a].number = v; });
        break;
      case FUGUE_ATTR_INT:
        for (int64_t v : {int64_t{-1}, int64_t{0}, int64_t{1} << 40})
          add("attribute " + name + " = " + std::to_string(v), [&](RawCall& r) { r.attrs[a].integer = v; });
        break;
      case FUGUE_ATTR_STRING:
        add("attribute " + name + " = \"no-such-value\"", [&](RawCall& r) { r.attrs[a].string = "no-such-value"; });
        break;
      default:
        break;
    }
  }
  return out;
}

// "" when an output type infer returned is one the signature allows; otherwise what is wrong.
std::string malformed_output(const Operation& op, const std::vector<abi::Type>& types) {
  for (uint32_t o : op.outputs()) {
    const abi::Type& t = types[o];
    const std::string name = op.operands()[o]->name;
    if (!(op.operands()[o]->kinds & FUGUE_KIND_BIT(t.kind)) || t.kind == FUGUE_KIND_NONE)
      return name + " has kind " + std::to_string(t.kind) + ", outside its kinds mask";
    if (!(op.operands()[o]->dtypes & FUGUE_DTYPE_BIT(t.dtype)) || t.dtype == FUGUE_DTYPE_NONE)
      return name + " has dtype " + std::to_string(t.dtype) + ", outside its dtype mask";
    if (t.rank() > kMaxRank) return name + " has rank " + std::to_string(t.rank());
    if (t.kind == FUGUE_KIND_ARRAY)
      for (int64_t e : t.shape)
        if (e < 0) return name + " has a negative extent";
  }
  return {};
}

const char* status_name(fugue_status s) {
  switch (s) {
    case FUGUE_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case FUGUE_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case FUGUE_ERROR_DEVICE: return "DEVICE";
    case FUGUE_ERROR_INTERNAL: return "INTERNAL";
    default: return "an unknown status";
  }
}

// The child's work: every candidate through the loader, then the invalid calls straight through the
// C ABI. Lines: "start I", "ok I", "rejected I MSG", "fault I MSG"; "mnone" (a valid call, but nothing
// to change in it), "mstart L", "maccept L", "mreject L", "mfault L\tMSG".
void child_work(const Operation& op, const PluginRegistry& registry, const std::vector<TestCall>& candidates,
                const std::function<void(const std::string&)>& say) {
  std::unique_ptr<Program> base;
  for (size_t i = 0; i < candidates.size(); ++i) {
    say("start " + std::to_string(i));
    try {
      auto program = std::make_unique<Program>(parse_program(candidates[i].program, "conformance.json", registry));
      say("ok " + std::to_string(i));
      if (!base && (candidates[i].declared || candidates[i].size_class == "odd")) base = std::move(program);
    } catch (const UserError& e) {
      say("rejected " + std::to_string(i) + " " + one_line(e.what()));
    } catch (const DeviceError& e) {
      say("fault " + std::to_string(i) + " " + one_line(e.what()));
    } catch (const std::exception& e) {
      say("fault " + std::to_string(i) + " a C++ exception escaped the C boundary: " + one_line(e.what()));
    } catch (...) {
      say("fault " + std::to_string(i) + " an exception of unknown type escaped the C boundary");
    }
  }
  if (!base) return;
  const std::vector<Mutation> mutations = invalid_calls(op, *base);
  if (mutations.empty()) say("mnone");
  for (auto& m : mutations) {
    say("mstart " + m.label);
    std::vector<abi::Type> result;
    abi::ErrorBuffer error;
    fugue_status status = FUGUE_OK;
    try {
      status = m.raw.infer(op, result, error);
    } catch (const std::exception& e) {
      say("mfault " + m.label + "\ta C++ exception escaped the C boundary: " + one_line(e.what()));
      continue;
    } catch (...) {
      say("mfault " + m.label + "\tan exception of unknown type escaped the C boundary");
      continue;
    }
    if (status == FUGUE_OK) {
      std::string bad = malformed_output(op, result);
      say(bad.empty() ? "maccept " + m.label : "mfault " + m.label + "\taccepted, with a malformed output type: " + bad);
    } else if (status != FUGUE_ERROR_INVALID_ARGUMENT && status != FUGUE_ERROR_UNSUPPORTED) {
      say("mfault " + m.label + "\treturned " + status_name(status) +
          " (meant for device failures and plugin bugs; a bad call is INVALID_ARGUMENT or UNSUPPORTED): " +
          one_line(error.text()));
    } else if (error.text().empty()) {
      say("mfault " + m.label + "\treturned " + status_name(status) + " without a message");
    } else {
      say("mreject " + m.label);
    }
  }
}

}  // namespace

std::vector<TestCall> check_infer(const Operation& op, const PluginRegistry& registry,
                                  const std::vector<TestCall>& candidates, Report& report) {
  ChildOutcome child = run_in_child([&](const auto& say) { child_work(op, registry, candidates, say); }, 120);
  std::map<size_t, std::string> status;  // candidate -> "ok", "rejected MSG", "fault MSG"
  std::vector<std::string> accepted, rejected, faults;
  std::string last_started;
  bool nothing_to_change = false;
  size_t crashed_candidate = SIZE_MAX;  // the valid call running when the output stopped, if any
  std::istringstream lines(child.output);
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.find(' ');
    const std::string tag = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (tag == "start") {
      crashed_candidate = std::stoul(rest);
      last_started = "valid call " + candidates[crashed_candidate].label;
    } else if (tag == "ok" || tag == "rejected" || tag == "fault") {
      crashed_candidate = SIZE_MAX;
      const auto sp = rest.find(' ');
      status[std::stoul(rest.substr(0, sp))] = tag + (sp == std::string::npos ? "" : rest.substr(sp));
    } else if (tag == "mstart") {
      crashed_candidate = SIZE_MAX;
      last_started = "invalid call (" + rest + ")";
    } else if (tag == "mnone") {
      nothing_to_change = true;
    } else if (tag == "maccept") {
      accepted.push_back(rest);
    } else if (tag == "mreject") {
      rejected.push_back(rest);
    } else if (tag == "mfault") {
      const auto tab = rest.find('\t');
      faults.push_back(rest.substr(0, tab) + ": " + rest.substr(tab + 1));
    }
  }
  // A crash belongs to the call that was running: a valid one's to "infer (valid)".
  if (!child.completed) {
    if (crashed_candidate != SIZE_MAX) status[crashed_candidate] = "fault " + child.failure;
    else faults.push_back(last_started.empty() ? "the child process " + child.failure
                                               : last_started + ": " + child.failure);
  }

  // Valid calls: declared ones must all be accepted; derived ones keep the first rank that works.
  std::vector<TestCall> valid;
  std::vector<std::string> valid_faults;
  size_t chosen_rank = 0;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!candidates[i].declared && candidates[i].size_class == "odd" && status[i] == "ok") {
      chosen_rank = candidates[i].rank;
      break;
    }
  CheckResult valid_result{op.name(), "infer (valid)", Verdict::Pass, ""};
  for (size_t i = 0; i < candidates.size(); ++i) {
    const TestCall& c = candidates[i];
    const std::string s = status.count(i) ? status[i] : "not reached";
    valid_result.calls.push_back({{"call", c.label}, {"outcome", s}});
    if (c.declared) {
      if (s == "ok") valid.push_back(c);
      else valid_faults.push_back(c.label + ": " + (s.rfind("rejected", 0) == 0 ? "a declared test case was rejected:" + s.substr(8) : s));
    } else if (s.rfind("fault", 0) == 0 || s == "not reached") {
      valid_faults.push_back(c.label + ": " + (s == "not reached" ? s : s.substr(6)));
    } else if (s == "ok" && c.rank == chosen_rank) {
      valid.push_back(c);
    }
  }
  if (!valid_faults.empty()) {
    valid_result.verdict = Verdict::Fail;
    valid_result.detail = valid_faults.front() + (valid_faults.size() > 1 ? " (and " + std::to_string(valid_faults.size() - 1) + " more)" : "");
  } else if (valid.empty()) {
    valid_result.verdict = Verdict::Fail;
    valid_result.detail = "no call derived from the signature (arrays of rank 1 to 3) was accepted; declare test_cases";
    for (const auto& [i, s] : status)
      if (s.rfind("rejected", 0) == 0) {
        valid_result.detail += " (e.g. " + candidates[i].label + ":" + s.substr(8) + ")";
        break;
      }
  } else {
    valid_result.detail = std::to_string(valid.size()) + " calls accepted" +
                          (chosen_rank ? " (rank " + std::to_string(chosen_rank) + ")" : "");
  }
  report.add(std::move(valid_result));

  CheckResult invalid_result{op.name(), "infer (invalid)", Verdict::Pass, ""};
  for (const auto& a : accepted) invalid_result.calls.push_back({{"call", a}, {"outcome", "accepted"}});
  for (const auto& r : rejected) invalid_result.calls.push_back({{"call", r}, {"outcome", "rejected with a message"}});
  for (const auto& f : faults) invalid_result.calls.push_back({{"call", f}, {"outcome", "fault"}});
  if (!faults.empty()) {
    invalid_result.verdict = Verdict::Fail;
    invalid_result.detail = faults.front() + (faults.size() > 1 ? " (and " + std::to_string(faults.size() - 1) + " more)" : "");
  } else if (accepted.empty() && rejected.empty()) {
    invalid_result.verdict = Verdict::Skip;
    invalid_result.detail = nothing_to_change ? "nothing to make invalid: no input whose shape or dtype can change, no attribute"
                                              : "no valid call to start from";
  } else {
    invalid_result.detail = std::to_string(rejected.size()) + " rejected with a message, " +
                            std::to_string(accepted.size()) + " accepted with well-formed types";
  }
  report.add(std::move(invalid_result));
  return valid;
}

}  // namespace fugue::conformance
