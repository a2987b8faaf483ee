#include "conformance_suite.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include <spdlog/spdlog.h>

#include "io/atomic_file.h"
#include "conformance_report.h"
#include "descriptor_checks.h"
#include "device_checks.h"
#include "isolated_checks.h"
#include "errors.h"
#include "infer_checks.h"
#include "kind_checks.h"
#include "plugins/plugin_registry.h"
#include "test_calls.h"

namespace fugue::conformance {

namespace fs = std::filesystem;

namespace {

// The file of the plugin called `name`: libfugue_<name>.so in a folder of the search path.
fs::path find_plugin_file(const std::string& name) {
  if (name.find('/') != std::string::npos || (name.size() > 3 && name.substr(name.size() - 3) == ".so")) {
    if (!fs::exists(name)) throw UserError("conformance: no plugin file " + name);
    return name;
  }
  std::string searched;
  for (const auto& folder : PluginRegistry::default_search_path()) {
    fs::path candidate = folder / ("libfugue_" + name + ".so");
    if (fs::exists(candidate)) return candidate;
    searched += (searched.empty() ? "" : ", ") + folder.lexically_normal().string();
  }
  // A library whose table names itself differently: load the search path and look by name.
  PluginRegistry all;
  all.load_defaults();
  for (const auto& p : all.plugins())
    if (p->name == name) return p->file;
  throw UserError("conformance: no plugin named '" + name + "' (looked for libfugue_" + name + ".so in " +
                  (searched.empty() ? "no folder" : searched) +
                  "); give a plugin file, or add its folder to FUGUE_PLUGIN_PATH");
}

// The plugin's names (operations, kinds, formats, generators) that a plugin of the search path
// already has: wherever both are loaded, one of them is refused.
void check_unique_names(const PluginRegistry& registry, const LoadedPlugin& plugin, Report& report) {
  PluginRegistry others;
  others.load_defaults();
  const auto same_file = [&](const std::string& other) {
    std::error_code ec;
    return fs::equivalent(other, plugin.file, ec);
  };
  const auto owner = [](const LoadedPlugin& p) { return "plugin '" + p.name + "' (" + p.file + ")"; };
  std::vector<std::string> clashes;
  for (const Operation* op : registry.operations_of(plugin))
    if (auto other = others.find(op->name()); other && !same_file(other->plugin().file))
      clashes.push_back("operation '" + op->name() + "' is already registered by " + owner(other->plugin()));
  for (const Kind* kind : registry.kinds()) {
    if (kind->plugin() != &plugin) continue;
    auto other = others.find_kind(kind->name());
    if (other && (!other->plugin() || !same_file(other->plugin()->file)))
      clashes.push_back("kind '" + kind->name() + "' is already defined by " +
                        (other->plugin() ? owner(*other->plugin()) : std::string("the core")));
  }
  for (const auto& format : registry.formats()) {
    if (format->plugin() != &plugin) continue;
    for (const auto& other : others.formats())
      if (other->name() == format->name() && (!other->plugin() || !same_file(other->plugin()->file)))
        clashes.push_back("format '" + format->name() + "' is already defined by " +
                          (other->plugin() ? owner(*other->plugin()) : std::string("the core")));
  }
  for (const Generator* generator : registry.generators()) {
    if (generator->plugin() != &plugin) continue;
    auto other = others.find_generator(generator->name());
    if (other && (!other->plugin() || !same_file(other->plugin()->file)))
      clashes.push_back("generator '" + generator->name() + "' is already defined by " +
                        (other->plugin() ? owner(*other->plugin()) : std::string("the core")));
  }
  if (clashes.empty()) {
    report.add("", "unique names", Verdict::Pass, "no operation, kind, format or generator of the search path's plugins "
                                                  "has the name of one of its own");
    return;
  }
  std::string detail = clashes.front() + (clashes.size() > 1 ? " (and " + std::to_string(clashes.size() - 1) + " more)" : "");
  report.add("", "unique names", Verdict::Fail, detail + ": wherever both are loaded, one of them is refused");
}

}  // namespace

int run_conformance(const SuiteOptions& options) {
  const fs::path file = find_plugin_file(options.plugin);
  const uint64_t seed = options.seed ? options.seed : (std::random_device{}() & 0x7fffffffu);
  std::printf("conformance of %s (seed %llu; repeat with --seed)\n", file.c_str(), static_cast<unsigned long long>(seed));
  Report report(stdout);

  // The plugin under test first, so that its operations win over a bundled copy of the same names;
  // then the search path, for the neighbours of fusion checks. Refusals of those are not its fault.
  PluginRegistry registry;
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);  // a refusal is reported as a FAIL below, not as a warning
  const bool loaded = registry.load_probed(file);  // a plugin that crashes while loading FAILs the handshake
  registry.load_defaults();
  spdlog::set_level(level);

