#include "layouts.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "cocktail.h"

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

constexpr int64_t kI32Limit = (int64_t{1} << 31) - 1;
// ell, sell and dia pad; beyond this many places and this many times the entries, the layout is refused.
constexpr int64_t kPaddedPlaces = int64_t{1} << 26;
constexpr int64_t kPaddingFactor = 20;

// Per place of a sell value, the matrix row it holds (-1: padding), rows sorted within windows of sigma.
std::vector<int64_t> sell_rows(const std::vector<int64_t>& lengths, int64_t rows, int64_t slice, int64_t sigma) {
  std::vector<int64_t> order(static_cast<size_t>(ceil_div(rows, slice) * slice), -1);
  std::iota(order.begin(), order.begin() + rows, int64_t{0});
  for (int64_t w = 0; w < rows; w += sigma)
    std::stable_sort(order.begin() + w, order.begin() + std::min(rows, w + sigma),
                     [&](int64_t a, int64_t b) { return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)]; });
  return order;
}

int64_t places(const Facts& f) {
  switch (f.layout) {
    case Layout::Csr:
    case Layout::Coo: return f.nnz;
    case Layout::Ell: return f.width * f.rows;
    case Layout::Sell: return f.stored;
    case Layout::Dia: return f.diagonals * f.rows;
    case Layout::Hyb: return f.width * f.rows + f.nnz;
    case Layout::Bcsr:
    case Layout::Sbell: return f.blocks * f.block_rows * f.block_cols;
    case Layout::Bdia: return f.diagonals * f.rows;
    case Layout::Bell: return f.width * super_rows(f) * f.block_rows * f.block_cols;
    case Layout::Cocktail: {
      int64_t all = 0;
      for (const Facts& part : f.components) all += places(part);
      return all;
    }
  }
  return 0;
}

// dia, bdia: the offsets of the diagonals that hold entries, ascending.
std::vector<int64_t> diagonal_offsets(const Coordinates& m) {
  std::vector<int64_t> offsets;
  if (m.rows + m.cols <= (int64_t{1} << 26)) {  // marked by offset: one pass, no sorting
    std::vector<char> seen(static_cast<size_t>(m.rows + m.cols + 1), 0);
    for (int64_t e = 0; e < m.entries(); ++e) seen[static_cast<size_t>(m.col[e] - m.row[e] + m.rows)] = 1;
    for (size_t k = 0; k < seen.size(); ++k)
      if (seen[k]) offsets.push_back(static_cast<int64_t>(k) - m.rows);
    return offsets;
  }
  offsets.reserve(static_cast<size_t>(m.entries()));
  for (int64_t e = 0; e < m.entries(); ++e) offsets.push_back(m.col[e] - m.row[e]);
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

// bdia: the bands (runs of consecutive offsets) of ascending offsets, as [first index, end index).
std::vector<std::pair<size_t, size_t>> bands_of(const std::vector<int64_t>& offsets) {
  std::vector<std::pair<size_t, size_t>> bands;
  for (size_t d = 0; d < offsets.size(); ++d)
    if (d > 0 && offsets[d] == offsets[d - 1] + 1) bands.back().second = d + 1;
    else bands.push_back({d, d + 1});
  return bands;
}

// sbell: slice s's width, the most blocks any of its super-rows holds.
int64_t slice_width(const std::vector<std::vector<int64_t>>& blocks, size_t s, int64_t slice) {
  size_t w = 0;
  for (size_t r = s * static_cast<size_t>(slice); r < std::min(blocks.size(), (s + 1) * static_cast<size_t>(slice)); ++r)
    w = std::max(w, blocks[r].size());
  return static_cast<int64_t>(w);
}

// bcsr: per super-row (h rows), the first columns of its blocks, ascending.
std::vector<std::vector<int64_t>> bcsr_blocks(const Coordinates& m, int64_t h, int64_t w) {
  std::vector<std::vector<int64_t>> blocks(static_cast<size_t>(ceil_div(m.rows, h)));
  for (int64_t e = 0; e < m.entries(); ++e) blocks[static_cast<size_t>(m.row[e] / h)].push_back(m.col[e] / w * w);
  for (auto& b : blocks) {
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
  }
  return blocks;
}

// Bell and Garland's HYB width: the largest w that at least max(4096, rows / 3) rows fill.
int64_t hyb_width(const std::vector<int64_t>& lengths) {
  const int64_t rows = static_cast<int64_t>(lengths.size()), needed = std::min(rows, std::max<int64_t>(4096, rows / 3));
  if (rows == 0) return 0;
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> at_least(static_cast<size_t>(longest) + 2, 0);  // rows with length >= w
  for (int64_t n : lengths) ++at_least[static_cast<size_t>(n)];
  for (int64_t w = longest - 1; w >= 0; --w) at_least[static_cast<size_t>(w)] += at_least[static_cast<size_t>(w) + 1];
  int64_t w = 0;
  while (w + 1 <= longest && at_least[static_cast<size_t>(w) + 1] >= needed) ++w;
  return w;
}

// A layout's facts checked: refused where it would mostly hold padding; its index dtype (`index`, or
// i32 where the counts fit).
Facts checked(Facts f, const Coordinates& m, fugue_dtype index, bool limit_padding) {
  const Layout layout = f.layout;
  if (layout == Layout::Hyb && f.width > f.cols)  // as a declaration of one is refused: its ell part would be padding alone
    throw InvalidArgument("/width: a row holds at most " + std::to_string(f.cols) + " entries (the columns), found " + std::to_string(f.width));
  const int64_t held = places(f);
  if (limit_padding && held > kPaddedPlaces && held > kPaddingFactor * std::max<int64_t>(m.entries(), 1))
    throw InvalidArgument(std::string(layout_name(layout)) + " would hold " + std::to_string(held) + " places for " +
                          std::to_string(m.entries()) + " entries (more than " + std::to_string(kPaddingFactor) +
                          " times: the rows' lengths or the diagonals vary too much); choose csr, coo or sell");
  const bool wide = std::max({f.rows + 1, f.cols, held}) > kI32Limit;
  if (index == FUGUE_DTYPE_NONE) index = wide ? FUGUE_DTYPE_I64 : FUGUE_DTYPE_I32;
  if (index == FUGUE_DTYPE_I32 && wide)
    throw InvalidArgument("/index: i32 cannot count " + std::to_string(std::max({f.rows + 1, f.cols, held})) + " (use \"i64\")");
  f.index = index;
  return f;
}

}  // namespace

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Csr: return "csr";
    case Layout::Coo: return "coo";
    case Layout::Ell: return "ell";
    case Layout::Sell: return "sell";
    case Layout::Dia: return "dia";
    case Layout::Hyb: return "hyb";
    case Layout::Bcsr: return "bcsr";
    case Layout::Bdia: return "bdia";
    case Layout::Bell: return "bell";
    case Layout::Sbell: return "sbell";
    case Layout::Cocktail: return "cocktail";
  }
  return "?";
}

