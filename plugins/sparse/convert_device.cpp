#include "convert_device.h"

#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "cocktail.h"
#include "convert_cl.h"  // kernel_source_convert, embedded from kernels/convert.cl

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr size_t kScanGroup = 256;  // SCAN_GROUP
// The widest sell sorting window sorted on the device (its keys fill 16 KB of local memory).
constexpr int64_t kSortMax = 2048;
const char* const kWhat = "sparse.convert";

std::string opencl_index(fugue_dtype index) { return index == FUGUE_DTYPE_I64 ? "long" : "int"; }

// The keys a sell result's windows are sorted in: its window (no more than its rows) rounded up to a
// power of 2; 1 where nothing is sorted.
int64_t sort_size(const Facts& to) {
  if (to.layout != Layout::Sell || to.sigma <= 1) return 1;
  int64_t size = 1;
  while (size < std::min(to.sigma, to.rows)) size <<= 1;
  return size;
}

// The places a layout of these facts holds (entries and padding), as layouts.cpp counts them.
int64_t places_of(const Facts& f) {
  switch (f.layout) {
    case Layout::Ell: return f.width * f.rows;
    case Layout::Sell: return std::max(f.stored, ceil_div(f.rows, f.slice) * f.slice);  // its places, its row part
    case Layout::Dia:
    case Layout::Bdia: return f.diagonals * f.rows;
    case Layout::Hyb: return f.width * f.rows + f.nnz;
    case Layout::Bcsr:
    case Layout::Sbell: return f.blocks * f.block_rows * f.block_cols;
    case Layout::Bell: return f.width * ceil_div(f.rows, f.block_rows) * f.block_rows * f.block_cols;
    case Layout::Cocktail: {
      int64_t places = 0;
      for (const Facts& part : f.components) places += places_of(part);
      return places;
    }
    default: return f.nnz;  // csr, coo
  }
}

// The conversion's program for one source index dtype and one result index dtype, with the helpers its
// steps share.
struct Device {
  const fugue_device_services& s;
  cl_program program = nullptr;
  fugue_dtype b_index;  // B_INDEX's

  // Values move as their bits (uint, ulong): no device needs doubles for it. A bdia source's offsets
  // reach the dia kernels expanded into longs, a diagonal each; a sell result's windows are sorted in
  // `sort_size` keys.
  Device(const fugue_device_services& services, fugue_dtype dtype, fugue_dtype a_index, fugue_dtype b_index, Layout source = Layout::Csr,
         int64_t sort_size = 1)
      : s(services), b_index(b_index) {
    program = build_program(s, kernel_source_convert,
                            std::string("-DREAL=") + (dtype == FUGUE_DTYPE_F64 ? "ulong" : "uint") + " -DA_INDEX=" + opencl_index(a_index) +
                                " -DB_INDEX=" + opencl_index(b_index) + " -DDIA_OFFSET=" +
                                (source == Layout::Bdia ? "long" : opencl_index(a_index)) + " -DSCAN_GROUP=" + std::to_string(kScanGroup) +
                                " -DSORT_SIZE=" + std::to_string(sort_size));
  }
  // A check's verdict read back: whether the source is one as the host reads it.
  bool holds(cl_mem verdict) const {
    cl_int fault = 0;
    read(verdict, 0, &fault, "the check");
    return fault == 0;
  }
  // Whether the sums' work-groups fit the device.
  bool scans() const { return Kernel(program, "scan_groups").work_group_size(s.device) >= kScanGroup; }
  void zero(cl_mem buffer, size_t bytes, const char* what) const { fill(buffer, bytes, 0, what); }
  // Every 4 bytes of `buffer` `pattern` (every part's bytes are a multiple of 4).
  void fill(cl_mem buffer, size_t bytes, cl_uint pattern, const char* what) const {
    if (bytes > 0)
      check_cl(clEnqueueFillBuffer(s.queue, buffer, &pattern, sizeof pattern, 0, bytes, 0, nullptr, nullptr), std::string(kWhat) + ": filling " + what);
  }
  // A coo's row pointers (kernels/convert.cl's ROW_POINTERS: `name` and name_firsts), into `ptr` of
  // `index` (-1 before, in either width).
  void row_pointers(const char* name, cl_long m, cl_long nnz, cl_mem row, cl_mem ptr, fugue_dtype index, const std::string& label) const {
    fill(ptr, static_cast<size_t>(m + 1) * dtype_bytes(index), 0xFFFFFFFFu, "the row pointers");
    Kernel firsts(program, std::string(name) + "_firsts");
    firsts.args(nnz, row, ptr).enqueue(s, static_cast<size_t>(nnz), 0, label);
    Kernel rest(program, name);
    rest.args(m, nnz, row, ptr).enqueue(s, static_cast<size_t>(m) + 1, 0, label);
  }
  template <class T>
  void read(cl_mem buffer, size_t offset, T* value, const char* what) const {
    check_cl(clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, offset, sizeof(T), value, 0, nullptr, nullptr), std::string(kWhat) + ": reading " + what);
  }
  // A check's verdict: [0] 1 where the source is not one as the host reads it, [1] a count (a longest row).
  cl_mem verdict() const {
    const cl_int zeros[2] = {0, 0};
    cl_mem v = scratch(s, sizeof zeros);
    check_cl(clEnqueueWriteBuffer(s.queue, v, CL_TRUE, 0, sizeof zeros, zeros, 0, nullptr, nullptr), std::string(kWhat) + ": the check");
    return v;
  }
  // values[0 .. n-1] replaced by their inclusive sums: a work-group's, then the groups' (recursively).
  void scan(cl_mem values, int64_t n) const {
    if (n <= 1) return;
    const int64_t groups = (n + static_cast<int64_t>(kScanGroup) - 1) / static_cast<int64_t>(kScanGroup);
    cl_mem totals = scratch(s, static_cast<size_t>(groups) * sizeof(cl_long));
    Kernel within(program, "scan_groups");
    within.args(cl_long{n}, values, totals).enqueue(s, static_cast<size_t>(n), kScanGroup, "convert: sums");
    if (groups == 1) return;
    scan(totals, groups);
    Kernel add(program, "scan_add");
    add.args(cl_long{n}, values, totals).enqueue(s, static_cast<size_t>(n), kScanGroup, "convert: sums");
  }
};

