#include "plugins/plugin_registry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <spdlog/spdlog.h>

#include "plugins/plugin_probe.h"

namespace fugue {
namespace fs = std::filesystem;

namespace {

std::string abi_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// A struct a plugin hands over must be at least as large as ABI 2.0's (a newer minor may append).
#define FUGUE_V2_SIZE FUGUE_SIZE_UP_TO

// Checks one operation descriptor; returns an empty string when it is well formed.
std::string check_op(const fugue_op_desc* op) {
  if (!op) return "an operation descriptor is NULL";
  if (op->struct_size < FUGUE_V2_SIZE(fugue_op_desc, test_cases))
    return "an operation descriptor is smaller (" + std::to_string(op->struct_size) +
           " bytes) than ABI 2.0's";
  std::string name = op->name ? op->name : "";
  if (name.empty() || name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.')
    return "operation name '" + name + "' is not of the form family.op";
  if (op->num_operands > kMaxOperands)
    return name + " has " + std::to_string(op->num_operands) + " operands, more than " +
           std::to_string(kMaxOperands);
  if (op->num_operands > 0 && !op->operands) return name + " declares operands but gives none";
  if (op->num_attrs > 0 && !op->attrs) return name + " declares attributes but gives none";
  std::set<std::string> names;
  bool optional_seen = false, optional_input_seen = false;
  for (uint32_t i = 0; i < op->num_operands; ++i) {
    const auto* o = FUGUE_NTH(fugue_operand_desc, op->operands, i);
    if (o->struct_size < FUGUE_V2_SIZE(fugue_operand_desc, plugin_kinds))
      return name + ": operand descriptor " + std::to_string(i) + " is smaller than ABI 2.0's";
    if (!o->name || !*o->name) return name + ": operand " + std::to_string(i) + " has no name";
    if (o->role != FUGUE_ROLE_IN && o->role != FUGUE_ROLE_OUT && o->role != FUGUE_ROLE_INOUT)
      return name + ": operand '" + o->name + "' has an unknown role " + std::to_string(o->role);
    // A written operand may take plugin kinds (those with storage; the loader refuses a compile-time
    // one where a program writes it), never a const.
    if (o->role != FUGUE_ROLE_IN && (o->kinds & (FUGUE_KIND_BIT(FUGUE_KIND_CONST) | FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION))))
      return name + ": operand '" + o->name + "' is written but accepts a const or a function";
    const bool plugin_kind = o->kinds & FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN);
    if (plugin_kind != (o->plugin_kinds && *o->plugin_kinds))
      return name + ": operand '" + o->name + "' must name the plugin kinds it accepts exactly when its kinds "
             "include FUGUE_KIND_PLUGIN";
    if (!names.insert(o->name).second) return name + ": operand name '" + o->name + "' repeats";
    if (o->struct_size >= FUGUE_SIZE_UP_TO(fugue_operand_desc, flags)) {
      if (o->flags & ~FUGUE_OPERAND_OPTIONAL)
        return name + ": operand '" + o->name + "' has unknown flags " + std::to_string(o->flags);
      if ((o->flags & FUGUE_OPERAND_OPTIONAL) && o->role == FUGUE_ROLE_INOUT)
        return name + ": operand '" + o->name + "' is optional but updated in place (INOUT)";
      if ((o->flags & FUGUE_OPERAND_OPTIONAL) && o->role == FUGUE_ROLE_IN &&
          (o->struct_size < FUGUE_SIZE_UP_TO(fugue_operand_desc, default_value) || !(o->kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST))))
        return name + ": optional input '" + o->name + "' must accept a const (FUGUE_KIND_CONST) and give its default_value (ABI 2.5)";
      if (o->role == FUGUE_ROLE_IN && (o->flags & FUGUE_OPERAND_OPTIONAL)) optional_input_seen = true;
      else if (o->role != FUGUE_ROLE_OUT && optional_input_seen)  // INOUT operands are inputs too
        return name + ": input '" + o->name + "' follows an optional input: only the last inputs may be optional";
      if (o->role != FUGUE_ROLE_IN) optional_seen = optional_seen || (o->flags & FUGUE_OPERAND_OPTIONAL);
    }
    if (optional_seen && o->role != FUGUE_ROLE_IN &&
        !(o->struct_size >= FUGUE_SIZE_UP_TO(fugue_operand_desc, flags) && (o->flags & FUGUE_OPERAND_OPTIONAL)))
      return name + ": output '" + o->name + "' follows an optional output: only the last outputs may be optional";
  }
  for (uint32_t i = 0; i < op->num_attrs; ++i) {
    const auto* a = FUGUE_NTH(fugue_attr_desc, op->attrs, i);
    if (a->struct_size < FUGUE_V2_SIZE(fugue_attr_desc, doc) || !a->name || !*a->name)
      return name + ": attribute descriptor " + std::to_string(i) + " is malformed";
  }
  if (!op->infer || !op->plan || !op->cost || !op->reference)
    return name + " lacks one of infer, plan, cost, reference";
  if (!op->emit && !op->execute) return name + " has neither emit nor execute";
  return {};
}

