// program.h: the program's semantic model: symbols (with their sources) and a body of statements.
// The loader builds it from JSON and types every operand; later passes only read it.
#pragma once
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fugue/abi_values.hpp"
#include "io/file_format.h"
#include "io/generator.h"
#include "program/dtype.h"
#include "program/host_array.h"
#include "plugins/operation.h"

namespace fugue {

// The core's kinds, and Plugin for a kind a plugin defines: compile-time (a type and its metadata, no
// device value) or with storage (its value is its parts, each an array symbol of its own). A Function
// is a user function (program/user_function.h): operations that take one call it in their own code.
enum class SymbolKind { Array, Scalar, Const, Plugin, Function };

struct UserFunction;

// Where a symbol's initial value comes from.
struct SymbolSource {
  enum class Kind { None, File, Inline, Fill, Random, Arange, Generated };
  Kind kind = Kind::None;
  std::filesystem::path file;  // File: resolved against the program's folder (a --set path: the current folder)
  std::shared_ptr<const FileFormat> format;  // File: the format that reads it
  FileContents contents;                     // File: its dtype and shape as probed (values, if read then)
  std::shared_ptr<const Generator> generator;  // Generated: a plugin's generator ...
  std::string parameters;                      // ... and its parameters (JSON text)
  std::string declaration;                     // ... a kind's value: the declaration it makes (JSON text)
  std::shared_ptr<const DeviceInfo> device;    // ... and the device it was made for (null: none)
  nlohmann::json inline_value;  // Inline
  double value = 0;             // Fill (zeros: 0)
  uint64_t seed = 0;            // Random
  double low = 0, high = 1;     // Random
  double start = 0, step = 1;   // Arange
};

struct Symbol {
  std::string name;
  SymbolKind kind = SymbolKind::Array;
  DType dtype = DType::None;  // None until declared or inferred (consts stay None: they adapt)
  Shape shape;                // run-time axes: their capacity
  uint32_t runtime_axes = 0;  // bit d: axis d's length is known at run time (axis 0 only)
  bool typed = false;         // dtype and shape known
  double const_value = 0;     // Const: the value baked into kernels
  std::string kind_name;      // Plugin: the kind's name ("csr")
  std::string note;           // Plugin: how its kind was chosen, where a chooser kind chose it (for explain)
  std::shared_ptr<const Kind> kind_object;  // Plugin with storage: its kind (to check values given part by part)
  std::vector<unsigned char> metadata;  // Plugin: what its declare made, baked into kernels
  // Plugin with storage: its parts, in the kind's order: the array symbols "<name>.<part>" that hold
  // them (dataflow, allocation and liveness see those), and their types.
  std::vector<std::string> parts;
  std::vector<ArrayType> part_types;
  std::string part_of;        // a part's symbol: the symbol it is a part of
  SymbolSource source;
  std::string where;          // "file.json:/symbols/x", for messages
  bool inline_number = false; // a const the loader made for a number written in an operand list
  std::shared_ptr<const UserFunction> function;  // Function: its parameters and body

  // The type operations see (a plugin kind's metadata with it).
  abi::Type type() const;
  // "[<=1000, 3]": the shape, with run-time axes marked.
  std::string shape_text() const;
  // "array", "const", or a plugin kind's name
  std::string kind_text() const;
  // Known when kernels are generated (consts, compile-time plugin kinds): no device value, never written.
  bool compile_time() const {
    return kind == SymbolKind::Const || kind == SymbolKind::Function || (kind == SymbolKind::Plugin && parts.empty());
  }
  // A plugin kind with storage: its value is its parts.
  bool compound() const { return kind == SymbolKind::Plugin && !parts.empty(); }
  // A kind with storage some of whose parts have a run-time length: the value's count (ABI 2.21).
  bool counted_at_run_time() const {
    return std::any_of(part_types.begin(), part_types.end(), [](const ArrayType& t) { return t.runtime_axes != 0; });
  }
  // Those parts' symbols (empty for every other symbol).
  std::vector<std::string> counted_parts() const {
    std::vector<std::string> names;
    for (size_t k = 0; k < parts.size() && k < part_types.size(); ++k)
      if (part_types[k].runtime_axes) names.push_back(parts[k]);
    return names;
  }
  // An array's bytes per row of axis 0 (its element's for a scalar).
  size_t row_bytes() const;
};

// One statement of the body.
struct Statement {
  enum class Kind { Op, For, If, Break };
  Kind kind = Kind::Op;
  std::string where;  // "file.json:/body/2"