// ---- The block layouts' shape --------------------------------------------------------------------

bool is_block(Layout l) { return l == Layout::Bcsr || l == Layout::Bell || l == Layout::Sbell; }

// A bcsr's, bell's or sbell's kind and shape as kernels/convert.cl's blocks_of reads them (its slice
// height: a sbell's; a bell's every super-row; a bcsr's one).
struct BlockShape {
  cl_int kind = 0;
  cl_long8 shape{};
  int64_t super_rows = 0, slices = 0;

  explicit BlockShape(const Facts& f) : super_rows(ceil_div(f.rows, f.block_rows)) {
    const int64_t c = f.layout == Layout::Sbell ? f.slice : f.layout == Layout::Bell ? std::max<int64_t>(super_rows, 1) : 1;
    kind = f.layout == Layout::Bcsr ? 0 : f.layout == Layout::Bell ? 1 : 2;  // KIND_BCSR, KIND_BELL, KIND_SBELL
    slices = ceil_div(super_rows, c);
    const int64_t values[8] = {f.rows, f.cols, f.block_rows, f.block_cols, super_rows, c, f.width, f.blocks};
    for (int k = 0; k < 8; ++k) shape.s[k] = values[k];
  }
};

// ---- From a csr ----------------------------------------------------------------------------------

// The csr's pointers and columns as the host reads them (0 .. nnz, ascending columns within a row):
// false where they are not; `longest` its longest row.
bool csr_holds(const Device& d, const Facts& a, cl_mem row_ptr, cl_mem col, cl_int& longest) {
  cl_mem verdict = d.verdict();
  Kernel check(d.program, "csr_check");
  check.args(cl_long{a.rows}, cl_long{a.cols}, cl_long{a.nnz}, row_ptr, col, verdict)
      .enqueue(d.s, static_cast<size_t>(std::max(a.rows, a.nnz)), 0, "convert: csr check");
  cl_int result[2] = {0, 0};
  d.read(verdict, 0, &result, "the check");
  longest = result[1];
  return result[0] == 0;
}

// Whether `count`, what A's entries make of B's run count (layouts.h), is what B's declaration allows:
// the count it declares, or at most its capacity where the count is left to the run (`made` then holds it).
bool count_fits(const Facts& b, int64_t count, int64_t& made) {
  made = count;
  return b.counted ? count <= run_count(b) : count == run_count(b);
}

// A csr (parts `from`) into B's bcsr, bell or sbell (parts `to`): each super-row's blocks counted,
// checked against B's declaration (a bcsr's and a sbell's blocks, a bell's width), then stored.
bool csr_to_blocks(const Device& d, const Facts& declared, const std::vector<cl_mem>& from, const std::vector<cl_mem>& to, int64_t& made) {
  if (!d.scans()) return false;
  Facts b = declared;  // as counted
  BlockShape block(b);
  const size_t super_rows = static_cast<size_t>(block.super_rows);
  cl_mem counts = scratch(d.s, super_rows * sizeof(cl_long)), verdict = d.verdict();
  Kernel count(d.program, "block_counts");
  count.args(block.kind, block.shape, from[0], from[1], counts, verdict).enqueue(d.s, super_rows, 0, "convert: block counts");
  cl_mem sums = counts;  // bcsr: the super-rows' blocks; sbell: the slices' places
  if (b.layout == Layout::Bell) {
    cl_int widest[2] = {0, 0};
    d.read(verdict, 0, &widest, "the widest super-row");
    if (!count_fits(b, widest[1], made)) return false;
  } else {
    int64_t n = block.super_rows;
    if (b.layout == Layout::Sbell) {
      n = block.slices;
      sums = scratch(d.s, static_cast<size_t>(n) * sizeof(cl_long));
      Kernel sizes(d.program, "sbell_slice_sizes");
      sizes.args(cl_long{n}, cl_long{b.slice}, cl_long{block.super_rows}, counts, sums).enqueue(d.s, static_cast<size_t>(n), 0, "convert: sbell slices");
    }
    d.scan(sums, n);
    cl_long blocks = 0;
    d.read(sums, static_cast<size_t>(n - 1) * sizeof(cl_long), &blocks, "the blocks' count");
    if (!count_fits(b, blocks, made)) return false;
  }
  set_run_count(b, made);  // B stored as declared with the count made (its places the first of its capacity's)
  block = BlockShape(b);
  cl_mem data = to.back(), col = to[to.size() - 2], ptr = to.front();  // a bell has no pointers: ptr is its col, unwritten
  d.zero(data, static_cast<size_t>(places_of(b)) * dtype_bytes(b.dtype), "B's data");
  Kernel fill(d.program, "csr_to_blocks");
  fill.args(block.kind, block.shape, from[0], from[1], from[2], sums, ptr, col).arg(8, data);
  fill.enqueue(d.s, static_cast<size_t>(block.slices * block.shape.s[5]), 0, std::string("convert: csr -> ") + layout_name(b.layout));
  return true;
}

bool csr_to_cocktail(const fugue_device_services& s, const Facts& a, const Facts& b, const std::vector<cl_mem>& from,
                     const std::vector<cl_mem>& to);