bool identifier(const char* s) {
  if (!s || !(std::isalpha(static_cast<unsigned char>(*s)) || *s == '_')) return false;
  for (; *s; ++s)
    if (!(std::isalnum(static_cast<unsigned char>(*s)) || *s == '_')) return false;
  return true;
}

// "" when the kind descriptor is sound; otherwise what is wrong with it.
std::string check_kind(const fugue_kind_desc* kind) {
  if (!kind) return "a null kind descriptor";
  if (kind->struct_size < FUGUE_V2_SIZE(fugue_kind_desc, parts)) return "a kind descriptor smaller than ABI 2.0's";
  if (!identifier(kind->name)) return "a kind whose name is not an identifier";
  const std::string name = kind->name;
  if (!kind->declare || !kind->example) return "kind '" + name + "' lacks declare or example";
  if (kind->flags & ~(FUGUE_KIND_FLAG_COMPILE_TIME | FUGUE_KIND_FLAG_STORAGE | FUGUE_KIND_FLAG_CHOOSER))
    return "kind '" + name + "' has unknown flags";
  if (kind->flags & FUGUE_KIND_FLAG_CHOOSER) {
    if (kind->flags != FUGUE_KIND_FLAG_CHOOSER) return "kind '" + name + "' chooses kinds (FUGUE_KIND_FLAG_CHOOSER), so sets no other flag";
    if (kind->parts) return "kind '" + name + "' chooses kinds, so names no parts";
    std::istringstream keys(kind->keys ? kind->keys : "");
    for (std::string key; keys >> key;)
      if (key == "from") return "kind '" + name + "' lists key 'from', which the core reads for a chooser kind";
    return {};
  }
  const bool storage = kind->flags & FUGUE_KIND_FLAG_STORAGE;
  if (kind->struct_size >= FUGUE_SIZE_UP_TO(fugue_kind_desc, rows_value) && (kind->rows_type || kind->rows_value)) {
    if (!kind->rows_type != !kind->rows_value) return "kind '" + name + "' gives one of rows_type and rows_value without the other";
    if (!storage) return "kind '" + name + "' gives rows of its values (rows_type, rows_value) but has no storage";
  }
  if (kind->struct_size >= FUGUE_SIZE_UP_TO(fugue_kind_desc, rows_columns) && kind->rows_columns && !kind->rows_type) {
    return "kind '" + name + "' gives the columns of its rows (rows_columns) but not its rows (rows_type, rows_value)";
  }
  if (storage == static_cast<bool>(kind->flags & FUGUE_KIND_FLAG_COMPILE_TIME))
    return "kind '" + name + "' must set exactly one of FUGUE_KIND_FLAG_COMPILE_TIME and FUGUE_KIND_FLAG_STORAGE";
  if (!storage) {
    if (kind->parts) return "kind '" + name + "' is known at compile time but names parts";
    return {};
  }
  std::istringstream list(kind->parts ? kind->parts : "");
  std::set<std::string> parts;
  for (std::string part; list >> part;) {
    if (!identifier(part.c_str())) return "kind '" + name + "' names part '" + part + "', which is not an identifier";
    if (!parts.insert(part).second) return "kind '" + name + "' names part '" + part + "' twice";
  }
  if (parts.empty() || parts.size() > 64) return "kind '" + name + "' has storage but names " + std::to_string(parts.size()) + " parts (1 to 64)";
  std::istringstream keys(kind->keys ? kind->keys : "");
  for (std::string key; keys >> key;)
    if (key == "from" || key == "parts") return "kind '" + name + "' lists key '" + key + "', which the core reads for a kind with storage";
  return {};
}