const std::vector<Layout>& every_layout() {
  static const std::vector<Layout> all = {Layout::Csr,  Layout::Coo,  Layout::Ell,  Layout::Sell, Layout::Dia,
                                             Layout::Bdia, Layout::Hyb,  Layout::Bcsr, Layout::Bell, Layout::Sbell, Layout::Cocktail};
  return all;
}

std::optional<Layout> layout_named(const std::string& name) {
  for (Layout l : every_layout())
    if (name == layout_name(l)) return l;
  return std::nullopt;
}

const std::vector<std::string>& part_names(Layout layout) {
  static const std::vector<std::string> csr = {"row_ptr", "col", "data"}, coo = {"row", "col", "data"}, ell = {"col", "data"},
                                        sell = {"slice_ptr", "row", "col", "data"}, dia = {"offsets", "data"},
                                        hyb = {"ell_col", "ell_data", "coo_row", "coo_col", "coo_data"}, bcsr = {"row_ptr", "col", "data"},
                                        bdia = {"offsets", "band_ptr", "data"}, bell = {"col", "data"}, sbell = {"slice_ptr", "col", "data"},
                                        cocktail = {"dia_offsets",    "dia_data", "sbell_slice_ptr", "sbell_col", "sbell_data", "sell_slice_ptr",
                                                    "sell_row",       "sell_col", "sell_data",       "csr_rows",    "csr_row_ptr", "csr_col", "csr_data"};
  switch (layout) {
    case Layout::Csr: return csr;
    case Layout::Coo: return coo;
    case Layout::Ell: return ell;
    case Layout::Sell: return sell;
    case Layout::Dia: return dia;
    case Layout::Hyb: return hyb;
    case Layout::Bcsr: return bcsr;
    case Layout::Bdia: return bdia;
    case Layout::Bell: return bell;
    case Layout::Sbell: return sbell;
    case Layout::Cocktail: return cocktail;
  }
  return csr;
}

sdk::Declared declared_type(const Facts& f) {
  if (f.layout == Layout::Cocktail) return cocktail_type(f);
  sdk::Declared d;
  d.dtype = f.dtype;
  d.shape = {f.rows, f.cols};
  auto part = [&](fugue_dtype t, int64_t n) { d.parts.push_back({t, {n}}); };
  // A part holding `per` places for each of the run count's (run_count): its length is that count, at run
  // time where it is counted, and it is then [count, per].
  auto counts = [&](fugue_dtype t, int64_t per) {
    const int64_t count = run_count(f);
    if (f.counted) d.parts.push_back({t, per == 1 ? std::vector<int64_t>{count} : std::vector<int64_t>{count, per}, 1u});
    else part(t, count * per);
  };
  const int64_t block = f.block_rows * f.block_cols;
  switch (f.layout) {
    case Layout::Cocktail: break;  // returned above (cocktail.cpp)
    case Layout::Csr: part(f.index, f.rows + 1), counts(f.index, 1), counts(f.dtype, 1); break;
    case Layout::Coo: counts(f.index, 1), counts(f.index, 1), counts(f.dtype, 1); break;
    case Layout::Ell: counts(f.index, f.rows), counts(f.dtype, f.rows); break;
    case Layout::Sell: {
      const int64_t slices = ceil_div(f.rows, f.slice);
      part(f.index, slices + 1), part(f.index, slices * f.slice), counts(f.index, 1), counts(f.dtype, 1);
      break;
    }
    case Layout::Dia: counts(f.index, 1), counts(f.dtype, f.rows); break;
    case Layout::Hyb:
      part(f.index, f.width * f.rows), part(f.dtype, f.width * f.rows), counts(f.index, 1), counts(f.index, 1), counts(f.dtype, 1);
      break;
    case Layout::Bdia: part(f.index, f.bands), part(f.index, f.bands + 1), part(f.dtype, f.diagonals * f.rows); break;
    case Layout::Bcsr: part(f.index, super_rows(f) + 1), counts(f.index, 1), counts(f.dtype, block); break;
    case Layout::Bell: counts(f.index, super_rows(f)), counts(f.dtype, super_rows(f) * block); break;
    case Layout::Sbell: part(f.index, ceil_div(super_rows(f), f.slice) + 1), counts(f.index, 1), counts(f.dtype, block); break;
  }
  if (f.layout == Layout::Sell) {
    // The sorting window: the parts hold the order a window made, not the window, and a conversion into
    // a declared sell sorts as its declaration says.
    d.metadata.resize(sizeof(int64_t));
    std::memcpy(d.metadata.data(), &f.sigma, sizeof(int64_t));
  }
  if (f.layout == Layout::Bcsr || f.layout == Layout::Bell || f.layout == Layout::Sbell) {
    // The block's height and width (and sbell's slice): the parts' sizes alone cannot tell 4 x 8 from
    // 8 x 4 on few rows.
    const int64_t block[3] = {f.block_rows, f.block_cols, f.slice};
    const size_t bytes = (f.layout == Layout::Sbell ? 3 : 2) * sizeof(int64_t);
    d.metadata.resize(bytes);
    std::memcpy(d.metadata.data(), block, bytes);
  }
  return d;
}

