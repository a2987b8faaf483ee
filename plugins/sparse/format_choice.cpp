#include "format_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "cocktail.h"
#include "sparse_kind.h"

namespace fugue::sparse {

namespace {

// GB/s of the bytes each layout moves (layouts' parts, x once, y once) at 1, 4, 16 and 64 entries a
// row, by device class, measured with scripts/sparse_table.sh (the seed's offline benchmark: dense
// banded matrices, f32; the block layouts with 2 x 4 blocks, their padding counted as bytes moved), every
// row in one run: CPU: PoCL on 2 cores, 2^20 rows, the mean of two runs (REPEAT=10 and 20, which
// differed by up to 2x: PoCL's times vary on this machine), measured again once dia and ell ran in
// vectors of rows on CPUs (dia had been 30.9, 6.6, 3.2, 1.6 and csr 11.6, 10.7, 11.2, 13.0 on a faster day). GPU: an NVIDIA H100 through NVIDIA's OpenCL, 2^21 rows,
// REPEAT=10, SLICE=32, every row again once csr ran in chunks of equal entries (csr had been 1075,
// 1381, 1109, 1491: one entry a row now pays the chunks' three kernels; coo at 64 was 1697, bcsr 1242,
// in the run before); only the ratios between layouts decide.
struct Row {
  std::string device;
  double gbps[kTableRows][4];  // [kTableLayouts][width 1, 4, 16, 64]; hyb: its ell's and its coo's
};

const Row kCpu = {"CPU table (PoCL, measured)",
                  {{8.0, 7.3, 7.7, 8.3},
                   {6.4, 7.0, 9.8, 9.4},
                   {9.2, 7.9, 4.1, 2.2},
                   {6.3, 7.1, 6.3, 5.7},
                   {16.0, 17.1, 5.3, 4.0},
                   {4.7, 5.0, 2.4, 1.3},
                   {4.2, 4.0, 3.2, 2.9},
                   {4.5, 6.3, 6.4, 2.2},
                   {5.5, 6.0, 6.8, 4.5}}};
const Row kGpu = {"GPU table (H100, measured)",
                  {{789.6, 1427.2, 1930.0, 2245.8},
                   {749.0, 1412.1, 1626.6, 828.5},
                   {1787.9, 1782.7, 2361.0, 2808.4},
                   {1315.6, 1626.4, 2221.9, 2633.7},
                   {1537.5, 1264.4, 1815.7, 2014.6},
                   {1343.2, 1349.7, 1816.0, 2060.5},
                   {1602.6, 1702.2, 1932.1, 366.1},
                   {2137.9, 1795.5, 2330.0, 2803.2},
                   {2022.5, 1906.7, 2200.5, 2677.6}}};

// The table `fugue tune sparse` measured for the device (sparse_tuner.cpp writes it), if there is one.
std::optional<Row> tuned_row(const fugue_device_desc* device) {
  const std::string text = sdk::read_tuning_table(device, "sparse");
  if (text.empty()) return std::nullopt;  // not tuned: the tables built in
  const std::string path = sdk::tuning_table_path(device, "sparse");
  auto bad = [&](const std::string& why) {
    return sdk::InvalidArgument("the tuning table " + path + ": " + why + "; run `fugue tune sparse` again (or delete the file)");
  };
  const nlohmann::json table = nlohmann::json::parse(text, nullptr, false);
  if (table.is_discarded() || !table.is_object()) throw bad("not a JSON object");
  if (table.value("tuner", "") != "sparse" || table.value("device", "") != (device->name ? device->name : ""))
    throw bad("not the sparse table of " + std::string(device->name ? device->name : "this device"));
  if (!table.contains("gbps") || !table["gbps"].is_object()) throw bad("no \"gbps\" object");
  if (table.value("widths", nlohmann::json()) != nlohmann::json(kTableWidths)) throw bad("\"widths\" is not [1, 4, 16, 64]");
  Row row;
  row.device = "tuned table (" + path + ")";
  for (int l = 0; l < kTableRows; ++l) {
    const nlohmann::json& g = table["gbps"].value(kTableLayouts[l], nlohmann::json());
    if (!g.is_array() || g.size() != 4) throw bad(std::string("gbps.") + kTableLayouts[l] + " is not 4 numbers");
    for (int w = 0; w < 4; ++w) {
      if (!g[w].is_number() || !(g[w].get<double>() > 0) || !std::isfinite(g[w].get<double>()))
        throw bad(std::string("gbps.") + kTableLayouts[l] + "[" + std::to_string(w) + "] is not a positive number");
      row.gbps[l][w] = g[w].get<double>();
    }
  }
  return row;
}

// log-linear between the widths measured.
double throughput(const Row& row, Layout layout, double width) {
  if (layout == Layout::Hyb) throw std::logic_error("hyb has no row of its own: its parts' are used");
  const double w = std::clamp(std::log2(std::max(width, 1.0)) / 2.0, 0.0, 3.0);  // 1, 4, 16, 64 -> 0..3
  const int i = std::min(static_cast<int>(w), 2);
  const double t = w - i;
  int l = 0;
  while (l < kTableRows && layout_name(layout) != std::string(kTableLayouts[l])) ++l;
  if (l == kTableRows) throw std::logic_error(std::string(layout_name(layout)) + " has no row in the throughput tables");
  const double* g = row.gbps[l];
  return g[i] * (1 - t) + g[i + 1] * t;
}

double bytes_moved(const Facts& f) {
  const sdk::Declared type = declared_type(f);
  double bytes = 0;
  for (const auto& part : type.parts) bytes += static_cast<double>(places_in(part)) * static_cast<double>(sdk::dtype_size(part.dtype));
  return bytes + static_cast<double>(sdk::dtype_size(f.dtype)) * static_cast<double>(f.rows + f.cols);
}

// What a layout costs on the host before its first product, for weighing against the products a program
// runs: a matrix is converted each run, so a program that multiplies once gains nothing from a layout
// that takes seconds to build. ns an entry on one core of the x86 machine this project builds on (Coordinates
// to the layout's facts and parts, 17.8 M entries of a band of 16 with scattered entries and 21.0 M of
// Poisson 2048^2), and the upload of its bytes at a round 16 GB/s to a GPU (a PCIe link) or 8 GB/s to a
// CPU device (a copy in memory). The layouts that place each entry once measured 21 to 35 ns, apart by
// no more than their runs varied: one figure for all of them.
double convert_ns(Layout layout) {
  switch (layout) {
    case Layout::Csr:
    case Layout::Coo:
    case Layout::Ell:
    case Layout::Dia:
    case Layout::Bdia:
    case Layout::Hyb: return 30;
    case Layout::Sell: return 45;  // windows of sigma sorted
    case Layout::Bcsr:
    case Layout::Bell:
    case Layout::Sbell: return 95;
    case Layout::Cocktail: return 240;  // split, then each part's
  }
  return 240;
}
// The analyses the choice runs before it knows what they would save: one pass a block size (ns an entry),
// and the cocktail's split for the device (its eight block sizes, its flat width, its parts).
constexpr double kBlockSizeNs = 12, kSplitSearchNs = 400;

// ms to convert `entries` entries to facts f's layout and upload its parts.
double convert_ms(const Facts& f, int64_t entries, bool gpu) {
  return (static_cast<double>(entries) * convert_ns(f.layout) + bytes_moved(f) / (gpu ? 16.0 : 8.0)) / 1e6;
}

}  // namespace

int64_t sell_slice_for(const fugue_device_desc* device) { return device && device->type == FUGUE_DEVICE_GPU ? 32 : 8; }

// GPUs: how long a layout's SpMV takes at least where the matrix is too small or its rows too uneven
// for its bytes to set the time (seed 003's online rules look at the rows' lengths; the throughput
// tables, measured on banded matrices of 2^10..2^21 rows, cannot). A work-item walks its row's (or
// slice's, or diagonals') entries one after another, so the longest walk sets the time of its round of
// work-items (the device holds about compute_units x 2048 at once); a kernel costs a fixed time to run
// at all; coo's rows that cross its chunks of 8 are added chunk by chunk after the chunks, a chain of
// longest / 8 additions. csr runs in chunks of 8 entries a work-item whatever the rows (spmv.cpp), so
// only rounds of chunks and its two kernels' fixed time bound it (its chunk starts are found once a
// matrix, on its first product). Fitted on the H200
// (scripts/sparse_selection.sh, ms): bcsstk13 (2,003 rows, the longest 95) ell 0.0283, coo 0.0174;
// jagmesh7 (longest 7) ell 0.0058; R-MAT scale 18 (the longest row 15,754) coo 0.468, hyb 0.478, sell
// 6.03. csr's fixed time is two kernels' (chunks, fixup), not fitted yet.
struct Latency {
  double entry_s = 0.25e-6;      // ell, sell, dia, bdia, csr's chunks: one entry of a work-item's walk (the block layouts: one 1 x 4 unit)
  double carry_s = 0.23e-6;      // coo: one addition of a carried row
  double fixed_rows_s = 4.5e-6;  // ell, sell, dia, bdia, the block layouts: the kernel
  double fixed_csr_s = 9e-6;     // csr: its chunks and fixup kernels, each as fixed_rows_s
  double fixed_coo_s = 15e-6;    // coo: its chunks and carries kernels
  double resident = 0;           // work-items the device holds at once
};

// The latency floor of `layout` (facts f) for matrix m, whose longest row has `longest` entries.
// longest_blocks: the block layouts' most blocks in a super-row.
double latency_floor(Layout layout, const Facts& f, const Coordinates& m, int64_t longest, int64_t longest_blocks, const Latency& l) {
  const double rows = static_cast<double>(std::max<int64_t>(m.rows, 1));
  auto rounds = [&](double items) { return std::max(1.0, std::ceil(items / std::max(l.resident, 1.0))); };
  // Work-items walking `average` steps each, the longest `longest`: rounds of the average, or the longest.
  auto walk = [&](double items, double average_steps, double longest_steps, double step_s) {
    return std::max(rounds(items) * average_steps, longest_steps) * step_s;
  };
  auto coo = [&](double nnz, double chain) { return l.fixed_coo_s + walk(std::ceil(nnz / 8), 8, 8, l.entry_s) + chain / 8 * l.carry_s; };
  const double longest_row = static_cast<double>(longest);
  switch (layout) {
    case Layout::Csr: return l.fixed_csr_s + walk(std::ceil(static_cast<double>(m.entries()) / 8), 8, 8, l.entry_s);
    case Layout::Coo: return coo(static_cast<double>(m.entries()), longest_row);
    case Layout::Ell: return l.fixed_rows_s + walk(rows, static_cast<double>(f.width), static_cast<double>(f.width), l.entry_s);
    case Layout::Sell: return l.fixed_rows_s + walk(rows, static_cast<double>(f.stored) / rows, longest_row, l.entry_s);
    case Layout::Dia:
      return l.fixed_rows_s + walk(rows, static_cast<double>(f.diagonals), static_cast<double>(f.diagonals), l.entry_s);
    case Layout::Bdia:
      return l.fixed_rows_s + walk(rows, static_cast<double>(f.diagonals), static_cast<double>(f.diagonals), l.entry_s);
    case Layout::Hyb:
      return l.fixed_rows_s + walk(rows, static_cast<double>(f.width), static_cast<double>(f.width), l.entry_s) +
             (f.nnz > 0 ? coo(static_cast<double>(f.nnz), std::max(longest_row - static_cast<double>(f.width), 0.0)) : 0);
    case Layout::Bcsr:  // a row per work-item, over its super-row's blocks, w entries each
    case Layout::Bell:  // a super-row per work-item, a step per 1 x 4 unit of its blocks
    case Layout::Sbell: {
      const double super_rows = std::max<double>(static_cast<double>(sparse::super_rows(f)), 1.0);
      const double blocks = f.layout == Layout::Bell ? static_cast<double>(f.width) * super_rows : static_cast<double>(f.blocks);
      if (f.layout == Layout::Bcsr)
        return l.fixed_rows_s + walk(rows, blocks / super_rows * static_cast<double>(f.block_cols),
                                     static_cast<double>(longest_blocks * f.block_cols), l.entry_s);
      const double units = static_cast<double>(f.block_rows * f.block_cols / 4);
      return l.fixed_rows_s + walk(super_rows, blocks / super_rows * units, static_cast<double>(longest_blocks) * units, l.entry_s);
    }
    case Layout::Cocktail: throw std::logic_error("a cocktail is weighed part by part");
  }
  return 0;
}

namespace {

// What the estimates of one device read: its throughput table and, on GPUs, its latency floors.
struct Estimator {
  bool gpu = false;
  Row row;
  Latency latency;
};

Estimator estimator_for(const fugue_device_desc* device) {
  Estimator e;
  e.gpu = device && device->type == FUGUE_DEVICE_GPU;
  const std::optional<Row> tuned = tuned_row(device);
  e.row = tuned ? *tuned : e.gpu ? kGpu : kCpu;
  e.latency.resident = e.gpu ? 2048.0 * std::max<uint32_t>(device->compute_units, 1) : 0;
  return e;
}

int64_t longest_row(const Coordinates& m) {
  int64_t longest = 0;
  for (int64_t length : m.row_lengths()) longest = std::max(longest, length);
  return longest;
}

// A layout's estimate (ms) for `m`: its bytes at its throughput at `width` entries a row, on GPUs no less
// than its latency floor (longest: m's longest row; longest_blocks: the block layouts' most blocks a
// super-row). hyb: its ell part at ell's speed, its coo part at coo's.
double layout_ms(const Estimator& e, const Facts& f, const Coordinates& m, double width, int64_t longest, int64_t longest_blocks) {
  double ns = 0;  // bytes over GB/s
  if (f.layout != Layout::Hyb) {
    ns = bytes_moved(f) / throughput(e.row, f.layout, width);
  } else {
    const double ell = static_cast<double>(f.width * f.rows) * static_cast<double>(sdk::dtype_size(f.index) + sdk::dtype_size(f.dtype));
    const double coo = static_cast<double>(f.nnz) * static_cast<double>(2 * sdk::dtype_size(f.index) + sdk::dtype_size(f.dtype));
    const double vectors = static_cast<double>(sdk::dtype_size(f.dtype)) * static_cast<double>(f.rows + f.cols);
    ns = (ell + vectors) / throughput(e.row, Layout::Ell, static_cast<double>(f.width)) + coo / throughput(e.row, Layout::Coo, width);
  }
  if (e.gpu) ns = std::max(ns, latency_floor(f.layout, f, m, longest, longest_blocks, e.latency) * 1e9);
  return ns / 1e6;
}

// A cocktail's estimate: its parts' that hold entries (each reads x and writes y), one after another.
double cocktail_ms(const Estimator& e, const Facts& f, const std::array<Coordinates, 4>& parts) {
  double ms = 0;
  bool any = false;
  for (size_t k = 0; k < 4; ++k) {
    const Coordinates& p = parts[k];
    if (p.entries() == 0) continue;
    any = true;
    const Facts& part = f.components[k];
    int64_t most_blocks = 0;
    if (part.layout == Layout::Sbell)
      for (int64_t n : blocks_per_super_row(p, part.block_rows, part.block_cols)) most_blocks = std::max(most_blocks, n);
    const double width = static_cast<double>(p.entries()) / static_cast<double>(std::max<int64_t>(p.rows, 1));
    ms += layout_ms(e, part, p, width, e.gpu ? longest_row(p) : 0, most_blocks);
  }
  return any ? ms : layout_ms(e, f.components[3], parts[3], 1, 0, 0);
}

// The sell's width a row for the entries `rest` leaves (the cocktail's flat part, sorted in windows of
// sigma, slices of C) that makes the sell and the csr of what it leaves fastest together (-1: every
// entry in the sell). Seed 003 takes the widest ELL whose padded places cost less than its entries in
// CSR or COO; weighing both parts' estimates at every width also counts the csr's fixed costs.
int64_t flat_width(const Estimator& e, const Coordinates& rest, fugue_dtype dtype, int64_t slice, int64_t sigma) {
  const std::vector<int64_t> lengths = rest.row_lengths();
  const int64_t rows = rest.rows, longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  if (rest.entries() == 0 || rows == 0) return -1;
  // Each slice's longest row: windows of sigma sorted longest first, cut into slices of C.
  std::vector<int64_t> sorted = lengths, slice_longest;
  for (int64_t w = 0; w < rows; w += sigma) {
    const auto begin = sorted.begin() + w, end = sorted.begin() + std::min(rows, w + sigma);
    std::sort(begin, end, std::greater<int64_t>());
  }
  for (int64_t p = 0; p < rows; p += slice) slice_longest.push_back(sorted[static_cast<size_t>(p)]);
  const int64_t top = std::min<int64_t>(longest, 4096);
  // rows_at_least[v]: rows of v entries or more; slices_at_least[v]: slices whose longest row has v or more.
  std::vector<double> rows_at_least(static_cast<size_t>(top) + 2, 0), slices_at_least(static_cast<size_t>(top) + 2, 0);
  for (int64_t n : lengths) ++rows_at_least[static_cast<size_t>(std::min(n, top))];
  for (int64_t n : slice_longest) ++slices_at_least[static_cast<size_t>(std::min(n, top))];
  for (int64_t v = top - 1; v >= 0; --v)
    rows_at_least[static_cast<size_t>(v)] += rows_at_least[static_cast<size_t>(v) + 1],
        slices_at_least[static_cast<size_t>(v)] += slices_at_least[static_cast<size_t>(v) + 1];
  const double value = static_cast<double>(sdk::dtype_size(dtype)), index = 4, n_rows = static_cast<double>(rows);
  const double vectors = value * static_cast<double>(rest.rows + rest.cols), slices = static_cast<double>(slice_longest.size());
  const double all = static_cast<double>(rest.entries());
  double covered = 0, places = 0, best_ms = -1;
  int64_t best = 0;
  for (int64_t w = 0; w <= top; ++w) {
    if (w > 0) covered += rows_at_least[static_cast<size_t>(w)], places += static_cast<double>(slice) * slices_at_least[static_cast<size_t>(w)];
    double ms = 0;
    if (w > 0) {
      double ns = (places * (value + index) + (slices + 1 + slices * static_cast<double>(slice)) * index + vectors) /
                  throughput(e.row, Layout::Sell, covered / n_rows);
      if (e.gpu) {
        const Latency& l = e.latency;
        const double rounds = std::max(1.0, std::ceil(n_rows / std::max(l.resident, 1.0)));
        ns = std::max(ns, (l.fixed_rows_s + std::max(rounds * places / n_rows, static_cast<double>(std::min(w, longest))) * l.entry_s) * 1e9);
      }
      ms += ns / 1e6;
    }
    const double left = all - covered;
    if (left > 0) {  // the csr holds the rows longer than w alone, listed
      const double listed = std::max(1.0, rows_at_least[static_cast<size_t>(std::min(w + 1, top))]);
      double ns = ((2 * listed + 1) * index + left * (value + index) + value * (listed + static_cast<double>(rest.cols))) /
                  throughput(e.row, Layout::Csr, left / listed);
      if (e.gpu) {
        const Latency& l = e.latency;
        const double rounds = std::max(1.0, std::ceil(std::ceil(left / 8) / std::max(l.resident, 1.0)));
        ns = std::max(ns, (l.fixed_csr_s + rounds * 8 * l.entry_s) * 1e9);
      }
      ms += ns / 1e6;
    }
    if (best_ms < 0 || ms < best_ms) best_ms = ms, best = w;
  }
  return best >= longest ? -1 : best;
}

}  // namespace

namespace {

// A split chosen for a device: the cut (and why), its parts' entries and facts, and its estimate.
struct Split {
  Choice choice;
  std::array<Coordinates, 4> parts;
  Facts facts;
  double ms = 0;
};

Split split_for(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, const Estimator& e, const SplitKeys& given) {
  const double width = m.rows ? static_cast<double>(m.entries()) / static_cast<double>(m.rows) : 1.0;
  const double value = static_cast<double>(sdk::dtype_size(dtype)), index = 4;
  // ns an entry costs in the faster of csr and sell (the seed's g_f): the price a dense part must beat.
  const double flat = std::min((value + index) / throughput(e.row, Layout::Csr, width), (value + index) / throughput(e.row, Layout::Sell, width));
  Choice choice;
  choice.layout = Layout::Cocktail;
  Cut& cut = choice.cut;
  cut.slice = given.slice.value_or(sell_slice_for(device));
  cut.block_slice = given.block_slice.value_or(sell_slice_for(device));
  cut.sigma = given.sigma.value_or(64 * cut.slice);
  // A diagonal is dense where its places in a dia cost less than its entries left flat (seed 003:
  // e_d > n_d g_f / g_d, in bytes here); a block likewise, its column index shared by its places.
  cut.diagonal_fill = value / throughput(e.row, Layout::Dia, width) / flat;
  // The block size that saves most against leaving its dense blocks' entries flat; none where none saves.
  double best_saving = 0;
  Cut best_blocks = cut;
  const std::vector<std::pair<int64_t, int64_t>> sizes =
      given.block ? std::vector<std::pair<int64_t, int64_t>>{*given.block}
                  : std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {2, 4}, {4, 4}, {8, 4}, {1, 8}, {2, 8}, {4, 8}, {8, 8}};
  if (given.block) best_blocks.block_rows = given.block->first, best_blocks.block_cols = given.block->second;
  // The dense diagonals' entries once; each block size looks for dense blocks among the others.
  const std::vector<char> on_diagonals = dense_diagonal_entries(m, cut.diagonal_fill);
  std::vector<char> best_blocked(on_diagonals.size(), 0);
  for (const auto& [h, w] : sizes) {
    if (m.entries() == 0) break;
    Cut c = cut;
    c.block_rows = h, c.block_cols = w;
    c.block_fill = (static_cast<double>(h * w) * value + index) / static_cast<double>(h * w) / throughput(e.row, Layout::Sbell, width) / flat;
    std::vector<char> blocked = dense_block_entries(m, on_diagonals, h, w, c.block_fill);
    const Coordinates in_blocks = entries_marked(m, blocked);
    if (in_blocks.entries() == 0) {
      if (h == 1 && w == 4 && !given.block) break;  // no 1 x 4 block is dense: no larger one is weighed
      continue;
    }
    Facts facts;
    Cut own;  // the sbell's own cut
    own.slice = c.block_slice, own.block_rows = c.block_rows, own.block_cols = c.block_cols;
    try {
      facts = facts_for(in_blocks, Layout::Sbell, dtype, FUGUE_DTYPE_NONE, own);
    } catch (const sdk::InvalidArgument&) {
      continue;
    }
    int64_t most = 0;
    for (int64_t n : blocks_per_super_row(in_blocks, h, w)) most = std::max(most, n);
    const double saving = static_cast<double>(in_blocks.entries()) * flat / 1e6 -
                          layout_ms(e, facts, in_blocks, static_cast<double>(in_blocks.entries()) / std::max<double>(1.0, static_cast<double>(m.rows)),
                                    e.gpu ? longest_row(in_blocks) : 0, most);
    if (saving > best_saving) best_saving = saving, best_blocks = c, best_blocked = std::move(blocked);
  }
  cut = best_blocks;
  // The flat part's width, for what the dia and the sbell leave.
  cut.width = flat_width(e, split_entries(m, on_diagonals, best_blocked, -1)[2], dtype, cut.slice, cut.sigma);
  Split split;
  // A part its layout refuses (too much padding: diagonals whose rows the dia pads) is left out: first the
  // dia, then the sbell too; a sell and csr alone pad no more than the sell of the rows' widths.
  for (int attempt = 0;; ++attempt) {
    split.parts = attempt == 0 ? split_entries(m, on_diagonals, best_blocked, cut.width) : cocktail_split(m, cut);
    try {
      split.facts = cocktail_facts_of_parts(split.parts, dtype, FUGUE_DTYPE_NONE, cut, true);
      break;
    } catch (const sdk::InvalidArgument&) {
      if (attempt == 2) throw;
      (attempt == 0 ? cut.diagonal_fill : cut.block_fill) = 2;
      if (attempt == 1) cut.width = 0;
    }
  }
  split.ms = cocktail_ms(e, split.facts, split.parts);
  char text[160];
  std::snprintf(text, sizeof text, "; estimated %.3g ms (diagonals dense from %.2f full, blocks from %.2f, width %lld)", split.ms,
                std::min(cut.diagonal_fill, 9.99), std::min(cut.block_fill, 9.99), static_cast<long long>(cut.width));
  choice.note = "cocktail split for " + e.row.device + ": " + cocktail_summary(split.facts) + text;
  split.choice = choice;
  return split;
}

}  // namespace

