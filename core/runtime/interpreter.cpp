#include "runtime/interpreter.h"

#include <cmath>
#include <cstdio>

#include "errors.h"

namespace fugue {

bool compare_values(const std::string& c, double a, double b) {
  if (c == "lt") return a < b;
  if (c == "le") return a <= b;
  if (c == "gt") return a > b;
  if (c == "ge") return a >= b;
  if (c == "eq") return a == b;
  if (c == "ne") return a != b;
  throw std::logic_error("unknown comparison " + c);
}

namespace {

enum class Flow { Normal, Break };

class Interpreter {
 public:
  Interpreter(const Program& program, Backend& backend) : program_(program), backend_(backend) {}

  Flow block(const std::vector<Statement>& body) {
    for (const auto& st : body) {
      switch (st.kind) {
        case Statement::Kind::Op:
          backend_.run_op(st);
          break;
        case Statement::Kind::Break:
          return Flow::Break;
        case Statement::Kind::If: {
          double lhs = st.lhs_symbol.empty() ? st.lhs_value : value(st.lhs_symbol);
          double rhs = st.rhs_symbol.empty() ? st.rhs_value : value(st.rhs_symbol);
          const auto& branch = compare_values(st.compare, lhs, rhs) ? st.body : st.else_body;
          if (block(branch) == Flow::Break) return Flow::Break;
          break;
        }
        case Statement::Kind::For: {
          int64_t count = st.count_value;
          if (!st.count_symbol.empty()) {
            double v = value(st.count_symbol);
            if (!(v >= 0) || v != std::floor(v) || v > 9.0e15) {
              char text[32];
              std::snprintf(text, sizeof text, "%.17g", v);
              throw UserError(st.where + ": loop count '" + st.count_symbol + "' is " + text + "; expected an integer from 0 to 9e15");
            }
            count = static_cast<int64_t>(v);
          }
          for (int64_t i = 0; i < count; ++i) {
            backend_.set_loop_variable(st.variable, i);
            if (block(st.body) == Flow::Break) break;
          }
          break;
        }
      }
    }
    return Flow::Normal;
  }

 private:
  double value(const std::string& symbol) {
    const Symbol& s = program_.symbol(symbol);
    if (s.kind == SymbolKind::Const) return s.const_value;
    return backend_.scalar_value(symbol);
  }

  const Program& program_;
  Backend& backend_;
};

}  // namespace

void interpret(const Program& program, const std::vector<Statement>& body, Backend& backend) {
  Interpreter(program, backend).block(body);
}

}  // namespace fugue
