#include "sparse_kind.h"

#include "cocktail.h"
#include "format_choice.h"
#include "host_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

namespace fugue::sparse {

namespace {

using json = nlohmann::json;
using sdk::InvalidArgument;

int64_t positive_integer(const json& v, const std::string& pointer, int64_t low) {
  if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > (int64_t{1} << 40))
    throw InvalidArgument(pointer + ": expected an integer from " + std::to_string(low) + " to 2^40, found " + v.dump());
  return v.get<int64_t>();
}

fugue_dtype dtype_named(const json& v, const std::string& pointer, bool index) {
  const char* expected = index ? "\"i32\" or \"i64\"" : "\"f32\" or \"f64\"";
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!index && s == "f32") return FUGUE_DTYPE_F32;
    if (!index && s == "f64") return FUGUE_DTYPE_F64;
    if (index && s == "i32") return FUGUE_DTYPE_I32;
    if (index && s == "i64") return FUGUE_DTYPE_I64;
  }
  throw InvalidArgument(pointer + ": expected " + expected + ", found " + v.dump());
}

// The kinds' examples: the seed's matrix B with slices of 2; a cocktail of its dense 2 x 4 blocks, each
// other row's first entry and the rest (B's diagonals are all full: a dia would take every entry).
Cut seed_cut(Layout layout) {
  Cut cut;
  cut.slice = 2;
  if (layout == Layout::Cocktail) cut.block_slice = 2, cut.block_fill = 0.6, cut.width = 1;
  return cut;
}

class SparseKind final : public sdk::Kind {
 public:
  explicit SparseKind(Layout layout) : layout_(layout) {
    name = layout_name(layout);
    static const char* docs[] = {
        "a sparse matrix in compressed sparse rows: row_ptr [rows + 1], col [nnz], data [nnz]",
        "a sparse matrix as coordinates sorted by row: row [nnz], col [nnz], data [nnz]",
        "a sparse matrix in ELLPACK: col and data [width * rows], column-major, rows padded to the longest",
        "a sparse matrix in SELL-C-sigma: slices of C rows (\"slice\", default 32), each an ELLPACK of its own width, rows sorted "
        "by length within windows of sigma rows (\"sigma\", default 1): slice_ptr, row, col, data",
        "a sparse matrix by diagonals: offsets [diagonals], data [diagonals * rows]",
        "a sparse matrix as an ELLPACK of \"width\" (each row's first entries) plus coordinates of the rest: ell_col, ell_data, coo_row, "
        "coo_col, coo_data",
        "a sparse matrix in compressed sparse rows of dense blocks (\"block\": [h, w], h 1, 2, 4 or 8, w 4 or 8; default [2, 4]): "
        "row_ptr over the super-rows, col [blocks], data [blocks * h * w] in 1 x 4 units",
        "a sparse matrix by bands of consecutive diagonals: offsets [bands] (each band's first), band_ptr [bands + 1], data "
        "[diagonals * rows]",
        "a sparse matrix in blocked ELLPACK: dense blocks (\"block\": [h, w], as bcsr's), each super-row padded to the longest: col "
        "[width * super-rows], column-major, data [width * super-rows * h * w] in 1 x 4 units",
        "a sparse matrix in sliced blocked ELLPACK: slices of \"slice\" super-rows (default 32), each a blocked ELLPACK of its own "
        "width (\"block\": [h, w], as bcsr's): slice_ptr, col [blocks], data [blocks * h * w] in 1 x 4 units",
        "a sparse matrix as seed 003's cocktail: a dia of its dense diagonals, a sbell of its dense blocks (\"block\", slices of "
        "\"block_slice\" super-rows), a sell of each row's first entries left (\"slice\", \"sigma\") and a csr of the rest, split for the "
        "device or as \"diagonal_fill\", \"block_fill\" and \"width\" say: their parts one after another (dia_offsets ... csr_data)"};
    doc = docs[static_cast<int>(layout)];
    keys = declaration_keys(layout);
    parts = part_names(layout);
    cuts_rows = true;
    gives_columns = true;
  }

