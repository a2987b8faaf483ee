#include "spmv.h"

#include <CL/cl.h>

#include <fugue/sdk_device.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "cocktail.h"
#include "layouts.h"
#include "sparse_kind.h"
#include "spmv_cl.h"  // kernel_source_spmv, embedded from kernels/spmv.cl

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr uint32_t kA = 0, kX = 1, kY0 = 2, kY = 3;
constexpr size_t kGroup = 128;

// coo: entries a work-item sums in a row (CPUs: long runs each; GPUs: short ones, so neighbouring
// work-items read nearby entries).
int64_t coo_chunk(const Call& call) { return call.device().type == FUGUE_DEVICE_CPU ? 128 : 8; }

// dia's and ell's products on CPUs (hyb's ell part too): rows a work-item in one vector of the native width
// (kernels/spmv.cl's dia_spmv_rows, ell_spmv_rows), 0 elsewhere (a row per work-item, in a generated kernel
// where it can be). Both layouts keep neighbouring rows' values side by side. PoCL vectorized neither the
// generated kernel's rows nor a row per work-item: Poisson 2048^2 in f32 took 27 ms either way as a dia, 7.8
// ms in vectors of 8 (a hand-written kernel, 2 cores, AVX2). FUGUE_SPARSE_VECTOR_ROWS=0 keeps a row per
// work-item on CPUs too (for comparisons and the generated kernels' tests).
int64_t vector_rows(const Call& call, const Facts& f, bool several) {
  if (several || (f.layout != Layout::Dia && f.layout != Layout::Ell && f.layout != Layout::Hyb) || call.device().type != FUGUE_DEVICE_CPU)
    return 0;
  if (const char* text = std::getenv("FUGUE_SPARSE_VECTOR_ROWS"); text && *text) {
    if (std::string(text) != "0")
      throw InvalidArgument(std::string("FUGUE_SPARSE_VECTOR_ROWS: expected 0 (a row per work-item), found '") + text + "'");
    return 0;
  }
  const int64_t width = std::min<int64_t>(native_vector_width(&call.device(), f.dtype), 16);
  return width >= 2 ? width : 0;
}

// Work-items a csr row in rows_spmv: a power of two near the rows' average length, at most 32.
int csr_lanes(double average) {
  int lanes = 1;
  while (lanes < 32 && lanes < average) lanes *= 2;
  return lanes;
}

// csr: work-items a row, by the rows' average length (one on CPUs, whose work-items run a row
// each faster than they share one).
int lanes_for(const Call& call, const Facts& f) {
  if (call.device().type == FUGUE_DEVICE_CPU || f.rows == 0) return 1;
  return csr_lanes(static_cast<double>(f.nnz) / static_cast<double>(f.rows));
}

// csr's kernels on GPUs (one vector): chunks of equal entries whatever the rows (kernels/spmv.cl
// csr_chunk_spmv, 8 entries a work-item, 1024 a work-group), so hub rows spread over many work-groups.
// On the H100 (scripts/gpu_sparse.sh, one call beside torch): Poisson 4096^2 0.398 ms (1.70x cuSPARSE;
// CSR-stream, before, 1.30x), FEM-like 10^6 nodes 0.293 ms (1.69x; lanes a row by the rows' average,
// before, 0.75x), R-MAT scale 20 0.175 ms (0.76x; lanes 0.23x; CSR-stream, a work-group's rows read
// together into local memory, 0.07x: its groups with hub rows overflowed to a slow second kernel). spmm
// keeps lanes a row (rows_spmv), which a CPU runs as a generated kernel, a work-item a row.
// FUGUE_SPARSE_CSR=chunks or =lanes overrides (any device: a CPU then runs the device-level kernels
// too); FUGUE_SPARSE_CHUNK_ITEMS and FUGUE_SPARSE_CHUNK_GROUP set a chunk's entries a work-item and
// work-items (powers of two).
enum class CsrKernel { Lanes, Chunks };
CsrKernel csr_kernel(const Call& call, const Facts& f, bool several) {
  if (f.layout != Layout::Csr || several || f.rows == 0) return CsrKernel::Lanes;
  if (const char* text = std::getenv("FUGUE_SPARSE_CSR"); text && *text) {
    const std::string choice = text;
    if (choice == "chunks") return CsrKernel::Chunks;
    if (choice == "lanes") return CsrKernel::Lanes;
    throw sdk::InvalidArgument("FUGUE_SPARSE_CSR: expected chunks or lanes, found '" + choice + "'");
  }
  return call.device().type == FUGUE_DEVICE_CPU ? CsrKernel::Lanes : CsrKernel::Chunks;
}
// A power of two from the environment, `fallback` where it is not set.
int64_t power_of_two_setting(const char* name, int64_t fallback, int64_t least, int64_t most) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end || value < least || value > most || (value & (value - 1)))
    throw sdk::InvalidArgument(std::string(name) + ": expected a power of two from " + std::to_string(least) + " to " + std::to_string(most) +
                               ", found '" + text + "'");
  return value;
}
int64_t chunk_items() { return power_of_two_setting("FUGUE_SPARSE_CHUNK_ITEMS", 8, 1, 64); }
// How csr's chunks find their first rows: a pass over the rows where they are few enough
// (kStartsByRowsMost), else a search per chunk; FUGUE_SPARSE_CHUNK_STARTS=rows|search forces one.
// H100 (scripts/gpu_chunk_starts.sh), the starts' kernel, search against rows: R-MAT scale 20 (2^20
// rows) 34.0 against 22.9 us (the product 0.1696 -> 0.1577 ms), scale 21 39.7 against 26.1; FEM-like
// 3 x 10^6 rows 27.3 against 34.3, Poisson 4096^2 (2^24 rows) 36.7 against 91.9. The pass costs about
// 19 us plus 4.4 us a million rows; the search, 27 to 40 us, less where the rows grow evenly.
constexpr int64_t kStartsByRowsMost = int64_t{1} << 21;
bool starts_by_rows(int64_t rows, int64_t chunks) { return rows <= kStartsByRowsMost || rows <= chunks; }
// The starts depend on the matrix alone, so they are kept for its next products (a loop's, a bench's
// repetitions) in a workspace named by its row pointers' buffer and sizes; csr_chunk_spmv checks each
// against the pointers and finds again those that do not hold (the buffer holds another matrix now).
// Kept, a product is two kernels. FUGUE_SPARSE_CHUNK_STARTS=rows|search finds them by that kernel on
// every product instead, and =stale (for tests) keeps starts that do not hold from the first product.
struct StartsSetting {
  bool keep = true, stale = false;
  int by_rows = -1;  // 1 rows, 0 search, -1 as starts_by_rows says
};
StartsSetting starts_setting() {
  const char* text = std::getenv("FUGUE_SPARSE_CHUNK_STARTS");
  if (!text || !*text) return {};
  const std::string value = text;
  if (value == "rows" || value == "search") return {false, false, value == "rows" ? 1 : 0};
  if (value == "stale") return {true, true, -1};
  throw sdk::InvalidArgument("FUGUE_SPARSE_CHUNK_STARTS: expected rows, search or stale, found '" + value + "'");
}
std::string starts_key(cl_mem row_ptr, const Facts& f, int64_t chunk_entries) {
  return "csr chunk starts " + std::to_string(reinterpret_cast<uintptr_t>(row_ptr)) + " " + std::to_string(f.rows) + " " +
         std::to_string(f.nnz) + " " + std::to_string(chunk_entries);
}
// Work-items a chunk's work-group (the device's largest power of two where smaller).
size_t chunk_group() { return static_cast<size_t>(power_of_two_setting("FUGUE_SPARSE_CHUNK_GROUP", 128, 32, 1024)); }

