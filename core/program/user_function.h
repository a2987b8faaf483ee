// user_function.h: a program's "function" symbol: parameters and a body of element-wise operations.
// An operation that takes one (a FUGUE_KIND_FUNCTION operand) calls it inside its own loop: the core
// writes the body's code as an OpenCL C function (codegen/function_writer.h), and the operation's
// reference evaluates it on the host through the body's own references. A function is typed at each
// call by its arguments' dtypes, so one function serves f32 and f64 alike.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "program/program.h"

namespace fugue {

// The most parameters a function takes.
constexpr size_t kMaxFunctionParams = 16;

struct UserFunction {
  std::string name;
  std::string where;  // "file.json:/symbols/f", for messages
  std::vector<std::string> params;
  // Operation calls whose operands name parameters, values written earlier in the body, and consts
  // (the program's, or numbers written in place); each value is written once.
  std::vector<Statement> body;
  std::string result;  // a parameter, or a value the body writes
  // The consts the body reads, with their values (fixed when the program loaded).
  std::map<std::string, double> consts;

  // Whether `name` is a parameter or a value the body writes.
  bool local(const std::string& name) const;
};

// A function's body typed for one set of argument dtypes: every parameter's and value's dtype.
struct TypedFunction {
  std::map<std::string, DType> dtypes;
  DType result = DType::None;
};

// Types `f` for arguments of `args` (one per parameter), each body operation through its infer (its
// results arrays of the arguments' shape) and its plan (element-wise). Throws UserError naming the
// statement.
TypedFunction type_function(const UserFunction& f, const std::vector<DType>& args);

// The call descriptor of body statement `index` of a typed function, its arrays of `count` elements
// (parameters and values are arrays of one shape, [count]; consts are consts); `device` for plan and emit.
void describe_body_call(const UserFunction& f, const TypedFunction& typed, size_t index, int64_t count,
                        CallDescriptor& out, const fugue_device_desc* device = nullptr);

// Refuses (UserError naming the statement) a body operation whose plan is not element-wise: ELEMENT
// level, one phase, no workspace, every array touched at its own element only.
void check_element_wise(const Statement& statement, const abi::Plan& plan, const CallDescriptor& call);

// Evaluates `f` on the host, `count` calls at once: argument i of call j at args[i][j] (C arrays of
// arg_dtypes[i]), the result of call j into result[j]. Runs the body's references. Throws UserError.
void evaluate_function(const UserFunction& f, const std::vector<DType>& arg_dtypes, const void* const* args,
                       uint64_t count, void* result);

// The fugue_function_services of `call` (its `functions` per operand), or null when no operand is a
// function: what CallDescriptor::bind puts in fugue_call.functions.
const fugue_function_services* bind_function_services(CallDescriptor& call);

}  // namespace fugue