  // A split across devices gives each device its rows as a matrix of its own (layouts.h's rows_of).
  sdk::Declared rows_type(const fugue_host_array& value, int64_t first, int64_t count) const override {
    return declared_type(rows_of(facts_of(*value.type), sdk::HostView(const_cast<fugue_host_array&>(value)), first, count).first);
  }
  // The columns the rows' entries lie in (padding left out: every product skips a padding zero's x).
  std::pair<int64_t, int64_t> rows_columns(const fugue_host_array& value, int64_t first, int64_t count) const override {
    const Coordinates entries = rows_of(facts_of(*value.type), sdk::HostView(const_cast<fugue_host_array&>(value)), first, count).second;
    if (entries.col.empty()) return {0, 0};
    const auto [low, high] = std::minmax_element(entries.col.begin(), entries.col.end());
    return {*low, *high + 1};
  }
  void rows_value(const fugue_host_array& value, int64_t first, int64_t count, fugue_host_array& rows) const override {
    if (layout_ == Layout::Cocktail) {  // part by part: each part's rows stay in that part
      cocktail_store_rows(facts_of(*value.type), sdk::HostView(const_cast<fugue_host_array&>(value)), first, count, sdk::HostView(rows));
      return;
    }
    const auto [facts, entries] = rows_of(facts_of(*value.type), sdk::HostView(const_cast<fugue_host_array&>(value)), first, count);
    const sdk::Declared type = declared_type(facts);
    sdk::HostView view(rows);
    bool same = type.parts.size() == view.parts();
    for (uint32_t k = 0; same && k < view.parts(); ++k) same = view.part(k).size() == places_in(type.parts[k]) && view.part(k).dtype() == type.parts[k].dtype;
    if (!same) throw std::logic_error("rows_value: the rows' parts are not of the type rows_type gave");
    store(facts, entries, view);
  }

  sdk::Declared declare(const std::string& text) const override {
    const Requested r = requested(layout_, text);
    if (!r.dtype) throw InvalidArgument("/dtype: expected \"f32\" or \"f64\" (or read the matrix from a file: \"from\": \"A.mtx\")");
    if (!r.rows) throw InvalidArgument("/shape: expected [rows, cols] (or read the matrix from a file: \"from\": \"A.mtx\")");
    if (layout_ != Layout::Cocktail) return declared_type(declared_facts(layout_, r));
    // A cocktail's parts, each declared as its layout would be by its own count.
    Facts f;
    f.layout = Layout::Cocktail;
    f.dtype = *r.dtype;
    f.rows = *r.rows;
    f.cols = *r.cols;
    f.split = r.cut;  // what a conversion into it splits by
    f.split_declared = r.split_given;
    const std::optional<int64_t> counts[4] = {r.diagonals, r.blocks, r.stored, r.count};
    for (size_t k = 0; k < 4; ++k) {
      const Layout part = kCocktailParts[k];
      Requested own = r;
      own.layout = part;
      own.count = counts[k];
      own.cut = Cut{};
      if (part == Layout::Sell) own.cut.slice = r.cut.slice, own.cut.sigma = r.cut.sigma;
      if (part == Layout::Sbell) own.cut.slice = r.cut.block_slice, own.cut.block_rows = r.cut.block_rows, own.cut.block_cols = r.cut.block_cols;
      if (part == Layout::Csr) {  // the rows it holds, listed in csr_rows
        if (!r.csr_rows) throw InvalidArgument("/csr_rows: expected the rows the cocktail's csr part holds (or read the matrix from a file: \"from\": \"A.mtx\")");
        if (*r.csr_rows > f.rows)
          throw InvalidArgument("/csr_rows: at most the " + std::to_string(f.rows) + " rows of the matrix, found " + std::to_string(*r.csr_rows));
        own.rows = r.csr_rows;
        const int64_t cells = *r.csr_rows > 0 && f.cols > (int64_t{1} << 62) / *r.csr_rows ? -1 : *r.csr_rows * f.cols;  // -1: past 2^62
        if (r.count && cells >= 0 && *r.count > cells)
          throw InvalidArgument("/nnz: the cocktail's csr part holds " + std::to_string(*r.csr_rows) + " listed rows (/csr_rows) of " +
                                std::to_string(f.cols) + " columns: at most " + std::to_string(cells) + " entries, found " + std::to_string(*r.count));
        // Its list holds the matrix's rows.
        if (!r.index && f.rows >= (int64_t{1} << 31) - 1) own.index = FUGUE_DTYPE_I64;
        if (r.index == FUGUE_DTYPE_I32 && f.rows >= (int64_t{1} << 31) - 1)
          throw InvalidArgument("/index: i32 cannot hold the cocktail's csr_rows (use \"i64\")");
      }
      if (!own.count)
        throw InvalidArgument(std::string("/") + count_key(part) + ": expected the cocktail's " + layout_name(part) + " part's " + count_key(part) +
                              " (or read the matrix from a file: \"from\": \"A.mtx\")");
      f.components.push_back(declared_facts(part, own));
    }
    return declared_type(f);
  }

  // Parts a program gives one by one: every index in range, pointers that only go forward, coo rows in
  // order, sell's rows each once (what the kernels rely on).
  void check_value(const fugue_host_array& value) const override {
    entries_of(facts_of(*value.type), sdk::HostView(const_cast<fugue_host_array&>(value)));
  }