// 37 by 300, awkward on purpose: row 0 empty, row 5 full (longer than a work-group), the others 0 to 12
// entries; values in [-1, 1), none zero. The same every time.
Coordinates awkward_matrix() {
  Coordinates m;
  m.rows = 37;
  m.cols = 300;
  uint64_t state = 12345;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int64_t i = 0; i < m.rows; ++i) {
    if (i == 0) continue;
    std::vector<char> used(static_cast<size_t>(m.cols), i == 5);
    if (i != 5)
      for (uint64_t k = next() % 13; k > 0; --k) used[next() % static_cast<uint64_t>(m.cols)] = 1;
    for (int64_t j = 0; j < m.cols; ++j)
      if (used[static_cast<size_t>(j)]) m.add(i, j, (static_cast<double>(next() % 2000) - 999.5) / 1000.0);
  }
  return m;
}

// Every layout in both dtypes: the seed's B, and the awkward matrix with y0 and factors (spmm: 3 vectors).
std::string conformance_cases(bool several) {
  const Coordinates b = seed_matrix_b(), awkward = awkward_matrix();
  Cut seed_cut, awkward_cut;  // sell, sbell: slices of 2 (the seed's figure) and of 8 (sell sorted by 16); blocks 2 x 4 and 4 x 8
  seed_cut.slice = 2;
  awkward_cut.slice = 8;
  awkward_cut.sigma = 16;
  awkward_cut.block_rows = 4;
  awkward_cut.block_cols = 8;
  // cocktail: B's dense 2 x 4 block, each other row's first entry and the rest (B's diagonals are all
  // full); the awkward matrix's diagonals of two entries or more, blocks of 4 or more, two a row, the rest.
  seed_cut.block_slice = 2, seed_cut.block_fill = 0.6, seed_cut.width = 1;
  awkward_cut.block_slice = 8, awkward_cut.diagonal_fill = 0.05, awkward_cut.block_fill = 0.12, awkward_cut.width = 2;
  const std::string x = several ? "X" : "x", y0 = several ? "Y0" : "y0", k = several ? ", 3" : "";
  std::string cases;
  for (Layout layout : every_layout())
    for (fugue_dtype dtype : {FUGUE_DTYPE_F32, FUGUE_DTYPE_F64}) {
      const std::string name = layout_name(layout), dt = dtype == FUGUE_DTYPE_F32 ? "f32" : "f64";
      cases += std::string(cases.empty() ? "" : ",\n") + R"({"name": "the seed's B in )" + name + R"(", "dtypes": [")" + dt +
               R"("], "inputs": {"A": )" + inline_declaration(b, layout, dtype, seed_cut) + R"(, ")" + x + R"(": {"shape": [4)" + k + "]}}}";
      cases += ",\n" + std::string(R"({"name": "37 by 300 in )") + name + R"(, )" + y0 + R"( and factors", "dtypes": [")" + dt +
               R"("], "attrs": {"alpha": -2, "beta": 0.5}, "inputs": {"A": )" + inline_declaration(awkward, layout, dtype, awkward_cut) +
               R"(, ")" + x + R"(": {"shape": [300)" + k + R"(]}, ")" + y0 + R"(": {"shape": [37)" + k + "]}}}";
    }
  cases += ",\n" + std::string(R"({"name": ")") + y0 + R"( a number", "dtypes": ["f64"], "inputs": {"A": )" +
           inline_declaration(b, Layout::Coo, FUGUE_DTYPE_F64) + R"(, ")" + x + R"(": {"shape": [4)" + k + R"(]}, ")" + y0 +
           R"(": {"kind": "const", "value": 1.5}}})";
  return "[" + cases + "]";
}