// "" when the format descriptor is sound; otherwise what is wrong with it.
std::string check_format(const fugue_format_desc* format) {
  if (!format) return "a null format descriptor";
  if (format->struct_size < FUGUE_V2_SIZE(fugue_format_desc, user_data)) return "a format descriptor smaller than ABI 2.0's";
  if (!identifier(format->name)) return "a format whose name is not an identifier";
  const std::string name = format->name;
  std::istringstream list(format->extensions ? format->extensions : "");
  int count = 0;
  for (std::string e; list >> e; ++count)
    if (e.size() < 2 || e[0] != '.' || std::any_of(e.begin(), e.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); }))
      return "format '" + name + "' lists extension '" + e + "' (expected lower case with the dot: \".flo\")";
  if (count == 0) return "format '" + name + "' lists no extension";
  if (!format->probe != !format->read) return "format '" + name + "' gives one of probe and read without the other";
  if (!format->accepts != !format->write) return "format '" + name + "' gives one of accepts and write without the other";
  if (format->struct_size >= FUGUE_SIZE_UP_TO(fugue_format_desc, read_as) && !format->probe_as != !format->read_as)
    return "format '" + name + "' gives one of probe_as and read_as without the other";
  if (!format->probe && !format->write &&
      !(format->struct_size >= FUGUE_SIZE_UP_TO(fugue_format_desc, read_as) && format->probe_as))
    return "format '" + name + "' neither reads nor writes";
  return {};
}

std::string check_generator(const fugue_generator_desc* generator) {
  if (!generator) return "a null generator descriptor";
  if (generator->struct_size < FUGUE_V2_SIZE(fugue_generator_desc, user_data))
    return "a generator descriptor smaller than ABI 2.0's";
  if (!identifier(generator->name)) return "a generator whose name is not an identifier";
  const std::string name = generator->name;
  const bool values = generator->struct_size >= FUGUE_SIZE_UP_TO(fugue_generator_desc, generate_as) && generator->probe_as;
  if (generator->struct_size >= FUGUE_SIZE_UP_TO(fugue_generator_desc, generate_as) && !generator->probe_as != !generator->generate_as)
    return "generator '" + name + "' gives one of probe_as and generate_as without the other";
  if (values && !generator->check && !generator->generate && !generator->dtypes) return {};  // it makes values of kinds only
  if (!generator->check || !generator->generate) return "generator '" + name + "' lacks check or generate";
  if (!generator->dtypes || (generator->dtypes & ~static_cast<uint32_t>(FUGUE_DTYPES_ALL)))
    return "generator '" + name + "' makes no known dtype";
  return {};
}

}  // namespace

PluginRegistry::PluginRegistry() {
  formats_ = builtin_formats();
  const auto generator = [&](const std::string& name, const std::string& doc) {
    generators_[name] = std::make_shared<const Generator>(name, doc, FUGUE_DTYPES_ALL);
  };
  generator("zeros", "{}: every element 0");
  generator("fill", "v: every element v");
  generator("random", "{\"seed\", \"low\", \"high\"}: uniform in [low, high), the same on every machine");
  generator("arange", "{\"start\", \"step\"}: element i (flat) = start + i * step");
  const auto builtin = [&](const std::string& name, const std::string& doc, std::vector<std::string> keys) {
    kinds_[name] = std::make_shared<const Kind>(name, doc, std::move(keys));
  };
  builtin("array", "a dense row-major array on the device", {"dtype", "shape", "from", "value"});
  builtin("scalar", "one value on the device", {"dtype", "from", "value"});
  builtin("const", "a number baked into the generated kernels", {"value"});
  builtin("function", "a user function: parameters and a body of element-wise operations, which the operations "
          "that take one call element by element", {"params", "body", "result"});
}

std::shared_ptr<const Kind> PluginRegistry::find_kind(const std::string& name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : it->second;
}

std::shared_ptr<const FileFormat> PluginRegistry::reader_for(const std::string& extension) const {
  for (const auto& f : formats_)
    if (f->reads() && f->has_extension(extension)) return f;
  return nullptr;
}