  // The seed's matrix B (layouts.h), its parts given inline (slices of 2 rows for sell).
  std::string example(uint32_t rank, fugue_dtype dtype) const override {
    if (rank != 2 || (dtype != FUGUE_DTYPE_F32 && dtype != FUGUE_DTYPE_F64))
      throw InvalidArgument(name + " holds 2-D matrices of f32 or f64");
    return inline_declaration(seed_matrix_b(), layout_, dtype, seed_cut(layout_));
  }

 private:
  // The facts a declaration without "from" gives for a layout other than cocktail (dtype and shape checked).
  Facts declared_facts(Layout layout, const Requested& r) const {
    const std::string name = layout_name(layout);
    if (!r.count)
      throw InvalidArgument(std::string("/") + count_key(layout) + ": expected the " + name + "'s " + count_key(layout) +
                            " (or read the matrix from a file: \"from\": \"A.mtx\")");
    Facts f;
    f.layout = layout;
    f.dtype = *r.dtype;
    f.rows = *r.rows;
    f.cols = *r.cols;
    f.slice = r.cut.slice;
    f.sigma = r.cut.sigma;
    f.block_rows = r.cut.block_rows;
    f.block_cols = r.cut.block_cols;
    switch (layout) {
      case Layout::Csr:
      case Layout::Coo: f.nnz = *r.count; break;
      case Layout::Ell: f.width = *r.count; break;
      case Layout::Sell:
        f.stored = *r.count;
        if (f.stored % f.slice) throw InvalidArgument("/stored: expected a multiple of the slice height " + std::to_string(f.slice));
        break;
      case Layout::Dia: f.diagonals = *r.count; break;
      case Layout::Hyb:
        f.width = *r.count;
        if (!r.hyb_nnz) throw InvalidArgument("/nnz: expected the entries of the hyb's coo part (or read the matrix from a file)");
        f.nnz = *r.hyb_nnz;
        break;
      case Layout::Bdia:
        f.diagonals = *r.count;
        if (!r.bands) throw InvalidArgument("/bands: expected the bdia's bands (or read the matrix from a file)");
        f.bands = *r.bands;
        if (f.bands > f.diagonals)
          throw InvalidArgument("/bands: at most one band a diagonal (" + std::to_string(f.diagonals) + "), found " + std::to_string(f.bands));
        break;
      case Layout::Bcsr: f.blocks = *r.count; break;
      case Layout::Bell: f.width = *r.count; break;
      case Layout::Sbell:
        f.blocks = *r.count;
        if (f.blocks % f.slice) throw InvalidArgument("/blocks: expected a multiple of the slice height " + std::to_string(f.slice));
        break;
      case Layout::Cocktail: throw std::logic_error("a cocktail is declared part by part");
    }
    f.counted = r.counted;  // the run count's capacity (checked as the count would be)
    // Counts that cannot be: more places than the layout can hold, or products past 2^62.
    const auto product = [](int64_t a, int64_t b) { return a == 0 || b <= (int64_t{1} << 62) / a ? a * b : -1; };
    const int64_t cells = product(f.rows, f.cols);
    const std::string key = std::string("/") + count_key(layout);
    if ((f.layout == Layout::Ell || f.layout == Layout::Hyb) && f.width > f.cols)
      throw InvalidArgument(key + ": a row holds at most " + std::to_string(f.cols) + " entries (the columns), found " + std::to_string(f.width));
    if ((f.layout == Layout::Csr || f.layout == Layout::Coo || f.layout == Layout::Hyb) && cells >= 0 && f.nnz > cells)
      throw InvalidArgument(std::string(f.layout == Layout::Hyb ? "/nnz" : key) + ": a " + std::to_string(f.rows) + " by " +
                            std::to_string(f.cols) + " matrix holds at most " + std::to_string(cells) + " entries, found " + std::to_string(f.nnz));
    const int64_t most_diagonals = f.rows > 0 && f.cols > 0 ? f.rows + f.cols - 1 : 0;
    if ((f.layout == Layout::Dia || f.layout == Layout::Bdia) && f.diagonals > most_diagonals)
      throw InvalidArgument(key + ": a " + std::to_string(f.rows) + " by " + std::to_string(f.cols) + " matrix has at most " +
                            std::to_string(most_diagonals) + " diagonals, found " + std::to_string(f.diagonals));
    // A sell's slices each at most as wide as the columns; the block layouts' super-rows at most a block
    // each w columns (a sbell's in whole slices).
    const int64_t block_columns = ceil_div(f.cols, f.block_cols), padded_rows = ceil_div(f.rows, f.slice) * f.slice;
    const int64_t padded_super_rows = ceil_div(super_rows(f), f.slice) * f.slice;
    const auto at_most = [&](int64_t most, int64_t found, const std::string& what) {
      if (most >= 0 && found > most)
        throw InvalidArgument(key + ": a " + std::to_string(f.rows) + " by " + std::to_string(f.cols) + " matrix's " + name + " holds at most " +
                              std::to_string(most) + " " + what + ", found " + std::to_string(found));
    };
    if (f.layout == Layout::Sell) at_most(product(padded_rows, f.cols), f.stored, "places (slices of " + std::to_string(f.slice) + " rows, each at most as wide as the columns)");
    if (f.layout == Layout::Bcsr) at_most(product(super_rows(f), block_columns), f.blocks, "blocks of " + std::to_string(f.block_rows) + " x " + std::to_string(f.block_cols));
    if (f.layout == Layout::Sbell)
      at_most(product(padded_super_rows, block_columns), f.blocks, "places for blocks of " + std::to_string(f.block_rows) + " x " + std::to_string(f.block_cols) + " (slices of " + std::to_string(f.slice) + " super-rows)");
    if (f.layout == Layout::Bell) at_most(block_columns, f.width, "blocks of " + std::to_string(f.block_rows) + " x " + std::to_string(f.block_cols) + " a super-row");
    if (product(f.width, f.rows) < 0 || product(f.diagonals, f.rows) < 0 || product(product(f.blocks, f.block_rows), f.block_cols) < 0 ||
        product(product(f.width, super_rows(f)), f.block_rows * f.block_cols) < 0)
      throw InvalidArgument(key + ": the " + name + " would hold more than 2^62 places");
    // bdia's band_ptr counts places (diagonals x rows), the other pointers the count.
    const int64_t pointed = f.layout == Layout::Bdia ? std::max<int64_t>(product(f.diagonals, f.rows), 0) : *r.count;
    const bool wide = std::max({f.rows + 1, f.cols, *r.count, pointed}) > (int64_t{1} << 31) - 1;
    f.index = r.index.value_or(wide ? FUGUE_DTYPE_I64 : FUGUE_DTYPE_I32);
    if (f.index == FUGUE_DTYPE_I32 && wide) throw InvalidArgument("/index: i32 cannot count the rows, columns or entries (use \"i64\")");
    return f;
  }