Facts facts_of(const fugue_type& type) {
  Facts f;
  const auto layout = layout_named(type.kind_name ? type.kind_name : "");
  if (!layout || type.rank != 2 || type.num_parts != part_names(*layout).size())
    throw std::logic_error(std::string("not a sparse matrix type: ") + (type.kind_name ? type.kind_name : "?"));
  if (*layout == Layout::Cocktail) return cocktail_facts_of(type);
  f.layout = *layout;
  f.dtype = type.dtype;
  f.rows = type.shape[0];
  f.cols = type.shape[1];
  // A part's places (a counted part is [count, places a count]).
  auto extent = [&](uint32_t k) { return sdk::elements(*FUGUE_NTH(fugue_type, type.parts, k)); };
  f.index = FUGUE_NTH(fugue_type, type.parts, 0)->dtype;
  // The last part holds the run count where any does (the values of every layout that takes one).
  f.counted = FUGUE_NTH(fugue_type, type.parts, type.num_parts - 1)->runtime_axes & 1u;
  switch (f.layout) {
    case Layout::Cocktail: break;  // returned above (cocktail.cpp)
    case Layout::Csr:
    case Layout::Coo: f.nnz = extent(2); break;
    case Layout::Ell: f.width = f.rows ? extent(1) / f.rows : 0; break;
    case Layout::Sell: {
      const int64_t slices = extent(0) - 1;
      f.slice = slices > 0 ? extent(1) / slices : 1;
      f.stored = extent(2);
      f.sigma = 0;  // 0: not recorded (a type without metadata); the row part holds the order either way
      if (type.metadata && type.metadata_bytes == sizeof(int64_t)) std::memcpy(&f.sigma, type.metadata, sizeof(int64_t));
      break;
    }
    case Layout::Dia: f.diagonals = extent(0); break;
    case Layout::Hyb:
      f.width = f.rows ? extent(0) / f.rows : 0;
      f.nnz = extent(4);
      break;
    case Layout::Bdia:
      f.bands = extent(0);
      f.diagonals = f.rows ? extent(2) / f.rows : 0;
      break;
    case Layout::Bcsr:
    case Layout::Bell:
    case Layout::Sbell: {
      int64_t block[3] = {0, 0, 0};
      const size_t bytes = (f.layout == Layout::Sbell ? 3 : 2) * sizeof(int64_t);
      if (type.metadata_bytes != bytes || !type.metadata)
        throw std::logic_error(std::string("a ") + layout_name(f.layout) + " type without its block in the metadata");
      std::memcpy(block, type.metadata, bytes);
      f.block_rows = block[0];
      f.block_cols = block[1];
      if (f.layout == Layout::Sbell) f.slice = block[2];
      if (f.layout == Layout::Bell) f.width = super_rows(f) ? extent(0) / super_rows(f) : 0;
      else f.blocks = extent(1);
      break;
    }
  }
  return f;
}

int64_t declared_count(const Facts& f) {
  switch (f.layout) {
    case Layout::Ell:
    case Layout::Hyb: return f.width;
    case Layout::Sell: return f.stored;
    case Layout::Dia:
    case Layout::Bdia: return f.diagonals;
    case Layout::Bcsr:
    case Layout::Sbell: return f.blocks;
    case Layout::Bell: return f.width;
    default: return f.nnz;
  }
}

const char* count_key(Layout layout) {
  switch (layout) {
    case Layout::Csr:
    case Layout::Coo: return "nnz";
    case Layout::Ell: return "width";
    case Layout::Sell: return "stored";
    case Layout::Dia: return "diagonals";
    case Layout::Hyb: return "width";
    case Layout::Bdia: return "diagonals";
    case Layout::Bcsr: return "blocks";
    case Layout::Bell: return "width";
    case Layout::Sbell: return "blocks";
    case Layout::Cocktail: return "nnz";  // its csr's
  }
  return "nnz";
}

bool takes_run_count(Layout layout) { return layout != Layout::Bdia && layout != Layout::Cocktail; }

int64_t run_count(const Facts& f) { return f.layout == Layout::Hyb ? f.nnz : declared_count(f); }

void set_run_count(Facts& f, int64_t count) {
  switch (f.layout) {
    case Layout::Csr:
    case Layout::Coo:
    case Layout::Hyb: f.nnz = count; break;
    case Layout::Ell:
    case Layout::Bell: f.width = count; break;
    case Layout::Sell: f.stored = count; break;
    case Layout::Dia: f.diagonals = count; break;
    case Layout::Bcsr:
    case Layout::Sbell: f.blocks = count; break;
    case Layout::Bdia:
    case Layout::Cocktail: throw std::logic_error(std::string("a ") + layout_name(f.layout) + " has no run count");
  }
}

const char* run_count_key(Layout layout) { return layout == Layout::Hyb ? "nnz" : count_key(layout); }

int64_t places_in(const sdk::PartType& part) {
  int64_t n = 1;
  for (int64_t e : part.shape) n *= e;
  return n;
}

int64_t super_rows(const Facts& f) { return ceil_div(f.rows, f.block_rows); }

