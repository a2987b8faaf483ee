// tuning.cpp: see tuning.h.
#include "tuning.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace fugue::linalg {

namespace {

struct Row {
  fugue_device_type type;  // 0: any
  const char* vendor;      // a part of the vendor's name, "" for any
  const char* name;        // a part of the device's name, "" for any
  Tuning tuning;
};

// The table, most specific first; the last row matches every device.
const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      // H100 (scripts/gpu_linalg.sh, f64 and f32, 20,000 matrices): one work-item per matrix wins up to
      // 8 (potrf f64 0.0201 ms at n = 8, 6.9x torch), a row per work-item at 16 (0.0757 ms, 3.2x), teams
      // owning columns above; teams of 256 at most keep several matrices on a compute unit. gemm in tiles
      // from n = 32 (OPS=gemm scripts/gpu_linalg_sweep.sh, 2,000 matrices; blocks of 4 x 4 read from
      // global memory before): f64 n = 32 0.033 -> 0.028 ms, 64 0.250 -> 0.104, 128 1.588 -> 0.565; f32
      // 0.023 -> 0.020, 0.100 -> 0.070, 0.743 -> 0.329. Blocks of 8 x 8 (4 x 4: f64 n = 128 0.64 ms, 6 x 6
      // 1.42), the next chunk read ahead (f64 n = 128 0.743 -> 0.565), 32 values of f32 a stage (16 f32:
      // 0.367 ms at 128), panels of 128 x 128 rather than 128 x 64 (team_max=128: f64 0.639 ms; blocks of 8 x 4 or 4 x 8 in a
      // team of 256, tried later: f64 0.703 and 0.719 against 0.566, f32 0.450 and 0.433 against 0.328).
      // potrf blocked above 64 (blocked_cholesky.h; OPS=potrf scripts/gpu_linalg_sweep.sh, 2,000 matrices, one call): f64 n = 128
      // 0.950 ms against the grid's 1.956, f32 0.612 against 0.806, c64 1.145 against 2.762; at 256 and 512 the teams
      // took 59.1 and 419 ms (f64) where the blocks take 3.60 and 18.3. Panels of 32 columns: 64 took f64 n = 512 to 37.8
      // ms and 16 to 31.2 against 20.7 (before the solve and the panel kept their rows in registers). getrf blocked above
      // 32 (blocked_lu.h; OPS=getrf TUNINGS=";lu_blocked_order=32" scripts/gpu_linalg_sweep.sh): f64 n = 64 0.563 ms
      // against the grid's 0.678, 128 2.31 against 7.40; f32 0.269 against 0.359, 1.11 against 3.15; at n = 32 the
      // grid stays (f64 0.099 ms against 0.112 blocked, f32 0.048 against 0.074). geqrf blocked above 64 (blocked_qr.h;
      // OPS=geqrf TUNINGS=";qr_blocked_order=32" scripts/gpu_linalg_sweep.sh): f64 n = 128 5.52 ms against the teams'
      // 16.4, 256 34.5 against 160; f32 3.51 against 6.24, 14.8 against 83.4; at 64 the teams stay (f64 0.759 ms
      // against 1.346 blocked, f32 0.570 against 0.853). getrf of 8-byte values in rows up to 32 (OPS=getrf SIZES=32
      // TUNINGS=";row_order=32" scripts/gpu_linalg_sweep.sh, one call): f64 0.0639 ms against the grid's 0.0984, c64
      // 0.0816 against 0.1029; f32 keeps the grid (0.0451 against 0.0482 in rows), and potrf too (f64 0.0420 against 0.0481).
      // Rows up to 32 since the rows plans' matrices lie a row and a spare element apart in local memory (ABI 2.11's
      // walks_rows; OPS="potrf getrf geqrf" SIZES="20 24 32" TUNINGS=";row_order=32" scripts/gpu_linalg_sweep.sh, one
      // call, 2,000 matrices): potrf f64 n = 20 0.0267 -> 0.0207 ms, 24 0.0284 -> 0.0270, 32 0.0453 -> 0.0369; f32 0.0204
      // -> 0.0140, 0.0215 -> 0.0187, 0.0274 -> 0.0239; getrf f32 0.0259 -> 0.0181, 0.0452 -> 0.0216, 0.0481 -> 0.0374 (f64
      // took rows there already); geqrf, whose teams then work in QR's storage rather than a local array of their own
      // (own_local_array), f64 0.0597 -> 0.0534, 0.1175 -> 0.1029, 0.1618 -> 0.1528; f32 0.0452 -> 0.0378, 0.0830 -> 0.0496,
      // 0.0874 -> 0.0710.
      // gemm of f64 on the tensor cores where the architecture has them (sm_90: gemm_mma.h) from n = 32 (H200,
      // OPS=gemm DTYPES=f64 TUNINGS=";mma_order=0;mma_panel=64;mma_order=32" scripts/gpu_linalg_sweep.sh, 2,000 products,
      // one call): n = 32 0.0270 ms in tiles -> 0.0203, 64 0.104 -> 0.090, 128 0.560 -> 0.376, 256 4.12 -> 2.28, 512 32.0
      // -> 15.8; panels of 64 x 64 in 4 warps rather than 128 x 128 in 8 from n = 128: 0.426, 3.02 and 22.9 ms. (The
      // stages' depth is gemm_mma.cpp's: 32 where they fit, n = 64 0.0958 -> 0.0874 ms in a later call.)
      // geqrf and gels with a column per work-item in registers up to 64, complex values up to 32 (householder.h's column_householder; H200,
      // OPS=geqrf SIZES="16 24 32" DTYPES="f64 f32 c64" TUNINGS=";qr_column_order=0" scripts/gpu_linalg_sweep.sh, one call): f64
      // 0.1695 -> 0.1025 ms at 16, 0.0981 -> 0.0669 at 24, 0.1512 -> 0.1023 at 32; f32 0.1039 -> 0.0506, 0.0524 -> 0.0323,
      // 0.0715 -> 0.0349; c64 0.1421 -> 0.0997, 0.0697 -> 0.0771 (the one loss), 0.1533 -> 0.1210. gels of 2n x n, two
      // right-hand sides, 20,000: f64 n = 8 0.1202 -> 0.0754 ms, 16 0.7098 -> 0.5216; f32 0.0930 -> 0.0432, 0.5052 -> 0.2327.
      // From 33 to 64 (OPS=geqrf SIZES="40 48 64" DTYPES="f64 f32" TUNINGS=";qr_column_order=64", one call, 2,000): f64
      // 0.2576 -> 0.2331, 0.4482 -> 0.2975, 0.7447 -> 0.6116; f32 0.1712 -> 0.0711, 0.2574 -> 0.0909, 0.5621 -> 0.2081; gels
      // (2n x n) f64 n = 20 0.1876 -> 0.1490, 32 0.5254 -> 0.3106, f32 0.1417 -> 0.0420, 0.3033 -> 0.1421; but complex values
      // lost (c64 n = 40 0.3002 -> 0.3105, 64 0.8182 -> 0.9676; c128 0.4901 -> 0.9809, 3.166 -> 4.211): they stop at half.
      // posv, gesv and gesv_nopiv in rows too (a row of B, of [A | B], in each work-item's registers; H200, scripts/gpu_solve.sh
      // beside FUGUE_LINALG_TUNING=row_order=8, 4 right-hand sides): f64 n = 16 (20,000) 0.2348 -> 0.0756 ms, 0.1688 -> 0.0692,
      // 0.2236 -> 0.0829; n = 32 (2,000) 0.1573 -> 0.0456, 0.1583 -> 0.1298, 0.2088 -> 0.1511 (README: the other cases, and where
      // Gauss-Jordan keeps its teams).
      // Grid shapes and the blocked plan at 48 and 64 (H200, OPS=potrf SIZES="48 64" DTYPES=f64 TUNINGS=";blocked_order=32;
      // blocked_order=32,blocked_panel=16;grid_elements=16;grid_elements=128;grid_rows=8" scripts/gpu_linalg_sweep.sh, one call,
      // 2,000 matrices): the 16 x 8 grid stays, n = 48 0.1059 ms against 0.2653, 0.2068, 0.1659 (16 x 16), 0.1377 (8 x 8) and
      // 0.1318 (8 x 16); n = 64 0.2466 against 0.3162, 0.2954, 0.2600, 0.2874 and 0.2786 (torch 0.3297 there). getrf f64 in the
      // same call (TUNINGS=";row_order=8;register_order=4;lu_wide_row_order=8", 20,000): n = 8 0.0198 ms in registers against
      // 0.0196 in rows, n = 16 0.0617 in rows against 0.0631-0.0674: within the noise, so the table stays.
      // A single product spreads its tiles over work-groups (gemm_spread.h; H200,
      // scripts/gpu_gemm_spread.sh): one f32 product of 9 x 760 x 56,648 36.3 -> 0.413 ms, 4096^3 693 -> 9.66.
      {FUGUE_DEVICE_GPU, "NVIDIA", "", {"NVIDIA GPU", 8, 32, 256, 128, 64, 0, 32, 8, 32, true, 0, 0, 64, 32, 32, 64, 32, 32, 128, 2, 0, 64, 0}},
      {FUGUE_DEVICE_GPU, "", "", {"GPU", 8, 16, 256, 128, 64, 0, 32, 8, 32, true, 0, 0, 64, 32, 0, 0, 0, 0, 128, 2, 0, 16, 0}},
      // CPU (PoCL on 2 cores, f64, fugue bench medians of 5; FUGUE_LINALG_TUNING=register_order=N): one
      // work-item per matrix above 8 gains little and costs much. potrf 20,000 12 x 12: 11.7-16.2 ms in
      // registers against 15.9 in rows; 16 x 16: 22.3-26.2 against 23.8 (within the noise); 2,000 24 x 24
      // and 32 x 32: 7.7 and 16.5 ms against teams' 10.2 and 19.7 (1.2-1.3x), but getrf's unrolled
      // pivoting grows as n^3 and takes minutes to build there. So the GPU limits. Grids stay off: PoCL
      // took 18 s to build potrf's for one order of 33 and 140 s for 64 (a barrier a step, each step unrolled).
      // gemm's tiles stay off too: the core already copies a CPU's entries whole into its (large) local
      // memory, and PoCL runs each stage between barriers as a pass of its own (200 f64 products of 128:
      // 72 ms in blocks, 330 in tiles, 459 read ahead; FUGUE_LINALG_TUNING=tile_order=1, fugue bench).
      // gemm in vectors of the native width, 4 rows a block (2,000 f64 products, fugue bench, 2 cores,
      // AVX-512): n = 64 16-23 ms against 60 in blocks of 4 x 4; rows of 8 took n = 128 to 121-130 ms
      // against 114-143 with 4, but n = 64 to 17.6 against 16.7, and 2 rows 202-210 ms. With AVX2 (vectors of 4
      // f64, 8 f32) 8 rows gain throughout (FUGUE_LINALG_TUNING=vector_rows=4 against 8, two runs alternating): f64
      // n = 16 (20,000) 12.2-12.9 ms against 10.1-11.4, 32 6.2-7.0 against 5.6-5.8, 64 36-38 against 28-30, 128
      // 267-276 against 220-222; f32 64 20-23 against 14-19, 128 120-151 against 99-108; so 8. potrf, getrf and
      // geqrf in loops at every order above 8 (scripts/pocl_linalg.sh, f64 at n = 32: potrf 6.3 ms, getrf
      // 7.7, geqrf 36, where teams had taken 26, 47 and 100 in the table before); posv with them (2,000 f64
      // systems, two right-hand sides: n = 32 17.8 ms against 84.1 in teams, 64 84.7 against 763); gesv too (n = 16
      // 1.22 ms against 9.29, 32 6.68 against 71.7, 64 58.8 against 352), and gels (2n x n, two right-hand sides: n = 16
      // 7.92 ms against 41.9, 32 30.1 against 251), and gebrd (one work-item, its steps unchanged: n = 32 39.3 ms against 197).
      // No spread tiles (gemm_spread.h): one f32 product of 9 x 760 x 56,648 took 1,972 ms spread over both cores
      // against 329 in the vectors of one work-group (fugue bench, medians of 3). The vectors' blocks spread
      // instead from 2^20 multiply-adds (fugue bench, medians of 5 and 9, FUGUE_LINALG_TUNING=spread_vectors=0
      // against 1): one f64 product of 9 x 56,648 x 2,000 (A^T B, normalized cuts' Ritz vectors) 330 -> 112 ms,
      // 1024^3 60.3 -> 30.7, 256^3 0.655 -> 0.344, 128^3 0.092 -> 0.072; f32 128 x 128 x 64 0.023 -> 0.016.
      // lanes_order 16: potrf, getrf and geqrf alone, 20,000 f64 matrices of 16 in lanes against loops (fugue
      // bench, the fastest of 15 runs): potrf 6.05 ms against 9.79, getrf 7.33 against 10.9, geqrf 19.7 against
      // 42.1; of 8 against registers 1.36 / 1.81, 1.66 / 2.11, 2.45 / 8.48. Not above 16: the lanes' private
      // arrays overflowed PoCL's work-item stacks from order 24 (f64), so tuning refuses more.
      {FUGUE_DEVICE_CPU, "", "", {"CPU", 8, 16, 256, 16, 64, 0, 0, 8, 16, false, 8, 1024, 1024, 32, 1024, 1024, 0, 0, 128, 0, 1, 0, 16}},
      {0, "", "", {"default", 8, 16, 256, 16, 64, 0, 0, 8, 16, false, 0, 0, 0, 32, 0, 0, 0, 0, 128, 0, 0, 0, 0}},
  };
  return rows;
}