  Layout layout_;
};

}  // namespace

std::vector<std::string> declaration_keys(Layout layout) {
  std::vector<std::string> keys = {"dtype", "shape", "index", count_key(layout)};
  for (const std::string& key : cut_keys(layout)) keys.push_back(key);
  if (layout == Layout::Hyb) keys.push_back("nnz");
  if (layout == Layout::Bdia) keys.push_back("bands");
  if (layout == Layout::Cocktail)
    for (const char* key : {"diagonals", "blocks", "stored", "csr_rows"}) keys.push_back(key);
  return keys;
}

bool blocked(Layout layout) { return layout == Layout::Bcsr || layout == Layout::Bell || layout == Layout::Sbell; }

const std::vector<std::string>& cut_keys(Layout layout) {
  static const std::vector<std::string> none, sell = {"slice", "sigma"}, sbell = {"block", "slice"}, block = {"block"},
                                        cocktail = {"slice", "sigma", "block", "block_slice", "diagonal_fill", "block_fill", "width"};
  if (layout == Layout::Cocktail) return cocktail;
  return layout == Layout::Sell ? sell : layout == Layout::Sbell ? sbell : blocked(layout) ? block : none;
}

Requested requested(Layout layout, const std::string& text) {
  json d;
  try {
    d = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InvalidArgument(std::string("not a JSON object: ") + e.what());
  }
  Requested r;
  r.layout = layout;
  if (d.contains("dtype")) r.dtype = dtype_named(d["dtype"], "/dtype", false);
  if (d.contains("index")) r.index = dtype_named(d["index"], "/index", true);
  if (d.contains("shape")) {
    const json& s = d["shape"];
    if (!s.is_array() || s.size() != 2) throw InvalidArgument("/shape: expected [rows, cols], found " + s.dump());
    r.rows = positive_integer(s[0], "/shape/0", 0);
    r.cols = positive_integer(s[1], "/shape/1", 0);
  }
  // {"capacity": n} for the layout's run count (layouts.h: a csr's entries, an ell's width, ...): counted
  // by the operation that writes the value, at most n.
  const char* key = count_key(layout);
  for (const char* given : {key, "nnz"}) {
    if (!d.contains(given) || !d[given].is_object() || (given != key && layout != Layout::Hyb)) continue;
    const json& c = d[given];
    const std::string pointer = std::string("/") + given;
    if (!takes_run_count(layout) || given != std::string(run_count_key(layout)))
      throw InvalidArgument(pointer + ": a count left to the run ({\"capacity\": n}) is taken for " +
                            (layout == Layout::Hyb ? std::string("a hyb's nnz (its coo part's entries; its width is its cut)")
                                                   : "every layout's count but a bdia's and a cocktail's, which have several") +
                            ": declare the " + layout_name(layout) + "'s " + given + " as a number");
    if (c.size() != 1 || !c.contains("capacity"))
      throw InvalidArgument(pointer + ": expected {\"capacity\": n} (the most the operation may count), found " + c.dump());
    (layout == Layout::Hyb ? r.hyb_nnz : r.count) = positive_integer(c["capacity"], pointer + "/capacity", 0);
    r.counted = true;
  }
  if (d.contains(key) && !d[key].is_object()) r.count = positive_integer(d[key], std::string("/") + key, 0);
  if (layout == Layout::Hyb && d.contains("nnz") && !d["nnz"].is_object()) r.hyb_nnz = positive_integer(d["nnz"], "/nnz", 0);
  if (layout == Layout::Bdia && d.contains("bands")) r.bands = positive_integer(d["bands"], "/bands", 0);
  const bool cocktail = layout == Layout::Cocktail;
  if (layout == Layout::Sell || layout == Layout::Sbell || cocktail) {
    const char* rows = layout == Layout::Sbell ? " super-rows" : " rows";
    if (d.contains("slice")) r.cut.slice = positive_integer(d["slice"], "/slice", 1);
    if (layout != Layout::Sbell && d.contains("sigma")) r.cut.sigma = positive_integer(d["sigma"], "/sigma", 1);
    if (r.cut.slice > 1024) throw InvalidArgument("/slice: expected at most 1024" + std::string(rows) + " a slice, found " + std::to_string(r.cut.slice));
  }
  if (cocktail) {
    if (d.contains("slice")) r.given.slice = r.cut.slice;
    if (d.contains("sigma")) r.given.sigma = r.cut.sigma;
    if (d.contains("diagonals")) r.diagonals = positive_integer(d["diagonals"], "/diagonals", 0);
    if (d.contains("blocks")) r.blocks = positive_integer(d["blocks"], "/blocks", 0);
    if (d.contains("stored")) r.stored = positive_integer(d["stored"], "/stored", 0);
    if (d.contains("csr_rows")) r.csr_rows = positive_integer(d["csr_rows"], "/csr_rows", 0);
    if (d.contains("block_slice")) r.cut.block_slice = positive_integer(d["block_slice"], "/block_slice", 1);
    if (r.cut.block_slice > 1024)
      throw InvalidArgument("/block_slice: expected at most 1024 super-rows a slice, found " + std::to_string(r.cut.block_slice));
    if (d.contains("block_slice")) r.given.block_slice = r.cut.block_slice;
    for (const char* key : {"diagonal_fill", "block_fill"})
      if (d.contains(key)) {
        const json& v = d[key];
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
          throw InvalidArgument(std::string("/") + key + ": expected a positive number (the least share of its places a " +
                                (key[0] == 'd' ? "diagonal" : "block") + " must hold to be dense; above 1: none), found " + v.dump());
        (key[0] == 'd' ? r.cut.diagonal_fill : r.cut.block_fill) = v.get<double>();
        r.split_given = true;
      }
    if (d.contains("width")) {
      r.cut.width = positive_integer(d["width"], "/width", 0);
      r.split_given = true;
    }
  }
  if (layout == Layout::Hyb && r.count) r.cut.width = *r.count;
  if ((blocked(layout) || cocktail) && d.contains("block")) {
    const json& b = d["block"];
    const auto one_of = [](const json& v, std::initializer_list<int64_t> allowed) {
      return v.is_number_integer() && std::find(allowed.begin(), allowed.end(), v.get<int64_t>()) != allowed.end();
    };
    if (!b.is_array() || b.size() != 2 || !one_of(b[0], {1, 2, 4, 8}) || !one_of(b[1], {4, 8}))
      throw InvalidArgument("/block: expected [h, w] with h 1, 2, 4 or 8 and w 4 or 8 (the seed's block sizes), found " + b.dump());
    r.cut.block_rows = b[0].get<int64_t>();
    r.cut.block_cols = b[1].get<int64_t>();
    if (cocktail) r.given.block = std::make_pair(r.cut.block_rows, r.cut.block_cols);
  }
  return r;
}