// A csr `a` (parts `from`) into B's coo, ell, sell, dia, bdia, hyb, block layout or cocktail (parts `to`).
// `check` false: the csr is one the device's kernels made, not checked again (its longest row unknown, which
// an ell and a sell need).
// `made`: B's run count (layouts.h) as stored.
bool from_csr(const Device& d, const Facts& a, const Facts& b, const std::vector<cl_mem>& from, const std::vector<cl_mem>& to,
              int64_t& made, bool check = true) {
  cl_int longest = 0;
  if (!check && (b.layout == Layout::Ell || b.layout == Layout::Sell)) throw std::logic_error("sparse.convert: an ell or a sell needs the csr's check");
  if (check && !csr_holds(d, a, from[0], from[1], longest)) return false;
  const cl_long m = a.rows;
  const size_t rows = static_cast<size_t>(m);
  switch (b.layout) {
    case Layout::Coo: {
      if (!count_fits(b, a.nnz, made)) return false;
      Kernel fill(d.program, "csr_to_coo");
      fill.args(m, from[0], to[0]).enqueue(d.s, rows, 0, "convert: csr -> coo");
      Kernel entries(d.program, "copy_entries");
      entries.args(cl_long{a.nnz}, from[1], from[2], to[1], to[2]).enqueue(d.s, static_cast<size_t>(a.nnz), 0, "convert: csr -> coo");
      return true;
    }
    case Layout::Ell: {
      if (!count_fits(b, longest, made)) return false;
      Kernel fill(d.program, "csr_to_ell");
      fill.args(m, cl_long{longest}, from[0], from[1], from[2], to[0], to[1]).enqueue(d.s, rows, 0, "convert: csr -> ell");
      return true;
    }
    case Layout::Dia:
    case Layout::Bdia: {
      if (!d.scans()) return false;
      // The diagonals holding entries flagged by offset, their sums numbering them.
      const int64_t places = a.rows + a.cols - 1;
      const size_t bytes = static_cast<size_t>(places) * sizeof(cl_long);
      cl_mem sums = scratch(d.s, bytes);
      d.zero(sums, bytes, "the diagonals' flags");
      Kernel flag(d.program, "csr_diagonals");
      flag.args(m, from[0], from[1], sums).enqueue(d.s, rows, 0, "convert: csr diagonals");
      d.scan(sums, places);
      cl_long diagonals = 0;
      d.read(sums, static_cast<size_t>(places - 1) * sizeof(cl_long), &diagonals, "the diagonals' count");
      if (b.layout == Layout::Dia ? !count_fits(b, diagonals, made) : diagonals != b.diagonals) return false;
      const std::string label = std::string("convert: csr -> ") + layout_name(b.layout);
      if (b.layout == Layout::Dia) {
        Kernel offsets(d.program, "dia_offsets");
        offsets.args(m, cl_long{places}, sums, to[0]).enqueue(d.s, static_cast<size_t>(places), 0, "convert: dia offsets");
      } else {
        // A band begins at each diagonal with entries whose neighbour below has none; their sums number the bands.
        cl_mem starts = scratch(d.s, bytes);
        Kernel begin(d.program, "band_starts");
        begin.args(cl_long{places}, sums, starts).enqueue(d.s, static_cast<size_t>(places), 0, "convert: bdia bands");
        d.scan(starts, places);
        cl_long bands = 0;
        d.read(starts, static_cast<size_t>(places - 1) * sizeof(cl_long), &bands, "the bands' count");
        if (bands != b.bands) return false;
        Kernel store(d.program, "bdia_bands");
        store.args(m, cl_long{places}, sums, starts, to[0], to[1]).enqueue(d.s, static_cast<size_t>(places), 0, "convert: bdia bands");
      }
      cl_mem data = to.back();
      d.zero(data, static_cast<size_t>(diagonals * a.rows) * dtype_bytes(b.dtype), "B's data");
      Kernel fill(d.program, "csr_to_dia");
      fill.args(m, from[0], from[1], from[2], sums, data).enqueue(d.s, rows, 0, label);
      return true;
    }
    case Layout::Sell: {
      if (!d.scans() || longest == std::numeric_limits<cl_int>::max()) return false;  // the sort's keys hold lengths below INT_MAX
      const int64_t slices = ceil_div(a.rows, b.slice), places = slices * b.slice;
      // The rows' order is made in a scratch buffer and copied into B's row part once the count holds.
      const size_t order_bytes = static_cast<size_t>(places) * dtype_bytes(b.index);
      cl_mem rows_order = scratch(d.s, order_bytes);
      Kernel order(d.program, "sell_rows_in_order");
      order.args(m, cl_long{places}, rows_order).enqueue(d.s, static_cast<size_t>(places), 0, "convert: sell rows");
      if (b.sigma > 1 && a.rows > 1) {
        Kernel sort(d.program, "sell_sort_window");
        const size_t items = std::min<size_t>({256, static_cast<size_t>(sort_size(b) / 2), sort.work_group_size(d.s.device)});
        sort.args(m, cl_long{b.sigma}, from[0], rows_order).enqueue(d.s, static_cast<size_t>(ceil_div(a.rows, b.sigma)) * items, items, "convert: sell rows");
      }
      cl_mem sums = scratch(d.s, static_cast<size_t>(slices) * sizeof(cl_long));
      Kernel sizes(d.program, "sell_slice_sizes");
      sizes.args(cl_long{slices}, cl_long{b.slice}, from[0], rows_order, sums).enqueue(d.s, static_cast<size_t>(slices), 0, "convert: sell slices");
      d.scan(sums, slices);
      cl_long stored = 0;
      d.read(sums, static_cast<size_t>(slices - 1) * sizeof(cl_long), &stored, "the places' count");
      if (!count_fits(b, stored, made)) return false;
      check_cl(clEnqueueCopyBuffer(d.s.queue, rows_order, to[1], 0, 0, order_bytes, 0, nullptr, nullptr), std::string(kWhat) + ": storing a sell's rows");
      Kernel fill(d.program, "csr_to_sell");
      fill.args(cl_long{slices}, cl_long{b.slice}, from[0], from[1], from[2], sums, rows_order, to[0]).arg(8, to[2]).arg(9, to[3]);
      fill.enqueue(d.s, static_cast<size_t>(places), 0, "convert: csr -> sell");
      return true;
    }
    case Layout::Hyb: {
      if (!d.scans()) return false;
      // The coo part's entries a row, their sums placing each row's.
      cl_mem sums = scratch(d.s, rows * sizeof(cl_long));
      Kernel count(d.program, "hyb_counts");
      count.args(m, cl_long{b.width}, from[0], sums).enqueue(d.s, rows, 0, "convert: hyb counts");
      d.scan(sums, m);
      cl_long rest = 0;
      d.read(sums, (rows - 1) * sizeof(cl_long), &rest, "the coo part's count");
      if (!count_fits(b, rest, made)) return false;
      Kernel fill(d.program, "csr_to_hyb");
      fill.args(m, cl_long{b.width}, from[0], from[1], from[2], sums, to[0], to[1], to[2]).arg(9, to[3]).arg(10, to[4]);
      fill.enqueue(d.s, rows, 0, "convert: csr -> hyb");
      return true;
    }
    case Layout::Bcsr:
    case Layout::Bell:
    case Layout::Sbell: return csr_to_blocks(d, b, from, to, made);
    case Layout::Cocktail: return csr_to_cocktail(d.s, a, b, from, to);
    default: return false;
  }
}

