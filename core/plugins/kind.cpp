#include "plugins/kind.h"

#include <functional>
#include <sstream>

#include "errors.h"
#include "io/file_format.h"

namespace fugue {

Kind::Kind(std::string name, std::string doc, std::vector<std::string> keys)
    : name_(std::move(name)), doc_(std::move(doc)), keys_(std::move(keys)) {}

Kind::Kind(std::shared_ptr<const LoadedPlugin> plugin, const fugue_kind_desc* desc)
    : plugin_(std::move(plugin)), desc_(desc), name_(desc->name), doc_(desc->doc ? desc->doc : "") {
  std::istringstream keys(desc->keys ? desc->keys : "");
  for (std::string key; keys >> key;) keys_.push_back(key);
  std::istringstream parts(desc->parts ? desc->parts : "");
  for (std::string part; parts >> part;) parts_.push_back(part);
}

namespace {

// A plugin's status as an exception: its message for the program's mistakes, the plugin named for its own.
// `who` names the function ("kind csr: declare", "format mtx: probe_as").
void check(fugue_status status, const ErrorBuffer& error, const std::string& who, const LoadedPlugin& plugin) {
  if (status == FUGUE_OK) return;
  std::string message = error.text();
  if (message.empty()) message = "failed without a message (status " + std::to_string(status) + ")";
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED) throw UserError(message);
  throw DeviceError(who + ": " + message + " (internal error of plugin '" + plugin.name + "', " + plugin.file + ")");
}

// A value of a kind (its type's metadata with it) as the C view the kind's functions take, holding what
// the view points into (so it stays where it is).
class ValueView {
 public:
  ValueView(const HostArray& value, const std::vector<unsigned char>& metadata) : type_(type_of(value)) {
    type_.metadata = metadata;
    view_ = type_.view();
    host_ = host_view(value, view_, parts_);
  }
  ValueView(const ValueView&) = delete;
  ValueView& operator=(const ValueView&) = delete;
  fugue_host_array* get() { return &host_; }

 private:
  abi::Type type_;
  fugue_type view_{};
  std::vector<fugue_host_array> parts_;
  fugue_host_array host_{};
};

}  // namespace