std::vector<std::shared_ptr<const FileFormat>> PluginRegistry::writers_for(const std::string& extension) const {
  std::vector<std::shared_ptr<const FileFormat>> out;
  for (const auto& f : formats_)
    if (f->writes() && f->has_extension(extension)) out.push_back(f);
  return out;
}

std::string PluginRegistry::extensions_text(bool writing) const {
  std::vector<std::string> list;
  for (const auto& f : formats_)
    if (writing ? f->writes() : f->reads())
      for (const auto& e : f->extensions())
        if (std::find(list.begin(), list.end(), e) == list.end()) list.push_back(e);
  std::string text;
  for (size_t i = 0; i < list.size(); ++i)
    text += (i == 0 ? "" : i + 1 == list.size() ? " or " : ", ") + list[i];
  return text;
}

std::shared_ptr<const Generator> PluginRegistry::find_generator(const std::string& name) const {
  auto it = generators_.find(name);
  return it == generators_.end() ? nullptr : it->second;
}

std::vector<const Generator*> PluginRegistry::generators() const {
  std::vector<const Generator*> out;
  for (const auto& [name, g] : generators_)
    if (g->builtin()) out.push_back(g.get());
  for (const auto& [name, g] : generators_)
    if (!g->builtin()) out.push_back(g.get());
  return out;
}

std::vector<const Kind*> PluginRegistry::kinds() const {
  std::vector<const Kind*> out;
  for (const auto& [name, kind] : kinds_)
    if (kind->builtin()) out.push_back(kind.get());
  for (const auto& [name, kind] : kinds_)
    if (!kind->builtin()) out.push_back(kind.get());
  return out;
}

std::vector<fs::path> PluginRegistry::default_search_path() {
  std::vector<fs::path> folders;
  std::error_code ec;
  fs::path exe_dir = boost::dll::program_location(ec).parent_path();
  if (!ec) {
    folders.push_back(exe_dir / ".." / "plugins");
    folders.push_back(exe_dir / ".." / FUGUE_INSTALL_PLUGIN_DIR);
  }
  if (const char* env = std::getenv("FUGUE_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) folders.emplace_back(item);
  }
  return folders;
}

void PluginRegistry::load_folder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".so") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_probed(f);
}

void PluginRegistry::load_defaults(const std::vector<fs::path>& extra_files) {
  for (const auto& folder : default_search_path()) load_folder(folder);
  for (const auto& file : extra_files) load_probed(file);
}

bool PluginRegistry::load_probed(const fs::path& file) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  const std::string key = ec ? file.string() : canonical.string();
  if (std::find(loaded_files_.begin(), loaded_files_.end(), key) != loaded_files_.end()) return true;
  if (!fs::exists(file, ec)) return load_file(file);  // refused as load_file refuses it
  // The child checks the library alone, as load_file would; conflicts with plugins loaded here are
  // load_file's to find afterwards.
  const ProbeVerdict verdict = probe_plugin(file, [&] {
    PluginRegistry alone;
    alone.load_file(file);
    return alone.refusals().empty() ? std::string() : alone.refusals().front().reason;
  });
  if (verdict.outcome == ProbeVerdict::Outcome::Unsound) {
    refuse(file, verdict.reason + (verdict.cached ? " (seen in a child process before; probed again when the file changes)"
                                                  : " (seen in a child process; the verdict is cached until the file changes)"));
    return false;
  }
  if (verdict.outcome == ProbeVerdict::Outcome::Unprobed)
    spdlog::warn("plugin {} could not be probed in a child process ({}): loading it unprobed", file.string(),
                 verdict.reason);
  return load_file(file);
}

void PluginRegistry::refuse(const fs::path& file, const std::string& reason) {
  refusals_.push_back({file.string(), reason});
  spdlog::warn("plugin {} refused: {}", file.string(), reason);
}

