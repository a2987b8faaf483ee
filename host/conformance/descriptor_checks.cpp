#include "descriptor_checks.h"

#include <sstream>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>

namespace fugue::conformance {

namespace {

bool identifier(const char* s) {
  if (!s || !*s || !(std::isalpha(static_cast<unsigned char>(*s)) || *s == '_')) return false;
  for (; *s; ++s)
    if (!(std::isalnum(static_cast<unsigned char>(*s)) || *s == '_')) return false;
  return true;
}

constexpr uint32_t kAllKinds = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY) | FUGUE_KIND_BIT(FUGUE_KIND_SCALAR) |
                               FUGUE_KIND_BIT(FUGUE_KIND_CONST) | FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN) |
                               FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION);

// Problems of one operation's descriptor, each a short sentence.
std::vector<std::string> problems_of(const Operation& op, const PluginRegistry& registry) {
  std::vector<std::string> problems;
  const fugue_op_desc& d = op.desc();
  auto problem = [&](const std::string& text) { problems.push_back(text); };
  const std::string name = op.name();
  const auto dot = name.find('.');
  if (dot == std::string::npos || !identifier(name.substr(0, dot).c_str()) || !identifier(name.substr(dot + 1).c_str()))
    problem("name '" + name + "' is not of the form family.op (identifiers)");
  if (!d.doc || !*d.doc) problem("no doc string");
  if (d.struct_size < FUGUE_SIZE_UP_TO(fugue_op_desc, test_cases)) problem("struct_size below ABI 2.0's");
  if (d.num_operands == 0 || d.num_operands > kMaxOperands)
    problem(std::to_string(d.num_operands) + " operands (1 to " + std::to_string(kMaxOperands) + " allowed)");
  if (op.outputs().empty()) problem("no OUT or INOUT operand");
  std::set<std::string> names;
  for (uint32_t i = 0; i < op.operands().size(); ++i) {
    const fugue_operand_desc& o = *op.operands()[i];
    const std::string where = "operand " + std::to_string(i) + " ('" + (o.name ? o.name : "") + "')";
    if (o.struct_size < FUGUE_SIZE_UP_TO(fugue_operand_desc, plugin_kinds)) problem(where + ": struct_size below ABI 2.0's");
    if (!identifier(o.name)) problem(where + ": name is not an identifier");
    else if (!names.insert(o.name).second) problem(where + ": name used twice");
    if (o.role != FUGUE_ROLE_IN && o.role != FUGUE_ROLE_OUT && o.role != FUGUE_ROLE_INOUT)
      problem(where + ": role is none of IN, OUT, INOUT");
    if (!o.kinds || (o.kinds & ~kAllKinds)) problem(where + ": kinds mask empty or with unknown bits");
    if (!o.dtypes || (o.dtypes & ~static_cast<uint32_t>(FUGUE_DTYPES_ALL)))
      problem(where + ": dtypes mask empty or with unknown bits");
    if (o.role != FUGUE_ROLE_IN && (o.kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST)))
      problem(where + ": a written operand cannot be a const");
    if (o.role != FUGUE_ROLE_IN && (o.kinds & FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION)))
      problem(where + ": a written operand cannot be a function");
    if (o.role != FUGUE_ROLE_IN && o.plugin_kinds) {
      std::istringstream names(o.plugin_kinds);
      for (std::string kind_name; names >> kind_name;)
        if (auto kind = registry.find_kind(kind_name); kind && !kind->storage())
          problem(where + ": a written operand cannot take kind '" + kind_name + "', which is known when kernels are "
                          "generated (a kind without storage)");
    }
  }
  for (uint32_t a = 0; a < op.attrs().size(); ++a) {
    const fugue_attr_desc& at = *op.attrs()[a];
    const std::string where = "attribute " + std::to_string(a) + " ('" + (at.name ? at.name : "") + "')";
    if (!identifier(at.name)) problem(where + ": name is not an identifier");
    else if (!names.insert(at.name).second) problem(where + ": name used twice (operands and attributes share names)");
    if (at.type < FUGUE_ATTR_NUMBER || at.type > FUGUE_ATTR_BOOL) problem(where + ": unknown type");
    if ((at.type == FUGUE_ATTR_NUMBER || at.type == FUGUE_ATTR_INT) && !std::isfinite(at.default_number))
      problem(where + ": default is not finite");
  }
  if (!d.infer) problem("no infer function");
  if (!d.plan) problem("no plan function");
  if (!d.cost) problem("no cost function");
  if (!d.reference) problem("no reference function");
  if (!d.emit && !d.execute) problem("neither emit nor execute");
  if (!(d.tolerance_f32 >= 0 && d.tolerance_f32 < 1) || !(d.tolerance_f64 >= 0 && d.tolerance_f64 < 1))
    problem("tolerances must lie in [0, 1) (relative error bounds)");
  if (!(std::isfinite(d.test_low) && std::isfinite(d.test_high) && d.test_low <= d.test_high))
    problem("test domain [test_low, test_high] is not a finite interval");
  if ((op.traits() & FUGUE_OP_IDENTITY) &&
      (op.operands().size() != 2 || op.inputs().size() != 1 || op.outputs().size() != 1))
    problem("IDENTITY trait on an operation without exactly one IN and one OUT operand");
  if (op.traits() & ~(FUGUE_OP_IDENTITY | FUGUE_OP_UNORDERED | FUGUE_OP_RUNTIME_EXTENTS | FUGUE_OP_RUNTIME_COUNTS))
    problem("traits with unknown bits");
  return problems;
}

}  // namespace

std::vector<const Operation*> check_descriptors(const PluginRegistry& registry, const LoadedPlugin& plugin,
                                                const std::vector<std::string>& only, Report& report) {
  const fugue_plugin& table = *plugin.table;
  std::string version = std::to_string(table.abi_major) + "." + std::to_string(table.abi_minor);
  std::vector<std::string> plugin_problems;
  if (!table.version || !*table.version) plugin_problems.push_back("no version string");
  if (table.num_ops == 0) plugin_problems.push_back("no operations");
  if (table.abi_minor > FUGUE_ABI_VERSION_MINOR)
    plugin_problems.push_back("built for ABI " + version + ", newer than this core's; fields it relies on are ignored");
  std::string detail = "ABI " + version + " (core " + std::to_string(FUGUE_ABI_VERSION_MAJOR) + "." +
                       std::to_string(FUGUE_ABI_VERSION_MINOR) + "), " + std::to_string(table.num_ops) +
                       " operations, names unique";
  for (const auto& p : plugin_problems) detail += "; " + p;
  report.add("", "abi handshake", plugin_problems.empty() ? Verdict::Pass : Verdict::Fail, detail);

  std::vector<const Operation*> sound;
  auto ops = registry.operations_of(plugin);
  for (const Operation* op : ops) {
    if (!only.empty() && std::find(only.begin(), only.end(), op->name()) == only.end()) continue;
    auto problems = problems_of(*op, registry);
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
    if (problems.empty()) {
      text = std::to_string(op->inputs().size()) + " in, " + std::to_string(op->outputs().size()) + " out, " +
             std::to_string(op->attrs().size()) + " attributes" +
             (op->test_cases().empty() ? ", calls derived from the signature" : ", declares test_cases");
      sound.push_back(op);
    }
    report.add(op->name(), "descriptor", problems.empty() ? Verdict::Pass : Verdict::Fail, text);
  }
  return sound;
}

}  // namespace fugue::conformance