DeclaredType read_declared(const std::function<fugue_status(fugue_declared*, fugue_error*)>& fill,
                           const std::vector<std::string>& part_names, const std::string& who, const LoadedPlugin& plugin,
                           bool chooses) {
  std::vector<int64_t> shape(kMaxRank + 1, 0);  // one axis too many shows as a malformed type
  std::vector<unsigned char> metadata(256);
  std::vector<char> note(512, 0);
  const size_t room = chooses ? 64 : part_names.size();  // a chosen kind has at most 64 parts
  // Room for each part's type: kMaxRank + 1 axes, so one too many shows as a malformed type.
  std::vector<std::vector<int64_t>> part_shapes(room, std::vector<int64_t>(kMaxRank + 1, 0));
  std::vector<fugue_declared> part_room(room);
  const std::string by = " (plugin '" + plugin.name + "')";
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (size_t k = 0; k < room; ++k) {
      part_room[k] = fugue_declared{};
      part_room[k].struct_size = sizeof(fugue_declared);
      part_room[k].shape = part_shapes[k].data();
      part_room[k].shape_capacity = static_cast<uint32_t>(part_shapes[k].size());
    }
    fugue_declared out{};
    out.struct_size = sizeof out;
    out.shape = shape.data();
    out.shape_capacity = static_cast<uint32_t>(shape.size());
    out.metadata = metadata.data();
    out.metadata_capacity = metadata.size();
    out.parts_capacity = out.num_parts = static_cast<uint32_t>(room);
    out.parts = part_room.empty() ? nullptr : part_room.data();
    out.note = note.data();
    out.note_capacity = static_cast<uint32_t>(note.size());
    ErrorBuffer error;
    check(fill(&out, error.get()), error, who, plugin);
    if (out.metadata_bytes > out.metadata_capacity) {
      if (attempt == 1 || out.metadata_bytes > (uint64_t{1} << 30))
        throw DeviceError(who + " asked for " + std::to_string(out.metadata_bytes) + " bytes of metadata twice" + by);
      metadata.resize(out.metadata_bytes);
      continue;
    }
    if (out.rank > kMaxRank || !fugue_dtype_supported(out.dtype))
      throw DeviceError(who + " produced a malformed type (rank " + std::to_string(out.rank) + ", dtype " +
                        std::to_string(out.dtype) + ")" + by);
    DeclaredType t;
    t.dtype = static_cast<DType>(out.dtype);
    t.shape.assign(shape.begin(), shape.begin() + out.rank);
    for (int64_t n : t.shape)
      if (n < 0) throw DeviceError(who + " produced a negative extent" + by);
    t.metadata.assign(metadata.begin(), metadata.begin() + static_cast<std::ptrdiff_t>(out.metadata_bytes));
    if (plugin.abi_minor >= 21 && out.runtime_axes)
      throw DeviceError(who + " gave the value itself run-time axes (only a part's first axis may have one)" + by);
    if (chooses) {
      if (!out.kind_name || !*out.kind_name) throw DeviceError(who + " chose no kind (fugue_declared.kind_name)" + by);
      t.kind_name = out.kind_name;
      note.back() = 0;
      t.note = note.data();
      if (out.num_parts == 0 || out.num_parts > room) throw DeviceError(who + " gave " + std::to_string(out.num_parts) + " parts" + by);
    } else if (out.num_parts != part_names.size()) {
      throw DeviceError(who + " gave " + std::to_string(out.num_parts) + " parts; the kind names " +
                        std::to_string(part_names.size()) + by);
    }
    for (size_t k = 0; k < out.num_parts; ++k) {
      const fugue_declared& part = part_room[k];
      const std::string part_name = k < part_names.size() ? part_names[k] : std::to_string(k);
      if (part.rank > kMaxRank || !fugue_dtype_supported(part.dtype))
        throw DeviceError(who + " produced a malformed type for part '" + part_name + "' (rank " +
                          std::to_string(part.rank) + ", dtype " + std::to_string(part.dtype) + ")" + by);
      ArrayType p{static_cast<DType>(part.dtype), Shape(part_shapes[k].begin(), part_shapes[k].begin() + part.rank)};
      for (int64_t n : p.shape)
        if (n < 0) throw DeviceError(who + " produced a negative extent in part '" + part_name + "'" + by);
      if (plugin.abi_minor >= 21) {  // 2.21: a part whose axis 0 is the value's count, known at run time
        if (part.runtime_axes & ~1u || (part.runtime_axes && part.rank == 0))
          throw DeviceError(who + " gave part '" + part_name + "' run-time axes other than its first" + by);
        p.runtime_axes = part.runtime_axes;
      }
      shape_elements(p.shape);  // overflow is the declaration's fault: a UserError
      t.parts.push_back(std::move(p));
    }
    return t;
  }
  throw std::logic_error("unreachable");
}

DeclaredType Kind::declare(const std::string& declaration) const {
  if (!desc_) throw std::logic_error("the core declares its own kind '" + name_ + "' itself");
  return read_declared([&](fugue_declared* out, fugue_error* error) { return desc_->declare(desc_, declaration.c_str(), out, error); },
                       parts_, "kind " + name_ + ": declare", *plugin_);
}

std::string Kind::example(uint32_t rank, DType dtype) const {
  if (!desc_) throw std::logic_error("the core's kind '" + name_ + "' has no example");
  std::vector<char> text(1024);
  for (int attempt = 0; attempt < 2; ++attempt) {
    fugue_text out{};
    out.struct_size = sizeof out;
    out.text = text.data();
    out.capacity = text.size();
    ErrorBuffer error;
    check(desc_->example(desc_, rank, static_cast<fugue_dtype>(dtype), &out, error.get()), error, "kind " + name_ + ": example",
          *plugin_);
    if (out.length + 1 > out.capacity) {
      if (attempt == 1 || out.length > (uint64_t{1} << 24))
        throw DeviceError("kind " + name_ + ": example asked for " + std::to_string(out.length) + " bytes twice");
      text.resize(out.length + 1);
      continue;
    }
    return std::string(text.data(), out.length);
  }
  throw std::logic_error("unreachable");
}