  // Op: operands in signature order, each naming a symbol; attrs in signature order.
  std::shared_ptr<const Operation> op;
  std::vector<std::string> operands;
  std::vector<fugue_attr_value> attrs;
  // Storage behind attrs[].name/.string: each string on the heap, so moving the statement (as the
  // vectors holding it grow) never moves the characters the pointers name.
  std::vector<std::unique_ptr<std::string>> attr_strings;
  const char* keep(std::string text) {
    attr_strings.push_back(std::make_unique<std::string>(std::move(text)));
    return attr_strings.back()->c_str();
  }
  // The attributes the program writes; the others take the operation's defaults.
  std::vector<std::string> written_attrs;
  // Per operand in signature order, where the program names it ("/in/1", "/out/0"); "" for an optional
  // input left to its default, and for statements the loader did not read from a program's body.
  std::vector<std::string> operand_pointers;
  // The place, within the statement, of what an operation's error is about: "/attrs/NAME" when the
  // message ("op: attribute NAME: ...", the SDK's wording) names an attribute the program writes,
  // "/in/K" or "/out/K" when it names an operand ("op: operand NAME: ..."), so that the error points
  // at what to change; "" otherwise (the statement itself).
  std::string pointer_of(const std::string& message) const;

  // For: `count` iterations (a number, or a const/scalar symbol read when the loop starts);
  // `variable` is an i64 scalar symbol holding the iteration number.
  std::string variable;
  std::string count_symbol;
  int64_t count_value = 0;

  // If: `lhs <cmp> rhs`, each a symbol (scalar or const) or a number.
  std::string compare;  // lt le gt ge eq ne
  std::string lhs_symbol, rhs_symbol;
  double lhs_value = 0, rhs_value = 0;

  std::vector<Statement> body;       // For: the loop body; If: then
  std::vector<Statement> else_body;  // If
};

// A fugue_call with the storage its pointers name. Not copyable: the views point into it.
struct CallDescriptor {
  std::vector<abi::Type> values;  // signature order
  std::vector<fugue_type> types;  // views of values
  // Per operand, the user function a FUNCTION operand names (null for the others): what
  // call.functions answers for (program/user_function.h).
  std::vector<std::shared_ptr<const UserFunction>> functions;
  fugue_function_services function_services{};
  fugue_call call{};

  CallDescriptor() = default;
  CallDescriptor(const CallDescriptor&) = delete;
  CallDescriptor& operator=(const CallDescriptor&) = delete;
  // Rebuilds the views after `values` (and `functions`) changed.
  void bind(const std::vector<fugue_attr_value>& attrs, const fugue_device_desc* device);
};

// An output of the program: the symbol, its file (relative to --out) and the format that writes it.
struct OutputFile {
  std::string symbol;
  std::filesystem::path file;
  std::shared_ptr<const FileFormat> format;
};

struct Program {
  std::filesystem::path file;
  std::map<std::string, Symbol> symbols;
  std::vector<Statement> body;
  std::vector<OutputFile> outputs;

  const Symbol& symbol(const std::string& name) const { return symbols.at(name); }
  // The symbols that hold `name`'s value: its parts for a kind with storage, else the symbol itself.
  std::vector<std::string> storage_of(const std::string& name) const;
  // Fills `out` with the call descriptor of `statement`: the operands' current types and the
  // statement's attributes; `device` for plan, emit and execute, else null.
  void call(const Statement& statement, CallDescriptor& out, const fugue_device_desc* device = nullptr) const;
};

}  // namespace fugue
