// main.cpp: the `fugue` executable: run, validate, explain, bench, tune, conformance, devices, plugins.
// Exit codes: 0 success, 2 a bad program, input or option, 1 a device or internal failure.
#include <algorithm>
#include <chrono>
#include <unistd.h>
#include <cstdio>
#include <functional>
#include <memory>
#include <filesystem>
#include <iostream>
#include <optional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "conformance_suite.h"
#include "device/device_manager.h"
#include "errors.h"
#include "runtime/executor.h"
#include "io/atomic_file.h"
#include "io/output_files.h"
#include "passes/launch.h"
#include "passes/lower.h"
#include "passes/plan_report.h"
#include "plugins/child_process.h"
#include "plugins/plugin_registry.h"
#include "device/device_description.h"
#include "device/program_cache.h"
#include "load/program_loader.h"
#include "runtime/reference_executor.h"
#include "benchmark.h"
#include "several_devices.h"
#ifdef FUGUE_WITH_MPI
#include "ranks.h"
#endif
#include "timing_report.h"
#include "tune_command.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

struct Options {
  std::string program;
  std::string device;
  std::string out = ".";
  std::vector<std::string> sets;
  std::vector<std::string> plugins;
  std::string profile;
  std::string json;
  std::string device_file;  // explain: a device description instead of a device
  bool compile = false;     // explain: build the kernels too
  bool passes = false;      // explain: the plan after every pass
  bool stats = false;
  bool verbose = false;
  bool no_disk_cache = false;
  bool reference = false;
  bool no_fuse = false;
  bool no_swap = false;
  bool mpi = false;         // run: one rank of mpirun's, the program split over the ranks
  int repeat = 10;
  conformance::SuiteOptions conformance;
};