// sparse.spmv (several = false: x [n], y [m]) and sparse.spmm (X [n, k], Y [m, k]): one set of kernels,
// k vectors a unit of work.
class SparseProduct final : public Operation {
 public:
  explicit SparseProduct(bool several) : several_(several) {
    names_ = several ? Names{"X", "Y0", "Y"} : Names{"x", "y0", "y"};
    name = several ? "sparse.spmm" : "sparse.spmv";
    doc = several ? "Y = alpha * A X + beta * Y0: a sparse matrix A [m, n] of any sparse kind times k vectors X [n, k] (row-major); Y0 "
                    "[m, k] left out is 0"
                  : "y = alpha * A x + beta * y0: a sparse matrix A [m, n] of any sparse kind times a vector x [n]; y0 [m] left out is 0";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {in_kind("A", "csr coo ell sell dia bdia hyb bcsr bell sbell cocktail", kFloats, "the matrix [m, n]"),
                in(names_.x, array, kFloats, several ? "the vectors [n, k], A's dtype" : "the vector [n], A's dtype"),
                optional_in(names_.y0, array, kFloats, 0,
                            several ? "added times beta: [m, k], A's dtype, or a number" : "added times beta: [m], A's dtype, or a number"),
                out(names_.y, array, kFloats, several ? "the result [m, k]" : "the result [m]")};
    attrs = {{"alpha", FUGUE_ATTR_NUMBER, false, 1.0, "", "the product's factor"},
             {"beta", FUGUE_ATTR_NUMBER, false, 1.0, "", std::string(names_.y0) + "'s factor"}};
    // A row's sum in any order (coo's chunks, csr's lanes): the awkward case's full row adds 300 products
    // of [-1, 1) times alpha 2, whose magnitudes total about 150, so its rounding reaches a few f32 ulps of
    // partial sums near 10 (1.6e-5 seen once in CI against the reference in long double); f64 the same
    // multiple of its epsilon.
    tolerance_f32 = 1e-4;
    tolerance_f64 = 2e-13;
    traits = FUGUE_OP_RUNTIME_COUNTS;  // A's count (layouts.h's run_count) may be left to the run, as a conversion makes it
    test_cases = conformance_cases(several);
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type &a = call.operand(kA), &x = call.operand(kX), &y0 = call.operand(kY0);
    if (a.rank != 2) throw InvalidArgument("operand A: expected a sparse matrix [m, n], found " + type_string(a));
    const uint32_t rank = several_ ? 2 : 1;
    const std::string dtype = dtype_name(a.dtype), k = several_ && x.rank == 2 ? ", " + std::to_string(x.shape[1]) : "";
    if (x.kind != FUGUE_KIND_ARRAY || x.rank != rank || x.shape[0] != a.shape[1] || x.dtype != a.dtype)
      throw InvalidArgument("operand " + names_.x + ": expected " + dtype + " [" + std::to_string(a.shape[1]) + (several_ ? ", k" : "") +
                            "] (A's dtype and columns), found " + type_string(x));
    Type result(FUGUE_KIND_ARRAY, a.dtype, several_ ? std::vector<int64_t>{a.shape[0], x.shape[1]} : std::vector<int64_t>{a.shape[0]});
    if (y0.kind == FUGUE_KIND_ARRAY && Type(y0) != result)
      throw InvalidArgument("operand " + names_.y0 + ": expected " + type_string(result) + " (A's dtype and rows" +
                            (several_ ? ", " + names_.x + "'s columns" : std::string()) + ") or a number, found " + type_string(y0));
    for (const char* factor : {"alpha", "beta"}) call.number_for(factor, a.dtype);  // literals in the kernels
    types[kY] = result;
  }

  // Row r of y is row r of A times x (plus row r of y0): a split across devices gives each device its
  // rows of A, y0 and y (ABI 2.13), and x whole, of which the device reads only the rows at its rows'
  // columns (ABI 2.14: every kernel multiplies x_j by A's entries in column j alone).
  static void say_rows(Plan& p, const Call& call) {
    p.split_rows = (uint64_t{1} << kA) | (uint64_t{1} << kY);
    if (call.operand(kY0).kind == FUGUE_KIND_ARRAY) p.split_rows |= uint64_t{1} << kY0;
    p.read_at_columns = uint64_t{1} << kX;
    p.columns_of = kA;
  }