// ---- Into a cocktail -----------------------------------------------------------------------------

constexpr int64_t kDiagonalRows = 16;  // DIAGONAL_ROWS

// The least count of entries holding `fill` of `places` (cocktail.cpp takes a count c where
// c >= fill * places in doubles: for whole c, where c >= that product rounded up); 0 where a fill above 1
// takes nothing.
cl_long least_holding(double fill, int64_t places) {
  return fill > 1 ? 0 : static_cast<cl_long>(std::ceil(fill * static_cast<double>(places)));
}

// A csr `a` (parts `from`) into B's cocktail (parts `to`), split as B's declaration says: each entry's
// part found (the diagonals' entries counted, then each super-row's blocks among the entries the dia
// leaves, then each row's first entries left), the csr part's entries and listed rows counted and
// stored into B's, and the dia's, the sbell's and the sell's entries each made a csr of the device's own
// that the layouts' conversions above store into B's parts, checking their counts. False where a count
// is not B's declaration's (the host's conversion then names it).
bool csr_to_cocktail(const fugue_device_services& s, const Facts& a, const Facts& b, const std::vector<cl_mem>& from,
                     const std::vector<cl_mem>& to) {
  const Facts &sbell = b.components[1], &csr_part = b.components[3];
  const Device d(s, a.dtype, a.index, csr_part.index);
  if (!d.scans()) return false;
  const cl_long m = a.rows;
  const size_t rows = static_cast<size_t>(m);
  const cl_long diagonal_least = least_holding(b.split.diagonal_fill, a.rows);
  const cl_long block_least = least_holding(b.split.block_fill, sbell.block_rows * sbell.block_cols);
  // The diagonals' counts only where a diagonal can be dense (cocktail_parts reads them only then).
  const size_t places = diagonal_least > 0 ? static_cast<size_t>(a.rows + a.cols - 1) : 1;
  cl_mem diagonals = scratch(s, places * sizeof(cl_int));
  if (diagonal_least > 0) {
    d.zero(diagonals, places * sizeof(cl_int), "the diagonals' counts");
    const cl_long stride = ceil_div(a.rows, kDiagonalRows);
    Kernel count(d.program, "cocktail_diagonal_counts");
    count.args(m, stride, from[0], from[1], diagonals).enqueue(s, static_cast<size_t>(stride), 0, "convert: cocktail diagonals");
  }
  cl_mem part = scratch(s, static_cast<size_t>(std::max<int64_t>(a.nnz, 1)));
  std::array<cl_mem, 4> sums{};
  for (cl_mem& sum : sums) sum = scratch(s, rows * sizeof(cl_long));
  Kernel split(d.program, "cocktail_parts");
  split.args(m, cl_long{sbell.block_rows}, cl_long{sbell.block_cols}, cl_long{b.split.width}, diagonal_least, block_least, from[0], from[1])
      .arg(8, diagonals).arg(9, part).arg(10, sums[0]).arg(11, sums[1]).arg(12, sums[2]).arg(13, sums[3]);
  split.enqueue(s, static_cast<size_t>(ceil_div(a.rows, sbell.block_rows)), 0, "convert: cocktail parts");
  // The csr part's rows flagged from its entries a row, before those are summed.
  cl_mem listed = scratch(s, rows * sizeof(cl_long));
  Kernel flags(d.program, "cocktail_listed_flags");
  flags.args(m, sums[3], listed).enqueue(s, rows, 0, "convert: cocktail listed rows");
  d.scan(listed, m);
  std::array<cl_long, 4> entries{};
  for (size_t k = 0; k < 4; ++k) {
    d.scan(sums[k], m);
    d.read(sums[k], (rows - 1) * sizeof(cl_long), &entries[k], "a part's entries");
  }
  cl_long listed_rows = 0;
  d.read(listed, (rows - 1) * sizeof(cl_long), &listed_rows, "the csr part's rows");
  if (entries[3] != csr_part.nnz || listed_rows != csr_part.rows) return false;
  // The dia's, the sbell's and the sell's entries as csrs; the csr part's into B's.
  std::array<std::vector<cl_mem>, 3> csrs;
  for (size_t k = 0; k < 3; ++k) {
    const size_t n = static_cast<size_t>(std::max<cl_long>(entries[k], 1));
    csrs[k] = {scratch(s, (rows + 1) * sizeof(cl_long)), scratch(s, n * sizeof(cl_long)), scratch(s, n * dtype_bytes(a.dtype))};
  }
  Kernel store(d.program, "csr_to_cocktail");
  store.args(m, from[0], from[1], from[2], part, sums[0], sums[1], sums[2]).arg(8, sums[3]).arg(9, listed);
  cl_uint at = 10;
  for (const auto& csr : csrs)
    for (cl_mem buffer : csr) store.arg(at++, buffer);
  for (uint32_t k = 0; k < 4; ++k) store.arg(at++, to[kCocktailRowsPart + k]);
  store.enqueue(s, rows, 0, "convert: csr -> cocktail");
  for (size_t k = 0; k < 3; ++k) {
    const Facts& target = b.components[k];
    Facts source = a;
    source.index = FUGUE_DTYPE_I64;
    source.nnz = entries[k];
    const auto first = to.begin() + cocktail_first_part(k);
    const std::vector<cl_mem> own(first, first + static_cast<std::ptrdiff_t>(part_names(target.layout).size()));
    const Device into(s, a.dtype, FUGUE_DTYPE_I64, target.index, Layout::Csr, sort_size(target));
    // The sell's check finds its longest row (its sort's keys hold lengths below INT_MAX).
    int64_t made = 0;  // a cocktail's parts count nothing at run time
    if (!into.scans() || !from_csr(into, source, target, csrs[k], own, made, target.layout == Layout::Sell)) return false;
  }
  return true;
}