bool contains(const char* text, const char* part) { return !*part || (text && std::strstr(text, part)); }

Tuning row_named(const std::string& name) {
  for (const Row& r : table()) {
    std::string lower = r.tuning.row;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name) return r.tuning;
  }
  std::string names;
  for (const Row& r : table()) names += (names.empty() ? "" : ", ") + r.tuning.row;
  throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: no table row \"" + name + "\" (rows: " + names + ", lower case)");
}

// FUGUE_LINALG_TUNING's numeric fields, as its errors list them.
const std::string kFields =
    "register_order, row_order, team_max, grid_order, grid_elements, grid_rows, tile_order, tile_block, tile_depth, tile_prefetch, "
    "vector_rows, loop_order, blocked_order, blocked_panel, lu_blocked_order, qr_blocked_order, lu_wide_row_order, mma_order, mma_panel, spread_tiles, spread_vectors, qr_column_order, lanes_order";

// FUGUE_LINALG_TUNING's fields applied to `t`.
Tuning overridden(Tuning t, const char* text) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "row") {
      t = row_named(value);
      continue;
    }
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    const bool number = !value.empty() && !std::isspace(static_cast<unsigned char>(value[0])) && !*end;
    // Fields with values of their own.
    if (key == "tile_prefetch" || key == "tile_block" || key == "tile_depth" || key == "blocked_panel" || key == "mma_panel") {
      if (key == "tile_prefetch" && (value == "0" || value == "1")) t.tile_prefetch = value == "1";
      else if (key == "blocked_panel" && (v == 8 || v == 16 || v == 32 || v == 64) && number) t.blocked_panel = v;
      else if (key == "tile_block" && number && v >= 1 && v <= 16) t.tile_block = v;
      else if (key == "tile_depth" && number && (v == 4 || v == 8 || v == 16 || v == 32)) t.tile_depth = v;
      else if (key == "mma_panel" && number && (v == 32 || v == 64 || v == 128)) t.mma_panel = v;
      else
        throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: \"" + item + "\": expected " +
                                   (key == "tile_prefetch"   ? "tile_prefetch=0 or 1"
                                    : key == "tile_block"    ? "tile_block=1..16"
                                    : key == "blocked_panel" ? "blocked_panel=8, 16, 32 or 64"
                                    : key == "mma_panel"     ? "mma_panel=32, 64 or 128"
                                                             : "tile_depth=4, 8, 16 or 32"));
      continue;
    }
    if ((key == "grid_rows" || key == "tile_order" || key == "vector_rows" || key == "loop_order" || key == "blocked_order" ||
         key == "lu_blocked_order" || key == "qr_blocked_order" || key == "lu_wide_row_order" || key == "mma_order" || key == "spread_tiles" || key == "spread_vectors" || key == "qr_column_order" || key == "lanes_order") &&
        value == "0") {
      // The default grid shape again; gemm's tiles, vectors, the loop and blocked plans off.
      (key == "grid_rows"     ? t.grid_rows
       : key == "tile_order"  ? t.tile_order
       : key == "vector_rows" ? t.vector_rows
       : key == "loop_order"  ? t.loop_order
       : key == "blocked_order" ? t.blocked_order
       : key == "lu_blocked_order" ? t.lu_blocked_order
       : key == "qr_blocked_order" ? t.qr_blocked_order
       : key == "mma_order" ? t.mma_order
       : key == "spread_tiles" ? t.spread_tiles
       : key == "spread_vectors" ? t.spread_vectors
       : key == "qr_column_order" ? t.qr_column_order
       : key == "lanes_order" ? t.lanes_order
                              : t.lu_wide_row_order) = 0;
      continue;
    }
    if (!number || v < 1 || v > 1024)
      throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: \"" + item + "\": expected row=NAME or a field=N with N in 1..1024 (fields: " + kFields + ")");
    if (key == "register_order") t.register_order = v;
    else if (key == "row_order") t.row_order = v;
    else if (key == "team_max") t.team_max = v;
    else if (key == "grid_order") t.grid_order = v;
    else if (key == "grid_elements") t.grid_elements = v;
    else if (key == "grid_rows") t.grid_rows = v;
    else if (key == "tile_order") t.tile_order = v;
    else if (key == "vector_rows" && v <= 16) t.vector_rows = v;
    else if (key == "loop_order") t.loop_order = v;
    else if (key == "blocked_order") t.blocked_order = v;
    else if (key == "lu_blocked_order") t.lu_blocked_order = v;
    else if (key == "qr_blocked_order") t.qr_blocked_order = v;
    else if (key == "lu_wide_row_order") t.lu_wide_row_order = v;
    else if (key == "mma_order") t.mma_order = v;
    else if (key == "spread_tiles") t.spread_tiles = v;
    else if (key == "spread_vectors") t.spread_vectors = v;
    else if (key == "qr_column_order") t.qr_column_order = v;
    else if (key == "lanes_order") t.lanes_order = v;
    else if (key == "vector_rows")
      throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: \"" + item + "\": expected vector_rows=0..16");
    else
      throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: unknown field \"" + key + "\" (fields: row, " + kFields + ")");
  }
  if (t.grid_rows & (t.grid_rows - 1))
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: grid_rows " + std::to_string(t.grid_rows) + " is not a power of two");
  if (t.team_max & (t.team_max - 1))
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: team_max " + std::to_string(t.team_max) + " is not a power of two");
  if (t.register_order > t.row_order || t.row_order > t.team_max)
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: expected register_order <= row_order <= team_max (a row per work-item of a team), found " +
                               std::to_string(t.register_order) + ", " + std::to_string(t.row_order) + " and " + std::to_string(t.team_max));
  if (t.lanes_order > 16)
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: expected lanes_order <= 16 (a work-item's matrices side by side, up to 16 KB, in its private "
                               "memory: larger ones overflowed the stacks of PoCL's work-items), found " + std::to_string(t.lanes_order));
  if (t.qr_column_order > 64)
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: expected qr_column_order <= 64 (a column of the matrix in each work-item's registers), found " +
                               std::to_string(t.qr_column_order));
  if (t.lu_wide_row_order > t.team_max)
    throw sdk::InvalidArgument("FUGUE_LINALG_TUNING: expected lu_wide_row_order <= team_max (a row per work-item of a team), found " +
                               std::to_string(t.lu_wide_row_order) + " and " + std::to_string(t.team_max));
  t.row += " table";
  if (std::strlen(text)) t.row += ", FUGUE_LINALG_TUNING=" + std::string(text);
  return t;
}

}  // namespace