void check_requested(const Requested& r, const Facts& f) {
  auto differs = [](const std::string& key, int64_t asked, int64_t found) {
    throw InvalidArgument("holds a matrix whose " + key + " is " + std::to_string(found) + "; the declaration says " + std::to_string(asked));
  };
  if (r.counted) {
    const std::string key = run_count_key(f.layout), count = std::to_string(run_count(f));
    throw InvalidArgument("holds a matrix whose " + key + " is " + count + "; \"" + key + "\": {\"capacity\": ...} is for a value an " +
                          "operation counts: declare \"" + key + "\": " + count + " or leave it out");
  }
  if (r.rows && *r.rows != f.rows) differs("row count (/shape/0)", *r.rows, f.rows);
  if (r.cols && *r.cols != f.cols) differs("column count (/shape/1)", *r.cols, f.cols);
  if (r.count && *r.count != declared_count(f)) differs(std::string("/") + count_key(f.layout), *r.count, declared_count(f));
  if (r.hyb_nnz && *r.hyb_nnz != f.nnz) differs("coo part's entries (/nnz)", *r.hyb_nnz, f.nnz);
  if (r.bands && *r.bands != f.bands) differs("band count (/bands)", *r.bands, f.bands);
  if (f.layout == Layout::Cocktail) {
    if (r.diagonals && *r.diagonals != f.components[0].diagonals) differs("dia part's /diagonals", *r.diagonals, f.components[0].diagonals);
    if (r.blocks && *r.blocks != f.components[1].blocks) differs("sbell part's /blocks", *r.blocks, f.components[1].blocks);
    if (r.stored && *r.stored != f.components[2].stored) differs("sell part's /stored", *r.stored, f.components[2].stored);
    if (r.csr_rows && *r.csr_rows != f.components[3].rows) differs("csr part's row count (/csr_rows)", *r.csr_rows, f.components[3].rows);
  }
}