  nlohmann::json header = {{"plugin_file", file.string()}, {"seed", seed}};
  auto finish = [&](const std::string& name, size_t operations) {
    report.print_summary(name, operations);
    if (!options.report_file.empty())
      write_file_atomically(options.report_file, [&](std::ostream& out) { out << report.to_json(header).dump(2) << "\n"; });
    return report.failed() ? 1 : 0;
  };
  if (!loaded) {
    std::string reason = "refused";
    for (const auto& r : registry.refusals())
      if (fs::path(r.file) == file) reason = r.reason;
    report.add("", "abi handshake", Verdict::Fail, reason);
    return finish(file.filename().string(), 0);
  }
  const LoadedPlugin* plugin = nullptr;
  for (const auto& p : registry.plugins())
    if (fs::weakly_canonical(p->file) == fs::weakly_canonical(file)) plugin = p.get();
  if (!plugin) throw UserError("conformance: " + file.string() + " loaded, but is not among the registry's plugins");
  header["plugin"] = plugin->name;
  header["version"] = plugin->version;
  header["abi"] = std::to_string(plugin->abi_major) + "." + std::to_string(plugin->abi_minor);

  const auto all_ops = registry.operations_of(*plugin);
  for (const auto& wanted : options.ops)
    if (std::none_of(all_ops.begin(), all_ops.end(), [&](const Operation* op) { return op->name() == wanted; }))
      throw UserError("conformance: --op " + wanted + ": plugin '" + plugin->name + "' has no operation of that name");
  std::vector<const Operation*> ops = check_descriptors(registry, *plugin, options.ops, report);
  if (options.ops.empty()) check_kinds(registry, *plugin, seed, report);  // before any OpenCL (forks)

  // Host-only checks in child processes, before this process touches OpenCL (fork after is unsafe).
  std::vector<std::pair<const Operation*, std::vector<TestCall>>> runnable;
  for (const Operation* op : ops) {
    std::vector<TestCall> candidates;
    if (!candidate_calls_in_child(*op, registry, seed, report, candidates)) continue;
    runnable.emplace_back(op, check_infer(*op, registry, candidates, report));
  }

  {
    const auto level = spdlog::get_level();
    spdlog::set_level(spdlog::level::err);  // the search path's refusals are not the plugin's
    check_unique_names(registry, *plugin, report);
    spdlog::set_level(level);
  }

  // The device checks too: this process never touches OpenCL, so each child is forked from a clean
  // process and opens the device itself.
  for (auto& [op, calls] : runnable) {
    if (calls.empty()) {
      report.add(op->name(), "device", Verdict::Skip, "no valid call to run (see infer)");
      continue;
    }
    const std::string device = check_in_child(*op, calls, registry, options.device,
                                              std::chrono::seconds(options.timeout_seconds), report);
    if (!device.empty()) header["device"] = device;
  }
  return finish(plugin->name, ops.size());
}

}  // namespace fugue::conformance