namespace {

// The choices made in this process: a run asks for a value's type when it loads the program and again
// when it fills the value, and a choice's analyses take seconds on a matrix of tens of millions of
// entries. Keyed by what decides a choice: the matrix's structure (its entries' positions, hashed: the
// values decide nothing), the dtype, the device, the keys given and the products.
std::string structure_key(const Coordinates& m) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&](uint64_t word) { hash = (hash ^ word) * 1099511628211ull; };
  mix(static_cast<uint64_t>(m.rows)), mix(static_cast<uint64_t>(m.cols)), mix(static_cast<uint64_t>(m.entries()));
  for (size_t e = 0; e < m.row.size(); ++e) mix(static_cast<uint64_t>(m.row[e])), mix(static_cast<uint64_t>(m.col[e]));
  return std::to_string(hash) + "/" + std::to_string(m.entries());
}

std::string device_key(const fugue_device_desc* device) {
  if (!device) return "none";
  return std::to_string(device->type) + "/" + (device->name ? device->name : "") + "/" + std::to_string(device->compute_units) + "/" +
         sdk::read_tuning_table(device, "sparse");
}

Choice remembered(const std::string& key, const std::function<Choice()>& make) {
  static std::mutex mutex;
  static std::map<std::string, Choice> made;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = made.find(key); it != made.end()) return it->second;
  }
  Choice choice = make();
  std::lock_guard<std::mutex> lock(mutex);
  if (made.size() >= 64) made.clear();  // a bound for processes that load many programs
  made.emplace(key, choice);
  return choice;
}

