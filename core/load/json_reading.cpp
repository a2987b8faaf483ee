// json_reading.cpp: the loader's messages (the file and the JSON pointer, what was expected and what
// was found) and its readers of JSON values of an expected type: names, dtypes, shapes, numbers.
#include "load/loader.h"

#include <cctype>

namespace fugue::load {

// What a JSON value looks like, for "found ..." in messages.
std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* type = v.is_object()            ? "an object"
                     : v.is_array()           ? "a list"
                     : v.is_string()          ? "a string"
                     : v.is_boolean()         ? "a boolean"
                     : v.is_number_integer()  ? "an integer"
                     : v.is_number()          ? "a number"
                                              : "null";
  return std::string(type) + " " + text;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string c_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Byte offset -> "line L, column C".
std::string position(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// --- messages ---------------------------------------------------------------------------
std::string Loader::at(const std::string& pointer) const {
  return file_.string() + ":" + (pointer.empty() ? "/" : pointer);
}

void Loader::fail(const std::string& pointer, const std::string& expected,
                       const std::string& found) const {
  throw UserError(at(pointer) + ": expected " + expected + ", found " + found);
}

void Loader::error(const std::string& pointer, const std::string& message) const {
  throw UserError(at(pointer) + ": " + message);
}

void Loader::expect_object(const json& v, const std::string& p) const {
  if (!v.is_object()) fail(p, "an object", describe(v));
}

void Loader::check_keys(const json& v, const std::string& p, const std::vector<std::string>& allowed) const {
  for (const auto& [key, value] : v.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      error(p + "/" + key, "unknown key '" + key + "' (expected one of: " + join(allowed) + ")");
}

std::string too_deep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return position(text, i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return "";
}

json::parser_callback_t duplicate_key_check() {
  struct Frame {
    bool array = false;
    int64_t index = -1;             // array: the element being read
    std::string key;                // object: the member being read
    std::set<std::string> keys;     // object: the keys seen
  };
  auto frames = std::make_shared<std::vector<Frame>>();
  return [frames](int /*depth*/, json::parse_event_t event, json& parsed) {
    auto& f = *frames;
    const auto element = [&] {
      if (!f.empty() && f.back().array) ++f.back().index;
    };
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        element();
        f.push_back(Frame{event == json::parse_event_t::array_start, -1, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!f.empty()) f.pop_back();
        break;
      case json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        if (!f.empty() && !f.back().keys.insert(key).second) {
          std::string pointer;
          for (size_t i = 0; i + 1 < f.size(); ++i)
            pointer += "/" + (f[i].array ? std::to_string(f[i].index) : f[i].key);
          throw UserError(":" + pointer + "/" + key + ": the key '" + key +
                          "' appears twice in one object (JSON leaves which one counts undefined)");
        }
        if (!f.empty()) f.back().key = key;
        break;
      }
      case json::parse_event_t::value:
        element();
        break;
    }
    return true;
  };
}

void Loader::check_document(const json& doc) const {
  struct Item {
    const json* value;
    std::string pointer;
    int depth;
  };
  std::vector<Item> stack{{&doc, "", 0}};
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    const json& v = *item.value;
    if (item.depth > kMaxJsonDepth)
      error(item.pointer, "values nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (v.is_string() && v.get_ref<const std::string&>().find('\0') != std::string::npos)
      fail(item.pointer, "a string without NUL characters", "one with a NUL (\\u0000)");
    if (v.is_object()) {
      for (const auto& [key, child] : v.items()) {
        if (key.find('\0') != std::string::npos)
          fail(item.pointer, "keys without NUL characters", "one with a NUL (\\u0000)");
        stack.push_back({&child, item.pointer + "/" + key, item.depth + 1});
      }
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) stack.push_back({&v[i], item.pointer + "/" + std::to_string(i), item.depth + 1});
    }
  }
}

void Loader::check_regular_file(const fs::path& path, const std::string& p) const {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return;  // the format's reader says it is missing
  if (!fs::is_regular_file(status))
    error(p, "'" + path.string() + "' is not a regular file (" +
                 (fs::is_directory(status) ? "a folder" : fs::is_fifo(status) ? "a FIFO" : "a device or socket") +
                 "): Fugue reads inputs from regular files only");
}

// --- symbols ----------------------------------------------------------------------------
void Loader::check_name(const std::string& name, const std::string& p) const {
  // A plain scan: a regular expression recurses per character, and names come from users.
  constexpr size_t kMaxName = 256;
  const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  const bool ok = !name.empty() && name.size() <= kMaxName && letter(name[0]) &&
                  std::all_of(name.begin(), name.end(),
                              [&](char c) { return letter(c) || std::isdigit(static_cast<unsigned char>(c)); });
  if (!ok)
    fail(p, "a symbol name of at most " + std::to_string(kMaxName) +
                " letters, digits and _ (not starting with a digit)",
         "'" + (name.size() > 60 ? name.substr(0, 57) + "..." : name) + "'");
}

DType Loader::dtype_of(const json& v, const std::string& p) const {
  if (!v.is_string()) fail(p, "a dtype name (" + dtype_names() + ")", describe(v));
  auto d = parse_dtype(v.get<std::string>());
  if (!d) fail(p, "a dtype name (" + dtype_names() + ")", describe(v));
  return *d;
}

Shape Loader::shape_of(const json& v, const std::string& p, uint32_t* runtime_axes) const {
  if (!v.is_array()) fail(p, "a shape: a list of extents", describe(v));
  if (v.size() > kMaxRank)
    fail(p, "at most " + std::to_string(kMaxRank) + " axes", std::to_string(v.size()));
  Shape shape;
  if (runtime_axes) *runtime_axes = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    json e = v[i];
    std::string pi = p + "/" + std::to_string(i);
    // {"capacity": n}: a length known at run time, at most n (the first axis only).
    if (e.is_object()) {
      if (i != 0 || !runtime_axes)
        fail(pi, "an extent (only the first axis of an array may be {\"capacity\": n})", describe(e));
      check_keys(e, pi, {"capacity"});
      if (!e.contains("capacity")) fail(pi + "/capacity", "the most the axis can hold (an integer)", "none");
      *runtime_axes = 1;
      pi += "/capacity";
      e = e["capacity"];
    }
    double extent;
    if (e.is_number_integer()) {
      extent = static_cast<double>(e.get<int64_t>());
    } else if (e.is_string()) {
      auto it = program_.symbols.find(e.get<std::string>());
      if (it == program_.symbols.end() || it->second.kind != SymbolKind::Const)
        fail(pi, "an extent: an integer or the name of a const", describe(e));
      extent = it->second.const_value;
    } else {
      fail(pi, "an extent: an integer or the name of a const", describe(e));
    }
    if (extent < 0 || extent != std::floor(extent) || extent > 9.0e15)
      fail(pi, "a non-negative integer extent", std::to_string(extent));
    shape.push_back(static_cast<int64_t>(extent));
  }
  try {
    shape_elements(shape);
  } catch (const UserError& e) {
    error(p, e.what());
  }
  return shape;
}

double Loader::number_of(const json& v, const std::string& p, const std::string& what) const {
  if (!v.is_number()) fail(p, what, describe(v));
  return v.get<double>();
}

}  // namespace fugue::load