std::unique_ptr<sdk::Kind> sparse_kind(Layout layout) { return std::make_unique<SparseKind>(layout); }

void check_fits(const Coordinates& m, fugue_dtype dtype);

namespace {

// The layout's arrays, stored beside the entries they are made from, must fit the host (dia's
// diagonals x rows can be far more than the entries).
void check_layout_room(const Coordinates& m, const Facts& f) {
  uint64_t bytes = 0;
  for (const sdk::PartType& part : declared_type(f).parts) {
    uint64_t n = sdk::dtype_size(part.dtype);
    for (int64_t e : part.shape) n = e > 0 && n > UINT64_MAX / static_cast<uint64_t>(e) ? UINT64_MAX : n * static_cast<uint64_t>(std::max<int64_t>(e, 0));
    bytes = bytes > UINT64_MAX - n ? UINT64_MAX : bytes + n;
  }
  const uint64_t entries = matrix_host_bytes(m.rows, m.cols, m.entries());
  check_host_room(bytes > UINT64_MAX - entries ? UINT64_MAX : bytes + entries,
                  std::string("the ") + layout_name(f.layout) + " of a " + std::to_string(m.rows) + " by " + std::to_string(m.cols) + " matrix of " +
                      std::to_string(m.entries()) + " entries (" + bytes_text(bytes) + " of arrays)");
}

// The cut a declaration asks for; a cocktail's split chosen for the device where the declaration fixes none
// (its slices and block kept where given).
Cut split_of(const Coordinates& m, const Requested& r, fugue_dtype dtype, const fugue_device_desc* device, std::string* note) {
  if (r.layout != Layout::Cocktail || r.split_given) return r.cut;
  Choice choice = choose_split(m, dtype, device, r.given);
  if (note) *note = choice.note;
  return choice.cut;
}

}  // namespace

