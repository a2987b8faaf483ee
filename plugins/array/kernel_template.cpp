// kernel_template.cpp: placeholder expansion of the .cl templates.
#include "kernel_template.h"

#include <algorithm>
#include <stdexcept>

namespace fugue::array {

namespace {

bool starts_name(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }
bool continues_name(char c) { return starts_name(c) || (c >= '0' && c <= '9'); }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\n") - first + 1);
}

// The comma-separated arguments of the parenthesis opening at `open`, and where they end.
std::pair<std::vector<std::string_view>, std::size_t> arguments(std::string_view text,
                                                                std::size_t open,
                                                                const std::string& name) {
  if (open >= text.size() || text[open] != '(')
    throw std::logic_error("kernel template: $" + name + " is a function, but no '(' follows it");
  std::vector<std::string_view> args;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && --depth == 0) {
      args.push_back(trim(text.substr(start, i - start)));
      return {args, i + 1};
    } else if (c == ',' && depth == 1) {
      args.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  throw std::logic_error("kernel template: $" + name + "( is never closed");
}

}  // namespace

KernelTemplate::KernelTemplate(std::string_view source) {
  source.remove_prefix(std::min(source.size(), source.find_first_not_of(" \t\n")));
  if (source.substr(0, 2) == "/*") {
    const auto end = source.find("*/");
    if (end == std::string_view::npos)
      throw std::logic_error("kernel template: its opening comment is never closed");
    source.remove_prefix(end + 2);
    source.remove_prefix(std::min(source.size(), source.find_first_not_of('\n')));
  }
  code_ = std::string(source);
  if (!code_.empty() && code_.back() != '\n') code_ += '\n';
}

KernelTemplate& KernelTemplate::value(const std::string& name, std::string text) {
  values_[name] = std::move(text);
  return *this;
}

KernelTemplate& KernelTemplate::function(const std::string& name, std::size_t arity,
                                         Function function) {
  functions_[name] = {arity, std::move(function)};
  return *this;
}

std::string KernelTemplate::expand() const { return expand(code_); }

std::string KernelTemplate::expand(std::string_view text) const {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 == text.size() || !starts_name(text[i + 1])) {
      out += text[i++];
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && continues_name(text[end])) ++end;
    const std::string name(text.substr(i + 1, end - i - 1));
    if (const auto f = functions_.find(name); f != functions_.end()) {
      const auto [args, next] = arguments(text, end, name);
      if (args.size() != f->second.first)
        throw std::logic_error("kernel template: $" + name + " takes " +
                               std::to_string(f->second.first) + " arguments, found " +
                               std::to_string(args.size()));
      std::vector<std::string> expanded;
      for (std::string_view arg : args) expanded.push_back(expand(arg));
      out += f->second.second(expanded);
      i = next;
    } else if (const auto v = values_.find(name); v != values_.end()) {
      out += v->second;
      i = end;
    } else {
      throw std::logic_error("kernel template: $" + name + " has no value");
    }
  }
  return out;
}

}  // namespace fugue::array
