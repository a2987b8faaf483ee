// kernel_template.h: the plugin's .cl templates and their placeholders, $NAME and $NAME(args).
//
// A template is OpenCL C for one phase. $NAME stands for a value (a type, a builtin); $NAME(a, b)
// for code a function makes of its arguments, which are expanded first. ${...} is left alone: it
// is the Emitter's, formatted after expansion. The template's opening comment documents it and is
// not emitted.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fugue::array {

class KernelTemplate {
 public:
  using Function = std::function<std::string(const std::vector<std::string>& args)>;

  explicit KernelTemplate(std::string_view source);
  KernelTemplate& value(const std::string& name, std::string text);
  KernelTemplate& function(const std::string& name, std::size_t arity, Function function);
  // The code with every placeholder replaced; a placeholder without a value is a logic_error.
  std::string expand() const;

 private:
  std::string expand(std::string_view text) const;

  std::string code_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::pair<std::size_t, Function>> functions_;
};

}  // namespace fugue::array