Facts facts_for(const Coordinates& m, Layout layout, fugue_dtype dtype, fugue_dtype index, const Cut& cut, bool limit_padding) {
  Facts f;
  f.layout = layout;
  f.dtype = dtype;
  f.rows = m.rows;
  f.cols = m.cols;
  const int64_t slice = cut.slice, sigma = cut.sigma;
  f.slice = slice;
  f.sigma = sigma;
  f.block_rows = cut.block_rows;
  f.block_cols = cut.block_cols;
  const std::vector<int64_t> lengths = m.row_lengths();
  switch (layout) {
    case Layout::Csr:
    case Layout::Coo: f.nnz = m.entries(); break;
    case Layout::Ell: f.width = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end()); break;
    case Layout::Sell: {
      const std::vector<int64_t> order = sell_rows(lengths, m.rows, slice, sigma);
      for (size_t s = 0; s < order.size(); s += static_cast<size_t>(slice)) {
        int64_t w = 0;
        for (size_t p = s; p < s + static_cast<size_t>(slice); ++p)
          if (order[p] >= 0) w = std::max(w, lengths[static_cast<size_t>(order[p])]);
        f.stored += w * slice;
      }
      break;
    }
    case Layout::Dia: f.diagonals = static_cast<int64_t>(diagonal_offsets(m).size()); break;
    case Layout::Bdia: {
      const std::vector<int64_t> offsets = diagonal_offsets(m);
      f.diagonals = static_cast<int64_t>(offsets.size());
      f.bands = static_cast<int64_t>(bands_of(offsets).size());
      break;
    }
    case Layout::Hyb:
      f.width = cut.width >= 0 ? cut.width : hyb_width(lengths);
      for (int64_t n : lengths) f.nnz += std::max<int64_t>(n - f.width, 0);
      break;
    case Layout::Bcsr:
    case Layout::Bell:
    case Layout::Sbell:
      return block_facts(m, blocks_per_super_row(m, f.block_rows, f.block_cols), layout, dtype, index, cut, limit_padding);
    case Layout::Cocktail: return cocktail_facts_for(m, dtype, index, cut, limit_padding);
  }
  return checked(f, m, index, limit_padding);
}

Facts block_facts(const Coordinates& m, const std::vector<int64_t>& counts, Layout layout, fugue_dtype dtype, fugue_dtype index, const Cut& cut,
                  bool limit_padding) {
  Facts f;
  f.layout = layout;
  f.dtype = dtype;
  f.rows = m.rows;
  f.cols = m.cols;
  f.slice = cut.slice;
  f.block_rows = cut.block_rows;
  f.block_cols = cut.block_cols;
  for (size_t s = 0; s < counts.size(); ++s) {
    f.width = std::max(f.width, counts[s]);
    if (layout == Layout::Bcsr) f.blocks += counts[s];
    // sbell: each slice's widest super-row, times its height.
    if (layout == Layout::Sbell && (s + 1) % static_cast<size_t>(f.slice) == 0) f.blocks += f.width * f.slice, f.width = 0;
  }
  if (layout == Layout::Sbell) f.blocks += f.width * f.slice, f.width = 0;  // the last slice, where short
  if (layout == Layout::Bcsr) f.width = 0;
  return checked(f, m, index, limit_padding);
}

std::vector<int64_t> blocks_per_super_row(const Coordinates& m, int64_t h, int64_t w) {
  std::vector<int64_t> counts(static_cast<size_t>(ceil_div(m.rows, h)), 0);
  std::vector<int64_t> columns;  // a super-row's block columns, from its rows' sorted entries
  for (int64_t e = 0; e < m.entries();) {
    const int64_t s = m.row[e] / h;
    columns.clear();
    for (; e < m.entries() && m.row[e] / h == s; ++e) columns.push_back(m.col[e] / w);
    std::sort(columns.begin(), columns.end());
    counts[static_cast<size_t>(s)] = std::unique(columns.begin(), columns.end()) - columns.begin();
  }
  return counts;
}