  Plan plan(const Call& call) const override {
    const Facts f = facts_of(call.operand(kA));
    if (row_per_item(call, f)) {
      // A generated kernel, a row an element: y is written element by element, so the element-wise
      // operations that consume it (r = b - A x, dot(r, r)) join the kernel; A and x are read whole.
      if (f.dtype == FUGUE_DTYPE_F64 && !(call.device().features & FUGUE_DEVICE_FP64))
        throw Unsupported(name + ": f64 needs a device with double precision (cl_khr_fp64); this one has none");
      Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, f.rows);
      p.partitions[kA] = partition(FUGUE_PARTITION_WHOLE);
      p.partitions[kX] = partition(FUGUE_PARTITION_WHOLE);
      p.registers = 6;
      p.variant = std::string(layout_name(f.layout)) + ": a row per work-item in a generated kernel, which the element-wise "
                  "operations reading y join (" + row_walk(f) + ")";
      if (takes_count(call, f)) p.variant += std::string("; its ") + run_count_key(f.layout) + " left to the run, read on the device";
      // Where no consumer joins, the layout's own kernel runs if it is the faster (ABI 2.19).
      p.own_kernels_alone = own_kernels_alone(call, f);
      if (p.own_kernels_alone) p.variant += "; alone, its own kernel: " + variant_of(call, f);
      say_rows(p, call);
      return p;
    }
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
    p.variant = variant_of(call, f);
    if (takes_count(call, f)) p.variant += std::string("; its ") + run_count_key(f.layout) + " left to the run, read on the device (its own kernels)";
    say_rows(p, call);
    return p;
  }

  // The plan's text for a device-level product of A (a cocktail: its parts' that hold entries).
  std::string variant_of(const Call& call, const Facts& f) const {
    const int64_t rows_a_vector = vector_rows(call, f, several_);
    const std::string walk = rows_a_vector ? std::to_string(rows_a_vector) + " rows a work-item in vectors of the native width" : "a row per work-item";
    const std::string block = std::to_string(f.block_rows) + " x " + std::to_string(f.block_cols) + " blocks";
    const std::string most = f.counted ? "at most " : "";  // a count left to the run: its capacity
    switch (f.layout) {
      case Layout::Csr: {
        char average[32];
        std::snprintf(average, sizeof average, "%.1f", f.rows ? static_cast<double>(f.nnz) / static_cast<double>(f.rows) : 0.0);
        if (csr_kernel(call, f, several_) == CsrKernel::Chunks)
          return "csr: chunks of " + std::to_string(chunk_items()) + " entries a work-item, whatever the rows (" + average +
                 " entries a row on average); rows that leave their chunk added after" +
                 (starts_setting().keep ? "; the chunks' first rows found on the matrix's first product and kept for the next" : "");
        return "csr: " + std::to_string(lanes_for(call, f)) + " work-item(s) a row (" + average + " entries a row on average)";
      }
      case Layout::Coo:
        return "coo: " + std::to_string(coo_chunk(call)) + " entries a work-item, summed row by row; rows that cross chunks added after";
      case Layout::Ell: return "ell: " + walk + ", " + most + std::to_string(f.width) + (f.width == 1 ? " place a row" : " places a row");
      case Layout::Sell: return "sell: a row per work-item, slices of " + std::to_string(f.slice) + " rows";
      case Layout::Dia: return "dia: " + walk + ", " + most + std::to_string(f.diagonals) + (f.diagonals == 1 ? " diagonal" : " diagonals");
      case Layout::Bcsr: return "bcsr: " + block + ", a row per work-item";
      case Layout::Bdia: return "bdia: a row per work-item, " + row_walk(f);
      case Layout::Bell: return "bell: " + block + ", " + most + std::to_string(f.width) + " a super-row, a super-row per work-item";
      case Layout::Sbell: return "sbell: " + block + " in slices of " + std::to_string(f.slice) + " super-rows, a super-row per work-item";
      case Layout::Hyb:
        return "hyb: its ell of width " + std::to_string(f.width) + ", " + walk + ", then " + most + std::to_string(f.nnz) + " coo entries, " +
               std::to_string(coo_chunk(call)) + " a work-item";
      case Layout::Cocktail: {
        std::string text;
        for (const Facts& part : f.components)
          if (holds_places(part)) text += (text.empty() ? "" : "; then ") + variant_of(call, part);
        return "cocktail, its parts one after another, each adding to y: " + (text.empty() ? "no entries" : text);
      }
    }
    return "";
  }

  // The row-per-element kernel (row_per_item): row i's sum, only nonzero values multiplied (padding
  // stays out of y, as in kernels/spmv.cl), then alpha * sum + beta * y0.
  void emit(const Call& call, const Plan&, const Emitter& em) const override {
    const Facts f = facts_of(call.operand(kA));
    const std::string real = f.dtype == FUGUE_DTYPE_F64 ? "double" : "float";
    const std::string i = em.name("row"), sum = em.name("sum"), k = em.name("k"), v = em.name("v"), c = em.name("c");
    // Indices as ints where every one fits (64-bit products and divisions take GPUs several instructions
    // each, and twice the registers); a dia's column, its row plus an offset that may lie far outside the
    // matrix, stays a long.
    const bool narrow = narrow_indices(call.operand(kA), f);
    const std::string T = narrow ? "int" : "long", L = narrow ? "" : "L";
    auto n = [&](int64_t value) { return std::to_string(value) + L; };
    const std::string rows = n(f.rows), cols = n(f.cols);
    // The layout's count (ell's width, dia's diagonals, bcsr's blocks): left to the run, read from the
    // buffer the core passes (ABI 2.22) and bounded by the capacity; else the type's.
    std::string count = n(run_count(f)), code;
    if (takes_count(call, f)) {
      const std::string held = em.name("count");
      code = "const " + T + " " + held + " = (" + T + ")clamp((long)" + em.count(kA) + ", 0L, " + std::to_string(run_count(f)) + "L);\n";
      count = held;
    }
    auto part = [&](uint32_t p, const std::string& at) { return em.read_part_at(kA, p, at); };
    auto add = [&](const std::string& value, const std::string& column) {
      return "    const " + real + " " + v + " = " + value + ";\n    if (" + v + " != (" + real + ")0) " + sum + " += " + v + " * " +
             em.read_at(kX, column) + ";\n";
    };
    code += "const " + T + " " + i + " = " + em.builtin(FUGUE_BUILTIN_INDEX) + ";\n" + real + " " + sum + " = 0;\n";
    switch (f.layout) {
      case Layout::Dia:
        code += "for (" + T + " " + k + " = 0; " + k + " < " + count + "; ++" + k + ") {\n  const long " + c + " = " +
                "(long)" + i + " + (long)" + part(0, k) + ";\n  if (" + c + " >= 0 && " + c + " < " + cols + ") {\n" +
                add(part(1, k + " * " + rows + " + " + i), c) + "  }\n}\n";
        break;
      case Layout::Bdia: {
        // Band by band: the band's diagonals read x at consecutive columns.
        const std::string b = em.name("band"), first = em.name("first"), count = em.name("count");
        code += "for (" + T + " " + b + " = 0; " + b + " < " + n(f.bands) + "; ++" + b + ") {\n  const " + T + " " + first + " = " +
                part(1, b) + ", " + count + " = (" + part(1, b + " + 1") + " - " + first + ") / " + rows + ";\n  for (" + T + " " + k +
                " = 0; " + k + " < " + count + "; ++" + k + ") {\n    const long " + c + " = (long)" + i + " + (long)" + part(0, b) + " + " +
                k + ";\n    if (" + c + " >= 0 && " + c + " < " + cols + ") {\n" + add(part(2, first + " + " + k + " * " + rows + " + " + i), c) +
                "    }\n  }\n}\n";
        break;
      }
      case Layout::Ell:
        code += "for (" + T + " " + k + " = 0; " + k + " < " + count + "; ++" + k + ") {\n" +
                add(part(1, k + " * " + rows + " + " + i), "(" + T + ")" + part(0, k + " * " + rows + " + " + i)) + "}\n";
        break;
      case Layout::Csr:
        code += "for (" + T + " " + k + " = " + part(0, i) + "; " + k + " < " + part(0, i + " + 1") + "; ++" + k + ") {\n" +
                add(part(2, k), "(" + T + ")" + part(1, k)) + "}\n";
        break;
      case Layout::Bcsr: {
        // The row's super-row's blocks; its row r of each, column j at 1 x 4 unit r * w / 4 + j / 4.
        const std::string s = em.name("super_row"), r = em.name("r"), first = em.name("first"), j = em.name("j");
        const std::string w = n(f.block_cols), h = n(f.block_rows);
        code += "const " + T + " " + s + " = " + i + " / " + h + ", " + r + " = " + i + " % " + h + ";\nfor (" + T + " " + k + " = " +
                part(0, s) + "; " + k + " < " + part(0, s + " + 1") + "; ++" + k + ") {\n  const " + T + " " + first + " = " + part(1, k) +
                ";\n  for (" + T + " " + j + " = 0; " + j + " < " + w + "; ++" + j + ") {\n    const " + T + " " + c + " = " + first + " + " +
                j + ";\n    if (" + c + " < " + cols + ") {\n" +
                add(part(2, "((" + r + " * " + n(f.block_cols / 4) + " + " + j + " / 4) * " + count + " + " + k + ") * 4 + " + j + " % 4"),
                    c) +
                "    }\n  }\n}\n";
        break;
      }
      case Layout::Sell: {
        // Unsorted (sigma 1): row i is place i, the (i % C)-th of slice i / C, its k-th entry C places apart.
        const std::string slice = em.name("slice"), end = em.name("end"), C = n(f.slice);
        code += "const " + T + " " + slice + " = " + i + " / " + C + ", " + end + " = " + part(0, slice + " + 1") + ";\nfor (" + T + " " + k +
                " = " + part(0, slice) + " + " + i + " % " + C + "; " + k + " < " + end + "; " + k + " += " + C + ") {\n" +
                add(part(3, k), "(" + T + ")" + part(2, k)) + "}\n";
        break;
      }
      default: throw std::logic_error(name + ": no generated kernel for " + layout_name(f.layout));
    }
    auto number = [&](double value) {  // every digit: the factors are the program's exactly
      if (std::isnan(value)) return "(" + real + ")NAN";
      if (std::isinf(value)) return std::string(value > 0 ? "" : "-") + "(" + real + ")INFINITY";
      char text[40];
      std::snprintf(text, sizeof text, "(%s)%.17g", real.c_str(), value);
      return std::string(text);
    };
    // y0: its element, or the core's literal of a number left out or given (infinities too).
    code += em.write(kY) + " = " + number(call.number("alpha")) + " * " + sum + " + " + number(call.number("beta")) + " * (" + real + ")(" +
            em.read(kY0) + ");\n";
    em.append(code);
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    const Facts f = facts_of(call.operand(kA));
    require_dtype(s, f.dtype, name);
    if (f.rows == 0 || vectors(call) == 0) return;  // nothing to compute
    if (f.layout != Layout::Cocktail) return run(call, s, f, 0, false, nullptr);
    // A cocktail: the first part that holds entries takes y0 and beta, the others add to y. Its csr holds
    // only the rows its entries are in, listed, so it cannot come first: where the other parts hold
    // nothing, y = beta * y0 is written first (as a coo without entries writes it).
    bool added = false;
    for (size_t k = 0; k < f.components.size(); ++k) {
      if (!holds_places(f.components[k])) continue;
      const bool listed = kCocktailParts[k] == Layout::Csr;
      if (listed && !added) {
        Facts none = f.components[k];
        none.layout = Layout::Coo, none.rows = f.rows, none.nnz = 0;
        run(call, s, none, cocktail_first_part(k), false, nullptr);
        added = true;
      }
      run(call, s, f.components[k], cocktail_first_part(k), added, listed ? part(s, call, "A", kCocktailRowsPart) : nullptr);
      added = true;
    }
    if (!added) {  // no entries: y = beta * y0
      Facts none = f.components[3];
      none.layout = Layout::Coo, none.rows = f.rows, none.nnz = 0;
      run(call, s, none, cocktail_first_part(3), false, nullptr);
    }
  }

  // The kernels of A's layout `f`, whose parts are A's from `first_part` on; `accumulate`: add alpha * A x
  // to y (y0 and beta already in it); `row_ids` (csr): the rows of y its rows are (null: its own).
  void run(const Call& call, const fugue_device_services& s, const Facts& f, uint32_t first_part, bool accumulate, cl_mem row_ids) const {
    const bool f64 = f.dtype == FUGUE_DTYPE_F64;
    const int lanes = f.layout == Layout::Csr ? lanes_for(call, f) : 1;
    const int64_t chunk = coo_chunk(call);
    const int64_t k = vectors(call);
    // dia's and ell's rows a work-item on CPUs (0: a row each), and their kernels' work-items.
    const int64_t rows_a_vector = vector_rows(call, f, several_);
    const size_t row_blocks = rows_a_vector ? static_cast<size_t>((f.rows + rows_a_vector - 1) / rows_a_vector) : 0;
    // Work-groups of 128, or of the device's largest power of two below that (csr's lanes divide it).
    auto fitted = [&](size_t size) {
      while (size > 32 && size > max_work_group_size(s)) size /= 2;
      return size;
    };
    const size_t group = fitted(kGroup), chunk_size = fitted(chunk_group());
    const int64_t items = chunk_items(), chunk_entries = items * static_cast<int64_t>(chunk_size);  // a power of two
    int chunk_shift = 0;
    while ((int64_t{1} << chunk_shift) < chunk_entries) ++chunk_shift;
    const std::string options = std::string("-DREAL=") + (f64 ? "double -DVEC4=double4" : "float -DVEC4=float4") + " -DINDEX=" +
                                (f.index == FUGUE_DTYPE_I64 ? "long" : "int") + " -DLANES=" + std::to_string(lanes) +
                                " -DCHUNK=" + std::to_string(chunk) + " -DVECTORS=" + std::to_string(k) + " -DBLOCK_H=" + std::to_string(f.block_rows) +
                                " -DBLOCK_W=" + std::to_string(f.block_cols) + " -DCHUNK_ITEMS=" + std::to_string(items) +
                                " -DCHUNK_ENTRIES=" + std::to_string(chunk_entries) + " -DCHUNK_SHIFT=" +
                                std::to_string(chunk_shift) + (row_ids ? " -DROW_IDS" : "") +
                                (rows_a_vector ? " -DROWS=" + std::to_string(rows_a_vector) : "");
    const std::string source = std::string(f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_spmv;
    // A count left to the run: the kernels read it on the device (kernels/spmv.cl's RUN_COUNT), from the
    // buffer the core holds it in, which each takes as its last argument. hyb's ell part, whose width is
    // its cut, runs the program without it.
    const bool counted = takes_count(call, f);
    cl_program program = build_program(s, source, options + (counted ? " -DRUN_COUNT" : ""));
    cl_program uncounted = counted && f.layout == Layout::Hyb ? build_program(s, source, options) : program;
    cl_mem count_held = counted ? count_buffer(s, call, "A") : nullptr;
    auto with_count = [&](Kernel& kernel) -> Kernel& {
      if (!counted) return kernel;
      cl_uint args = 0;
      check_cl(clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr), "clGetKernelInfo(" + kernel.name() + ")");
      return kernel.arg(args - 1, count_held);
    };
    // Each kernel's work-items: its units (rows, places, chunks) times the vectors.
    auto units = [&](int64_t n) { return static_cast<size_t>(n) * static_cast<size_t>(k); };

    const fugue_type& y0 = call.operand(kY0);
    const cl_int y0_array = accumulate || y0.kind == FUGUE_KIND_ARRAY;
    cl_mem y = buffer(s, call, names_.y), x = buffer(s, call, names_.x);
    // Not read when y0 is a number; y itself when adding to it (each work-item reads its rows of y before
    // it writes them).
    cl_mem y0_buffer = y0.kind == FUGUE_KIND_ARRAY && !accumulate ? buffer(s, call, names_.y0) : y;
    const double y0_value = y0_array ? 0.0 : y0.const_value, alpha = call.number("alpha"), beta = accumulate ? 1.0 : call.number("beta");
    auto part_of = [&](uint32_t k) { return part(s, call, "A", first_part + k); };
    // The arguments after the layout's own, from index `i`: y, y0 and the factors in the kernel's REAL.
    auto tail = [&](Kernel& k, cl_uint i) -> Kernel& {
      k.arg(i, y).arg(i + 1, y0_buffer).arg(i + 2, y0_array);
      if (f64) k.arg(i + 3, y0_value).arg(i + 4, alpha).arg(i + 5, beta);
      else k.arg(i + 3, static_cast<float>(y0_value)).arg(i + 4, static_cast<float>(alpha)).arg(i + 5, static_cast<float>(beta));
      return k;
    };
    const cl_long m = f.rows;
    // A coo's kernels over parts first..first+2 (row, col, data); `accumulate`: add to y (hyb's coo part).
    auto coo = [&](uint32_t first, cl_int accumulate) {
      const int64_t chunks = (f.nnz + chunk - 1) / chunk;
      cl_mem head = scratch(s, units(chunks) * dtype_bytes(f.dtype)), carried = scratch(s, units(chunks) * dtype_bytes(f.dtype));
      Kernel chunked(program, "coo_chunks");
      chunked.args(m, cl_long{f.nnz}, accumulate, part_of(first), part_of(first + 1), part_of(first + 2), x, head, carried);
      with_count(tail(chunked, 9)).enqueue(s, units(chunks), group, "spmv coo chunks");
      Kernel carries(program, "coo_carries");
      carries.args(cl_long{f.nnz}, cl_long{chunks}, accumulate, part_of(first), head, carried);
      with_count(tail(carries, 6)).enqueue(s, units(chunks), group, "spmv coo carries");
    };
    switch (f.layout) {
      case Layout::Coo: {
        if (f.nnz == 0) {  // no chunk: every row is beta * y0 (an ell of width 0)
          Kernel empty(program, "ell_spmv");
          empty.args(m, cl_long{0}, x, x, x);
          tail(empty, 5).enqueue(s, units(f.rows), group, "spmv coo (empty)");
          break;
        }
        coo(0, 0);
        break;
      }
      case Layout::Bcsr: {
        Kernel bcsr(program, "bcsr_spmv");
        bcsr.args(m, cl_long{f.cols}, cl_long{f.blocks}, cl_long{f.block_rows}, cl_long{f.block_cols}, part_of(0), part_of(1), part_of(2), x);
        with_count(tail(bcsr, 9)).enqueue(s, units(f.rows), group, "spmv bcsr");
        break;
      }
      case Layout::Hyb: {
        Kernel ell(uncounted, rows_a_vector ? "ell_spmv_rows" : "ell_spmv");  // y = alpha * (ell part) x + beta * y0, then the coo part added
        ell.args(m, cl_long{f.width}, part_of(0), part_of(1), x);
        tail(ell, 5).enqueue(s, rows_a_vector ? row_blocks : units(f.rows), group, "spmv hyb ell");
        if (f.nnz > 0) coo(2, 1);
        break;
      }
      case Layout::Csr: {
        const CsrKernel kernel = csr_kernel(call, f, several_);
        if (kernel == CsrKernel::Chunks) {
          // Chunk starts, the chunks, then the rows that leave their chunk.
          const int64_t chunks = std::max<int64_t>((f.nnz + chunk_entries - 1) / chunk_entries, 1);
          const size_t real = dtype_bytes(f.dtype), index = f.index == FUGUE_DTYPE_I64 ? 8 : 4;
          cl_mem pieces = scratch(s, static_cast<size_t>(chunks) * real), tails = scratch(s, static_cast<size_t>(chunks) * real);
          cl_mem tail_rows = scratch(s, static_cast<size_t>(chunks) * sizeof(cl_long));
          const StartsSetting setting = starts_setting();
          const size_t starts_bytes = static_cast<size_t>(chunks + 1) * sizeof(cl_long);
          bool fresh = true;
          cl_mem starts = setting.keep ? workspace(s, starts_key(part_of(0), f, chunk_entries), starts_bytes, &fresh) : scratch(s, starts_bytes);
          if (fresh && setting.stale) {
            // Tests: kept starts that do not hold (in range and not, negative, the largest), for the chunks
            // to find again and write back, and the next products to check.
            std::vector<cl_long> wrong(static_cast<size_t>(chunks + 1));
            const cl_long kinds[] = {f.rows / 2, -1, f.rows + 7, std::numeric_limits<cl_long>::max(), std::numeric_limits<cl_long>::min()};
            for (size_t h = 0; h < wrong.size(); ++h) wrong[h] = kinds[h % 5];
            check_cl(clEnqueueWriteBuffer(s.queue, starts, CL_TRUE, 0, starts_bytes, wrong.data(), 0, nullptr, nullptr), "writing the chunk starts");
          } else if (fresh) {
            const bool by_rows = setting.by_rows < 0 ? starts_by_rows(f.rows, chunks) : setting.by_rows == 1;
            Kernel find(program, by_rows ? "csr_chunk_starts_by_rows" : "csr_chunk_starts");
            find.args(m, cl_long{chunks}, part_of(0), starts);
            with_count(find).enqueue(s, static_cast<size_t>(by_rows ? f.rows : chunks) + 1, group,
                         by_rows ? "spmv csr chunk starts (rows)" : "spmv csr chunk starts");
          }
          Kernel sums(program, "csr_chunk_spmv");
          sums.args(m, cl_long{f.nnz}, part_of(0), part_of(1), part_of(2), x);
          tail(sums, 6).arg(12, starts).arg(13, pieces).arg(14, tails).arg(15, tail_rows);
          const size_t padded = static_cast<size_t>(chunk_entries + chunk_entries / 32);
          sums.arg(16, LocalMemory{padded * real}).arg(17, LocalMemory{padded * index}).arg(18, LocalMemory{chunk_size * real});
          sums.arg(19, LocalMemory{chunk_size * sizeof(cl_int)}).arg(20, row_ids ? row_ids : part_of(0));
          with_count(sums).enqueue(s, static_cast<size_t>(chunks) * chunk_size, chunk_size, "spmv csr chunks");
          Kernel fixup(program, "csr_chunk_fixup");
          fixup.args(cl_long{chunks}, part_of(0), pieces, tails, tail_rows);
          with_count(tail(fixup, 5).arg(11, row_ids ? row_ids : part_of(0))).enqueue(s, static_cast<size_t>(chunks), group, "spmv csr chunk fixup");
          break;
        }
        Kernel rows(program, "rows_spmv");
        rows.args(m, part_of(0), part_of(1), part_of(2), x);
        tail(rows, 5).arg(11, LocalMemory{group * dtype_bytes(f.dtype)}).arg(12, row_ids ? row_ids : part_of(0));
        rows.enqueue(s, units(f.rows) * static_cast<size_t>(lanes), group, "spmv rows");
        break;
      }
      case Layout::Ell: {
        Kernel ell(program, rows_a_vector ? "ell_spmv_rows" : "ell_spmv");
        ell.args(m, cl_long{f.width}, part_of(0), part_of(1), x);
        with_count(tail(ell, 5)).enqueue(s, rows_a_vector ? row_blocks : units(f.rows), group, "spmv ell");
        break;
      }
      case Layout::Sell: {
        const int64_t places = (f.rows + f.slice - 1) / f.slice * f.slice;
        Kernel sell(program, "sell_spmv");
        sell.args(cl_long{places}, cl_long{f.slice}, part_of(0), part_of(1), part_of(2), part_of(3), x);
        tail(sell, 7).enqueue(s, units(places), group, "spmv sell");
        break;
      }
      case Layout::Dia: {
        Kernel dia(program, rows_a_vector ? "dia_spmv_rows" : "dia_spmv");
        dia.args(m, cl_long{f.cols}, cl_long{f.diagonals}, part_of(0), part_of(1), x);
        with_count(tail(dia, 6)).enqueue(s, rows_a_vector ? row_blocks : units(f.rows), group, "spmv dia");
        break;
      }
      case Layout::Bdia: {
        Kernel bdia(program, "bdia_spmv");
        bdia.args(m, cl_long{f.cols}, cl_long{f.bands}, part_of(0), part_of(1), part_of(2), x);
        tail(bdia, 7).enqueue(s, units(f.rows), group, "spmv bdia");
        break;
      }
      case Layout::Cocktail: throw std::logic_error("a cocktail runs part by part");
      case Layout::Bell:
      case Layout::Sbell: {
        // bell is a sbell of one slice holding every super-row (its col and data, no slice_ptr).
        const bool sliced = f.layout == Layout::Sbell;
        const int64_t count = super_rows(f), slice = sliced ? f.slice : count;
        Kernel blocks(program, "sbell_spmv");
        blocks.args(m, cl_long{f.cols}, cl_long{count}, cl_long{slice}, cl_long{f.width * count}, sliced ? part_of(0) : x, cl_int{sliced},
                    part_of(sliced ? 1 : 0), part_of(sliced ? 2 : 1), x);
        with_count(tail(blocks, 10)).enqueue(s, units(count), group, sliced ? "spmv sbell" : "spmv bell");
        break;
      }
    }
  }

  fugue_cost cost(const Call& call) const override {
    const fugue_type& a = call.operand(kA);
    double bytes = 0;  // every part once, x once (at best), y0 where it is an array, and y
    for (uint32_t k = 0; k < a.num_parts; ++k) {
      const fugue_type& part = *FUGUE_NTH(fugue_type, a.parts, k);
      bytes += static_cast<double>(elements(part)) * static_cast<double>(dtype_size(part.dtype));
    }
    const double k = static_cast<double>(vectors(call));
    const bool y0_array = call.operand(kY0).kind == FUGUE_KIND_ARRAY;
    bytes += static_cast<double>(dtype_size(a.dtype)) * k * static_cast<double>(a.shape[1] + (y0_array ? 2 : 1) * a.shape[0]);
    double places = 0;  // the values parts' (a cocktail has four; the others hold indices)
    for (uint32_t p = 0; p < a.num_parts; ++p)
      if (const fugue_type& part = *FUGUE_NTH(fugue_type, a.parts, p); part.dtype == a.dtype) places += static_cast<double>(elements(part));
    return {sizeof(fugue_cost), bytes, 2 * k * places};
  }

  void reference(const Call& call, fugue_host_array* arrays) const override {
    const Facts f = facts_of(call.operand(kA));
    const Coordinates m = entries_of(f, HostView(arrays[kA]));
    const HostView x(arrays[kX]), y0(arrays[kY0]);
    HostView y(arrays[kY]);
    const int64_t k = vectors(call);
    if (f.rows == 0 || k == 0) return;  // nothing to compute
    const long double alpha = call.number("alpha"), beta = call.number("beta");
    std::vector<long double> sum(static_cast<size_t>(f.rows * k), 0.0L);
    for (int64_t e = 0; e < m.entries(); ++e)
      if (m.value[e] != 0)
        for (int64_t j = 0; j < k; ++j) sum[static_cast<size_t>(m.row[e] * k + j)] += static_cast<long double>(m.value[e]) * x.get(m.col[e] * k + j);
    for (int64_t i = 0; i < f.rows * k; ++i) y.set(i, static_cast<double>(alpha * sum[static_cast<size_t>(i)] + beta * y0.get(i)));
  }

 private:
  struct Names {
    std::string x, y0, y;
  };
  // k: the vectors (spmv: 1).
  int64_t vectors(const Call& call) const { return several_ ? call.operand(kX).shape[1] : 1; }
  // Whether a layout's value stores any place (a cocktail's part may hold nothing: it is not run).
  static bool holds_places(const Facts& f) { return places_in(declared_type(f).parts.back()) > 0; }
  // What a row's work-item walks, for the plans' text (a count left to the run: its capacity, at most).
  static std::string row_walk(const Facts& f) {
    auto count = [&](int64_t n, const char* one, const char* many) {
      return std::string(f.counted ? "at most " : "") + std::to_string(n) + " " + (n == 1 ? one : many);
    };
    switch (f.layout) {
      case Layout::Dia: return count(f.diagonals, "diagonal", "diagonals");
      case Layout::Bdia: return count(f.diagonals, "diagonal", "diagonals") + " in " + count(f.bands, "band", "bands");
      case Layout::Ell: return count(f.width, "place a row", "places a row");
      case Layout::Bcsr: return std::to_string(f.block_rows) + " x " + std::to_string(f.block_cols) + " blocks";
      case Layout::Sell: return "slices of " + std::to_string(f.slice) + " rows, not sorted";
      default: return "one work-item a row";
    }
  }
  // The layouts whose spmv is a row per work-item writing y at that row (dia and ell but on CPUs, bdia, bcsr,
  // sell whose rows are not sorted; csr where one work-item takes a row): a generated kernel that fuses with
  // y's consumers. bell's and sbell's own kernels walk a super-row per work-item, x's values read once for
  // its h rows; a row per work-item was slower by more than fusion saves (scripts/gpu_sparse_fusion.sh, FEM
  // 300,000 nodes of 4 x 4 blocks on an H200: sbell 0.0965 ms against 0.0854, bell 0.1343 against 0.1106,
  // r = b - A x with dot(r, r) fused 0.1043 and 0.1497 against 0.1029 and 0.1250 apart; on PoCL, 30,000
  // nodes, fused 4.36 and 7.56 ms against 3.68 and 7.05 apart), so they keep them.
  bool row_per_item(const Call& call, const Facts& f) const {
    // A count left to the run: in the generated kernel where the core passes it (ABI 2.22), else in the
    // layout's own kernels, which read it from its buffer.
    if (several_ || f.rows == 0 || (takes_count(call, f) && sdk::core_abi_minor() < 22)) return false;
    if (vector_rows(call, f, several_)) return false;
    return f.layout == Layout::Dia || f.layout == Layout::Bdia || f.layout == Layout::Ell || f.layout == Layout::Bcsr ||
           (f.layout == Layout::Sell && f.sigma == 1) ||
           (f.layout == Layout::Csr && lanes_for(call, f) == 1 && csr_kernel(call, f, several_) == CsrKernel::Lanes);
  }
  // Whether the kernels take A's count left to the run (its own kernels, reading it on the device; not the
  // generated one): every layout's but those whose pointers find the places (csr's rows through row_ptr
  // where a work-item or lanes take a row; sell's and sbell's slices through slice_ptr).
  bool takes_count(const Call& call, const Facts& f) const {
    if (!f.counted || f.layout == Layout::Sell || f.layout == Layout::Sbell) return false;
    return f.layout != Layout::Csr || csr_kernel(call, f, several_) == CsrKernel::Chunks;
  }
  // Whether every index the generated kernel computes fits an int: i32 indices, and the shape and every
  // part below 2^31 places by a slice's height (a place's index, a row's, and the products that reach them
  // stay below those; a sell's walk steps a slice's height past its last place).
  static bool narrow_indices(const fugue_type& a, const Facts& f) {
    const int64_t limit = std::numeric_limits<int32_t>::max() - std::max<int64_t>(f.slice, 1);
    if (f.index != FUGUE_DTYPE_I32 || f.rows >= limit || f.cols >= limit) return false;
    for (uint32_t k = 0; k < a.num_parts; ++k)
      if (elements(*FUGUE_NTH(fugue_type, a.parts, k)) >= limit) return false;
    return true;
  }
  // Those of them whose own kernel runs faster where no consumer joins (fugue_plan.own_kernels_alone): on
  // CPUs, bcsr and sell (PoCL, FEM 30,000 nodes of 4 x 4 blocks: bcsr 4.36 ms against 4.87 generated, sell
  // 5.76 against 7.38; fused with r = b - A x and dot(r, r), 4.84 and 5.81 against 7.52 and 6.09 apart). On
  // an H200 the generated kernels were as fast or faster (bcsr 4 x 4 0.1349 ms against 0.1357, 1 x 4
  // 0.1330 against 0.1494; sell 0.1301 against 0.1452 and, on Poisson 2048^2, 0.0878 against 0.0960).
  static bool own_kernels_alone(const Call& call, const Facts& f) {
    return call.device().type == FUGUE_DEVICE_CPU && (f.layout == Layout::Bcsr || f.layout == Layout::Sell);
  }

  bool several_;
  Names names_;
};

}  // namespace

std::unique_ptr<Operation> spmv_operation() { return std::make_unique<SparseProduct>(false); }
std::unique_ptr<Operation> spmm_operation() { return std::make_unique<SparseProduct>(true); }

}  // namespace fugue::sparse