std::string given_key(const SplitKeys& given) {
  auto text = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  return text(given.slice) + "/" + text(given.sigma) + "/" + text(given.block_slice) + "/" +
         (given.block ? std::to_string(given.block->first) + "x" + std::to_string(given.block->second) : std::string("-"));
}

Choice choose_layout_now(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, int64_t reads);

}  // namespace

Choice choose_split(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, const SplitKeys& given) {
  const std::string key = "split/" + structure_key(m) + "/" + std::to_string(dtype) + "/" + device_key(device) + "/" + given_key(given);
  return remembered(key, [&] { return split_for(m, dtype, device, estimator_for(device), given).choice; });
}

Choice choose_layout(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, int64_t reads) {
  const std::string key = "layout/" + structure_key(m) + "/" + std::to_string(dtype) + "/" + device_key(device) + "/" + std::to_string(reads);
  return remembered(key, [&] { return choose_layout_now(m, dtype, device, reads); });
}

namespace {

Choice choose_layout_now(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, int64_t reads) {
  const Estimator e = estimator_for(device);
  const Row& row = e.row;
  const double width = m.rows ? static_cast<double>(m.entries()) / static_cast<double>(m.rows) : 1.0;
  struct Candidate {
    Cut cut;
    Layout layout;
    double ms;          // the products' estimate: a product's times their count (1 where unknown)
    double convert_ms;  // the conversion's and the upload's, paid once a run (0 where the products are unknown)
    double total() const { return convert_ms + ms; }
  };
  // With the products known, a candidate costs its conversion and that many products; unknown, its
  // products alone (as many as make the conversion negligible).
  const bool counted = reads >= 0;
  const double products = counted ? static_cast<double>(reads) : 1;
  std::vector<Candidate> candidates;
  std::string refused;
  const int64_t slice = sell_slice_for(device);
  const int64_t longest = e.gpu ? longest_row(m) : 0;
  auto weigh = [&](const Facts& f, const Cut& cut, int64_t longest_blocks) {
    candidates.push_back({cut, f.layout, layout_ms(e, f, m, width, longest, longest_blocks) * products,
                          counted ? convert_ms(f, m.entries(), e.gpu) : 0});
  };
  // An analysis is run only where the products could repay it: where it costs more than all the
  // products would take in the fastest layout weighed so far, no layout it finds can save its cost.
  const double entries_ms = static_cast<double>(m.entries()) / 1e6;
  std::string skipped;
  auto worth = [&](const char* what, const char* whose, double analysis_ms) {
    if (!counted || candidates.empty()) return true;
    const double fastest = std::min_element(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.ms < b.ms; })->ms;
    if (analysis_ms <= 0 || analysis_ms < fastest) return true;
    char text[160];
    std::snprintf(text, sizeof text, "%s%s (%s analysis, about %.3g ms, more than the products would take)", skipped.empty() ? "" : "; ", what,
                  whose, analysis_ms);
    skipped += text;
    return false;
  };
  auto refuse = [&](const std::string& name) { refused += (refused.empty() ? "" : ", ") + name; };  // too much padding
  for (const auto& [layout, sigma] : std::vector<std::pair<Layout, int64_t>>{{Layout::Csr, 1},
                                                                             {Layout::Coo, 1},
                                                                             {Layout::Ell, 1},
                                                                             {Layout::Sell, 1},
                                                                             {Layout::Sell, 64 * slice},
                                                                             {Layout::Dia, 1},
                                                                             {Layout::Hyb, 1}}) {
    Cut cut;
    cut.slice = slice;
    cut.sigma = sigma;
    try {
      weigh(facts_for(m, layout, dtype, FUGUE_DTYPE_NONE, cut), cut, 0);
    } catch (const sdk::InvalidArgument&) {
      refuse(layout_name(layout));
    }
  }
  // The block layouts at each of the seed's block sizes the entries fill well enough: 1 x 4 first, whose
  // units every larger block holds whole, so a matrix that fills them poorly fills no larger block better.
  constexpr double kLeastFill = 0.4;
  std::string sizes;
  const double entries = static_cast<double>(m.entries());
  const bool blocks_worth = worth("the block layouts", "their", entries_ms * kBlockSizeNs * 8);
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {2, 4}, {4, 4}, {8, 4}, {1, 8}, {2, 8}, {4, 8}, {8, 8}}) {
    if (m.entries() == 0 || !blocks_worth) break;
    const std::vector<int64_t> counts = blocks_per_super_row(m, h, w);
    double blocks = 0;
    int64_t most = 0;
    for (int64_t n : counts) blocks += static_cast<double>(n), most = std::max(most, n);
    const double fill = entries / (blocks * static_cast<double>(h * w));
    char size[48];
    std::snprintf(size, sizeof size, "%s%lldx%lld %.0f%%", sizes.empty() ? "" : ", ", static_cast<long long>(h), static_cast<long long>(w), 100 * fill);
    sizes += size;
    if (fill < kLeastFill) {
      if (h == 1 && w == 4) break;
      continue;
    }
    Cut cut;
    cut.slice = slice;
    cut.block_rows = h;
    cut.block_cols = w;
    for (Layout layout : {Layout::Bcsr, Layout::Bell, Layout::Sbell}) try {
        weigh(block_facts(m, counts, layout, dtype, FUGUE_DTYPE_NONE, cut), cut, most);
      } catch (const sdk::InvalidArgument&) {
        refuse(std::string(layout_name(layout)) + " " + std::to_string(h) + "x" + std::to_string(w));
      }
  }
  // The cocktail split for the device, where it makes two parts or more (one is a layout weighed above).
  std::string split;
  if (worth("the cocktail", "its", entries_ms * kSplitSearchNs)) try {
      const Split cocktail = split_for(m, dtype, device, e, {});
      const auto& parts = cocktail.parts;
      if (std::count_if(parts.begin(), parts.end(), [](const Coordinates& p) { return p.entries() > 0; }) >= 2) {
        candidates.push_back({cocktail.choice.cut, Layout::Cocktail, cocktail.ms * products,
                              counted ? convert_ms(cocktail.facts, m.entries(), e.gpu) : 0});
        split = cocktail_summary(cocktail.facts);
      }
    } catch (const sdk::InvalidArgument&) {
      refuse("cocktail");
    }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.total() < b.total(); });
  Choice choice;
  const Candidate& best = candidates.front();  // csr and coo never pad, so never refused
  choice.layout = best.layout;
  choice.cut = best.cut;
  char text[160];
  std::snprintf(text, sizeof text, "%.1f entries a row; estimated ms (", width);
  choice.note = text + row.device + "): ";
  if (counted) {
    std::snprintf(text, sizeof text, "%lld product%s read%s it: each layout's conversion and upload on the host + the products; ",
                  static_cast<long long>(reads), reads == 1 ? "" : "s", reads == 1 ? "s" : "");
    choice.note = text + choice.note;
  }
  // Each layout once, at its best cut (candidates are sorted), sell at both windows.
  std::vector<std::string> listed;
  for (const Candidate& c : candidates) {
    std::string name = layout_name(c.layout);
    if (blocked(c.layout)) {
      if (std::find(listed.begin(), listed.end(), name) != listed.end()) continue;
      listed.push_back(name);
      name += " " + std::to_string(c.cut.block_rows) + "x" + std::to_string(c.cut.block_cols);
    }
    if (c.layout == Layout::Sell || c.layout == Layout::Sbell)
      name += " C=" + std::to_string(c.cut.slice) + (c.cut.sigma > 1 ? " sigma=" + std::to_string(c.cut.sigma) : "");
    if (c.layout == Layout::Cocktail) name += " (" + split + ")";
    if (counted)
      std::snprintf(text, sizeof text, "%s%s %.3g + %.3g", &c == &candidates.front() ? "" : ", ", name.c_str(), c.convert_ms, c.ms);
    else
      std::snprintf(text, sizeof text, "%s%s %.3g", &c == &candidates.front() ? "" : ", ", name.c_str(), c.ms);
    choice.note += text;
  }
  if (!refused.empty()) choice.note += "; too much padding: " + refused;
  if (!skipped.empty()) choice.note += "; not weighed: " + skipped;
  if (!sizes.empty()) choice.note += "; blocks filled: " + sizes + (sizes.find(',') == std::string::npos ? " (no larger block weighed)" : "");
  return choice;
}

}  // namespace

}  // namespace fugue::sparse