std::vector<std::vector<double>> stored_parts(const Facts& f, const Coordinates& m) {
  if (f.layout == Layout::Cocktail) return cocktail_stored_parts(f, m);
  const sdk::Declared type = declared_type(f);
  std::vector<std::vector<double>> parts;
  for (const auto& p : type.parts) parts.emplace_back(static_cast<size_t>(places_in(p)), 0.0);
  // The cases below write through value.part(k).set(i, v) and set_int: into these vectors here, into
  // the parts' own dtypes in store().
  struct Writer {
    std::vector<double>* v;
    void set_int(int64_t i, int64_t x) const { (*v)[static_cast<size_t>(i)] = static_cast<double>(x); }
    void set(int64_t i, double x) const { (*v)[static_cast<size_t>(i)] = x; }
  };
  struct Value {
    std::vector<std::vector<double>>* parts;
    Writer part(size_t k) const { return {&(*parts)[k]}; }
  } value{&parts};
  Writer p0 = value.part(0), p1 = value.part(1);
  switch (f.layout) {
    case Layout::Cocktail: break;  // returned above (cocktail.cpp)
    case Layout::Csr: {
      Writer data = value.part(2);
      int64_t k = 0;
      for (int64_t i = 0; i <= f.rows; ++i) {
        while (k < m.entries() && m.row[k] < i) ++k;
        p0.set_int(i, k);
      }
      for (int64_t e = 0; e < m.entries(); ++e) p1.set_int(e, m.col[e]), data.set(e, m.value[e]);
      break;
    }
    case Layout::Coo: {
      Writer data = value.part(2);
      for (int64_t e = 0; e < m.entries(); ++e) p0.set_int(e, m.row[e]), p1.set_int(e, m.col[e]), data.set(e, m.value[e]);
      break;
    }
    case Layout::Ell: {
      std::vector<int64_t> next(static_cast<size_t>(f.rows), 0);
      for (int64_t e = 0; e < m.entries(); ++e) {
        const int64_t at = next[static_cast<size_t>(m.row[e])]++ * f.rows + m.row[e];
        p0.set_int(at, m.col[e]);
        p1.set(at, m.value[e]);
      }
      break;  // the padding stays as allocated: column 0, value 0
    }
    case Layout::Sell: {
      const std::vector<int64_t> lengths = m.row_lengths();
      const std::vector<int64_t> order = sell_rows(lengths, f.rows, f.slice, f.sigma);
      std::vector<int64_t> first(static_cast<size_t>(f.rows) + 1, 0);  // each row's first entry
      for (int64_t i = 0; i < f.rows; ++i) first[static_cast<size_t>(i) + 1] = first[static_cast<size_t>(i)] + lengths[static_cast<size_t>(i)];
      Writer col = value.part(2), data = value.part(3);
      int64_t start = 0;
      for (size_t s = 0; s * static_cast<size_t>(f.slice) < order.size(); ++s) {
        p0.set_int(static_cast<int64_t>(s), start);
        int64_t w = 0;
        for (int64_t r = 0; r < f.slice; ++r) {
          const int64_t place = static_cast<int64_t>(s) * f.slice + r, row = order[static_cast<size_t>(place)];
          p1.set_int(place, row);
          if (row < 0) continue;
          w = std::max(w, lengths[static_cast<size_t>(row)]);
          for (int64_t k = 0; k < lengths[static_cast<size_t>(row)]; ++k) {
            const int64_t e = first[static_cast<size_t>(row)] + k;
            col.set_int(start + k * f.slice + r, m.col[e]);
            data.set(start + k * f.slice + r, m.value[e]);
          }
        }
        start += w * f.slice;
      }
      p0.set_int(static_cast<int64_t>(order.size()) / f.slice, start);
      break;
    }
    case Layout::Dia:
    case Layout::Bdia: {  // the same data; bdia gives each band's first offset and start
      const std::vector<int64_t> sorted = diagonal_offsets(m);
      if (f.layout == Layout::Dia) {
        for (size_t d = 0; d < sorted.size(); ++d) p0.set_int(static_cast<int64_t>(d), sorted[d]);
      } else {
        const auto bands = bands_of(sorted);
        for (size_t b = 0; b < bands.size(); ++b) {
          p0.set_int(static_cast<int64_t>(b), sorted[bands[b].first]);
          p1.set_int(static_cast<int64_t>(b), static_cast<int64_t>(bands[b].first) * f.rows);
        }
        p1.set_int(static_cast<int64_t>(bands.size()), static_cast<int64_t>(sorted.size()) * f.rows);
      }
      Writer data = value.part(f.layout == Layout::Dia ? 1 : 2);
      for (int64_t e = 0; e < m.entries(); ++e) {
        const auto d = std::lower_bound(sorted.begin(), sorted.end(), m.col[e] - m.row[e]) - sorted.begin();
        data.set(d * f.rows + m.row[e], m.value[e]);
      }
      break;
    }
    case Layout::Hyb: {
      Writer coo_row = value.part(2), coo_col = value.part(3), coo_data = value.part(4);
      std::vector<int64_t> next(static_cast<size_t>(f.rows), 0);
      int64_t c = 0;
      for (int64_t e = 0; e < m.entries(); ++e) {
        const int64_t k = next[static_cast<size_t>(m.row[e])]++;
        if (k < f.width) {
          p0.set_int(k * f.rows + m.row[e], m.col[e]);
          p1.set(k * f.rows + m.row[e], m.value[e]);
        } else {
          coo_row.set_int(c, m.row[e]), coo_col.set_int(c, m.col[e]), coo_data.set(c, m.value[e]);
          ++c;
        }
      }
      break;
    }
    case Layout::Bcsr: {
      Writer data = value.part(2);
      const int64_t h = f.block_rows, w = f.block_cols;
      const std::vector<std::vector<int64_t>> blocks = bcsr_blocks(m, h, w);
      std::vector<int64_t> first(blocks.size() + 1, 0);  // each super-row's first block
      for (size_t s = 0; s < blocks.size(); ++s) {
        first[s + 1] = first[s] + static_cast<int64_t>(blocks[s].size());
        p0.set_int(static_cast<int64_t>(s), first[s]);
        for (size_t k = 0; k < blocks[s].size(); ++k) p1.set_int(first[s] + static_cast<int64_t>(k), blocks[s][k]);
      }
      p0.set_int(static_cast<int64_t>(blocks.size()), first.back());
      for (int64_t e = 0; e < m.entries(); ++e) {
        const auto& in = blocks[static_cast<size_t>(m.row[e] / h)];
        const int64_t b = first[static_cast<size_t>(m.row[e] / h)] + (std::lower_bound(in.begin(), in.end(), m.col[e] / w * w) - in.begin());
        const int64_t r = m.row[e] % h, c = m.col[e] % w, unit = r * (w / 4) + c / 4;
        data.set((unit * f.blocks + b) * 4 + c % 4, m.value[e]);
      }
      break;
    }
    case Layout::Bell:
    case Layout::Sbell: {
      // Place of block k of super-row s, where its slice's places start, and how many the slice holds
      // (bell: one slice of every super-row).
      const int64_t h = f.block_rows, w = f.block_cols;
      const std::vector<std::vector<int64_t>> blocks = bcsr_blocks(m, h, w);
      const int64_t c_rows = f.layout == Layout::Bell ? std::max<int64_t>(super_rows(f), 1) : f.slice;
      Writer col = value.part(f.layout == Layout::Bell ? 0 : 1), data = value.part(f.layout == Layout::Bell ? 1 : 2);
      std::vector<int64_t> start(blocks.size() / static_cast<size_t>(c_rows) + 2, 0);  // each slice's first place
      for (size_t s = 0; s * static_cast<size_t>(c_rows) < blocks.size(); ++s) {
        start[s + 1] = start[s] + (f.layout == Layout::Bell ? f.width : slice_width(blocks, s, c_rows)) * c_rows;
        if (f.layout == Layout::Sbell) p0.set_int(static_cast<int64_t>(s), start[s]), p0.set_int(static_cast<int64_t>(s) + 1, start[s + 1]);
      }
      for (size_t sr = 0; sr < blocks.size(); ++sr)
        for (size_t k = 0; k < blocks[sr].size(); ++k)
          col.set_int(start[sr / static_cast<size_t>(c_rows)] + static_cast<int64_t>(k) * c_rows + static_cast<int64_t>(sr) % c_rows, blocks[sr][k]);
      for (int64_t e = 0; e < m.entries(); ++e) {
        const size_t sr = static_cast<size_t>(m.row[e] / h), s = sr / static_cast<size_t>(c_rows);
        const auto& in = blocks[sr];
        const int64_t k = std::lower_bound(in.begin(), in.end(), m.col[e] / w * w) - in.begin();
        const int64_t places = start[s + 1] - start[s], place = k * c_rows + static_cast<int64_t>(sr) % c_rows;
        const int64_t r = m.row[e] % h, c = m.col[e] % w, unit = r * (w / 4) + c / 4;
        data.set(start[s] * h * w + (unit * places + place) * 4 + c % 4, m.value[e]);
      }
      break;
    }
  }
  return parts;
}

