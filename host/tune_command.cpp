#include "tune_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "benchmark.h"
#include "errors.h"
#include "io/atomic_file.h"
#include "load/program_loader.h"
#include "plugins/plugin_registry.h"

namespace fugue {

namespace fs = std::filesystem;

namespace {

std::string tuner_names(const PluginRegistry& registry) {
  std::string names;
  for (const Tuner* t : registry.tuners()) names += (names.empty() ? "" : ", ") + t->name();
  return names.empty() ? "none" : names;
}

}  // namespace

int run_tune(const TuneOptions& o) {
  PluginRegistry registry;
  std::vector<fs::path> files(o.plugins.begin(), o.plugins.end());
  registry.load_defaults(files);
  if (o.tuner.empty()) {
    for (const Tuner* t : registry.tuners()) std::printf("%-10s %s (plugin %s)\n", t->name().c_str(), t->doc().c_str(), t->plugin()->name.c_str());
    if (registry.tuners().empty()) std::printf("no loaded plugin has a tuner\n");
    return 0;
  }
  const Tuner* tuner = registry.find_tuner(o.tuner);
  if (!tuner) throw UserError("tune " + o.tuner + ": no loaded plugin has a tuner of that name (the tuners: " + tuner_names(registry) + ")");
  Session session(o.device, true, false);
  const DeviceInfo& info = session.device.info;
  if (info.tuning_folder.empty())
    throw UserError("tune " + o.tuner + ": no cache folder to keep the table in: set FUGUE_CACHE_DIR, XDG_CACHE_HOME or HOME");
  // A quick run checks that tuning works: its table is kept beside the real one, which plugins read.
  const fs::path file = fs::path(info.tuning_folder) / (o.tuner + (o.quick ? ".quick.json" : ".json"));
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error)
    throw UserError("tune " + o.tuner + ": cannot make the tuning folder " + file.parent_path().string() + " (" + error.message() +
                    "): set FUGUE_CACHE_DIR to a folder that can be written");
  check_file_writable(file);  // before minutes of measuring, not after
  const fugue_device_desc device = info.description();
  const std::vector<TuningProgram> programs = tuner->programs(device, o.quick);
  std::printf("tuning %s on %s (%s): %zu programs, %d repetitions each\n", o.tuner.c_str(), info.name.c_str(), info.id().c_str(),
              programs.size(), o.repeat);
  LoadOptions load;
  load.device = std::make_shared<const DeviceInfo>(info);
  nlohmann::json measurements = nlohmann::json::array();
  for (const TuningProgram& p : programs) {
    const std::string where = "tuner " + o.tuner + ": program '" + p.label + "'";
    Program program = [&] {
      try {
        return parse_program(p.program, where, registry, load);
      } catch (const UserError& e) {  // the plugin's program, not the user's: a fault of the plugin
        throw DeviceError("plugin '" + tuner->plugin()->name + "': " + e.what());
      }
    }();
    Executor executor(program, session.device, session.cache, session.profiler, PlanOptions{});
    {
      BuildProgress progress;
      executor.prepare(std::ref(progress));
    }
    const RunTime t = median_run(time_runs(executor, session, o.repeat));
    std::printf("  %-24s %10.4f ms %9.1f GB/s %9.1f GFLOP/s\n", p.label.c_str(), t.seconds * 1e3, t.seconds > 0 ? t.bytes / t.seconds / 1e9 : 0.0,
                t.seconds > 0 ? t.flops / t.seconds / 1e9 : 0.0);
    std::fflush(stdout);
    measurements.push_back({{"label", p.label}, {"seconds", t.seconds}, {"bytes", t.bytes}, {"flops", t.flops}});
  }
  nlohmann::json table = tuner->table(device, measurements);
  write_file_atomically(file, [&](std::ostream& out) { out << table.dump(2) << "\n"; });
  std::printf("wrote %s\n", file.string().c_str());
  return 0;
}

}  // namespace fugue