// `device`: the device the program will run on (formats and generators may choose for it), or none.
LoadOptions load_options(const Options& o, std::shared_ptr<const DeviceInfo> device = nullptr) {
  LoadOptions lo;
  lo.device = std::move(device);
  for (const auto& s : o.sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError("--set " + s + ": expected NAME=VALUE");
    lo.overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return lo;
}

PluginRegistry load_plugins(const Options& o) {
  PluginRegistry registry;
  std::vector<fs::path> files(o.plugins.begin(), o.plugins.end());
  registry.load_defaults(files);
  for (const auto& f : o.plugins)
    for (const auto& r : registry.refusals())
      if (r.file == f) throw UserError("--plugin " + f + ": " + r.reason);
  return registry;
}

PlanOptions plan_options(const Options& o) {
  PlanOptions p;
  p.fuse = !o.no_fuse;
  p.eliminate_copies = !o.no_swap;
  return p;
}

// The device a run, a benchmark or an explanation will use, for the loader.
std::shared_ptr<const DeviceInfo> device_for_loading(const Options& o) {
  return std::make_shared<const DeviceInfo>(select_devices(Session::devices(), device_spec(o.device)).front());
}

int cmd_devices(const Options& o) {
  auto devices = list_devices();
  const DeviceInfo& chosen = select_device(devices, device_spec(o.device));
  if (!o.json.empty()) {  // the chosen device's description, for `explain --device-file`
    const std::string text = describe_device(chosen).dump(2) + "\n";
    if (o.json == "-") std::printf("%s", text.c_str());
    else write_file_atomically(o.json, [&](std::ostream& out) { out << text; });
    return 0;
  }
  std::printf("%-5s %-5s %-40s %-28s %8s %9s %s\n", "id", "type", "device", "platform", "units", "memory", "");
  for (const auto& d : devices)
    std::printf("%-5s %-5s %-40s %-28s %8u %7.1fGB %s\n", d.id().c_str(), d.type_name().c_str(), d.name.c_str(),
                d.platform_name.c_str(), d.compute_units, static_cast<double>(d.global_memory) / 1e9,
                &d == &chosen ? "(default)" : "");
  return 0;
}

int cmd_plugins(const Options& o) {
  PluginRegistry registry;
  std::vector<fs::path> files(o.plugins.begin(), o.plugins.end());
  registry.load_defaults(files);
  std::printf("search path:");
  for (const auto& f : PluginRegistry::default_search_path()) std::printf(" %s", f.lexically_normal().c_str());
  std::printf("\n");
  // Kinds, formats and generators, each under the core or the plugin that adds it.
  const auto extras = [&](const LoadedPlugin* owner) {
    for (const Kind* k : registry.kinds())
      if (k->plugin() == owner) {
        std::string parts;  // a kind with storage: what its values are made of
        for (const auto& part : k->parts()) parts += (parts.empty() ? " (parts: " : ", ") + part;
        std::printf("  kind %-11s %s%s\n", k->name().c_str(), k->doc().c_str(), parts.empty() ? "" : (parts + ")").c_str());
      }
    for (const auto& f : registry.formats()) {
      if (f->plugin() != owner) continue;
      std::string extensions;
      for (const auto& e : f->extensions()) extensions += (extensions.empty() ? "" : " ") + e;
      const char* how = f->reads() && f->writes() ? "reads, writes" : f->reads() ? "reads" : "writes";
      std::printf("  format %-9s %s (%s) %s\n", f->name().c_str(), extensions.c_str(), how, f->doc().c_str());
    }
    for (const Generator* g : registry.generators())
      if (g->plugin() == owner) std::printf("  generator %-6s %s\n", g->name().c_str(), g->doc().c_str());
    for (const Tuner* t : registry.tuners())
      if (t->plugin() == owner) std::printf("  tuner %-10s %s (fugue tune %s)\n", t->name().c_str(), t->doc().c_str(), t->name().c_str());
  };
  std::printf("\nthe core\n");
  extras(nullptr);
  for (const auto& p : registry.plugins()) {
    std::printf("\n%s %s (ABI %u.%u) %s\n  %s\n", p->name.c_str(), p->version.c_str(), p->abi_major, p->abi_minor,
                p->file.c_str(), p->description.c_str());
    extras(p.get());
    for (const auto* op : registry.operations_of(*p)) {
      std::string ins, outs;
      for (const auto* d : op->operands()) {  // an in-place operand is in both lists, as in programs
        if (d->role != FUGUE_ROLE_IN) outs += std::string(", ") + d->name;
        if (d->role != FUGUE_ROLE_OUT) ins += std::string(", ") + d->name;
      }
      std::string sig = outs.substr(outs.empty() ? 0 : 2) + " = (" + ins.substr(ins.empty() ? 0 : 2) + ")";
      std::printf("  %-16s %-20s %s\n", op->name().c_str(), sig.c_str(), op->doc().c_str());
    }
  }
  for (const auto& r : registry.refusals()) std::printf("\nrefused %s: %s\n", r.file.c_str(), r.reason.c_str());
  if (registry.plugins().empty()) std::printf("\nno plugins loaded: set FUGUE_PLUGIN_PATH or pass --plugin FILE\n");
  return 0;
}

int cmd_validate(const Options& o) {
  PluginRegistry registry = load_plugins(o);
  Program program = load_program(o.program, registry, load_options(o));
  size_t ops = 0;
  std::function<void(const std::vector<Statement>&)> count = [&](const std::vector<Statement>& body) {
    for (const auto& st : body) {
      ops += st.kind == Statement::Kind::Op;
      count(st.body);
      count(st.else_body);
    }
  };
  count(program.body);
  std::printf("%s: valid (%zu symbols, %zu operation calls, %zu outputs)\n", o.program.c_str(),
              program.symbols.size(), ops, program.outputs.size());
  return 0;
}

// The options fugue-run.json records (io/output_files.h).
nlohmann::ordered_json run_options(const Options& o) {
  return {{"out", o.out}, {"device", o.device}, {"set", o.sets}, {"plugin", o.plugins}, {"profile", o.profile},
          {"stats", o.stats}, {"no_disk_cache", o.no_disk_cache}, {"reference", o.reference},
          {"no_fuse", o.no_fuse}, {"no_swap", o.no_swap}, {"mpi", o.mpi}};
}

// A one-device run's --stats: its kernels and the program cache's counts.
void print_stats(Session& session) {
  const auto& stats = session.cache.stats();
  std::printf("%s", stats_table(summarize(session.profiler.collect())).c_str());
  if (session.cache.folder().empty())
    std::printf("programs: %d compiled, no disk cache, %d reused in memory\n", stats.compiles, stats.memory_hits);
  else
    std::printf("programs: %d compiled, %d from the disk cache (%s), %d reused in memory\n", stats.compiles,
                stats.disk_hits, session.cache.folder().c_str(), stats.memory_hits);
}

// run --stats: how often the devices gathered rows, and how many crossed between them each time.
void print_gathers(const Placement& placement, const GatherWindows& windows, int64_t gathers) {
  std::printf("rows gathered %lld times", static_cast<long long>(gathers));
  for (const auto& [name, w] : windows)
    std::printf("; %lld of '%s' cross between devices a gather", static_cast<long long>(crossing_rows(placement, w)), name.c_str());
  std::printf("\n");
}

#ifdef FUGUE_WITH_MPI
// What `run --mpi` and `bench --mpi` set up alike in each process mpirun starts: the rank takes one
// device (its place among the host's ranks picks it from --device's list), reads the program, and
// places it over the ranks by their devices' weights.
struct RankPlacement {
  PluginRegistry registry;
  std::shared_ptr<const DeviceInfo> device;
  Program program;
  Session session;
  Placement placement;
  std::vector<DeviceInfo> devices;  // each rank's, named for the account: "1:0 (rank 1) NVIDIA H200"
  std::string account;              // the placement, each rank's device named: the same text on every rank

  RankPlacement(const Ranks& ranks, const Options& o, bool profile)
      : registry(load_plugins(o)),
        device(rank_device(ranks, o)),
        program(load_program(o.program, registry, load_options(o, device))),
        session(*device, profile, o.no_disk_cache),
        placement(place(ranks, o)),
        devices(rank_devices(ranks)),
        account(describe(ranks)) {}

 private:
  static std::shared_ptr<const DeviceInfo> rank_device(const Ranks& ranks, const Options& o) {
    const std::vector<DeviceInfo> chosen = select_devices(Session::devices(), device_spec(o.device));
    return std::make_shared<const DeviceInfo>(chosen[static_cast<size_t>(ranks.local_rank()) % chosen.size()]);
  }
  // Ranks whose devices are of one model weigh the same (their mean): one throughput, not samples of a clock.
  Placement place(const Ranks& ranks, const Options& o) {
    std::vector<double> weights = ranks.gather_all(measured_weight(session.device));
    const std::vector<std::string> models = ranks.gather_texts(device->platform_name + "|" + device->name + "|" +
                                                               device->driver_version + "|" +
                                                               std::to_string(device->compute_units));
    if (std::any_of(weights.begin(), weights.end(), [](double w) { return !(w > 0); })) weights.assign(weights.size(), 1.0);
    const std::vector<double> measured = weights;
    for (size_t d = 0; d < weights.size(); ++d) {
      double sum = 0;
      int same = 0;
      for (size_t e = 0; e < weights.size(); ++e)
        if (models[e] == models[d]) sum += measured[e], ++same;
      weights[d] = sum / same;
    }
    const LaunchTuning tuning = tuning_for(*device);
    return place_program(program, lower(program, *device, plan_options(o)), weights, static_cast<double>(tuning.split_bytes),
                         tuning.halo_depth, tuning.gather_rows);
  }
  std::string describe(const Ranks& ranks) const {
    const std::string text = describe_placement(placement, devices, "through MPI");
    if (!ranks.all_same(text))
      throw DeviceError("the ranks place the program differently (their devices plan it otherwise); here: " + text);
    return text;
  }
  // Collective: every rank's device.
  std::vector<DeviceInfo> rank_devices(const Ranks& ranks) const {
    std::vector<DeviceInfo> devices;
    int r = 0;
    for (const std::string& text : ranks.gather_texts(std::to_string(device->platform_index) + " " +
                                                      std::to_string(device->device_index) + " " + device->name)) {
      DeviceInfo info = *device;
      std::istringstream in(text);
      in >> info.platform_index >> info.device_index;
      std::getline(in >> std::ws, info.name);
      info.name = "(rank " + std::to_string(r++) + ") " + info.name;
      devices.push_back(info);
    }
    return devices;
  }
};

// This rank's part of the split, planned and built; none where the program is not split or every
// rank declines it (its gathers would move too much, or the ranks plan their rows otherwise): rank 0
// then runs it whole, having said why (on stdout where `say` is set, else in the log).
std::unique_ptr<RankRun> split_on_ranks(const Ranks& ranks, RankPlacement& p, const Options& o, bool say) {
  if (!p.placement.split) return nullptr;
  try {
    auto part = std::make_unique<RankRun>(ranks, p.program, p.placement,
                                          DeviceSlot{&p.session.device, &p.session.cache, &p.session.profiler},
                                          [&] { return load_program(o.program, p.registry, load_options(o, p.device)); },
                                          plan_options(o));
    part->prepare();
    return part;
  } catch (const SplitDeclined& e) {  // collective: every rank declines alike
    if (ranks.rank() == 0 && say) std::printf("not split after all: %s; it runs on rank 0 alone\n", e.what());
    else if (ranks.rank() == 0) spdlog::info("not split after all: {}; it runs on rank 0 alone", e.what());
    return nullptr;
  }
}

// Runs `body` on every rank; a failure on any rank is printed with its number and stops all of them
// (MPI_Abort with fugue's exit code), so that none waits for it in a collective.
int on_ranks(const std::function<int(const Ranks&)>& body) {
  Ranks ranks;
  try {
    return body(ranks);
  } catch (const std::exception& e) {
    const int code = dynamic_cast<const UserError*>(&e) ? 2 : 1;
    if (ranks.size() == 1) throw;
    const cl::Error* cl_error = dynamic_cast<const cl::Error*>(&e);
    spdlog::error("rank {} of {}: {}", ranks.rank(), ranks.size(),
                  cl_error ? cl_error_message(e.what(), cl_error->err()) : std::string(e.what()));
    ranks.abort(code);
  }
}

// `fugue run --mpi`: the program split over the ranks (RankRun), or run whole on rank 0.
int run_on_ranks(const Options& o) {
  return on_ranks([&](const Ranks& ranks) {
    RankPlacement p(ranks, o, o.stats);
    spdlog::info("{}", p.account);
    OutputRun record;
    record.options = run_options(o);
    const std::unique_ptr<RankRun> part = split_on_ranks(ranks, p, o, o.stats);
    if (!part) {  // rank 0 runs it whole
      if (ranks.rank() != 0) return 0;
      Executor executor(p.program, p.session.device, p.session.cache, p.session.profiler, plan_options(o));
      executor.prepare();
      executor.initialize();
      executor.run();
      write_output_files(p.program, o.out, [&](const std::string& symbol) { return executor.read(symbol); }, record);
      if (o.stats) {
        std::printf("%s", p.account.c_str());
        print_stats(p.session);
      }
      return 0;
    }
    part->initialize();
    part->run();
    std::map<std::string, HostArray> values;  // gathered by every rank, in the same order
    for (const auto& output : p.program.outputs)
      if (!values.count(output.symbol)) values[output.symbol] = part->gather(output.symbol);
    if (ranks.rank() != 0) return 0;
    write_output_files(p.program, o.out, [&](const std::string& symbol) { return values.at(symbol); }, record);
    if (o.stats) {
      const Placement& placement = p.placement;
      std::printf("%s", p.account.c_str());
      std::printf("rank 0, device %s:\n", p.session.device.info.name.c_str());
      print_stats(p.session);
      if (placement.ghost_rows > 0)
        std::printf("neighbours' rows traded %lld times\n", static_cast<long long>(part->trades()));
      if (!placement.combined.empty())
        std::printf("reductions combined %lld times\n", static_cast<long long>(part->combinations()));
      if (!placement.gathered.empty()) print_gathers(placement, part->windows(), part->gathers());
    }
    return 0;
  });
}
#endif

// `fugue run` on several devices, the program split by rows.
int run_split(const Options& o, const PluginRegistry& registry, const Program& program, const Placement& placement,
              SeveralDevices& sessions, OutputRun& record) {
  const auto first = std::make_shared<const DeviceInfo>(sessions.sessions.front()->device.info);
  SplitRun split(program, placement, sessions.slots(),
                 [&] { return load_program(o.program, registry, load_options(o, first)); }, plan_options(o));
  split.prepare();
  split.initialize();
  split.run();
  write_output_files(program, o.out, [&](const std::string& symbol) { return split.read(symbol); }, record);
  if (o.stats) {
    std::printf("%s", describe_placement(placement, sessions.infos()).c_str());
    for (size_t d = 0; d < split.devices(); ++d) {
      Session& s = *sessions.sessions[d];
      const auto& stats = s.cache.stats();
      std::printf("device %s %s:\n%s", s.device.info.id().c_str(), s.device.info.name.c_str(),
                  stats_table(summarize(s.profiler.collect())).c_str());
      std::printf("programs: %d compiled, %d from the disk cache, %d reused in memory\n", stats.compiles,
                  stats.disk_hits, stats.memory_hits);
    }
    if (placement.ghost_rows > 0)
      std::printf("neighbours' rows traded %lld times\n", static_cast<long long>(split.trades()));
    if (!placement.combined.empty())
      std::printf("reductions combined %lld times\n", static_cast<long long>(split.combinations()));
    if (!placement.gathered.empty()) print_gathers(placement, split.windows(), split.gathers());
  }
  return 0;
}

int cmd_run(const Options& o) {
  if (o.mpi) {
    if (o.reference || !o.profile.empty())
      throw UserError(std::string("--mpi runs on the ranks' devices; ") + (o.reference ? "--reference" : "--profile") +
                      " runs one process");
#ifdef FUGUE_WITH_MPI
    return run_on_ranks(o);
#else
    throw UserError("--mpi: this fugue was built without MPI (install libopenmpi-dev and build again)");
#endif
  }
  PluginRegistry registry = load_plugins(o);
  Program program = load_program(o.program, registry, load_options(o, o.reference ? nullptr : device_for_loading(o)));
  OutputRun record;
  record.options = run_options(o);
  if (o.reference) {
    ReferenceExecutor reference(program);
    reference.run();
    write_output_files(program, o.out, [&](const std::string& symbol) { return reference.value(symbol); }, record);
    return 0;
  }
  // A --profile that cannot be written stops the run before it starts (unless its folder is yet to
  // be made, as --out is: then it is written before the first output replaces an older one).
  if (!o.profile.empty() && fs::is_directory(fs::absolute(o.profile).parent_path())) check_file_writable(o.profile);
  const std::vector<DeviceInfo> chosen = select_devices(Session::devices(), device_spec(o.device));
  SeveralDevices sessions(chosen, !o.profile.empty() || o.stats, o.no_disk_cache);
  if (chosen.size() > 1) {
    if (!o.profile.empty()) throw UserError("--profile records one device; name one with --device");
    const Placement placement = place_on(program, sessions, plan_options(o));
    spdlog::info("{}", describe_placement(placement, chosen));
    if (placement.split) try {
        return run_split(o, registry, program, placement, sessions, record);
      } catch (const SplitDeclined& e) {
        const std::string why = std::string("not split after all: ") + e.what() + "; it runs on " + chosen.front().id() + " alone";
        if (o.stats) std::printf("%s\n", why.c_str());
        else spdlog::info("{}", why);
      }
  }
  Session& session = *sessions.sessions.front();
  Executor executor(program, session.device, session.cache, session.profiler, plan_options(o));
  {
    BuildProgress progress;  // its line ends when the build does
    executor.prepare(std::ref(progress));
  }
  executor.initialize();
  executor.run();
  // The trace is written once every output is staged and before any replaces an older file, so a
  // --profile that cannot be written leaves the outputs as they were.
  if (!o.profile.empty()) record.before_commit = [&] { session.profiler.write_chrome_trace(o.profile); };
  write_output_files(program, o.out, [&](const std::string& symbol) { return executor.read(symbol); }, record);
  if (o.stats) print_stats(session);
  return 0;
}

// --passes: the plan after every pass that changed it, then the final plan.
PassObserver pass_printer(const Options& o, const Program& program) {
  if (!o.passes) return {};
  auto previous = std::make_shared<std::string>();
  return [previous, &program](const char* pass, const ExecutionPlan& plan) {
    std::string state = describe_plan_state(program, plan);
    if (state == *previous) {
      std::printf("== after %s: unchanged\n", pass);
      return;
    }
    std::printf("== after %s\n%s", pass, state.c_str());
    *previous = std::move(state);
  };
}

int cmd_explain(const Options& o) {
  std::optional<DeviceInfo> described;
  if (!o.device_file.empty()) {
    if (!o.device.empty())
      throw UserError("--device " + o.device + " and --device-file " + o.device_file +
                      ": give one, a device of this machine or the description of one");
    if (o.compile) throw UserError("--compile builds on a device of this machine; --device-file describes one that is not here");
    try {
      described = read_device_description(o.device_file);
    } catch (const UserError& e) {
      throw UserError("--device-file " + o.device_file + ": " + e.what());
    }
  }
  PluginRegistry registry = load_plugins(o);
  Program program = load_program(o.program, registry,
                                 load_options(o, described ? std::make_shared<const DeviceInfo>(*described) : device_for_loading(o)));
  if (o.compile) {  // what a run builds, the driver's limits on work-group sizes included
    Session session(select_devices(Session::devices(), device_spec(o.device)).front(), false, o.no_disk_cache);
    if (o.passes) lower(program, session.device.info, plan_options(o), pass_printer(o, program));
    Executor executor(program, session.device, session.cache, session.profiler, plan_options(o));
    {
      BuildProgress progress;  // its line ends when the build does
      executor.prepare(std::ref(progress));
    }
    std::printf("%s", explain_plan(program, executor, session.device.info).c_str());
    return 0;
  }
  // Planned and generated, nothing built: no OpenCL at all for a described device.
  const std::vector<DeviceInfo> chosen =
      described ? std::vector<DeviceInfo>{*described} : select_devices(Session::devices(), device_spec(o.device));
  const DeviceInfo& device = chosen.front();
  const ExecutionPlan plan = lower(program, device, plan_options(o), pass_printer(o, program));
  std::printf("%s", explain_plan(program, plan, device).c_str());
  if (chosen.size() > 1) {  // the devices are opened to measure their weights; nothing is built
    SeveralDevices sessions(chosen, false, o.no_disk_cache);
    std::printf("\n%s", describe_placement(place_on(program, sessions, plan_options(o)), chosen).c_str());
  }
  return 0;
}

// One device's or rank's part of a split benchmark.
struct BenchPart {
  std::string device, id;
  int64_t rows = 0;
  double kernel_seconds = 0;  // its kernels' device time in the last repetition
};

// A split benchmark's figures: the wall time of each repetition (`clock` says whose), and each part's
// rows and kernel time; with --json, the same as JSON.
void print_split_bench(const Options& o, const std::string& over, const std::string& clock, std::vector<double> wall,
                       const Placement& placement, int64_t trades, const std::vector<BenchPart>& parts) {
  std::FILE* text = o.json == "-" ? stderr : stdout;  // with --json -, stdout holds the JSON alone
  std::sort(wall.begin(), wall.end());
  const double median = wall[wall.size() / 2];
  std::fprintf(text, "%s on %s, %d repetitions (%s)\n", o.program.c_str(), over.c_str(), o.repeat, clock.c_str());
  std::fprintf(text, "wall ms: median %.4f, min %.4f, max %.4f\n", median * 1e3, wall.front() * 1e3, wall.back() * 1e3);
  if (placement.ghost_rows > 0)
    std::fprintf(text, "neighbours' rows (%lld of each) traded %lld times a run\n", static_cast<long long>(placement.ghost_rows),
                static_cast<long long>(trades));
  nlohmann::json per_device = nlohmann::json::array();
  for (const BenchPart& part : parts) {
    std::fprintf(text, "  %s %s: %lld rows, kernels %.4f ms in the last run\n", part.id.c_str(), part.device.c_str(),
                static_cast<long long>(part.rows), part.kernel_seconds * 1e3);
    per_device.push_back({{"device", part.device}, {"id", part.id}, {"rows", part.rows},
                          {"kernel_seconds_last_run", part.kernel_seconds}});
  }
  if (!o.json.empty()) {
    nlohmann::json j = {{"program", o.program}, {"devices", per_device}, {"repetitions", o.repeat},
                        {"wall_seconds", {{"median", median}, {"min", wall.front()}, {"max", wall.back()}}},
                        {"ghost_rows", placement.ghost_rows}, {"trades_per_run", trades}};
    if (o.mpi) j["ranks"] = parts.size();
    if (o.json == "-") std::printf("%s\n", j.dump().c_str());
    else write_file_atomically(o.json, [&](std::ostream& out) { out << j.dump() << "\n"; });
  }
}

// `fugue bench` on several devices: the host's wall time of each run, all devices started to all
// finished, and each device's kernel time.
int bench_split(const Options& o, const PluginRegistry& registry, const Program& program, const Placement& placement,
                SeveralDevices& sessions) {
  const auto first = std::make_shared<const DeviceInfo>(sessions.sessions.front()->device.info);
  SplitRun split(program, placement, sessions.slots(),
                 [&] { return load_program(o.program, registry, load_options(o, first)); }, plan_options(o));
  {
    BuildProgress progress;
    split.prepare();
  }
  const std::vector<double> wall = time_split_runs(split, sessions, o.repeat);
  std::vector<BenchPart> parts;
  for (size_t d = 0; d < split.devices(); ++d) {
    Session& s = *sessions.sessions[d];
    parts.push_back({s.device.info.name, s.device.info.id(), placement.shares[d].count,
                     median_run({summarize(s.profiler.collect())}).seconds});  // the last repetition's kernels
  }
  print_split_bench(o, std::to_string(split.devices()) + " devices",
                    "wall time on the host, all devices started to all finished", wall, placement, split.trades(), parts);
  return 0;
}

// `fugue bench` of a program on one device (prepared here).
int bench_whole(const Options& o, const Program& program, Session& session) {
  Executor executor(program, session.device, session.cache, session.profiler, plan_options(o));
  {
    BuildProgress progress;  // its line ends when the build does
    executor.prepare(std::ref(progress));
  }
  const std::vector<RepetitionTimes> reps = time_runs(executor, session, o.repeat, true);
  // The warm-up, then each repetition (twice where the second gives the wall time: time_runs).
  const int64_t launches = executor.kernel_launches() / ((session.profiler.enabled() ? 2 : 1) * o.repeat + 1);
  std::FILE* text = o.json == "-" ? stderr : stdout;  // with --json -, stdout holds the JSON alone
  std::fprintf(text, "%s on %s, %d repetitions (device time from OpenCL events)\n", o.program.c_str(),
               session.device.info.name.c_str(), o.repeat);
  std::fprintf(text, "%s", bench_table(reps).c_str());
  std::vector<double> wall;
  for (const auto& r : reps) wall.push_back(r.wall_seconds);
  std::sort(wall.begin(), wall.end());
  std::fprintf(text, "wall ms per run (host clock, launches and waits included, from runs without events): median %.4f, min %.4f, max %.4f\n",
               wall[wall.size() / 2] * 1e3, wall.front() * 1e3, wall.back() * 1e3);
  std::fprintf(text, "%lld kernel launches per run, %zu kernels (fusion %s, copy elimination %s)\n",
               static_cast<long long>(launches), executor.kernels().size(), o.no_fuse ? "off" : "on",
               o.no_swap ? "off" : "on");
  if (!o.json.empty()) {
    std::string j = bench_json(reps, o.program, session.device.info.name);
    if (o.json == "-") std::printf("%s\n", j.c_str());
    else write_file_atomically(o.json, [&](std::ostream& out) { out << j << "\n"; });
  }
  return 0;
}

#ifdef FUGUE_WITH_MPI
// `fugue bench --mpi`: a warm-up, then each repetition started together on every rank (a barrier) and
// timed on rank 0 until every rank has finished (another); rank 0 prints the figures. A program that is
// not split is timed on rank 0 alone, as on one device.
int bench_on_ranks(const Options& o) {
  return on_ranks([&](const Ranks& ranks) {
    RankPlacement p(ranks, o, true);
    if (ranks.rank() == 0) std::printf("%s", p.account.c_str());
    const std::unique_ptr<RankRun> part = split_on_ranks(ranks, p, o, true);
    if (!part) return ranks.rank() == 0 ? bench_whole(o, p.program, p.session) : 0;
    part->initialize();
    part->run();
    std::vector<double> wall;
    for (int r = 0; r < o.repeat; ++r) {
      part->initialize();
      p.session.device.queue.finish();
      p.session.profiler.clear();
      ranks.barrier();
      const auto start = std::chrono::steady_clock::now();
      part->run();
      p.session.device.queue.finish();
      ranks.barrier();
      wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const std::vector<double> kernels = ranks.gather_all(median_run({summarize(p.session.profiler.collect())}).seconds);
    if (ranks.rank() != 0) return 0;
    std::vector<BenchPart> parts;
    for (size_t r = 0; r < p.devices.size(); ++r)
      parts.push_back({p.devices[r].name, p.devices[r].id(), p.placement.shares[r].count, kernels[r]});
    print_split_bench(o, std::to_string(ranks.size()) + " ranks",
                      "wall time on rank 0, all ranks started to all finished", wall, p.placement, part->trades(), parts);
    return 0;
  });
}
#endif

int cmd_bench(const Options& o) {
  if (o.repeat < 1) throw UserError("--repeat must be at least 1");
  // A --json file that cannot be written stops the benchmark before it runs, not after.
  if (!o.json.empty() && o.json != "-") {
    try {
      check_file_writable(o.json);
    } catch (const UserError& e) {
      throw UserError("--json " + o.json + ": " + e.what());
    }
  }
  if (o.mpi) {
#ifdef FUGUE_WITH_MPI
    return bench_on_ranks(o);
#else
    throw UserError("--mpi: this fugue was built without MPI (install libopenmpi-dev and build again)");
#endif
  }
  PluginRegistry registry = load_plugins(o);
  Program program = load_program(o.program, registry, load_options(o, device_for_loading(o)));
  const std::vector<DeviceInfo> chosen = select_devices(Session::devices(), device_spec(o.device));
  SeveralDevices sessions(chosen, true, o.no_disk_cache);
  if (chosen.size() > 1) {
    const Placement placement = place_on(program, sessions, plan_options(o));
    std::printf("%s", describe_placement(placement, chosen).c_str());
    if (placement.split) try {
        return bench_split(o, registry, program, placement, sessions);
      } catch (const SplitDeclined& e) {
        std::printf("not split after all: %s; it runs on %s alone\n", e.what(), chosen.front().id().c_str());
      }
  }
  return bench_whole(o, program, *sessions.sessions.front());
}

}  // namespace

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_st("fugue");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("fugue: %^%l%$: %v");
  spdlog::set_level(spdlog::level::warn);

  Options o;
  CLI::App app{"Fugue: composes OpenCL kernels from JSON program descriptions and runs them"};
  // A file, folder or device given as "" is refused, not taken as the current folder or the default.
  const CLI::Validator named([](std::string& v) { return v.empty() ? std::string("expected a name, found an empty one") : std::string(); },
                             "", "named");
  app.require_subcommand(1);
  app.add_flag("-v,--verbose", o.verbose, "log more (device, plugins, cache)");
  app.add_option("--plugin", o.plugins, "load this plugin file too (repeatable)");

  auto* run = app.add_subcommand("run", "run a program and write its outputs");
  run->add_option("program", o.program, "program file (.json)")->required();
  run->add_option("--device", o.device, "P:D, gpu, cpu or part of a device name (default: $FUGUE_DEVICE, else first GPU, else first device); several: P:D,P:D, gpu:all, cpu:all or all (a program split by rows where it can be)")->check(named);
  run->add_option("--out", o.out, "folder for the outputs (default: the current folder)")->check(named);
  run->add_option("--set", o.sets, "override a const or scalar (NAME=VALUE) or a file-sourced array's file (NAME=PATH, from the current folder); repeatable");
  run->add_option("--profile", o.profile, "write a Chrome trace-event JSON of kernels, transfers and compiles")->check(named);
  run->add_flag("--stats", o.stats, "print device time per kernel and program-cache counts");
  run->add_flag("--no-disk-cache", o.no_disk_cache, "build kernels without reading or writing the disk cache");
  run->add_flag("--reference", o.reference, "run on the CPU with every operation's reference implementation");
  run->add_flag("--no-fuse", o.no_fuse, "one kernel per operation (to compare and debug)");
  run->add_flag("--no-swap", o.no_swap, "run copies as kernels instead of buffer swaps");
  run->add_flag("--mpi", o.mpi, "one of mpirun's processes: the program split by rows over the ranks, one device each (this host's ranks take --device's devices in turn)");

  auto* explain = app.add_subcommand("explain", "print the plan: blocks and live sets, kernels, promotions, swaps, "
                                                "why operations were not fused, and the generated OpenCL");
  explain->add_option("program", o.program, "program file (.json)")->required();
  explain->add_option("--device", o.device, "device, as for run")->check(named);
  explain->add_option("--device-file", o.device_file,
                      "plan for the device this description says (from `fugue devices --json`; devices/ has some), "
                      "without OpenCL")
      ->check(named);
  explain->add_flag("--compile", o.compile, "build the kernels too, as a run does (the driver may lower a work-group size)");
  explain->add_flag("--passes", o.passes, "print the plan after every planner pass that changed it, then the final plan");
  explain->add_option("--set", o.sets, "override a const or scalar (NAME=VALUE) or a file-sourced array's file (NAME=PATH, from the current folder); repeatable");
  explain->add_flag("--no-fuse", o.no_fuse, "plan without fusion");
  explain->add_flag("--no-swap", o.no_swap, "plan without copy elimination");

  auto* validate = app.add_subcommand("validate", "check a program without running it");
  validate->add_option("program", o.program, "program file (.json)")->required();
  validate->add_option("--set", o.sets, "override a const or scalar (NAME=VALUE) or a file-sourced array's file (NAME=PATH, from the current folder); repeatable");

  auto* bench = app.add_subcommand("bench", "time a program's kernels: warm-up, then repetitions");
  bench->add_option("program", o.program, "program file (.json)")->required();
  bench->add_option("--device", o.device, "device, as for run")->check(named);
  bench->add_option("--repeat", o.repeat, "timed repetitions (default 10)");
  bench->add_option("--set", o.sets, "override a const or scalar (NAME=VALUE) or a file-sourced array's file (NAME=PATH, from the current folder); repeatable");
  bench->add_option("--json", o.json, "also write the figures as JSON to this file ('-': stdout)")->check(named);
  bench->add_flag("--no-disk-cache", o.no_disk_cache, "build kernels without the disk cache");
  bench->add_flag("--no-fuse", o.no_fuse, "one kernel per operation");
  bench->add_flag("--no-swap", o.no_swap, "run copies as kernels instead of buffer swaps");
  bench->add_flag("--mpi", o.mpi, "one of mpirun's processes: the program split by rows over the ranks, timed on rank 0 (as run --mpi)");

  TuneOptions tuning;
  auto* tune = app.add_subcommand("tune", "measure on a device what a plugin's choices depend on, and keep the table in the "
                                          "device's tuning folder for later runs (fugue tune sparse: the sparse format choice)");
  tune->add_option("tuner", tuning.tuner, "the tuner (without one: list them)");
  tune->add_option("--device", tuning.device, "device, as for run")->check(named);
  tune->add_option("--repeat", tuning.repeat, "timed repetitions of each program (default 5)")->check(CLI::Range(1, 1000));
  tune->add_flag("--quick", tuning.quick, "small sizes: checks that tuning works; the table goes to TUNER.quick.json, which plugins do not read");

  auto* conformance = app.add_subcommand(
      "conformance", "check every operation of a plugin: descriptors, infer on valid and invalid calls, device "
                     "against reference, partition honesty, fusion neutrality, determinism, cost");
  conformance->add_option("plugin", o.conformance.plugin, "a plugin file, or a plugin's name on the search path")
      ->required();
  conformance->add_option("--device", o.conformance.device, "device, as for run")->check(named);
  conformance->add_option("--report", o.conformance.report_file, "also write the results as JSON to this file")->check(named);
  conformance->add_option("--op", o.conformance.ops, "check only this operation (repeatable)");
  conformance->add_option("--seed", o.conformance.seed, "seed of the random inputs (default: a fresh one, printed)");
  conformance->add_option("--timeout", o.conformance.timeout_seconds,
                          "seconds one operation's device checks may take before they FAIL as a hang (default 600)")
      ->check(CLI::Range(1, 86400));

  auto* devices = app.add_subcommand("devices", "list OpenCL platforms and devices");
  devices->add_option("--device", o.device, "the device --json describes (default: as for run)")->check(named);
  devices->add_option("--json", o.json, "write the description of one device to this file ('-': stdout), for "
                                        "`fugue explain --device-file`")->check(named);
  auto* plugins = app.add_subcommand("plugins", "list the kinds, file formats and generators of the core, and the plugins with their versions, ABI, kinds, formats, generators, tuners and operations");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 says only "A subcommand is required" for a word that is none: name the word.
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--plugin") {
        ++i;  // its value
        continue;
      }
      if (word.empty() || word[0] == '-') continue;
      std::string names;
      bool known = false;
      for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        known = known || sub->get_name() == word;
      }
      if (!known) {
        std::fprintf(stderr, "fugue: unknown subcommand '%s'; the subcommands are %s (fugue --help)\n", word.c_str(),
                     names.c_str());
        return 2;
      }
      break;
    }
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (o.verbose) spdlog::set_level(spdlog::level::debug);

  try {
    if (run->parsed()) return cmd_run(o);
    if (validate->parsed()) return cmd_validate(o);
    if (explain->parsed()) return cmd_explain(o);
    if (bench->parsed()) return cmd_bench(o);
    if (tune->parsed()) {
      tuning.plugins = o.plugins;
      return run_tune(tuning);
    }
    if (conformance->parsed()) {
      // A report that cannot be written, or a device that is not there, stops the suite before it runs.
      if (!o.conformance.report_file.empty()) {
        try {
          check_file_writable(o.conformance.report_file);
        } catch (const UserError& e) {
          throw UserError("--report " + o.conformance.report_file + ": " + e.what());
        }
      }
      // The device is looked for in a child process: the suite forks its checks from a process that has
      // not touched OpenCL (its threads and locks do not survive a fork; a child forked after hung).
      const ChildOutcome found = run_in_child(
          [&](const std::function<void(const std::string&)>& say) {
            try {
              select_devices(Session::devices(), device_spec(o.conformance.device));
            } catch (const UserError& e) {
              say(e.what());
            }
          },
          std::chrono::seconds(120));
      if (found.completed && !found.output.empty()) throw UserError(found.output.substr(0, found.output.find_last_not_of('\n') + 1));
      return conformance::run_conformance(o.conformance);
    }
    if (devices->parsed()) return cmd_devices(o);
    if (plugins->parsed()) return cmd_plugins(o);
  } catch (const UserError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const DeviceError& e) {
    spdlog::error("{}", e.what());
    return 1;
  } catch (const cl::Error& e) {
    spdlog::error("{}", cl_error_message(e.what(), e.err()));
    return 1;
  } catch (const std::bad_alloc&) {
    spdlog::error("out of host memory: the program's arrays do not fit in this machine's memory");
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 1;
  }
  return 0;
}