void store(const Facts& f, const Coordinates& m, const sdk::HostView& value) {
  const std::vector<std::vector<double>> parts = stored_parts(f, m);
  for (size_t k = 0; k < parts.size(); ++k) {
    sdk::HostView part = value.part(static_cast<uint32_t>(k));
    const bool integers = part.dtype() == FUGUE_DTYPE_I32 || part.dtype() == FUGUE_DTYPE_I64;
    for (size_t i = 0; i < parts[k].size(); ++i)
      if (integers) part.set_int(static_cast<int64_t>(i), static_cast<int64_t>(parts[k][i]));
      else part.set(static_cast<int64_t>(i), parts[k][i]);
  }
}

Coordinates entries_of(const Facts& f, const sdk::HostView& value) {
  Coordinates m;
  m.rows = f.rows;
  m.cols = f.cols;
  const std::string kind = layout_name(f.layout);
  // An index in low..high-1; a pointer (low: the one before it) that goes back is named so.
  auto index = [&](const sdk::HostView& part, int64_t k, int64_t low, int64_t high, const char* what) {
    const int64_t v = part.get_int(k);
    if (v >= low && v < high) return v;  // the message only for a value at fault: this runs once an entry
    const std::string at = "a " + kind + " whose " + what + "[" + std::to_string(k) + "] = " + std::to_string(v);
    if (v < low && low > 0 && k > 0)
      throw InvalidArgument(at + " is less than " + what + "[" + std::to_string(k - 1) + "] = " + std::to_string(low) +
                            " (pointers only go forward)");
    throw InvalidArgument(at + " is outside " + std::to_string(low) + ".." + std::to_string(high - 1));
  };
  switch (f.layout) {
    case Layout::Csr: {
      const sdk::HostView ptr = value.part(0), col = value.part(1), data = value.part(2);
      if (ptr.get_int(0) != 0 || ptr.get_int(f.rows) != f.nnz)
        throw InvalidArgument("a csr whose row_ptr does not run from 0 to its " + std::to_string(f.nnz) + " entries");
      for (int64_t i = 0; i < f.rows; ++i) {
        const int64_t begin = ptr.get_int(i), end = index(ptr, i + 1, begin, f.nnz + 1, "row_ptr");
        for (int64_t e = begin; e < end; ++e) m.add(i, index(col, e, 0, f.cols, "col"), data.get(e));
      }
      break;
    }
    case Layout::Coo: {
      const sdk::HostView row = value.part(0), col = value.part(1), data = value.part(2);
      for (int64_t e = 0; e < f.nnz; ++e) {
        m.add(index(row, e, 0, f.rows, "row"), index(col, e, 0, f.cols, "col"), data.get(e));
        if (e > 0 && m.row[e] < m.row[e - 1])  // the products walk a coo's rows in order
          throw InvalidArgument("a coo whose rows are not sorted (row[" + std::to_string(e) + "] < row[" + std::to_string(e - 1) + "])");
      }
      break;
    }
    case Layout::Ell: {
      const sdk::HostView col = value.part(0), data = value.part(1);
      for (int64_t i = 0; i < f.rows; ++i)
        for (int64_t k = 0; k < f.width; ++k)
          if (const double v = data.get(k * f.rows + i); v != 0) m.add(i, index(col, k * f.rows + i, 0, f.cols, "col"), v);
      break;
    }
    case Layout::Sell: {
      const sdk::HostView ptr = value.part(0), row = value.part(1), col = value.part(2), data = value.part(3);
      const int64_t slices = ceil_div(f.rows, f.slice);
      if (ptr.get_int(0) != 0 || ptr.get_int(slices) != f.stored)
        throw InvalidArgument("a sell whose slice_ptr does not run from 0 to its " + std::to_string(f.stored) + " places");
      std::vector<char> seen(static_cast<size_t>(f.rows), 0);
      for (int64_t s = 0; s < slices; ++s) {
        const int64_t begin = ptr.get_int(s), end = index(ptr, s + 1, begin, f.stored + 1, "slice_ptr");
        if ((end - begin) % f.slice)
          throw InvalidArgument("a sell whose slice " + std::to_string(s) + " holds " + std::to_string(end - begin) +
                                " places, not a multiple of its slice height " + std::to_string(f.slice));
        for (int64_t r = 0; r < f.slice; ++r) {
          const int64_t place = s * f.slice + r, i = row.get_int(place);
          if (i < -1 || i >= f.rows || (i >= 0 && seen[static_cast<size_t>(i)]++))
            throw InvalidArgument("a sell whose row[" + std::to_string(place) + "] = " + std::to_string(i) +
                                  " is outside -1.." + std::to_string(f.rows - 1) + " or repeats a row");
          // Not sorted (sigma 1): place p holds row p, which the products read without the row part.
          if (f.sigma == 1 && i != (place < f.rows ? place : -1))
            throw InvalidArgument("a sell of sigma 1 (rows not sorted) whose row[" + std::to_string(place) + "] = " + std::to_string(i) +
                                  ": its places hold the rows in order (row[p] = p, -1 past the last row); declare the \"sigma\" "
                                  "whose windows sorted them");
          if (i < 0) continue;
          for (int64_t e = begin + r; e < end; e += f.slice)
            if (const double v = data.get(e); v != 0) m.add(i, index(col, e, 0, f.cols, "col"), v);
        }
      }
      if (std::count(seen.begin(), seen.end(), 0)) throw InvalidArgument("a sell whose row part leaves a row out");
      break;
    }
    case Layout::Dia: {
      const sdk::HostView offsets = value.part(0), data = value.part(1);
      for (int64_t d = 0; d < f.diagonals; ++d) {
        const int64_t o = offsets.get_int(d);
        if (d > 0 && o <= offsets.get_int(d - 1)) throw InvalidArgument("a dia whose offsets are not ascending");
        for (int64_t i = 0; i < f.rows; ++i)
          if (const double v = data.get(d * f.rows + i); v != 0) {
            if (i + o < 0 || i + o >= f.cols)
              throw InvalidArgument("a dia with a value outside the matrix (diagonal " + std::to_string(o) + ", row " + std::to_string(i) + ")");
            m.add(i, i + o, v);
          }
      }
      break;
    }
    case Layout::Hyb: {
      const sdk::HostView col = value.part(0), data = value.part(1), coo_row = value.part(2), coo_col = value.part(3),
                          coo_data = value.part(4);
      for (int64_t i = 0; i < f.rows; ++i)
        for (int64_t k = 0; k < f.width; ++k)
          if (const double v = data.get(k * f.rows + i); v != 0) m.add(i, index(col, k * f.rows + i, 0, f.cols, "ell_col"), v);
      for (int64_t e = 0; e < f.nnz; ++e) {
        if (e > 0 && coo_row.get_int(e) < coo_row.get_int(e - 1))
          throw InvalidArgument("a hyb whose coo rows are not sorted (coo_row[" + std::to_string(e) + "] < coo_row[" + std::to_string(e - 1) + "])");
        m.add(index(coo_row, e, 0, f.rows, "coo_row"), index(coo_col, e, 0, f.cols, "coo_col"), coo_data.get(e));
      }
      break;
    }
    case Layout::Bcsr: {
      const sdk::HostView ptr = value.part(0), col = value.part(1), data = value.part(2);
      const int64_t h = f.block_rows, w = f.block_cols, super_rows = ceil_div(f.rows, h);
      if (ptr.get_int(0) != 0 || ptr.get_int(super_rows) != f.blocks)
        throw InvalidArgument("a bcsr whose row_ptr does not run from 0 to its " + std::to_string(f.blocks) + " blocks");
      for (int64_t s = 0; s < super_rows; ++s) {
        const int64_t begin = ptr.get_int(s), end = index(ptr, s + 1, begin, f.blocks + 1, "row_ptr");
        for (int64_t b = begin; b < end; ++b) {
          const int64_t c0 = index(col, b, 0, f.cols, "col");
          for (int64_t r = 0; r < h; ++r)
            for (int64_t c = 0; c < w; ++c)
              if (const double v = data.get(((r * (w / 4) + c / 4) * f.blocks + b) * 4 + c % 4); v != 0) {
                if (s * h + r >= f.rows || c0 + c >= f.cols)
                  throw InvalidArgument("a bcsr with a value outside the matrix (block " + std::to_string(b) + ")");
                m.add(s * h + r, c0 + c, v);
              }
        }
      }
      break;
    }
    case Layout::Bdia: {
      const sdk::HostView offsets = value.part(0), ptr = value.part(1), data = value.part(2);
      if (ptr.get_int(0) != 0 || ptr.get_int(f.bands) != f.diagonals * f.rows)
        throw InvalidArgument("a bdia whose band_ptr does not run from 0 to its " + std::to_string(f.diagonals * f.rows) + " places");
      for (int64_t b = 0; b < f.bands; ++b) index(ptr, b + 1, ptr.get_int(b), f.diagonals * f.rows + 1, "band_ptr");  // before any data
      int64_t next = std::numeric_limits<int64_t>::min();  // the least offset the next band may start at
      for (int64_t b = 0; b < f.bands; ++b) {
        const int64_t o = offsets.get_int(b), begin = ptr.get_int(b), end = ptr.get_int(b + 1);
        if (f.rows > 0 && (end - begin) % f.rows)
          throw InvalidArgument("a bdia whose band " + std::to_string(b) + " holds " + std::to_string(end - begin) +
                                " places, not whole diagonals of " + std::to_string(f.rows) + " rows");
        if (o < next) throw InvalidArgument("a bdia whose bands are not ascending or overlap (band " + std::to_string(b) + ")");
        const int64_t diagonals = f.rows ? (end - begin) / f.rows : 0;
        next = o + diagonals;
        for (int64_t j = 0; j < diagonals; ++j)
          for (int64_t i = 0; i < f.rows; ++i)
            if (const double v = data.get(begin + j * f.rows + i); v != 0) {
              if (i + o + j < 0 || i + o + j >= f.cols)
                throw InvalidArgument("a bdia with a value outside the matrix (diagonal " + std::to_string(o + j) + ", row " + std::to_string(i) + ")");
              m.add(i, i + o + j, v);
            }
      }
      break;
    }
    case Layout::Bell:
    case Layout::Sbell: {
      const bool sliced = f.layout == Layout::Sbell;
      const sdk::HostView col = value.part(sliced ? 1 : 0), data = value.part(sliced ? 2 : 1);
      const int64_t h = f.block_rows, w = f.block_cols, count = super_rows(f);
      const int64_t c_rows = sliced ? f.slice : std::max<int64_t>(count, 1), slices = ceil_div(count, c_rows);
      const int64_t all = sliced ? f.blocks : f.width * count;
      if (sliced) {
        const sdk::HostView ptr = value.part(0);
        if (ptr.get_int(0) != 0 || ptr.get_int(slices) != f.blocks)
          throw InvalidArgument("a sbell whose slice_ptr does not run from 0 to its " + std::to_string(f.blocks) + " blocks");
      }
      for (int64_t s = 0; s < slices; ++s) {
        const int64_t begin = sliced ? value.part(0).get_int(s) : 0;
        const int64_t end = sliced ? index(value.part(0), s + 1, begin, all + 1, "slice_ptr") : all;
        if ((end - begin) % c_rows)
          throw InvalidArgument("a sbell whose slice " + std::to_string(s) + " holds " + std::to_string(end - begin) +
                                " blocks, not a multiple of its slice height " + std::to_string(c_rows));
        for (int64_t p = 0; p < end - begin; ++p) {
          const int64_t sr = s * c_rows + p % c_rows, c0 = index(col, begin + p, 0, f.cols, "col");
          for (int64_t r = 0; r < h; ++r)
            for (int64_t c = 0; c < w; ++c)
              if (const double v = data.get(begin * h * w + ((r * (w / 4) + c / 4) * (end - begin) + p) * 4 + c % 4); v != 0) {
                if (sr * h + r >= f.rows || c0 + c >= f.cols)
                  throw InvalidArgument("a " + kind + " with a value outside the matrix (block " + std::to_string(begin + p) + ")");
                m.add(sr * h + r, c0 + c, v);
              }
        }
      }
      break;
    }
    case Layout::Cocktail: m = cocktail_entries(f, value); break;
  }
  m.sort_unique([](int64_t k) { return "entry " + std::to_string(k); }, 0);  // parts count from 0
  return m;
}

}  // namespace fugue::sparse

