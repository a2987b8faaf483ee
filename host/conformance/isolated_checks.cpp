#include "isolated_checks.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "device/device_manager.h"
#include "device/profiler.h"
#include "device/program_cache.h"
#include "device_checks.h"
#include "errors.h"
#include "plugins/child_process.h"

namespace fugue::conformance {

namespace {

// The device the child runs on, opened in the child.
struct OpenDevice {
  std::vector<DeviceInfo> devices = list_devices();
  Device device;
  Profiler profiler{false};
  ProgramCache cache;
  explicit OpenDevice(const std::string& spec)
      : device(select_device(devices, device_spec(spec))), cache(device, std::nullopt, &profiler) {}
};

// The step the child announced last: which check it belongs to, and what it was doing.
struct Step {
  const char* check;
  const char* doing;
};
const std::map<std::string, Step>& steps() {
  static const std::map<std::string, Step> table = {
      {"device run", {"reference", "while it was planned, generated and run on the device (plan, emit or execute)"}},
      {"reference", {"reference", "in its reference (on the host)"}},
      {"second run", {"determinism", "on its second run on the device (execute or the generated kernel)"}},
      {"partition honesty", {"partition honesty", "in the instrumented run on the device"}},
      {"fusion neutrality", {"fusion neutrality", "while fused with its neighbours on the device"}},
      {"cost", {"cost", "in cost"}},
  };
  return table;
}

// Every check the child reports for one operation, in order.
const std::vector<std::string> kChecks = {"reference", "determinism", "guard regions", "partition honesty",
                                          "fusion neutrality", "cost"};

}  // namespace

bool candidate_calls_in_child(const Operation& op, const PluginRegistry& registry, uint64_t seed, Report& report,
                              std::vector<TestCall>& calls) {
  const ChildOutcome child = fugue::run_in_child(
      [&](const auto& say) {
        try {
          for (const TestCall& c : candidate_calls(op, registry, seed)) {
            const nlohmann::json j = {{"label", c.label},   {"dtype", std::string(dtype_name(c.dtype))},
                                      {"size_class", c.size_class}, {"rank", c.rank},
                                      {"declared", c.declared},     {"program", c.program},
                                      {"ranked", c.ranked}};
            say("call " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
          }
        } catch (const UserError& e) {
          say(std::string("refused ") + e.what());
        }
      },
      std::chrono::seconds(120));
  std::string refusal;
  const auto refused_at = child.output.rfind("refused ");  // said last; the message may span lines
  if (refused_at != std::string::npos && (refused_at == 0 || child.output[refused_at - 1] == '\n')) {
    refusal = child.output.substr(refused_at + 8);
    while (!refusal.empty() && refusal.back() == '\n') refusal.pop_back();
  }
  std::istringstream lines(child.output.substr(0, refused_at == std::string::npos ? std::string::npos : refused_at));
  try {
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("call ", 0) != 0) continue;
      const nlohmann::json j = nlohmann::json::parse(line.substr(5));
      TestCall c;
      c.label = j.at("label").get<std::string>();
      c.dtype = parse_dtype(j.at("dtype").get<std::string>()).value_or(DType::None);
      c.size_class = j.at("size_class").get<std::string>();
      c.rank = j.at("rank").get<size_t>();
      c.declared = j.at("declared").get<bool>();
      c.program = j.at("program");
      c.ranked = j.at("ranked").get<std::map<std::string, std::string>>();
      calls.push_back(std::move(c));
    }
  } catch (const std::exception& e) {
    refusal = std::string("a call from the child was unreadable: ") + e.what();
  }
  if (child.completed && refusal.empty()) return true;
  report.add(op.name(), "test_cases", Verdict::Fail,
             !refusal.empty() ? refusal
                              : child.failure + " while its calls were made (its test_cases, the example declarations "
                                                "of its kinds; in a child process)");
  calls.clear();
  return false;
}

std::string check_in_child(const Operation& op, const std::vector<TestCall>& calls, const PluginRegistry& registry,
                           const std::string& device_spec, std::chrono::milliseconds timeout, Report& report) {
  const ChildOutcome child = fugue::run_in_child(
      [&](const auto& say) {
        std::unique_ptr<OpenDevice> open;
        try {
          open = std::make_unique<OpenDevice>(device_spec);
        } catch (const std::exception& e) {
          say(std::string("nodevice ") + e.what());
          return;
        }
        say("device " + open->device.info.name);
        Report forward([&](const CheckResult& r) {
          say("result " + r.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        });
        DeviceSession session{open->device, open->cache, open->profiler, registry,
                              [&](const std::string& where) { say("step " + where); }};
        check_on_device(op, calls, session, forward);
        say("step cost|every call");
        check_cost(op, calls, registry, forward);
      },
      timeout);

  std::string device, step, call;
  std::set<std::string> reported;
  std::istringstream lines(child.output);
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.find(' ');
    const std::string tag = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (tag == "nodevice") throw DeviceError(rest);
    if (tag == "device") device = rest;
    if (tag == "step") {
      const auto bar = rest.find('|');
      step = rest.substr(0, bar);
      call = bar == std::string::npos ? "" : rest.substr(bar + 1);
    }
    if (tag == "result") {
      try {
        CheckResult r = CheckResult::from_json(nlohmann::json::parse(rest));
        reported.insert(r.check);
        report.add(std::move(r));
      } catch (const std::exception& e) {
        report.add(op.name(), "isolation", Verdict::Fail, std::string("a result from the child was unreadable: ") + e.what());
      }
    }
  }
  if (child.completed) return device;

  // The child died or hung: the check it was running FAILs, naming the call; those it never
  // finished are skipped. (An exception escaping to the child's top is a failure of the same kind.)
  std::string failure = child.failure;
  if (child.output.find("\nuncaught ") != std::string::npos || child.output.rfind("uncaught ", 0) == 0) {
    const auto at = child.output.rfind("uncaught ");
    failure = "an exception escaped: " + child.output.substr(at + 9);
    while (!failure.empty() && failure.back() == '\n') failure.pop_back();
  }
  const auto known = steps().find(step);
  const std::string check = known != steps().end() ? known->second.check : "device";
  const std::string doing = known != steps().end() ? std::string(known->second.doing) : "while opening the device";
  report.add(op.name(), check, Verdict::Fail,
             (call.empty() ? "" : call + ": ") + failure + " " + doing + " (the checks run in a child process)");
  reported.insert(check);
  for (const auto& c : kChecks)
    if (!reported.count(c))
      report.add(op.name(), c, Verdict::Skip, "not finished: the process running this operation's checks ended " +
                                                  std::string("early (see ") + check + ")");
  return device;
}

}  // namespace fugue::conformance
