#include "entry_formats.h"

#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

#include "layouts.h"
#include "matrix_market.h"
#include "scipy_npz.h"
#include "sparse_kind.h"

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

std::string kinds_text() {
  std::string text;
  for (Layout l : every_layout()) text += std::string(text.empty() ? "" : ", ") + layout_name(l);
  return text;
}

// A file of entries: `read_entries` parses one, `write_entries` writes a matrix's entries in a dtype.
class EntriesFormat final : public sdk::Format {
 public:
  using Reader = Coordinates (*)(const std::string& path);
  using Writer = void (*)(const std::string& path, const Coordinates& m, fugue_dtype dtype);
  EntriesFormat(const char* format_name, const char* text, const char* extension, Reader reader, Writer writer)
      : read_entries_(reader), write_entries_(writer) {
    name = format_name;
    doc = text;
    extensions = {extension};
  }
  bool reads() const override { return true; }
  bool reads_as() const override { return true; }
  bool writes() const override { return true; }

  // An array (or any declaration without a sparse kind) cannot hold the file.
  sdk::Declared probe(const std::string&) const override {
    throw InvalidArgument("holds a sparse matrix: declare the symbol with a sparse kind (" + kinds_text() +
                          "), e.g. {\"kind\": \"csr\", \"dtype\": \"f64\", \"from\": \"A.mtx\"}");
  }
  void read(const std::string& path, fugue_host_array&) const override { probe(path); }

  sdk::Declared probe_as(const std::string& path, const std::string& declaration, const fugue_device_desc* device) const override {
    return declared_as(*entries(path), declaration, device);
  }

  void read_as(const std::string& path, const std::string& declaration, const fugue_device_desc* device,
               fugue_host_array& array) const override {
    store_as_declared(*entries(path), declaration, device, array, "the file");
    forget();  // the value is stored: the entries need not stay on the host for the run
  }

  void accepts(const fugue_type& type) const override {
    if (type.kind != FUGUE_KIND_PLUGIN || !type.kind_name || !layout_named(type.kind_name))
      throw InvalidArgument("the " + name + " format writes sparse matrices (" + kinds_text() + ")");
  }

  void write(const std::string& path, const fugue_host_array& array) const override {
    const Facts f = facts_of(*array.type);
    const Coordinates m = entries_of(f, sdk::HostView(const_cast<fugue_host_array&>(array)));
    write_entries_(path, m, f.dtype);
  }

 private:
  // The file's entries, parsed once while the file stays as it was (probe_as, then read_as, which lets
  // them go).
  std::shared_ptr<const Coordinates> entries(const std::string& path) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto time = fs::last_write_time(path, ec);
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ && !ec && cached_path_ == path && cached_size_ == size && cached_time_ == time) return cached_;
    auto m = std::make_shared<const Coordinates>(read_entries_(path));
    if (!ec) cached_ = m, cached_path_ = path, cached_size_ = size, cached_time_ = time;
    return m;
  }

  void forget() const {
    std::lock_guard<std::mutex> lock(mutex_);
    cached_.reset();
  }

  Reader read_entries_;
  Writer write_entries_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Coordinates> cached_;
  mutable std::string cached_path_;
  mutable uintmax_t cached_size_ = 0;
  mutable std::filesystem::file_time_type cached_time_{};
};

}  // namespace

std::unique_ptr<sdk::Format> matrix_market_format() {
  return std::make_unique<EntriesFormat>(
      "mtx",
      "Matrix Market coordinate files (real, integer or pattern; general, symmetric or skew-symmetric): read as any sparse kind the "
      "declaration names, written as general real files",
      ".mtx", read_matrix_market, [](const std::string& path, const Coordinates& m, fugue_dtype dtype) {
        write_matrix_market(path, m, dtype == FUGUE_DTYPE_F32 ? 9 : 17);  // every digit of the dtype
      });
}

std::unique_ptr<sdk::Format> scipy_npz_format() {
  return std::make_unique<EntriesFormat>(
      "npz",
      "SciPy's sparse .npz files (scipy.sparse.save_npz: csr, csc or coo, deflated or stored): read as any sparse kind the declaration "
      "names, written as csr",
      ".npz", read_scipy_npz, write_scipy_npz);
}

}  // namespace fugue::sparse