// ---- Into a csr ----------------------------------------------------------------------------------

// A coo, ell, dia, bdia or hyb `a` (parts `from`) on its way into a csr: checked and counted first, so
// that the csr's parts can be sized, then stored.
class IntoCsr {
 public:
  IntoCsr(const Device& d, const Facts& a, const std::vector<cl_mem>& from) : d_(d), a_(a), from_(from) {}

  // The csr's entries; -1 where the source is not one as the host reads it.
  int64_t count() {
    const cl_long m = a_.rows, n = a_.cols;
    const std::string label = std::string("convert: ") + layout_name(a_.layout) + " check";
    cl_mem verdict = d_.verdict();
    if (a_.layout == Layout::Coo || a_.layout == Layout::Hyb) {
      // A hyb's coo part first, then (below) its rows with their ell part.
      const int64_t nnz = a_.nnz;
      const size_t first = a_.layout == Layout::Coo ? 0 : 2;
      Kernel check(d_.program, "coo_check");
      check.args(m, n, cl_long{nnz}, from_[first], from_[first + 1], verdict).enqueue(d_.s, static_cast<size_t>(nnz), 0, label);
      if (!d_.holds(verdict)) return -1;
      if (a_.layout == Layout::Coo) return nnz;
      coo_starts_ = scratch(d_.s, static_cast<size_t>(m + 1) * sizeof(cl_long));
      d_.row_pointers("coo_row_starts", m, nnz, from_[2], coo_starts_, FUGUE_DTYPE_I64, label);
    }
    sums_ = scratch(d_.s, static_cast<size_t>(m) * sizeof(cl_long));
    if (a_.layout == Layout::Sell) {
      if (!check_sell(verdict, label)) return -1;
    } else if (is_block(a_.layout)) {
      if (!check_blocks(verdict, label)) return -1;
    } else if (a_.layout == Layout::Hyb) {
      Kernel check(d_.program, "hyb_check");
      check.args(m, n, cl_long{a_.width}, from_[0], from_[1], from_[3], coo_starts_, sums_).arg(8, verdict).enqueue(d_.s, static_cast<size_t>(m), 0, label);
    } else if (a_.layout == Layout::Ell) {
      Kernel check(d_.program, "ell_check");
      check.args(m, n, cl_long{a_.width}, from_[0], from_[1], sums_, verdict).enqueue(d_.s, static_cast<size_t>(m), 0, label);
    } else {
      if (a_.layout == Layout::Bdia && !expand_bands(verdict, label)) return -1;
      Kernel check(d_.program, "dia_check");
      check.args(m, n, cl_long{a_.diagonals}, offsets(), data(), sums_, verdict)
          .enqueue(d_.s, static_cast<size_t>(std::max(a_.rows, a_.diagonals)), 0, label);
    }
    if (!d_.holds(verdict)) return -1;
    d_.scan(sums_, m);
    cl_long nnz = 0;
    d_.read(sums_, static_cast<size_t>(m - 1) * sizeof(cl_long), &nnz, "the entries' count");
    return nnz;
  }

