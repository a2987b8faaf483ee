// kind.h: one kind of symbol: the core's own (array, scalar, const), declared by the loader, or a
// plugin's (fugue_kind_desc), whose declare turns a JSON declaration into a type and metadata.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fugue_plugin.h"
#include "plugins/operation.h"
#include "program/dtype.h"
#include "program/host_array.h"

namespace fugue {

// What a plugin kind's declare made of a declaration.
struct DeclaredType {
  DType dtype = DType::None;
  Shape shape;
  std::vector<unsigned char> metadata;
  std::vector<ArrayType> parts;  // a kind with storage: every part's type, in the kind's order
  std::string kind_name;         // a chooser kind's probe: the kind it chose
  std::string note;              // ... and why
};

// Runs a plugin function that fills a fugue_declared as a kind's declare does (room for the type,
// metadata and one entry per name in `part_names`; asked again when the metadata needs more) and checks
// what it wrote. `who` names the function in messages ("kind csr: declare"). UserError with the plugin's
// message when it refuses the input; DeviceError when it breaks the protocol.
// With `chooses`, the function may name another kind (kind_name, with a note), whose parts it gave: the
// part count is then the caller's to check.
DeclaredType read_declared(const std::function<fugue_status(fugue_declared*, fugue_error*)>& fill,
                           const std::vector<std::string>& part_names, const std::string& who, const LoadedPlugin& plugin,
                           bool chooses = false);

class Kind {
 public:
  // One of the core's kinds.
  Kind(std::string name, std::string doc, std::vector<std::string> keys);
  // A plugin's kind (its descriptor was checked by the registry).
  Kind(std::shared_ptr<const LoadedPlugin> plugin, const fugue_kind_desc* desc);

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  // The keys a declaration may have besides "kind" and "doc".
  const std::vector<std::string>& keys() const { return keys_; }
  // The plugin that defines it; null for the core's kinds.
  const LoadedPlugin* plugin() const { return plugin_.get(); }
  bool builtin() const { return !desc_; }
  // Known when kernels are generated: a type and metadata, no device value.
  bool compile_time() const { return desc_ && (desc_->flags & FUGUE_KIND_FLAG_COMPILE_TIME); }
  // Its values live on the device as parts (dense arrays).
  bool storage() const { return desc_ && (desc_->flags & FUGUE_KIND_FLAG_STORAGE); }
  // It chooses one of its plugin's kinds with storage for each declaration (ABI 2.6).
  bool chooser() const { return desc_ && (desc_->flags & FUGUE_KIND_FLAG_CHOOSER); }
  // A kind with storage: its parts' names, in order.
  const std::vector<std::string>& parts() const { return parts_; }

  // A plugin kind's type for `declaration` (a JSON object as text). Throws UserError with the
  // plugin's message, which starts with a pointer relative to the declaration when it has one.
  DeclaredType declare(const std::string& declaration) const;
  // A valid declaration for an operand of `rank` axes and `dtype` (JSON text).
  std::string example(uint32_t rank, DType dtype) const;
  // "" when `value` (a kind with storage, parts filled; its declaration's `metadata`) is well-formed or the kind does not check;
  // otherwise the plugin's message (ABI 2.6 check_value).
  std::string check_value(const HostArray& value, const std::vector<unsigned char>& metadata) const;
  // It gives rows of its values (ABI 2.13 rows_type and rows_value): a split across devices may cut them.
  bool cuts_rows() const;
  // Rows [first, first + count) of axis 0 of `value` (of this kind; `metadata` its type's), as a value of
  // the kind of its own (`type` receives its type, metadata included). DeviceError when the plugin fails
  // or breaks the protocol (a type of another row count).
  HostArray rows(const HostArray& value, const std::vector<unsigned char>& metadata, int64_t first, int64_t count,
                 DeclaredType& type) const;
  // It says which columns rows of its values hold entries in (ABI 2.14 rows_columns).
  bool gives_columns() const;
  // The columns [begin, end) that rows [first, first + count) of `value` hold entries in, within
  // [0, value's columns); {0, 0} when none. DeviceError when the plugin fails or answers out of range.
  std::pair<int64_t, int64_t> columns(const HostArray& value, const std::vector<unsigned char>& metadata, int64_t first,
                                      int64_t count) const;

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_kind_desc* desc_ = nullptr;
  std::string name_, doc_;
  std::vector<std::string> keys_;
  std::vector<std::string> parts_;
};

}  // namespace fugue
