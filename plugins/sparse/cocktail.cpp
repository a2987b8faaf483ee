#include "cocktail.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <unordered_map>

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

// The cut each part is made with.
Cut part_cut(const Cut& cut, Layout layout) {
  Cut c;
  if (layout == Layout::Sbell) c.slice = cut.block_slice, c.block_rows = cut.block_rows, c.block_cols = cut.block_cols;
  if (layout == Layout::Sell) c.slice = cut.slice, c.sigma = cut.sigma;
  return c;
}

const char* part_word(size_t k) { return layout_name(kCocktailParts[k]); }

// A cocktail type's metadata: its sbell's own (block and slice, in a sbell type's order), its sell's own
// (the sorting window), then the rest of the split, so that a conversion into a declared cocktail splits
// as the declaration says and a type tells which split made it.
struct CocktailMetadata {
  int64_t block_rows, block_cols, block_slice;  // the sbell's metadata
  int64_t sigma;                                // the sell's metadata
  int64_t slice, width;
  int64_t declared;  // 1 where the declaration fixed the split (diagonal_fill, block_fill or width)
  double diagonal_fill, block_fill;
};
constexpr size_t kSbellMetadataBytes = 3 * sizeof(int64_t);
static_assert(offsetof(CocktailMetadata, sigma) == kSbellMetadataBytes, "the sell's metadata follows the sbell's");
static_assert(sizeof(CocktailMetadata) == 9 * 8, "no padding: the bytes are compared as the type's");

}  // namespace

uint32_t cocktail_first_part(size_t k) {
  uint32_t first = kCocktailParts[k] == Layout::Csr ? 1 : 0;  // the csr's rows come before its own parts
  for (size_t j = 0; j < k; ++j) first += static_cast<uint32_t>(part_names(kCocktailParts[j]).size());
  return first;
}

namespace {

// The csr's entries, its rows renumbered 0.. in order (`rows` gets the matrix's row of each).
Coordinates listed_rows(const Coordinates& rest, std::vector<int64_t>& rows) {
  Coordinates m;
  m.cols = rest.cols;
  rows.clear();
  for (int64_t e = 0; e < rest.entries(); ++e) {
    if (rows.empty() || rows.back() != rest.row[e]) rows.push_back(rest.row[e]);
    m.add(static_cast<int64_t>(rows.size()) - 1, rest.col[e], rest.value[e]);
  }
  m.rows = static_cast<int64_t>(rows.size());
  return m;
}

}  // namespace

std::vector<char> dense_diagonal_entries(const Coordinates& m, double diagonal_fill) {
  const size_t n = static_cast<size_t>(m.entries());
  std::vector<char> taken(n, 0);
  if (diagonal_fill > 1) return taken;
  // Entries a diagonal: counted in a vector by offset where the diagonals are few enough, else in a map.
  const bool few = m.rows + m.cols <= (int64_t{1} << 26);
  std::vector<int64_t> counted(few ? static_cast<size_t>(m.rows + m.cols + 1) : 0, 0);
  std::unordered_map<int64_t, int64_t> mapped;
  auto on = [&](int64_t offset) -> int64_t& { return few ? counted[static_cast<size_t>(offset + m.rows)] : mapped[offset]; };
  for (size_t e = 0; e < n; ++e) ++on(m.col[e] - m.row[e]);
  const double least = diagonal_fill * static_cast<double>(m.rows);
  for (size_t e = 0; e < n; ++e) taken[e] = static_cast<double>(on(m.col[e] - m.row[e])) >= least;
  return taken;
}