  // Stores the entries counted into a csr's row_ptr, col and data.
  void store(const std::vector<cl_mem>& to) const {
    const cl_long m = a_.rows;
    const std::string label = std::string("convert: ") + layout_name(a_.layout) + " -> csr";
    if (a_.layout == Layout::Coo) {
      d_.row_pointers("coo_row_ptr", m, a_.nnz, from_[0], to[0], d_.b_index, label);
      Kernel entries(d_.program, "copy_entries");
      entries.args(cl_long{a_.nnz}, from_[1], from_[2], to[1], to[2]).enqueue(d_.s, static_cast<size_t>(a_.nnz), 0, label);
    } else if (a_.layout == Layout::Ell) {
      Kernel fill(d_.program, "ell_to_csr");
      fill.args(m, cl_long{a_.width}, from_[0], from_[1], sums_, to[0], to[1], to[2]).enqueue(d_.s, static_cast<size_t>(m), 0, label);
    } else if (a_.layout == Layout::Sell) {
      Kernel fill(d_.program, "sell_to_csr");
      fill.args(m, cl_long{a_.slice}, cl_long{sell_places()}, from_[0], from_[1], from_[2], from_[3], sums_).arg(8, to[0]).arg(9, to[1]).arg(10, to[2]);
      fill.enqueue(d_.s, static_cast<size_t>(sell_places()), 0, label);
    } else if (is_block(a_.layout)) {
      const BlockShape block(a_);
      Kernel fill(d_.program, "blocks_to_csr");
      fill.args(block.kind, block.shape, from_.front(), from_[from_.size() - 2], from_.back(), sums_, to[0], to[1]).arg(8, to[2]);
      fill.enqueue(d_.s, static_cast<size_t>(m), 0, label);
    } else if (a_.layout == Layout::Hyb) {
      Kernel fill(d_.program, "hyb_to_csr");
      fill.args(m, cl_long{a_.width}, from_[0], from_[1], from_[3], from_[4], coo_starts_, sums_).arg(8, to[0]).arg(9, to[1]).arg(10, to[2]);
      fill.enqueue(d_.s, static_cast<size_t>(m), 0, label);
    } else {
      Kernel fill(d_.program, "dia_to_csr");
      fill.args(m, cl_long{a_.cols}, cl_long{a_.diagonals}, offsets(), data(), sums_, to[0], to[1], to[2])
          .enqueue(d_.s, static_cast<size_t>(m), 0, label);
    }
  }

 private:
  int64_t sell_places() const { return ceil_div(a_.rows, a_.slice) * a_.slice; }
  // A sell's slices checked, then its places (each row at one place), counting each row's entries.
  bool check_sell(cl_mem verdict, const std::string& label) {
    const cl_long m = a_.rows, slices = ceil_div(a_.rows, a_.slice), places = sell_places();
    Kernel slices_check(d_.program, "slices_check");
    slices_check.args(slices, cl_long{a_.slice}, cl_long{a_.stored}, from_[0], verdict).enqueue(d_.s, static_cast<size_t>(slices) + 1, 0, label);
    if (!d_.holds(verdict)) return false;
    cl_mem seen = scratch(d_.s, static_cast<size_t>(m) * sizeof(cl_int));
    d_.zero(seen, static_cast<size_t>(m) * sizeof(cl_int), "the rows' places");
    Kernel check(d_.program, "sell_check");
    check.args(m, cl_long{a_.cols}, cl_long{a_.slice}, places, from_[0], from_[1], from_[2], from_[3]).arg(8, seen).arg(9, sums_).arg(10, verdict);
    check.enqueue(d_.s, static_cast<size_t>(places), 0, label);
    Kernel once(d_.program, "sell_seen");
    once.args(m, seen, verdict).enqueue(d_.s, static_cast<size_t>(m), 0, label);
    return true;
  }
  // A bcsr's row_ptr or a sbell's slice_ptr checked, then the rows of every super-row, counting each
  // row's entries (a bell's col is its first part: its pointers are not read).
  bool check_blocks(cl_mem verdict, const std::string& label) {
    const BlockShape block(a_);
    if (a_.layout != Layout::Bell) {
      const int64_t c = a_.layout == Layout::Sbell ? a_.slice : 1;
      Kernel slices_check(d_.program, "slices_check");
      slices_check.args(cl_long{block.slices}, cl_long{c}, cl_long{a_.blocks}, from_[0], verdict).enqueue(d_.s, static_cast<size_t>(block.slices) + 1, 0, label);
      if (!d_.holds(verdict)) return false;
    }
    Kernel check(d_.program, "blocks_check");
    check.args(block.kind, block.shape, from_.front(), from_[from_.size() - 2], from_.back(), sums_, verdict)
        .enqueue(d_.s, static_cast<size_t>(block.super_rows * a_.block_rows), 0, label);
    return true;
  }
  // A bdia's bands checked, then their diagonals' offsets one by one (the dia kernels read them so):
  // false where the bands are not as the host reads them.
  bool expand_bands(cl_mem verdict, const std::string& label) {
    const cl_long m = a_.rows, bands = a_.bands;
    Kernel check(d_.program, "bdia_check");
    check.args(m, bands, cl_long{a_.diagonals}, from_[0], from_[1], verdict).enqueue(d_.s, static_cast<size_t>(bands) + 1, 0, label);
    if (!d_.holds(verdict)) return false;
    diagonal_offsets_ = scratch(d_.s, static_cast<size_t>(std::max<int64_t>(a_.diagonals, 1)) * sizeof(cl_long));
    Kernel expand(d_.program, "bdia_diagonals");
    expand.args(m, bands, from_[0], from_[1], diagonal_offsets_).enqueue(d_.s, static_cast<size_t>(bands), 0, label);
    return true;
  }
  // A dia's offsets and data, or a bdia's expanded offsets and its data.
  cl_mem offsets() const { return a_.layout == Layout::Bdia ? diagonal_offsets_ : from_[0]; }
  cl_mem data() const { return from_.back(); }

  const Device& d_;
  const Facts& a_;
  const std::vector<cl_mem>& from_;
  cl_mem sums_ = nullptr;              // the rows' entries, then their inclusive sums (all but a coo)
  cl_mem coo_starts_ = nullptr;        // hyb: each row's first entry in the coo part [m + 1]
  cl_mem diagonal_offsets_ = nullptr;  // bdia: each diagonal's offset (longs)
};

// ---- From a cocktail -----------------------------------------------------------------------------

// A cocktail `a` (parts `from`) on its way into a csr: its dia, sbell and sell parts each into a csr of
// the device's own (each checked as IntoCsr checks its layout), its csr part's pointers and listed rows
// checked; then each row's entries merged by column from the four (two parts holding one position fail
// the check, as the host refuses them).
class CocktailIntoCsr {
 public:
  CocktailIntoCsr(const fugue_device_services& s, const Facts& a, const std::vector<cl_mem>& from, fugue_dtype b_index)
      : s_(s), a_(a), from_(from), merge_(s, a.dtype, a.components[3].index, b_index) {}

