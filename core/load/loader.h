// loader.h: the program loader's one class, internal to core/load/. Its work is split by concern:
// json_reading.cpp (messages with the file and JSON pointer, values of the expected JSON type),
// declarations.cpp (symbols: kinds, sources, formats, generators, --set), statements.cpp (the body:
// loops, branches, operation calls and their operands), outputs.cpp (types of results, output files),
// program_loader.cpp (the order of it all, and the entry points of program_loader.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.h"
#include "io/file_names.h"
#include "io/generators.h"
#include "load/program_loader.h"

namespace fugue::load {

namespace fs = std::filesystem;
using json = nlohmann::json;

// "an object {...}", "a string \"x\"": a JSON value for messages, cut at 60 characters.
std::string describe(const json& v);
size_t edit_distance(const std::string& a, const std::string& b);
// The shortest text that reads back as v.
std::string c_number(double v);
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// Byte offset -> "line L, column C".
std::string position(const std::string& text, size_t offset);

// Limits checked before anything recurses: JSON nesting (the parser, copies and dump() recurse) and
// the nesting of loops and branches (the loader, the dataflow analysis and the interpreter do).
constexpr int kMaxJsonDepth = 256;
constexpr int kMaxStatementNesting = 64;
// The place where `text` nests deeper than kMaxJsonDepth ("line L, column C"), or "" when it does not;
// brackets inside strings do not count.
std::string too_deep(const std::string& text);
// A parser callback that throws UserError at the first key an object repeats ("/symbols/x: the key
// 'x' appears twice"), which JSON leaves undefined and nlohmann would silently resolve to the last.
json::parser_callback_t duplicate_key_check();

class Loader {
 public:
  Loader(const fs::path& file, const PluginRegistry& registry, const LoadOptions& options);
  Program run(const json& doc);