namespace fugue::sparse {

std::pair<Facts, Coordinates> rows_of(const Facts& f, const sdk::HostView& value, int64_t first, int64_t count) {
  if (first < 0 || count < 0 || first + count > f.rows)
    throw InvalidArgument("rows " + std::to_string(first) + " to " + std::to_string(first + count) + " of a matrix of " +
                          std::to_string(f.rows) + " rows");
  if (f.layout == Layout::Cocktail) return cocktail_rows(f, value, first, count);
  Coordinates rows;
  rows.rows = count;
  rows.cols = f.cols;
  if (f.layout == Layout::Csr) {  // its rows' entries lie together: read those alone
    const sdk::HostView ptr = value.part(0), col = value.part(1), data = value.part(2);
    const int64_t begin = ptr.get_int(first), end = ptr.get_int(first + count);
    if (begin < 0 || end < begin || end > f.nnz) throw InvalidArgument("a csr whose row_ptr does not hold its rows' entries");
    rows.row.reserve(static_cast<size_t>(end - begin));
    rows.col.reserve(static_cast<size_t>(end - begin));
    rows.value.reserve(static_cast<size_t>(end - begin));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t from = ptr.get_int(first + i), to = ptr.get_int(first + i + 1);
      if (from < begin || to < from || to > end) throw InvalidArgument("a csr whose row_ptr goes back at row " + std::to_string(first + i));
      for (int64_t e = from; e < to; ++e) {
        const int64_t c = col.get_int(e);
        if (c < 0 || c >= f.cols) throw InvalidArgument("a csr whose col[" + std::to_string(e) + "] is outside its columns");
        rows.add(i, c, data.get(e));
      }
    }
  } else if (f.layout == Layout::Dia) {  // row by row, diagonals ascending: the entries come sorted
    const sdk::HostView offsets = value.part(0), data = value.part(1);
    std::vector<int64_t> offset(static_cast<size_t>(f.diagonals));
    for (int64_t d = 0; d < f.diagonals; ++d) {
      offset[static_cast<size_t>(d)] = offsets.get_int(d);
      if (d > 0 && offset[static_cast<size_t>(d)] <= offset[static_cast<size_t>(d - 1)])
        throw InvalidArgument("a dia whose offsets are not ascending");
    }
    for (int64_t i = first; i < first + count; ++i)
      for (int64_t d = 0; d < f.diagonals; ++d)
        if (const double v = data.get(d * f.rows + i); v != 0) {
          const int64_t c = i + offset[static_cast<size_t>(d)];
          if (c < 0 || c >= f.cols)
            throw InvalidArgument("a dia with a value outside the matrix (diagonal " + std::to_string(offset[static_cast<size_t>(d)]) +
                                  ", row " + std::to_string(i) + ")");
          rows.add(i - first, c, v);
        }
  } else {
    const Coordinates all = entries_of(f, value);  // sorted by row
    const auto from = std::lower_bound(all.row.begin(), all.row.end(), first);
    const auto to = std::lower_bound(from, all.row.end(), first + count);
    for (auto it = from; it != to; ++it) {
      const size_t e = static_cast<size_t>(it - all.row.begin());
      rows.add(*it - first, all.col[e], all.value[e]);
    }
  }
  Cut cut;
  cut.slice = f.slice;
  // A sell's rows are sorted all together (the rows' own type records that window): they pad no more
  // than any window would.
  cut.sigma = f.layout == Layout::Sell ? std::max<int64_t>(count, 1) : f.sigma;
  cut.width = f.layout == Layout::Hyb ? f.width : -1;
  cut.block_rows = f.block_rows;
  cut.block_cols = f.block_cols;
  // The whole holds these rows with its padding: alone they pad no more (ell, dia and bdia: no wider;
  // sell: sorted), or little more (the block layouts: a share starting inside a super-row makes at most
  // twice the blocks). Not checked again, so that a split never refuses what one device holds.
  Facts facts = facts_for(rows, f.layout, f.dtype, f.index, cut, false);
  return {facts, std::move(rows)};
}

}  // namespace fugue::sparse