  // The csr's entries; -1 where the cocktail is not one as the host reads it.
  int64_t count() {
    if (!merge_.scans()) return -1;
    for (size_t k = 0; k < 3; ++k)
      if (!part_into_csr(k)) return -1;
    const Facts& csr = a_.components[3];
    const cl_long m = a_.rows, listed = csr.rows;
    const size_t rows = static_cast<size_t>(m);
    const std::string label = "convert: cocktail check";
    cl_mem verdict = merge_.verdict();
    if (listed > 0) {
      Kernel check(merge_.program, "csr_check");
      check.args(listed, cl_long{a_.cols}, cl_long{csr.nnz}, part(3, 0), part(3, 1), verdict).enqueue(s_, static_cast<size_t>(std::max(listed, csr.nnz)), 0, label);
    } else {  // no rows listed: no entries, its one pointer 0
      cl_long first = 0;
      if (csr.index == FUGUE_DTYPE_I64) {
        merge_.read(part(3, 0), 0, &first, "the csr part's pointer");
      } else {
        cl_int pointer = 0;
        merge_.read(part(3, 0), 0, &pointer, "the csr part's pointer");
        first = pointer;
      }
      if (csr.nnz != 0 || first != 0) return -1;
    }
    listed_ = scratch(s_, rows * sizeof(cl_long));
    merge_.zero(listed_, rows * sizeof(cl_long), "the csr part's rows");
    Kernel rows_check(merge_.program, "cocktail_listed_rows");
    rows_check.args(m, listed, from_[kCocktailRowsPart], listed_, verdict).enqueue(s_, static_cast<size_t>(listed), 0, label);
    if (!merge_.holds(verdict)) return -1;
    sums_ = scratch(s_, rows * sizeof(cl_long));
    Kernel check(merge_.program, "cocktail_check");
    sources(check).arg(14, sums_).arg(15, verdict).enqueue(s_, rows, 0, label);
    if (!merge_.holds(verdict)) return -1;
    merge_.scan(sums_, m);
    cl_long nnz = 0;
    merge_.read(sums_, (rows - 1) * sizeof(cl_long), &nnz, "the entries' count");
    return nnz;
  }

  // Stores the entries counted into a csr's row_ptr, col and data.
  void store(const std::vector<cl_mem>& to) const {
    Kernel fill(merge_.program, "cocktail_to_csr");
    sources(fill).arg(14, sums_).arg(15, to[0]).arg(16, to[1]).arg(17, to[2]).enqueue(s_, static_cast<size_t>(a_.rows), 0, "convert: cocktail -> csr");
  }

 private:
  // Part j of the cocktail's k-th part (kCocktailParts).
  cl_mem part(size_t k, size_t j) const { return from_[cocktail_first_part(k) + j]; }
  // The dia, sbell or sell part (k) checked and stored into a csr of the device's own.
  bool part_into_csr(size_t k) {
    const Facts& f = a_.components[k];
    std::vector<cl_mem> parts;
    for (size_t j = 0; j < part_names(f.layout).size(); ++j) parts.push_back(part(k, j));
    const Device d(s_, a_.dtype, f.index, FUGUE_DTYPE_I64, f.layout);
    if (!d.scans()) return false;
    IntoCsr source(d, f, parts);
    const int64_t nnz = source.count();
    if (nnz < 0) return false;
    const size_t entries = static_cast<size_t>(std::max<int64_t>(nnz, 1));
    csrs_[k] = {scratch(s_, static_cast<size_t>(a_.rows + 1) * sizeof(cl_long)), scratch(s_, entries * sizeof(cl_long)),
                scratch(s_, entries * dtype_bytes(a_.dtype))};
    source.store(csrs_[k]);
    return true;
  }
  // The merge's arguments 0 .. 13: the rows, the three csrs, the listed rows and the csr part.
  Kernel& sources(Kernel& kernel) const {
    return kernel.args(cl_long{a_.rows}, csrs_[0][0], csrs_[0][1], csrs_[0][2], csrs_[1][0], csrs_[1][1], csrs_[1][2], csrs_[2][0], csrs_[2][1],
                       csrs_[2][2], listed_, part(3, 0), part(3, 1), part(3, 2));
  }

  const fugue_device_services& s_;
  const Facts& a_;
  const std::vector<cl_mem>& from_;
  const Device merge_;  // the csr part's index in, B's (or the device's csr's) out
  std::vector<cl_mem> csrs_[3];  // the dia's, the sbell's and the sell's entries, each a csr (long indices)
  cl_mem listed_ = nullptr;  // each row's place among the csr part's listed rows, plus 1 (0: not listed)
  cl_mem sums_ = nullptr;    // the rows' entries, then their inclusive sums
};

bool is_csr_source(Layout l) {
  return l == Layout::Coo || l == Layout::Ell || l == Layout::Sell || l == Layout::Dia || l == Layout::Bdia || l == Layout::Hyb || is_block(l);
}
bool is_csr_target(Layout l) { return is_csr_source(l); }

// An i32 index holds what the host allows it to (layouts.cpp's `checked`): rows + 1, the columns and
// the places of `to`; an i64 index anything.
bool index_holds(const Facts& to) {
  return to.index == FUGUE_DTYPE_I64 || std::max({to.rows + 1, to.cols, places_of(to)}) <= std::numeric_limits<int32_t>::max();
}

// Into a dia, the diagonals are flagged by offset: rows + cols - 1 flags, which must stay near the
// source's size (a few entries far apart in a wide matrix are left to the host, which sorts them).
bool flags_fit(const Facts& from) {
  const int64_t flags = from.rows + from.cols - 1;
  return flags <= (int64_t{1} << 24) || flags <= 4 * (from.rows + places_of(from));
}