std::vector<char> dense_block_entries(const Coordinates& m, const std::vector<char>& taken, int64_t h, int64_t w, double block_fill) {
  const size_t n = static_cast<size_t>(m.entries());
  std::vector<char> blocked(n, 0);
  if (block_fill > 1) return blocked;
  const double least = block_fill * static_cast<double>(h * w);
  // A super-row's entries (their block column, their index), sorted: a block's entries are a run.
  std::vector<std::pair<int64_t, size_t>> entries;
  for (size_t e = 0; e < n;) {
    const int64_t s = m.row[e] / h;
    size_t end = e;
    entries.clear();
    for (; end < n && m.row[end] / h == s; ++end)
      if (!taken[end]) entries.emplace_back(m.col[end] / w, end);
    std::sort(entries.begin(), entries.end());
    for (size_t run = 0, next = 0; run < entries.size(); run = next) {
      while (next < entries.size() && entries[next].first == entries[run].first) ++next;
      if (static_cast<double>(next - run) >= least)
        for (size_t k = run; k < next; ++k) blocked[entries[k].second] = 1;
    }
    e = end;
  }
  return blocked;
}

Coordinates entries_marked(const Coordinates& m, const std::vector<char>& marked) {
  Coordinates part;
  part.rows = m.rows, part.cols = m.cols;
  const size_t n = static_cast<size_t>(m.entries()), count = static_cast<size_t>(std::count_if(marked.begin(), marked.end(), [](char c) { return c != 0; }));
  part.row.reserve(count), part.col.reserve(count), part.value.reserve(count);
  for (size_t e = 0; e < n; ++e)
    if (marked[e]) part.add(m.row[e], m.col[e], m.value[e]);
  return part;
}

std::array<Coordinates, 4> split_entries(const Coordinates& m, const std::vector<char>& on_diagonals, const std::vector<char>& in_blocks,
                                         int64_t width) {
  const size_t n = static_cast<size_t>(m.entries());
  // Each entry's part: the dia's, the sbell's, else each row's first `width` entries left the sell's and
  // the rest the csr's (entries come row by row). Counted first, so that each part is allocated once.
  std::vector<char> to(n);
  std::array<size_t, 4> counts{};
  int64_t row = -1, in_row = 0;
  for (size_t e = 0; e < n; ++e) {
    char k = on_diagonals[e] ? 0 : in_blocks[e] ? 1 : 2;
    if (k == 2) {
      if (m.row[e] != row) row = m.row[e], in_row = 0;
      if (width >= 0 && in_row++ >= width) k = 3;
    }
    to[e] = k;
    ++counts[static_cast<size_t>(k)];
  }
  std::array<Coordinates, 4> parts;
  for (size_t k = 0; k < 4; ++k) {
    Coordinates& p = parts[k];
    p.rows = m.rows, p.cols = m.cols;
    p.row.reserve(counts[k]), p.col.reserve(counts[k]), p.value.reserve(counts[k]);
  }
  for (size_t e = 0; e < n; ++e) parts[static_cast<size_t>(to[e])].add(m.row[e], m.col[e], m.value[e]);
  return parts;
}

std::array<Coordinates, 4> cocktail_split(const Coordinates& m, const Cut& cut) {
  const std::vector<char> on_diagonals = dense_diagonal_entries(m, cut.diagonal_fill);
  return split_entries(m, on_diagonals, dense_block_entries(m, on_diagonals, cut.block_rows, cut.block_cols, cut.block_fill), cut.width);
}

Facts cocktail_facts_for(const Coordinates& m, fugue_dtype dtype, fugue_dtype index, const Cut& cut, bool limit_padding) {
  return cocktail_facts_of_parts(cocktail_split(m, cut), dtype, index, cut, limit_padding);
}

