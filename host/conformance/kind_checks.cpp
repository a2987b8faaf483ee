#include "kind_checks.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "child_process.h"
#include "errors.h"
#include "io/file_format.h"
#include "io/generators.h"

namespace fugue::conformance {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A value of the declared type, every part filled with small random numbers (exact in every dtype).
HostArray random_value(const Kind& kind, const DeclaredType& type, uint64_t seed) {
  HostArray value;
  value.dtype = type.dtype;
  value.shape = type.shape;
  value.kind_name = kind.name();
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> small(-100, 100);
  for (const auto& part : type.parts) {
    value.parts.emplace_back(part.dtype, part.shape);
    HostArray& p = value.parts.back();
    for (int64_t i = 0; i < p.elements(); ++i) {
      const int v = small(random);
      p.set(i, dtype_is_float(part.dtype) || dtype_is_complex(part.dtype) ? v / 8.0 : std::abs(v));
    }
  }
  return value;
}

// "" when `read` is what was written; otherwise the first difference.
std::string difference(const HostArray& written, const HostArray& read) {
  if (read.kind_name != written.kind_name) return "read back a '" + read.kind_name + "', wrote a '" + written.kind_name + "'";
  if (read.dtype != written.dtype || read.shape != written.shape || read.parts.size() != written.parts.size())
    return "read back " + read.type_text() + ", wrote " + written.type_text();
  for (size_t k = 0; k < written.parts.size(); ++k) {
    const HostArray &w = written.parts[k], &r = read.parts[k];
    if (r.dtype != w.dtype || r.shape != w.shape) return "part " + std::to_string(k) + ": read back " + r.type_text() + ", wrote " + w.type_text();
    if (r.bytes != w.bytes)
      for (int64_t i = 0; i < w.elements(); ++i)
        if (r.get_complex(i) != w.get_complex(i))
          return "part " + std::to_string(k) + ", element " + std::to_string(i) + ": read back " +
                 std::to_string(r.get(i)) + ", wrote " + std::to_string(w.get(i));
  }
  return "";
}

// The round trips of one kind, each a line "PASS|FAIL|SKIP<tab>detail" through `say`.
void round_trips(const PluginRegistry& registry, const Kind& kind, uint64_t seed,
                 const std::function<void(const std::string&)>& say) {
  const fs::path folder = fs::temp_directory_path() / ("fugue-conformance-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  int tried = 0;
  std::set<std::string> seen;  // an example may ignore the dtype asked for
  for (DType dtype : {DType::F32, DType::F64, DType::C64, DType::C128, DType::I32, DType::I64}) {
    for (uint32_t rank = 1; rank <= 2; ++rank) {
      json example;
      try {
        example = json::parse(kind.example(rank, dtype));
      } catch (const UserError&) {
        continue;  // the kind takes no such dtype or rank
      }
      if (!example.is_object()) {
        say("FAIL\t" + std::string(dtype_name(dtype)) + ": the example declaration is not a JSON object");
        continue;
      }
      // Parts the example gives inline make the value (a kind whose parts must agree, as a sparse
      // matrix's indices do, cannot take random numbers); the others are random.
      json inline_parts = json::object();
      if (example.contains("parts") && example["parts"].is_object())
        for (const auto& [part, source] : example["parts"].items())
          if (source.is_object() && source.contains("value")) inline_parts[part] = source["value"];
      for (const char* core_key : {"kind", "doc", "from", "parts"}) example.erase(core_key);
      const std::string label = kind.name() + " " + example.dump();
      if (!seen.insert(label).second) continue;
      DeclaredType type;
      try {
        type = kind.declare(example.dump());
      } catch (const std::exception& e) {
        say("FAIL\tdeclare " + label + ": " + e.what());
        continue;
      }
      HostArray value = random_value(kind, type, seed + tried);
      try {
        for (size_t k = 0; k < kind.parts().size(); ++k)
          if (inline_parts.contains(kind.parts()[k]))
            value.parts[k] = array_from_json(inline_parts[kind.parts()[k]], type.parts[k].dtype, type.parts[k].shape,
                                             "the example's part " + kind.parts()[k]);
      } catch (const std::exception& e) {
        say("FAIL\t" + label + ": " + e.what());
        continue;
      }
      bool written = false;
      for (const auto& format : registry.formats()) {
        if (!format->writes() || !format->refuses(type_of(value)).empty()) continue;
        written = true;
        ++tried;
        const std::string what = label + " through " + format->name();
        const fs::path file = folder / ("value" + format->extensions().front());
        try {
          format->write(file, value, type.metadata);
          auto reader = registry.reader_for(format->extensions().front());
          if (!reader) {
            say("FAIL\t" + what + ": no format reads " + format->extensions().front() + " files back");
            continue;
          }
          FileContents contents;
          if (reader->reads_as()) {  // read as the example declares it, as a program would
            json as_declared = example;
            as_declared["kind"] = kind.name();
            const DeclaredType as = reader->probe_as(file, as_declared.dump(), kind, nullptr);
            contents.dtype = as.dtype;
            contents.shape = as.shape;
            contents.kind_name = kind.name();
            contents.parts = as.parts;
            contents.as_declared = as_declared.dump();
            contents.metadata = as.metadata;
          } else {
            contents = reader->probe(file);
          }
          const std::string diff = difference(value, reader->read(file, contents));
          say(std::string(diff.empty() ? "PASS\t" : "FAIL\t") + what + (diff.empty() ? ": read back exactly" : ": " + diff));
        } catch (const std::exception& e) {
          say("FAIL\t" + what + ": " + e.what());
        }
      }
      if (!written) say("SKIP\t" + label + ": no format writes it");
    }
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);
}

}  // namespace

void check_kinds(const PluginRegistry& registry, const LoadedPlugin& plugin, uint64_t seed, Report& report) {
  for (const Kind* kind : registry.kinds()) {
    if (kind->plugin() != &plugin || !kind->storage()) continue;
    const ChildOutcome outcome = run_in_child([&](const auto& say) { round_trips(registry, *kind, seed, say); }, 60);
    std::istringstream lines(outcome.output);
    for (std::string line; std::getline(lines, line);) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string verdict = line.substr(0, tab);
      report.add("kind " + kind->name(), "round trip",
                 verdict == "PASS" ? Verdict::Pass : verdict == "SKIP" ? Verdict::Skip : Verdict::Fail, line.substr(tab + 1));
    }
    if (!outcome.completed) report.add("kind " + kind->name(), "round trip", Verdict::Fail, outcome.failure);
  }
}

}  // namespace fugue::conformance