Tuning tuning_of(const sdk::Call& call) {
  const fugue_device_desc* device = call.raw()->device;
  Tuning chosen = table().back().tuning;
  for (const Row& r : table())
    if (device && (!r.type || r.type == device->type) && contains(device->vendor, r.vendor) && contains(device->name, r.name)) {
      chosen = r.tuning;
      break;
    }
  const char* env = std::getenv("FUGUE_LINALG_TUNING");
  return overridden(chosen, env ? env : "");
}

Tuning lu_tuning(Tuning t, int64_t value_bytes) {
  if (value_bytes >= 8) t.row_order = std::max(t.row_order, t.lu_wide_row_order);
  return t;
}

int64_t team_size(const Tuning& t, int64_t n) {
  if (n <= t.register_order) return 1;
  int64_t team = 1;
  while (team < n && team < t.team_max) team *= 2;
  return team;
}

namespace {

// The grid whose blocks hold at most `elements`, from team_size(t, n) up.
Grid grid_within(const Tuning& t, int64_t n, int64_t elements) {
  for (int64_t team = team_size(t, n);; team *= 2) {
    Grid g{0, 1};
    if (t.grid_rows && t.grid_rows <= team) g.columns = team / t.grid_rows;
    else
      while (g.columns * g.columns * 4 <= team) g.columns *= 2;
    g.rows = team / g.columns;
    if (g.block_rows(n) * g.block_columns(n) <= elements || team >= 1024) return g;
  }
}

}  // namespace

