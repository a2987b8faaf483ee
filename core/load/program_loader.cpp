#include "load/program_loader.h"

#include <fstream>
#include <sstream>

#include "load/loader.h"

namespace fugue {

namespace load {

Loader::Loader(const fs::path& file, const PluginRegistry& registry, const LoadOptions& options)
    : file_(file), registry_(registry), options_(options) {
  program_.file = file;
}

Program Loader::run(const json& doc) {
  check_document(doc);
  expect_object(doc, "");
  check_keys(doc, "", {"fugue", "symbols", "body", "outputs", "doc"});
  if (!doc.contains("fugue")) fail("", "a \"fugue\": 1 version key", "none");
  if (!doc["fugue"].is_number_integer() || doc["fugue"].get<int64_t>() != 1)
    fail("/fugue", "format version 1", describe(doc["fugue"]));
  if (doc.contains("body")) body_ = &doc["body"];
  if (doc.contains("symbols")) {
    expect_object(doc["symbols"], "/symbols");
    // Consts first (with their --set values): array shapes may name them.
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& [name, decl] : doc["symbols"].items()) {
        bool is_const = decl.is_object() && decl.contains("kind") && decl["kind"] == "const";
        if ((pass == 0) == is_const) declare(name, decl, "/symbols/" + name);
      }
      if (pass == 0) apply_overrides(true);
    }
  }
  apply_overrides(false);
  define_functions();
  if (!doc.contains("body")) fail("", "a \"body\" list of statements", "none");
  defined_ = initially_defined();
  program_.body = statements(doc["body"], "/body", 0);
  if (doc.contains("outputs")) outputs(doc["outputs"]);
  return std::move(program_);
}

}  // namespace load

using json = nlohmann::json;
namespace fs = std::filesystem;

Program parse_program(const json& document, const fs::path& file, const PluginRegistry& registry,
                      const LoadOptions& options) {
  load::Loader loader(file, registry, options);
  Program program;
  try {
    program = loader.run(document);
  } catch (const json::exception& e) {
    throw UserError(file.string() + ": a value of an unexpected JSON type (" + std::string(e.what()) + ")");
  }
  return program;
}

Program load_program(const fs::path& file, const PluginRegistry& registry, const LoadOptions& options) {
  // A FIFO or a device would block or never end: only regular files.
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    throw UserError(file.string() + ": not a regular file (" +
                    (fs::is_directory(status) ? "a folder" : fs::is_fifo(status) ? "a FIFO" : "a device or socket") +
                    "); give the program as a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(file.string() + ": cannot open the program file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  // Checked before parsing: the parser, copies and dump() recurse once per level.
  if (const std::string where = load::too_deep(text); !where.empty())
    throw UserError(file.string() + ": values nested deeper than " + std::to_string(load::kMaxJsonDepth) +
                    " levels at " + where);
  json doc;
  try {
    doc = json::parse(text, load::duplicate_key_check());
  } catch (const json::parse_error& e) {
    // nlohmann says "[json.exception.parse_error.101] parse error at line L, column C: <why>".
    std::string what = e.what();
    auto why = what.find(": ", what.find("column"));
    throw UserError(file.string() + ": malformed JSON at " + load::position(text, e.byte ? e.byte - 1 : 0) + ": " +
                    (why == std::string::npos ? what : what.substr(why + 2)));
  } catch (const json::out_of_range& e) {
    // A number beyond double: nlohmann names the text ("number overflow parsing '1e400'"), not where.
    const std::string what = e.what();
    const size_t open = what.find('\''), close = what.rfind('\'');
    const std::string number = open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const size_t at = number.empty() ? std::string::npos : text.find(number);
    throw UserError(file.string() + ": malformed JSON" + (at == std::string::npos ? "" : " at " + load::position(text, at)) +
                    ": the number " + (number.empty() ? "" : number + " ") + "is beyond double precision's range");
  } catch (const json::exception& e) {
    throw UserError(file.string() + ": unreadable JSON: " + std::string(e.what()));
  } catch (const UserError& e) {
    throw UserError(file.string() + e.what());  // a repeated key: the message starts with ":/pointer"
  }
  return parse_program(doc, file, registry, options);
}

}  // namespace fugue