 private:
  // --- messages ---------------------------------------------------------------------------
  std::string at(const std::string& pointer) const;
  [[noreturn]] void fail(const std::string& pointer, const std::string& expected,
                         const std::string& found) const;
  [[noreturn]] void error(const std::string& pointer, const std::string& message) const;
  void expect_object(const json& v, const std::string& p) const;
  void check_keys(const json& v, const std::string& p, const std::vector<std::string>& allowed) const;
  // --- symbols ----------------------------------------------------------------------------
  void check_name(const std::string& name, const std::string& p) const;
  DType dtype_of(const json& v, const std::string& p) const;
  // An array's shape; with `runtime_axes`, its first extent may be {"capacity": n} (bit 0 set then).
  Shape shape_of(const json& v, const std::string& p, uint32_t* runtime_axes = nullptr) const;
  double number_of(const json& v, const std::string& p, const std::string& what = "a number") const;
  void declare(const std::string& name, const json& decl, const std::string& p);
  // "array, scalar, const or csr": every kind the registry knows.
  std::string kind_names() const;
  // A kind a plugin defines: its declare reads the declaration; its messages point inside it.
  void declare_value(Symbol& s, const json& decl, const std::string& p);
  // A user function (functions.cpp): its parameters now, its body in define_functions.
  void declare_function(Symbol& s, const json& decl, const std::string& p);
  // The bodies of the functions declared, once every symbol (the consts they read) is.
  void define_functions();
  Statement function_statement(UserFunction& f, const json& v, const std::string& p);
  void declare_plugin_kind(Symbol& s, const std::string& kind_name, const json& decl, const std::string& p);
  // A file "from" names for a kind with storage, and the format that reads it.
  struct CompoundFile {
    std::string rel;
    fs::path path;
    std::shared_ptr<const FileFormat> format;
  };
  CompoundFile compound_file_of(const Symbol& s, const json& from, const std::string& p) const;
  bool declare_from_source(Symbol& s, const Kind& kind, const json& decl, const json& own, const std::string& p);
  static void type_as(Symbol& s, const std::shared_ptr<const Kind>& kind, DeclaredType& declared);
  void declare_parts(Symbol& s, const Kind& kind, const std::vector<ArrayType>& types, const json& decl,
                     const std::string& p, const std::string& as_declared = "");
  void compound_file(Symbol& s, const json& from, const std::string& p, const std::string& as_declared);
  // Checked now, so a bad inline value fails before anything runs.
  void check_inline(const Symbol& s, const std::string& p) const;
  // "from": a file path, or {"zeros": …}, {"fill": v}, {"random": {...}}, {"arange": {...}},
  // {"file": path}.
  void source(Symbol& s, const json& from, const std::string& p, bool has_dtype, bool has_shape);
  // A generator a plugin adds: it checks its parameters now; its messages point inside them.
  void plugin_generator(Symbol& s, const std::string& name, const json& parameters, const std::string& p);
  // The generator's values must fit the dtype; checked on one element now, not when the run starts.
  void check_generator(const Symbol& s, const std::string& p) const;
  // The last --set NAME=... of `name`, or null.
  const std::string* file_override(const std::string& name) const;
  // Consts first (`consts_only`), then scalars, with every name checked in the second call. The
  // files of file-sourced arrays were replaced when they were declared (see source).
  void apply_overrides(bool consts_only);
  std::set<std::string> initially_defined() const;
  // --- body -------------------------------------------------------------------------------
  std::vector<Statement> statements(const json& list, const std::string& p, int loop_depth);
  Statement statement(const json& v, const std::string& p, int loop_depth);
  void comparand(const json& v, const std::string& p, std::string& symbol, double& value);
  // A symbol that is read here: it must be declared and written before.
  const Symbol& readable(const std::string& name, const std::string& p) const;
  std::string suggest_symbol(const std::string& name) const;
  std::string unknown_op_message(const std::string& name) const;
  std::string anonymous_const(double value);
  static std::string kinds_string(const fugue_operand_desc& d);
  // Whether the operand accepts a value of type t (a plugin kind by name).
  static bool accepts_kind(const fugue_operand_desc& d, const abi::Type& t);
  Statement op_call(const json& v, const std::string& p);
  // An INOUT operand names one symbol in `out` and in `in`; it is updated where it is stored, so it
  // must be storage (an array or a scalar) and no other operand may read it while it changes.
  void in_place(const Statement& st, uint32_t slot, const std::string& written, const std::string& po,
                const std::string& p, const std::string& op_name);
  void attributes(Statement& st, const Operation& op, const json& attrs, const std::string& p);
  void run_time_origins(const Statement& st, const std::string& p);
  void assign_output(const std::string& name, const abi::Type& t, const std::string& p,
                     const std::string& op_name);
  void assign_compound_output(const std::string& name, const abi::Type& t, const std::string& p,
                              const std::string& op_name);
  void outputs(const json& v);

  // Every value and key of the document, without recursion: nesting within kMaxJsonDepth, and no
  // string with a NUL character (C strings, paths and names would be cut short at it).
  void check_document(const json& doc) const;
  // A path the program names: a regular file (not a FIFO, a device or a folder) when it exists.
  void check_regular_file(const fs::path& path, const std::string& p) const;

  fs::path file_;
  const json* body_ = nullptr;  // the document's body, for the reads a chooser kind is told (reads.h)
  int nesting_ = 0;  // loops and branches around the statements being read
  // Where each symbol's run-time length comes from (a statement's pointer; a declared input: its name).
  std::map<std::string, std::string> extent_origins_;
  const PluginRegistry& registry_;
  const LoadOptions& options_;
  Program program_;
  std::set<std::string> defined_;
  std::set<std::string> loop_variables_;
  std::set<std::string> active_loops_;  // variables of the loops enclosing the statement being read
  std::set<std::string> file_overridden_;  // arrays whose file --set replaced
  int anonymous_ = 0;
  struct PendingFunction {
    std::string name;
    json body;
    std::string pointer;
  };
  std::vector<PendingFunction> pending_functions_;
};

}  // namespace fugue::load