std::string Kind::check_value(const HostArray& value, const std::vector<unsigned char>& metadata) const {
  if (!desc_ || desc_->struct_size < FUGUE_SIZE_UP_TO(fugue_kind_desc, check_value) || !desc_->check_value) return "";
  ValueView host(value, metadata);
  ErrorBuffer error;
  const fugue_status status = desc_->check_value(desc_, host.get(), error.get());
  if (status == FUGUE_OK) return "";
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED)
    return error.text().empty() ? "is not a well-formed " + name_ : error.text();
  check(status, error, "kind " + name_ + ": check_value", *plugin_);
  return "";
}

bool Kind::cuts_rows() const {
  return desc_ && storage() && desc_->struct_size >= FUGUE_SIZE_UP_TO(fugue_kind_desc, rows_value) && desc_->rows_type &&
         desc_->rows_value;
}

HostArray Kind::rows(const HostArray& value, const std::vector<unsigned char>& metadata, int64_t first, int64_t count,
                     DeclaredType& type) const {
  if (!cuts_rows()) throw std::logic_error("kind " + name_ + " cuts no rows");
  if (value.shape.empty() || first < 0 || count < 0 || first + count > value.shape[0])
    throw std::logic_error("rows " + std::to_string(first) + " + " + std::to_string(count) + " of a " + value.type_text());
  ValueView host(value, metadata);
  const std::string who = "kind " + name_ + ": rows_type";
  try {
    type = read_declared([&](fugue_declared* out, fugue_error* error) { return desc_->rows_type(desc_, host.get(), first, count, out, error); },
                         parts_, who, *plugin_);
  } catch (const UserError& e) {  // the value is the kind's own: refusing its rows is the plugin's fault
    throw DeviceError(who + ": " + e.what() + " (plugin '" + plugin_->name + "')");
  }
  if (type.shape.empty() || type.shape[0] != count || type.dtype != value.dtype)
    throw DeviceError(who + " gave " + std::string(dtype_name(type.dtype)) + " " + shape_string(type.shape) + " for " + std::to_string(count) +
                      " rows of a " + value.type_text() + " (plugin '" + plugin_->name + "')");
  HostArray out;
  out.dtype = type.dtype;
  out.shape = type.shape;
  out.kind_name = value.kind_name;
  for (const ArrayType& p : type.parts) out.parts.emplace_back(p.dtype, p.shape);
  ValueView rows_host(out, type.metadata);
  ErrorBuffer error;
  const fugue_status status = desc_->rows_value(desc_, host.get(), first, count, rows_host.get(), error.get());
  if (status != FUGUE_OK)
    throw DeviceError("kind " + name_ + ": rows_value: " + (error.text().empty() ? "failed without a message" : error.text()) +
                      " (plugin '" + plugin_->name + "')");
  return out;
}

bool Kind::gives_columns() const {
  return cuts_rows() && desc_->struct_size >= FUGUE_SIZE_UP_TO(fugue_kind_desc, rows_columns) && desc_->rows_columns;
}

std::pair<int64_t, int64_t> Kind::columns(const HostArray& value, const std::vector<unsigned char>& metadata, int64_t first,
                                          int64_t count) const {
  if (!gives_columns()) throw std::logic_error("kind " + name_ + " gives no columns");
  if (value.shape.size() < 2 || first < 0 || count < 0 || first + count > value.shape[0])
    throw std::logic_error("the columns of rows " + std::to_string(first) + " + " + std::to_string(count) + " of a " + value.type_text());
  ValueView host(value, metadata);
  int64_t columns[2] = {-1, -1};
  ErrorBuffer error;
  const fugue_status status = desc_->rows_columns(desc_, host.get(), first, count, columns, error.get());
  if (status != FUGUE_OK)
    throw DeviceError("kind " + name_ + ": rows_columns: " + (error.text().empty() ? "failed without a message" : error.text()) +
                      " (plugin '" + plugin_->name + "')");
  if (columns[0] < 0 || columns[0] > columns[1] || columns[1] > value.shape[1])
    throw DeviceError("kind " + name_ + ": rows_columns gave columns [" + std::to_string(columns[0]) + ", " + std::to_string(columns[1]) +
                      ") for rows of a " + value.type_text() + " (plugin '" + plugin_->name + "')");
  return {columns[0], columns[1]};
}

}  // namespace fugue