Facts cocktail_facts_of_parts(const std::array<Coordinates, 4>& parts, fugue_dtype dtype, fugue_dtype index, const Cut& cut,
                              bool limit_padding) {
  Facts f;
  f.layout = Layout::Cocktail;
  f.dtype = dtype;
  f.rows = parts[0].rows;
  f.cols = parts[0].cols;
  f.split = cut;
  f.slice = cut.slice;
  f.sigma = cut.sigma;
  f.block_rows = cut.block_rows;
  f.block_cols = cut.block_cols;
  f.index = FUGUE_DTYPE_I32;
  std::vector<int64_t> rows;
  for (size_t k = 0; k < parts.size(); ++k) {
    try {
      const bool listed = kCocktailParts[k] == Layout::Csr;
      const Coordinates& own = listed ? listed_rows(parts[k], rows) : parts[k];
      // The csr's list holds the matrix's rows: an index wide enough for them.
      const fugue_dtype wide = listed && index == FUGUE_DTYPE_NONE && f.rows >= (int64_t{1} << 31) - 1 ? FUGUE_DTYPE_I64 : index;
      f.components.push_back(facts_for(own, kCocktailParts[k], dtype, wide, part_cut(cut, kCocktailParts[k]), limit_padding));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("the cocktail's ") + part_word(k) + " part: " + e.what());
    }
    if (f.components.back().index == FUGUE_DTYPE_I64) f.index = FUGUE_DTYPE_I64;
  }
  f.nnz = f.components[3].nnz;
  return f;
}

sdk::Declared cocktail_type(const Facts& f) {
  sdk::Declared d;
  d.dtype = f.dtype;
  d.shape = {f.rows, f.cols};
  for (const Facts& part : f.components) {
    const sdk::Declared t = declared_type(part);
    if (part.layout == Layout::Csr) d.parts.push_back({part.index, {part.rows}});  // its rows' list
    d.parts.insert(d.parts.end(), t.parts.begin(), t.parts.end());
  }
  const Cut& s = f.split;
  const CocktailMetadata meta{s.block_rows, s.block_cols, s.block_slice, s.sigma, s.slice, s.width, f.split_declared ? 1 : 0,
                              s.diagonal_fill, s.block_fill};
  d.metadata.resize(sizeof meta);
  std::memcpy(d.metadata.data(), &meta, sizeof meta);
  return d;
}

namespace {

// Part k's type: the cocktail's, narrowed to its parts (where the whole's type lists them: a value
// allocated by hand may not) and its layout's name; the sbell and the sell keep their share of the
// metadata; the csr's shape, written to `shape`, is its `csr_rows` listed rows by `cols`.
fugue_type part_type(const fugue_type& cocktail, size_t k, int64_t csr_rows, int64_t cols, int64_t* shape) {
  fugue_type t = cocktail;
  if (kCocktailParts[k] == Layout::Csr) {
    shape[0] = csr_rows, shape[1] = cols;
    t.shape = shape, t.rank = 2;
  }
  t.kind_name = layout_name(kCocktailParts[k]);
  t.num_parts = static_cast<uint32_t>(part_names(kCocktailParts[k]).size());
  t.parts = cocktail.parts ? FUGUE_NTH(fugue_type, cocktail.parts, cocktail_first_part(k)) : nullptr;
  const bool described = cocktail.metadata && cocktail.metadata_bytes == sizeof(CocktailMetadata);
  t.metadata = nullptr, t.metadata_bytes = 0;
  if (described && kCocktailParts[k] == Layout::Sbell) t.metadata = cocktail.metadata, t.metadata_bytes = kSbellMetadataBytes;
  if (described && kCocktailParts[k] == Layout::Sell)
    t.metadata = static_cast<const char*>(cocktail.metadata) + offsetof(CocktailMetadata, sigma), t.metadata_bytes = sizeof(int64_t);
  return t;
}

}  // namespace