bool PluginRegistry::load_file(const fs::path& file) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(file, ec);
  std::string key = ec ? file.string() : canonical.string();
  if (std::find(loaded_files_.begin(), loaded_files_.end(), key) != loaded_files_.end()) return true;
  if (!fs::exists(file, ec)) {
    refuse(file, "no such file");
    return false;
  }

  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->file = file.string();
  try {
    plugin->library.load(file, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    refuse(file, std::string("not a loadable shared library (") + e.what() + ")");
    return false;
  }
  if (!plugin->library.has(FUGUE_PLUGIN_ENTRY_NAME)) {
    refuse(file, std::string("a shared library without the entry point '") + FUGUE_PLUGIN_ENTRY_NAME +
                     "': not a Fugue plugin (define it with FUGUE_DEFINE_PLUGIN_ENTRY)");
    return false;
  }
  auto entry = plugin->library.get<const fugue_plugin*(uint32_t, uint32_t)>(FUGUE_PLUGIN_ENTRY_NAME);
  const fugue_plugin* table = entry(FUGUE_ABI_VERSION_MAJOR, FUGUE_ABI_VERSION_MINOR);
  if (!table) {
    refuse(file, "its entry point returned no table (the plugin failed to initialise)");
    return false;
  }
  if (table->struct_size < offsetof(fugue_plugin, abi_minor) + sizeof(uint32_t)) {
    refuse(file, "its table is too small to hold an ABI version");
    return false;
  }
  if (table->abi_major != FUGUE_ABI_VERSION_MAJOR) {
    refuse(file, "built for plugin ABI " + abi_string(table->abi_major, table->abi_minor) +
                     ", but this Fugue has ABI " +
                     abi_string(FUGUE_ABI_VERSION_MAJOR, FUGUE_ABI_VERSION_MINOR) +
                     ": rebuild the plugin against this Fugue's SDK");
    return false;
  }
  if (table->struct_size < FUGUE_V2_SIZE(fugue_plugin, generators)) {
    refuse(file, "its plugin table is smaller than ABI 2.0's (built against an earlier draft of the 2.0 header?): "
                 "rebuild the plugin against this Fugue's SDK");
    return false;
  }
  if (!table->name || !*table->name || (table->num_ops > 0 && !table->ops)) {
    refuse(file, "its plugin table is malformed (name or operation list)");
    return false;
  }
  plugin->table = table;
  plugin->name = table->name;
  plugin->version = table->version ? table->version : "";
  plugin->description = table->description ? table->description : "";
  plugin->abi_major = table->abi_major;
  plugin->abi_minor = table->abi_minor;

  // All or nothing: check every operation before registering any.
  std::set<std::string> own;
  for (uint32_t i = 0; i < table->num_ops; ++i) {
    const fugue_op_desc* op = table->ops[i];
    std::string problem = check_op(op);
    if (!problem.empty()) {
      refuse(file, "plugin '" + plugin->name + "': " + problem);
      return false;
    }
    if (!own.insert(op->name).second) {
      refuse(file, "plugin '" + plugin->name + "' lists operation '" + op->name + "' twice");
      return false;
    }
    if (auto it = operations_.find(op->name); it != operations_.end()) {
      const auto& other = it->second->plugin();
      refuse(file, "operation '" + std::string(op->name) + "' of plugin '" + plugin->name +
                       "' is already registered by plugin '" + other.name + "' (" + other.file + ")");
      return false;
    }
  }
  if (table->struct_size < FUGUE_V2_SIZE(fugue_plugin, kinds) || (table->num_kinds > 0 && !table->kinds)) {
    refuse(file, "plugin '" + plugin->name + "': its kind list is malformed");
    return false;
  }
  std::set<std::string> own_kinds;
  for (uint32_t i = 0; i < table->num_kinds; ++i) {
    const fugue_kind_desc* kind = table->kinds[i];
    if (std::string problem = check_kind(kind); !problem.empty()) {
      refuse(file, "plugin '" + plugin->name + "': " + problem);
      return false;
    }
    if (!own_kinds.insert(kind->name).second) {
      refuse(file, "plugin '" + plugin->name + "' lists kind '" + kind->name + "' twice");
      return false;
    }
    if (auto it = kinds_.find(kind->name); it != kinds_.end()) {
      const LoadedPlugin* other = it->second->plugin();
      refuse(file, "kind '" + std::string(kind->name) + "' of plugin '" + plugin->name + "' is already defined by " +
                       (other ? "plugin '" + other->name + "' (" + other->file + ")" : std::string("the core")));
      return false;
    }
  }
  if (table->struct_size < FUGUE_V2_SIZE(fugue_plugin, generators) || (table->num_formats > 0 && !table->formats) ||
      (table->num_generators > 0 && !table->generators)) {
    refuse(file, "plugin '" + plugin->name + "': its format or generator list is malformed");
    return false;
  }
  for (uint32_t i = 0; i < table->num_formats; ++i)
    if (std::string problem = check_format(table->formats[i]); !problem.empty()) {
      refuse(file, "plugin '" + plugin->name + "': " + problem);
      return false;
    }
  std::set<std::string> own_generators;
  for (uint32_t i = 0; i < table->num_generators; ++i) {
    const fugue_generator_desc* g = table->generators[i];
    if (std::string problem = check_generator(g); !problem.empty()) {
      refuse(file, "plugin '" + plugin->name + "': " + problem);
      return false;
    }
    if (!own_generators.insert(g->name).second || generators_.count(g->name)) {
      const auto it = generators_.find(g->name);
      const LoadedPlugin* other = it == generators_.end() ? plugin.get() : it->second->plugin();
      refuse(file, "generator '" + std::string(g->name) + "' of plugin '" + plugin->name + "' is already defined by " +
                       (other ? "plugin '" + other->name + "'" : std::string("the core")));
      return false;
    }
  }
  // Tuners (2.8): a table that ends before them has none.
  const uint32_t num_tuners = table->struct_size >= FUGUE_SIZE_UP_TO(fugue_plugin, tuners) ? table->num_tuners : 0;
  if (num_tuners > 0 && !table->tuners) {
    refuse(file, "plugin '" + plugin->name + "': its tuner list is malformed");
    return false;
  }
  std::set<std::string> own_tuners;
  for (uint32_t i = 0; i < num_tuners; ++i) {
    if (std::string problem = check_tuner(table->tuners[i]); !problem.empty()) {
      refuse(file, "plugin '" + plugin->name + "': " + problem);
      return false;
    }
    if (!own_tuners.insert(table->tuners[i]->name).second || tuners_.count(table->tuners[i]->name)) {
      refuse(file, "tuner '" + std::string(table->tuners[i]->name) + "' of plugin '" + plugin->name + "' is already defined by another plugin");
      return false;
    }
  }
  std::shared_ptr<const LoadedPlugin> shared = plugin;
  for (uint32_t i = 0; i < num_tuners; ++i) tuners_[table->tuners[i]->name] = std::make_shared<const Tuner>(shared, table->tuners[i]);
  for (uint32_t i = 0; i < table->num_formats; ++i)
    formats_.push_back(std::make_shared<const FileFormat>(shared, table->formats[i]));
  for (uint32_t i = 0; i < table->num_generators; ++i)
    generators_[table->generators[i]->name] = std::make_shared<const Generator>(shared, table->generators[i]);
  for (uint32_t i = 0; i < table->num_ops; ++i)
    operations_[table->ops[i]->name] = std::make_shared<const Operation>(shared, table->ops[i]);
  for (uint32_t i = 0; i < table->num_kinds; ++i)
    kinds_[table->kinds[i]->name] = std::make_shared<const Kind>(shared, table->kinds[i]);
  plugins_.push_back(shared);
  loaded_files_.push_back(key);
  spdlog::debug("loaded plugin {} {} ({} operations) from {}", plugin->name, plugin->version,
                table->num_ops, file.string());
  return true;
}

const Tuner* PluginRegistry::find_tuner(const std::string& name) const {
  auto it = tuners_.find(name);
  return it == tuners_.end() ? nullptr : it->second.get();
}

std::vector<const Tuner*> PluginRegistry::tuners() const {
  std::vector<const Tuner*> out;
  for (const auto& [name, t] : tuners_) out.push_back(t.get());
  return out;
}

std::shared_ptr<const Operation> PluginRegistry::find(const std::string& name) const {
  auto it = operations_.find(name);
  return it == operations_.end() ? nullptr : it->second;
}

std::vector<const Operation*> PluginRegistry::operations_of(const LoadedPlugin& plugin) const {
  std::vector<const Operation*> ops;
  for (const auto& [name, op] : operations_)
    if (&op->plugin() == &plugin) ops.push_back(op.get());
  return ops;
}

}  // namespace fugue