Facts facts_as_declared(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device, std::string* note) {
  json d;
  try {
    d = json::parse(declaration);
  } catch (const json::parse_error& e) {
    throw std::logic_error(std::string("the core gave a declaration that is not JSON: ") + e.what());
  }
  std::string kinds;
  for (Layout l : every_layout()) kinds += std::string(kinds.empty() ? "" : ", ") + layout_name(l);
  const std::string kind = d.value("kind", "");
  std::optional<Layout> layout = layout_named(kind);
  if (kind == "sparse") {
    const json format = d.value("format", json("auto"));
    if (!format.is_string() || (format != "auto" && !layout_named(format.get<std::string>())))
      throw InvalidArgument("/format: expected \"auto\" or one of " + kinds + ", found " + format.dump());
    // dtype, index, shape and nnz (the entries) hold for every format; the other keys are a named format's
    // own (its counts, checked; its cut); the automatic choice makes its own layout.
    const bool is_named = format != "auto";
    const Layout named = is_named ? *layout_named(format.get<std::string>()) : Layout::Csr;
    const auto has = [](const std::vector<std::string>& keys, const std::string& key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    for (const std::string& key : sparse_chooser_keys()) {
      if (!d.contains(key) || has({"dtype", "index", "shape", "nnz", "format", "reads"}, key)) continue;
      if (is_named && has(declaration_keys(named), key)) continue;
      std::string owners;
      for (Layout l : every_layout())
        if (has(declaration_keys(l), key)) owners += std::string(owners.empty() ? "" : ", ") + layout_name(l);
      throw InvalidArgument("/" + key + ": " +
                            (is_named ? std::string("the format ") + layout_name(named) + " has no " + key + " (" + owners + " have)"
                                      : "applies to a named \"format\" (" + owners + "); the automatic choice lays the matrix out itself"));
    }
    // The products the program runs with the matrix (the core counts them: ABI 2.16), -1 where unknown.
    int64_t reads = -1;
    if (d.contains("reads")) {
      const json& given = d["reads"];
      if (!given.is_number_integer() || (given.is_number_unsigned() && given.get<uint64_t>() > uint64_t{INT64_MAX}) || given.get<int64_t>() < -1)
        throw InvalidArgument("/reads: expected the number of products the program runs with the matrix (an integer, -1 where unknown), found " +
                              given.dump());
      reads = given.get<int64_t>();
    }
    Requested r = requested(Layout::Csr, declaration);  // dtype, index, shape and nnz
    if (r.count && *r.count != m.entries())
      throw InvalidArgument("holds a matrix whose nnz is " + std::to_string(m.entries()) + "; the declaration says " + std::to_string(*r.count));
    r.count.reset();
    const fugue_dtype dtype = r.dtype.value_or(FUGUE_DTYPE_F64);
    Facts f;
    if (format == "auto") {
      const Choice choice = choose_layout(m, dtype, device, reads);
      if (note) *note = choice.note;
      f = facts_for(m, choice.layout, dtype, r.index.value_or(FUGUE_DTYPE_NONE), choice.cut);
    } else {
      Requested own = requested(named, declaration);  // its counts, sell's and sbell's slice, sigma, the block layouts' block
      if (note) *note = "named by \"format\"";
      f = facts_for(m, named, dtype, r.index.value_or(FUGUE_DTYPE_NONE), split_of(m, own, dtype, device, note));
      f.split_declared = own.split_given;
      own.hyb_nnz.reset();  // "nnz" is the matrix's entries here, checked above
      if (count_key(named) == std::string("nnz")) own.count.reset();
      check_requested(own, f);
    }
    check_requested(r, f);
    check_fits(m, f.dtype);
    check_layout_room(m, f);
    return f;
  }
  if (!layout) throw InvalidArgument("makes sparse matrices (" + kinds + ", or sparse), not a '" + kind + "'");
  const Requested r = requested(*layout, declaration);
  const fugue_dtype dtype = r.dtype.value_or(FUGUE_DTYPE_F64);
  Facts f = facts_for(m, *layout, dtype, r.index.value_or(FUGUE_DTYPE_NONE), split_of(m, r, dtype, device, note));
  f.split_declared = r.split_given;
  check_requested(r, f);
  check_fits(m, f.dtype);
  check_layout_room(m, f);
  return f;
}

sdk::Declared declared_as(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device) {
  std::string note;
  const Facts f = facts_as_declared(m, declaration, device, &note);
  sdk::Declared d = declared_type(f);
  const std::string kind = json::parse(declaration).value("kind", "");
  if (kind == "sparse") d.kind_name = layout_name(f.layout);
  if (kind == "sparse" || kind == "cocktail") d.note = note;
  return d;
}

void store_as_declared(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device, fugue_host_array& value,
                       const std::string& what) {
  const Facts f = facts_as_declared(m, declaration, device);
  const sdk::Declared now = declared_type(f);
  const fugue_type& t = *value.type;
  // The block layouts' block (and sbell's slice) is the type's metadata: compared too.
  bool same = t.num_parts == now.parts.size() && t.dtype == now.dtype && t.metadata_bytes == now.metadata.size() &&
              (now.metadata.empty() || std::memcmp(t.metadata, now.metadata.data(), now.metadata.size()) == 0);
  for (uint32_t k = 0; same && k < t.num_parts; ++k) {
    const fugue_type& part = *FUGUE_NTH(fugue_type, t.parts, k);
    same = part.dtype == now.parts[k].dtype && sdk::elements(part) == places_in(now.parts[k]);
  }
  if (!same) throw InvalidArgument(what + " changed since the program was loaded (it no longer gives the same " + layout_name(f.layout) + ")");
  store(f, m, sdk::HostView(value));
}

void check_fits(const Coordinates& m, fugue_dtype dtype) {
  if (dtype != FUGUE_DTYPE_F32) return;
  for (int64_t e = 0; e < m.entries(); ++e)
    if (std::fabs(m.value[e]) > std::numeric_limits<float>::max()) {
      char value[32];
      std::snprintf(value, sizeof value, "%.9g", m.value[e]);
      const bool placed = m.place_name && m.place.size() == m.value.size();
      throw InvalidArgument((placed ? m.place_name(m.place[e]) + ": " : std::string()) + "entry (" + std::to_string(m.row[e] + m.base) + ", " +
                            std::to_string(m.col[e] + m.base) + ") = " + value + " does not fit f32 (declare \"dtype\": \"f64\")");
    }
}

namespace {

}  // namespace

std::vector<std::string> sparse_chooser_keys() {
  std::vector<std::string> keys = {"format", "reads"};
  for (Layout l : every_layout())
    for (const std::string& key : declaration_keys(l))
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}

namespace {

// {"kind": "sparse", "format": "auto"}: the layout chosen for the matrix and the device.
class SparseChooser final : public sdk::Kind {
 public:
  SparseChooser() {
    name = "sparse";
    doc = "a sparse matrix whose kind is chosen for it and the device (\"format\": \"auto\", the default) or named (\"format\": "
          "\"ell\"), read from a file or made by a generator (\"from\"); keys as the chosen kind's, and \"reads\": the products the "
          "program runs with it (counted from its loops where not given; -1: unknown), against which each kind's conversion is weighed";
    keys = sparse_chooser_keys();
    chooser = true;
  }
  sdk::Declared declare(const std::string&) const override {
    throw InvalidArgument("/from: a sparse takes its kind and value from a file or a generator (\"from\": \"A.mtx\" or "
                          "{\"poisson\": {\"grid\": [64, 64]}}); declare a kind by name (csr, ell, ...) to give the parts");
  }
  std::string example(uint32_t, fugue_dtype) const override {
    throw InvalidArgument("a sparse takes its kind from its source; operations take the chosen kinds");
  }
};

}  // namespace

std::unique_ptr<sdk::Kind> sparse_chooser_kind() { return std::make_unique<SparseChooser>(); }

namespace {

json declaration_json(const Facts& f, const Cut& cut) {
  const Layout layout = f.layout;
  json decl = {{"kind", layout_name(layout)}, {"dtype", f.dtype == FUGUE_DTYPE_F64 ? "f64" : "f32"}, {"shape", {f.rows, f.cols}}};
  decl[count_key(layout)] = declared_count(f);
  if (layout == Layout::Hyb) decl["nnz"] = f.nnz;
  if (f.counted) decl[run_count_key(layout)] = {{"capacity", run_count(f)}};  // the count left to the run
  if (layout == Layout::Bdia) decl["bands"] = f.bands;
  if (layout == Layout::Sell) decl["slice"] = cut.slice, decl["sigma"] = cut.sigma;
  if (layout == Layout::Sbell) decl["slice"] = cut.slice;
  if (blocked(layout)) decl["block"] = {cut.block_rows, cut.block_cols};
  if (layout == Layout::Cocktail) {
    decl["diagonals"] = f.components[0].diagonals, decl["blocks"] = f.components[1].blocks, decl["stored"] = f.components[2].stored;
    decl["csr_rows"] = f.components[3].rows;
    decl["block"] = {cut.block_rows, cut.block_cols}, decl["block_slice"] = cut.block_slice, decl["slice"] = cut.slice;
    // The split too, so that the same matrix read from a file splits the same way.
    decl["sigma"] = cut.sigma, decl["diagonal_fill"] = cut.diagonal_fill, decl["block_fill"] = cut.block_fill;
    if (cut.width >= 0) decl["width"] = cut.width;
  }
  return decl;
}

}  // namespace

std::string counts_declaration(const Facts& facts, const Cut& cut) {
  json decl = declaration_json(facts, cut);
  decl["index"] = facts.index == FUGUE_DTYPE_I64 ? "i64" : "i32";
  return decl.dump();
}

std::string inline_declaration(const Coordinates& m, Layout layout, fugue_dtype dtype, const Cut& cut) {
  const Facts f = facts_for(m, layout, dtype, FUGUE_DTYPE_NONE, cut);
  json decl = declaration_json(f, cut);
  const std::vector<std::vector<double>> parts = stored_parts(f, m);
  const sdk::Declared type = declared_type(f);
  const bool f32 = dtype == FUGUE_DTYPE_F32;
  for (size_t k = 0; k < parts.size(); ++k) {
    json values = json::array();
    const bool values_part = type.parts[k].dtype == dtype;  // the others hold indices
    for (double v : parts[k])
      if (!values_part) values.push_back(static_cast<int64_t>(v));
      else values.push_back(f32 ? static_cast<double>(static_cast<float>(v)) : v);
    decl["parts"][part_names(layout)[k]] = {{"value", values}};
  }
  return decl.dump();
}

Coordinates seed_matrix_b() {
  Coordinates b;
  b.rows = b.cols = 4;
  const double dense[4][4] = {{3, 7, 0, 0}, {0, 4, 8, 0}, {1, 0, 5, 9}, {0, 2, 0, 6}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (dense[i][j] != 0) b.add(i, j, dense[i][j]);
  return b;
}

}  // namespace fugue::sparse