Facts cocktail_facts_of(const fugue_type& type) {
  if (type.num_parts != part_names(Layout::Cocktail).size()) throw std::logic_error("not a cocktail type");
  if (!type.metadata || type.metadata_bytes != sizeof(CocktailMetadata)) throw std::logic_error("a cocktail type without its split in the metadata");
  CocktailMetadata meta;
  std::memcpy(&meta, type.metadata, sizeof meta);
  Facts f;
  f.layout = Layout::Cocktail;
  f.dtype = type.dtype;
  f.rows = type.shape[0];
  f.cols = type.shape[1];
  f.index = FUGUE_DTYPE_I32;
  for (size_t k = 0; k < 4; ++k) {
    int64_t shape[2];
    const int64_t listed = FUGUE_NTH(fugue_type, type.parts, kCocktailRowsPart)->shape[0];
    f.components.push_back(facts_of(part_type(type, k, listed, f.cols, shape)));
    if (f.components.back().index == FUGUE_DTYPE_I64) f.index = FUGUE_DTYPE_I64;
  }
  f.split.block_rows = meta.block_rows, f.split.block_cols = meta.block_cols, f.split.block_slice = meta.block_slice;
  f.split.slice = meta.slice, f.split.sigma = meta.sigma, f.split.width = meta.width;
  f.split.diagonal_fill = meta.diagonal_fill, f.split.block_fill = meta.block_fill;
  f.split_declared = meta.declared != 0;
  f.components[2].slice = meta.slice;  // a sell of no rows cannot tell it from its parts
  f.block_rows = meta.block_rows, f.block_cols = meta.block_cols, f.slice = meta.slice, f.sigma = meta.sigma;
  f.nnz = f.components[3].nnz;
  return f;
}

CocktailViews::CocktailViews(const Facts& f, fugue_host_array& value) {
  // The views read their parts through the host arrays' own types; the csr's listed rows come from the facts.
  for (size_t k = 0; k < 4; ++k) {
    types_[k] = part_type(*value.type, k, f.components.size() == 4 ? f.components[3].rows : 0, f.cols, csr_shape_.data());
    values_[k] = value;
    values_[k].type = &types_[k];
    values_[k].num_parts = types_[k].num_parts;
    values_[k].parts = FUGUE_NTH_MUTABLE(fugue_host_array, value.parts, cocktail_first_part(k));
  }
}

std::vector<std::vector<double>> cocktail_stored_parts(const Facts& f, const Coordinates& m) {
  if (f.components.size() != 4) throw std::logic_error("a cocktail's facts without its parts");
  const std::array<Coordinates, 4> parts = cocktail_split(m, f.split);
  std::vector<std::vector<double>> stored;
  for (size_t k = 0; k < 4; ++k) {
    std::vector<int64_t> rows;
    const bool listed = kCocktailParts[k] == Layout::Csr;
    std::vector<std::vector<double>> own = stored_parts(f.components[k], listed ? listed_rows(parts[k], rows) : parts[k]);
    if (listed) stored.emplace_back(rows.begin(), rows.end());
    for (auto& p : own) stored.push_back(std::move(p));
  }
  return stored;
}

namespace {

// Part k's entries in the matrix's rows (the csr's mapped through its list, which must ascend within the rows).
Coordinates part_entries(const Facts& f, const sdk::HostView& value, CocktailViews& views, size_t k) {
  try {
    Coordinates part = entries_of(f.components[k], views.view(k));
    if (kCocktailParts[k] != Layout::Csr) return part;
    const sdk::HostView rows = value.part(kCocktailRowsPart);
    for (int64_t r = 0; r < rows.size(); ++r) {
      const int64_t row = rows.get_int(r);
      if (row < 0 || row >= f.rows || (r > 0 && row <= rows.get_int(r - 1)))
        throw InvalidArgument("a csr whose rows[" + std::to_string(r) + "] = " + std::to_string(row) + " is outside 0.." +
                              std::to_string(f.rows - 1) + " or not above the row before it");
    }
    for (int64_t& r : part.row) r = rows.get_int(r);
    part.rows = f.rows;
    return part;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("the cocktail's ") + part_word(k) + " part: " + e.what());
  }
}

}  // namespace

Coordinates cocktail_entries(const Facts& f, const sdk::HostView& value) {
  CocktailViews views(f, value.raw());
  Coordinates m;
  m.rows = f.rows;
  m.cols = f.cols;
  for (size_t k = 0; k < 4; ++k) {
    const Coordinates part = part_entries(f, value, views, k);
    for (int64_t e = 0; e < part.entries(); ++e) m.add(part.row[e], part.col[e], part.value[e]);
  }
  return m;  // entries_of sorts them and refuses a place two parts both hold
}