// A source (IntoCsr, CocktailIntoCsr) counted and stored into B where B is a csr, else into a csr of
// the device's own (i64 indices) and from it into B; `entries`: B's run count as stored (layouts.h).
template <class Source>
bool through_csr(Source& source, const fugue_device_services& s, const Facts& a, const Facts& b, const std::vector<cl_mem>& to,
                 int64_t& entries) {
  const bool into_b = b.layout == Layout::Csr;
  const int64_t nnz = source.count();
  entries = nnz;
  if (nnz < 0 || (into_b && (b.counted ? nnz > b.nnz : nnz != b.nnz))) return false;
  if (into_b) {
    source.store(to);
    return true;
  }
  Facts csr = a;
  csr.layout = Layout::Csr;
  csr.index = FUGUE_DTYPE_I64;
  csr.nnz = nnz;
  csr.components.clear();
  const std::vector<cl_mem> middle = {scratch(s, static_cast<size_t>(a.rows + 1) * sizeof(cl_long)),
                                      scratch(s, static_cast<size_t>(std::max<int64_t>(nnz, 1)) * sizeof(cl_long)),
                                      scratch(s, static_cast<size_t>(std::max<int64_t>(nnz, 1)) * dtype_bytes(a.dtype))};
  source.store(middle);
  const Device second(s, a.dtype, FUGUE_DTYPE_I64, b.index, Layout::Csr, sort_size(b));
  return second.scans() && from_csr(second, csr, b, middle, to, entries);
}

}  // namespace

bool converts_on_device(const Facts& from, const Facts& to) {
  // A layout into itself (cut anew: a sell sorted in other windows, a hyb of another width, other
  // blocks) goes through a csr of the device's own as into any other; a csr into a csr (its index dtype
  // changed) is the host's.
  if (from.rows == 0 || from.cols == 0 || (from.layout == Layout::Csr && to.layout == Layout::Csr) || !index_holds(to)) return false;
  if ((to.layout == Layout::Dia || to.layout == Layout::Bdia) && !flags_fit(from)) return false;
  if (sort_size(to) > kSortMax) return false;  // a window wider than local memory sorts on the host
  for (const Facts* f : {&from, &to, from.layout == Layout::Cocktail ? &from.components[1] : &to,
                         to.layout == Layout::Cocktail ? &to.components[1] : &to})  // a cocktail's sbell too:
    // blocks of up to 8 rows (a super-row's cursors) and whole 1 x 4 units
    if (is_block(f->layout) && (f->block_rows < 1 || f->block_rows > 8 || f->block_cols < 4 || f->block_cols % 4)) return false;
  if (to.layout == Layout::Cocktail) {
    // Its diagonals counted in ints by offset (rows + cols - 1 of them, as a dia's flags), then each part
    // as its layout's conversion takes it.
    if (!flags_fit(from) || std::min(from.rows, from.cols) >= std::numeric_limits<cl_int>::max()) return false;
    for (const Facts& part : to.components)
      if (!index_holds(part)) return false;
    if (sort_size(to.components[2]) > kSortMax) return false;
    return from.layout == Layout::Csr || is_csr_source(from.layout) || from.layout == Layout::Cocktail;
  }
  // Between a csr and a coo the count is known now: one the host is to name does not start here.
  if ((from.layout == Layout::Csr && to.layout == Layout::Coo) || (from.layout == Layout::Coo && to.layout == Layout::Csr))
    return from.counted || to.counted || from.nnz == to.nnz;  // counts left to the run are compared as it runs
  if (from.layout == Layout::Csr) return is_csr_target(to.layout);
  const bool source = is_csr_source(from.layout) || from.layout == Layout::Cocktail;
  if (to.layout == Layout::Csr) return source;
  return source && is_csr_target(to.layout);  // through a csr of the device's own
}

bool convert_on_device(const sdk::Call& call, const fugue_device_services& s) {
  Facts a = facts_of(call.operand("A"));
  const Facts b = facts_of(call.operand("B"));
  if (a.counted) set_run_count(a, read_count(s, call, "A", run_count(a)));  // A's count, as the operation that wrote A made it
  std::vector<cl_mem> from, to;
  for (uint32_t k = 0; k < call.operand("A").num_parts; ++k) from.push_back(part(s, call, "A", k));
  for (uint32_t k = 0; k < call.operand("B").num_parts; ++k) to.push_back(part(s, call, "B", k));
  for (cl_mem m : to)
    if (std::find(from.begin(), from.end(), m) != from.end()) return false;
  int64_t entries = -1;  // B's run count as stored, written where it is left to the run
  if (a.layout == Layout::Csr) {
    const Device d(s, a.dtype, a.index, b.index, a.layout, sort_size(b));
    if (!from_csr(d, a, b, from, to, entries)) return false;
  } else {
    // Through a csr of the device's own (i64 indices) where B is not one.
    const fugue_dtype csr_index = b.layout == Layout::Csr ? b.index : FUGUE_DTYPE_I64;
    if (a.layout == Layout::Cocktail) {
      // The csr part's listed rows are read with its pointers' index type.
      if (FUGUE_NTH(fugue_type, call.operand("A").parts, kCocktailRowsPart)->dtype != a.components[3].index) return false;
      CocktailIntoCsr source(s, a, from, csr_index);
      if (!through_csr(source, s, a, b, to, entries)) return false;
    } else {
      const Device first(s, a.dtype, a.index, csr_index, a.layout);
      if (!first.scans()) return false;
      IntoCsr source(first, a, from);
      if (!through_csr(source, s, a, b, to, entries)) return false;
    }
  }
  if (b.counted) write_count(s, call, "B", entries);
  return true;
}

}  // namespace fugue::sparse