Grid grid_of(const Tuning& t, int64_t n, int64_t value_bytes) {
  const Grid narrow = grid_within(t, n, std::max<int64_t>(1, t.grid_elements * 4 / std::max<int64_t>(4, value_bytes)));
  return narrow.team() <= t.team_max ? narrow : grid_within(t, n, t.grid_elements);
}

bool grid_plan(const Tuning& t, int64_t n, int64_t value_bytes, uint64_t max_work_group) {
  if (n <= t.row_order || n > t.grid_order) return false;
  const Grid g = grid_of(t, n, value_bytes);
  return g.team() > 1 && g.block_rows(n) * g.block_columns(n) <= t.grid_elements && static_cast<uint64_t>(g.team()) <= max_work_group &&
         g.team() <= t.team_max;
}

std::string variant_text(const Tuning& t, int64_t order, int64_t team, bool has_rows, const std::string& detail, const Grid* grid,
                         int64_t rows, int64_t columns) {
  const std::string n = std::to_string(order);
  std::string text;
  if (grid)
    text = "grid: " + std::to_string(grid->rows) + " x " + std::to_string(grid->columns) + " work-items per matrix, each a " +
           std::to_string(grid->block_rows(rows ? rows : order)) + " x " + std::to_string(grid->block_columns(columns ? columns : order)) +
           " block of it cyclically in registers (order " + n + " in " + std::to_string(t.row_order + 1) + ".." + std::to_string(t.grid_order) + ")";
  else if (team == 1)
    text = "registers: one matrix per work-item, every loop unrolled (order " + n + " <= " + std::to_string(t.register_order) + ")";
  else if (has_rows && order <= t.row_order)
    text = "rows: a row per work-item, teams of " + std::to_string(team) + " (order " + n + " in " + std::to_string(t.register_order + 1) + ".." +
           std::to_string(t.row_order) + ")";
  else
    text = "team: " + std::to_string(team) + " work-items per matrix owning columns (order " + n + " > " +
           std::to_string(has_rows ? t.row_order : t.register_order) + ")";
  if (!detail.empty()) text += ", " + detail;
  return text + "; " + t.row;
}

std::string loop_variant_text(const Tuning& t, int64_t order, const std::string& detail) {
  return "loops: one matrix per work-item, its loops kept, " + detail + " (order " + std::to_string(order) + " in " +
         std::to_string(t.register_order + 1) + ".." + std::to_string(t.loop_order) + "); " + t.row;
}

std::string column_variant_text(const Tuning& t, int64_t order, int64_t team, bool complex, const std::string& what,
                                const std::string& detail) {
  return "columns: " + what + " per work-item in registers, teams of " + std::to_string(team) + " (order " + std::to_string(order) + " in " +
         std::to_string(t.register_order + 1) + ".." + std::to_string(column_order(t, complex)) + "), " + detail + "; " + t.row;
}

}  // namespace fugue::linalg