std::pair<Facts, Coordinates> cocktail_rows(const Facts& f, const sdk::HostView& value, int64_t first, int64_t count,
                                            std::array<Coordinates, 4>* parts) {
  CocktailViews views(f, value.raw());
  Facts rows = f;
  rows.rows = count;
  rows.components.clear();
  Coordinates all;
  all.rows = count;
  all.cols = f.cols;
  for (size_t k = 0; k < 4; ++k) {
    Facts facts;
    Coordinates entries;
    if (kCocktailParts[k] == Layout::Csr) {  // its listed rows that fall in first..first+count-1
      const Coordinates all_rows = part_entries(f, value, views, k);
      entries.rows = count, entries.cols = f.cols;
      for (int64_t e = 0; e < all_rows.entries(); ++e)
        if (all_rows.row[e] >= first && all_rows.row[e] < first + count) entries.add(all_rows.row[e] - first, all_rows.col[e], all_rows.value[e]);
      std::vector<int64_t> listed;
      facts = facts_for(listed_rows(entries, listed), Layout::Csr, f.dtype, f.components[k].index, {}, false);
    } else {
      std::tie(facts, entries) = rows_of(f.components[k], views.view(k), first, count);
    }
    rows.components.push_back(facts);
    for (int64_t e = 0; e < entries.entries(); ++e) all.add(entries.row[e], entries.col[e], entries.value[e]);
    if (parts) (*parts)[k] = std::move(entries);
  }
  rows.nnz = rows.components[3].nnz;
  all.sort_unique([](int64_t k) { return "entry " + std::to_string(k); }, 0);
  return {rows, std::move(all)};
}

void cocktail_store_rows(const Facts& f, const sdk::HostView& value, int64_t first, int64_t count, const sdk::HostView& rows) {
  std::array<Coordinates, 4> parts;
  const Facts facts = cocktail_rows(f, value, first, count, &parts).first;
  const sdk::Declared type = declared_type(facts);
  bool same = type.parts.size() == rows.parts();
  for (uint32_t k = 0; same && k < rows.parts(); ++k) same = rows.part(k).size() == type.parts[k].shape[0] && rows.part(k).dtype() == type.parts[k].dtype;
  if (!same) throw std::logic_error("rows_value: the cocktail's rows are not of the type rows_type gave");
  CocktailViews views(facts, rows.raw());
  for (size_t k = 0; k < 4; ++k) {
    if (kCocktailParts[k] != Layout::Csr) {
      store(facts.components[k], parts[k], views.view(k));
      continue;
    }
    std::vector<int64_t> listed;
    store(facts.components[k], listed_rows(parts[k], listed), views.view(k));
    sdk::HostView list = rows.part(kCocktailRowsPart);
    for (size_t r = 0; r < listed.size(); ++r) list.set_int(static_cast<int64_t>(r), listed[r]);
  }
}

std::string cocktail_summary(const Facts& f) {
  std::string text;
  auto add = [&](const std::string& s) { text += (text.empty() ? "" : " + ") + s; };
  const Facts &dia = f.components[0], &sbell = f.components[1], &sell = f.components[2], &csr = f.components[3];
  if (dia.diagonals) add("dia of " + std::to_string(dia.diagonals) + " diagonals");
  if (sbell.blocks)
    add("sbell of " + std::to_string(sbell.block_rows) + "x" + std::to_string(sbell.block_cols) + " blocks (" + std::to_string(sbell.blocks) +
        " places)");
  if (sell.stored) add("sell of " + std::to_string(sell.stored) + " places (C=" + std::to_string(sell.slice) + ")");
  if (csr.nnz) add("csr of " + std::to_string(csr.nnz) + " entries in " + std::to_string(csr.rows) + " rows");
  return text.empty() ? "no entries" : text;
}

}  // namespace fugue::sparse
