// row_reductions.cpp: pairwise.nearest and pairwise.kernel_sum (see row_reductions.h).
#include "row_reductions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "measures.h"
#include "nearest_dot.h"
#include "row_vectors.h"
#include "tiles.h"

namespace fugue::pairwise {

namespace {

constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr int64_t kMaxNearest = 128;

// A batch entry per row of X (one work-item each), the other operands whole.
sdk::Plan rows_plan(int64_t rows) {
  sdk::Plan plan;
  plan.level = FUGUE_LEVEL_BLOCK;
  plan.phases = FUGUE_PHASE_BODY;
  plan.entry_teams = true;
  plan.launch.iteration[0] = rows;
  plan.launch.local_min = plan.launch.local_max = plan.launch.local_preferred = plan.launch.local_multiple = 1;
  plan.registers = 16;
  return plan;
}

// Rows i of x and y as long double.
std::vector<long double> row(const sdk::HostView& h, int64_t i, int64_t k) {
  std::vector<long double> r(static_cast<size_t>(k));
  for (int64_t s = 0; s < k; ++s) r[static_cast<size_t>(s)] = h.get(i * k + s);
  return r;
}

class Nearest final : public sdk::Operation {
  static constexpr uint32_t kX = 0, kY = 1, kD = 2, kIndex = 3;

 public:
  Nearest() {
    name = "pairwise.nearest";
    doc = "For each row of X [n, k] the `count` rows of Y [m, k] nearest by attribute metric, without storing the distances: d [n, count] "
          "ascending and index [n, count] (i64, rows of Y), ties broken by the lower index; NaN distances are never nearest, and "
          "places left over hold inf and -1. count 1: the row-wise minimum and its argument";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("X", array, kFloats, "query rows [n, k]"), sdk::in("Y", array, kFloats, "rows searched [m, k], X's dtype"),
                sdk::out("d", array, kFloats, "the distances [n, count], ascending"),
                sdk::out("index", array, FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64), "the rows of Y they are to [n, count]")};
    attrs = measure_attrs(false);
    attrs.push_back({"count", FUGUE_ATTR_INT, false, 1, "", "how many nearest rows, 1 to 128 and at most m"});
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_low = 0;
    test_high = 1;
    // Random rows may hold distances closer than the tolerance, which a device may rank either way:
    // those cases compare the indices as rankings ("ranked"); the exact ties below must go to the lower index.
    test_cases = R"([
      {"name": "the nearest, euclidean", "ranked": {"index": "d"}, "inputs": {"X": {"shape": [37, 4]}, "Y": {"shape": [50, 4]}}},
      {"name": "8 nearest, manhattan", "ranked": {"index": "d"}, "attrs": {"metric": "manhattan", "count": 8}, "inputs": {"X": {"shape": [20, 3]}, "Y": {"shape": [300, 3]}}},
      {"name": "all of them, chi2", "ranked": {"index": "d"}, "attrs": {"metric": "chi2", "count": 6}, "inputs": {"X": {"shape": [5, 7]}, "Y": {"shape": [6, 7]}}},
      {"name": "ties take the lower index", "attrs": {"count": 3},
       "inputs": {"X": {"shape": [2, 1], "value": [[0], [1]]}, "Y": {"shape": [5, 1], "value": [[1], [0], [1], [0], [2]]}}},
      {"name": "tiled: 16 nearest, 301 by 290 rows of 97", "ranked": {"index": "d"}, "attrs": {"count": 16}, "inputs": {"X": {"shape": [301, 97]}, "Y": {"shape": [290, 97]}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    require_rows(x, y, "X", "Y");
    parameters_of(call, false, x.shape[1]);
    const int64_t count = count_of(call);
    types[kD] = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, {x.shape[0], count});
    types[kIndex] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I64, {x.shape[0], count});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& x = call.operand(kX);
    const Measure& m = measure_of(call, false);
    const Blocking b = blocking_of(call, m, true);
    const int64_t count = count_of(call);
    if (b.vectors)
      return tiled_plan(call, "each row's " + std::to_string(count) + " best kept in d and index, a band of rows walking Y in order; " +
                                  vector_text(vector_block(call.device(), m, vector_dtype(call, m), x.shape[1]), b.row));
    if (b.rows > 0 && nearest_by_dot(call, m, b, count)) {
      Blocking deeper = b;
      deeper.depth = b.dot_depth;
      // (Plans' texts hold 255 characters: the blocking's must fit.)
      if (tf32_sweep(call, deeper))
        return tiled_plan(call, std::to_string(nearest_width(count, call.operand(kY).shape[0])) +
                                    " candidates a row by |x|^2 + |y|^2 - 2 x.y on tensor cores (mma.sync m16n8k8 tf32), then (x - y)^2 sums where a bound decides; tiles of " +
                                    std::to_string(deeper.rows) + " x " + std::to_string(deeper.cols) + " in 8 warps, " + std::to_string(deeper.depth) +
                                    " coordinates at a time (" + deeper.row + ")");
      return tiled_plan(call, std::to_string(nearest_width(count, call.operand(kY).shape[0])) +
                                  " candidates a row by |x|^2 + |y|^2 - 2 x.y, then (x - y)^2 sums where a rounding bound decides; " + blocking_text(deeper));
    }
    if (b.rows > 0)
      return tiled_plan(call, "each row's " + std::to_string(count) + " best of its columns kept in d and index, a tile's values that enter them inserted by the row's work-item; " +
                                  blocking_text(b));
    sdk::Plan plan = rows_plan(x.shape[0]);
    plan.partitions = {sdk::batch_partition(2, 0), sdk::partition(FUGUE_PARTITION_WHOLE, 2), sdk::batch_partition(2, 0), sdk::batch_partition(2, 0)};
    plan.registers = static_cast<uint32_t>(2 * count_of(call) + 16);
    plan.variant = "a row of X per work-item, the " + std::to_string(count_of(call)) + " best kept sorted in registers, Y read whole";
    return plan;
  }

  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const Measure& m = measure_of(call, false);
    const Parameters p = parameters_of(call, false, call.operand(kX).shape[1]);
    const Blocking b = blocking_of(call, m, true);
    if (b.vectors) enqueue_nearest_vectors(call, s, m, p, count_of(call), kX, kY, kD, kIndex);
    else enqueue_nearest(call, s, m, p, b, count_of(call), kX, kY, kD, kIndex);
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const bool f32 = x.dtype == FUGUE_DTYPE_F32;
    const std::string t = f32 ? "float" : "double", K = std::to_string(x.shape[1]), C = std::to_string(count_of(call));
    const std::string bd = em.name("best_d"), bi = em.name("best_i"), j = em.name("j"), q = em.name("q"), value = em.name("value");
    std::string code = t + " " + bd + "[" + C + "];\nlong " + bi + "[" + C + "];\n";
    code += "for (int " + q + " = 0; " + q + " < " + C + "; ++" + q + ") { " + bd + "[" + q + "] = INFINITY; " + bi + "[" + q + "] = -1; }\n";
    code += "for (long " + j + " = 0; " + j + " < " + std::to_string(y.shape[0]) + "L; ++" + j + ") {\n";
    code += pair_code(em, measure_of(call, false), parameters_of(call, false, x.shape[1]), f32, (call.device().features & FUGUE_DEVICE_FP64) != 0, x.shape[1],
                      [&](const std::string& s) { return em.read_at(kX, s); }, [&](const std::string& s) { return em.read_at(kY, j + " * " + K + " + " + s); },
                      value);
    // Insertion into the sorted best: strictly smaller than the last (so equal values keep the lower
    // index, which came first; NaN never enters).
    code += "if (" + value + " < " + bd + "[" + C + " - 1] || (" + bi + "[" + C + " - 1] < 0 && !isnan(" + value + "))) {\n";
    code += "  int " + q + " = " + C + " - 1;\n";
    code += "  while (" + q + " > 0 && (" + value + " < " + bd + "[" + q + " - 1] || " + bi + "[" + q + " - 1] < 0)) { " + bd + "[" + q + "] = " + bd + "[" + q +
            " - 1]; " + bi + "[" + q + "] = " + bi + "[" + q + " - 1]; --" + q + "; }\n";
    code += "  " + bd + "[" + q + "] = " + value + "; " + bi + "[" + q + "] = " + j + ";\n}\n}\n";
    code += "for (int " + q + " = 0; " + q + " < " + C + "; ++" + q + ") { " + em.write_at(kD, q) + " = " + bd + "[" + q + "]; " + em.write_at(kIndex, q) +
            " = " + bi + "[" + q + "]; }\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const double n = static_cast<double>(x.shape[0]), m = static_cast<double>(y.shape[0]), k = static_cast<double>(x.shape[1]);
    return {sizeof(fugue_cost), (n * k + m * k) * static_cast<double>(abi::dtype_size(x.dtype)) + n * static_cast<double>(count_of(call)) * 16,
            3 * n * m * k};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]), y(arrays[kY]);
    sdk::HostView d(arrays[kD]), index(arrays[kIndex]);
    const fugue_type &xt = call.operand(kX), &yt = call.operand(kY);
    const int64_t n = xt.shape[0], k = xt.shape[1], m = yt.shape[0], count = count_of(call);
    const Measure& measure = measure_of(call, false);
    const Parameters p = parameters_of(call, false, k);
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<long double> a = row(x, i, k);
      std::vector<std::pair<long double, int64_t>> all;
      for (int64_t j = 0; j < m; ++j) {
        // The distance as the device's dtype rounds it: ties and order decided on those values.
        const long double v = xt.dtype == FUGUE_DTYPE_F32 ? static_cast<float>(measure.reference(a, row(y, j, k), p))
                                                          : static_cast<double>(measure.reference(a, row(y, j, k), p));
        if (!std::isnan(v)) all.push_back({v, j});
      }
      std::stable_sort(all.begin(), all.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
      for (int64_t q = 0; q < count; ++q) {
        const bool have = q < static_cast<int64_t>(all.size());
        d.set(i * count + q, have ? static_cast<double>(all[static_cast<size_t>(q)].first) : std::numeric_limits<double>::infinity());
        index.set_int(i * count + q, have ? all[static_cast<size_t>(q)].second : -1);
      }
    }
  }

 private:
  static int64_t count_of(const sdk::Call& call) {
    const int64_t count = call.integer("count"), m = call.operand(kY).rank == 2 ? call.operand(kY).shape[0] : 0;
    if (count < 1 || count > kMaxNearest || count > m)
      throw sdk::InvalidArgument("attribute count: expected 1 to " + std::to_string(std::min<int64_t>(kMaxNearest, std::max<int64_t>(m, 1))) +
                                 " (at most 128 and Y's rows), found " + std::to_string(count));
    return count;
  }
};

class KernelSum final : public sdk::Operation {
  static constexpr uint32_t kX = 0, kY = 1, kV = 2, kOut = 3;

 public:
  KernelSum() {
    name = "pairwise.kernel_sum";
    doc = "y[i] = sum_j K(x_i, y_j) v[j] for the rows x_i of X [n, k] and y_j of Y [m, k], K by attribute kind (as pairwise.kernel), "
          "without storing the kernel matrix: a kernel matrix times a vector v [m]";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("X", array, kFloats, "rows [n, k]"), sdk::in("Y", array, kFloats, "rows [m, k], X's dtype"),
                sdk::in("v", array, kFloats, "the vector [m], X's dtype"), sdk::out("y", array, kFloats, "the products [n]")};
    attrs = measure_attrs(true);
    tolerance_f32 = 5e-4;
    tolerance_f64 = 1e-11;
    test_low = 0;
    test_high = 1;
    test_cases = R"([
      {"name": "gaussian", "attrs": {"kind": "gaussian", "gamma": 2}, "inputs": {"X": {"shape": [40, 3]}, "Y": {"shape": [70, 3]}, "v": {"shape": [70]}}},
      {"name": "polynomial", "attrs": {"kind": "polynomial", "degree": 2}, "inputs": {"X": {"shape": [9, 5]}, "Y": {"shape": [11, 5]}, "v": {"shape": [11]}}},
      {"name": "one row", "inputs": {"X": {"shape": [1, 2]}, "Y": {"shape": [1, 2]}, "v": {"shape": [1]}}},
      {"name": "tiled: 301 by 290 rows of 97", "attrs": {"kind": "gaussian", "gamma": 0.05},
       "inputs": {"X": {"shape": [301, 97]}, "Y": {"shape": [290, 97]}, "v": {"shape": [290]}}}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY), &v = call.operand(kV);
    require_rows(x, y, "X", "Y");
    if (v.rank != 1 || v.shape[0] != y.shape[0] || v.dtype != x.dtype)
      throw sdk::InvalidArgument("operand v: expected " + std::string(sdk::dtype_name(x.dtype)) + " [" + std::to_string(y.shape[0]) +
                                 "] (a value per row of Y), found " + sdk::type_string(v));
    parameters_of(call, true, x.shape[1]);
    types[kOut] = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, {x.shape[0]});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const Measure& m = measure_of(call, true);
    const Blocking b = blocking_of(call, m, true);
    if (b.vectors)
      return tiled_plan(call, "K v summed along each row, a band of rows walking Y in order; " +
                                  vector_text(vector_block(call.device(), m, vector_dtype(call, m), call.operand(kX).shape[1]), b.row));
    if (b.rows > 0) return tiled_plan(call, "K v summed over each work-item's columns, a row's 16 sums added; " + blocking_text(b));
    sdk::Plan plan = rows_plan(call.operand(kX).shape[0]);
    plan.partitions = {sdk::batch_partition(2, 0), sdk::partition(FUGUE_PARTITION_WHOLE, 2), sdk::partition(FUGUE_PARTITION_WHOLE, 1),
                       sdk::batch_partition(1, 0)};
    plan.variant = "a row of X per work-item, Y and v read whole";
    return plan;
  }

  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const Measure& m = measure_of(call, true);
    const Parameters p = parameters_of(call, true, call.operand(kX).shape[1]);
    const Blocking b = blocking_of(call, m, true);
    if (b.vectors) enqueue_kernel_sum_vectors(call, s, m, p, kX, kY, kV, kOut);
    else enqueue_kernel_sum_tiles(call, s, m, p, b, kX, kY, kV, kOut);
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const bool f32 = x.dtype == FUGUE_DTYPE_F32;
    const std::string t = f32 ? "float" : "double", K = std::to_string(x.shape[1]);
    const std::string sum = em.name("sum"), j = em.name("j"), value = em.name("value");
    std::string code = t + " " + sum + " = 0;\nfor (long " + j + " = 0; " + j + " < " + std::to_string(y.shape[0]) + "L; ++" + j + ") {\n";
    code += pair_code(em, measure_of(call, true), parameters_of(call, true, x.shape[1]), f32, (call.device().features & FUGUE_DEVICE_FP64) != 0, x.shape[1],
                      [&](const std::string& s) { return em.read_at(kX, s); }, [&](const std::string& s) { return em.read_at(kY, j + " * " + K + " + " + s); },
                      value);
    code += sum + " += " + value + " * " + em.read_at(kV, j) + ";\n}\n" + em.write_at(kOut, "0") + " = " + sum + ";\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const double n = static_cast<double>(x.shape[0]), m = static_cast<double>(y.shape[0]), k = static_cast<double>(x.shape[1]);
    return {sizeof(fugue_cost), (n * k + m * k + m + n) * static_cast<double>(abi::dtype_size(x.dtype)), 3 * n * m * k + 2 * n * m};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]), y(arrays[kY]), v(arrays[kV]);
    sdk::HostView out(arrays[kOut]);
    const fugue_type &xt = call.operand(kX), &yt = call.operand(kY);
    const int64_t n = xt.shape[0], k = xt.shape[1], m = yt.shape[0];
    const Measure& measure = measure_of(call, true);
    const Parameters p = parameters_of(call, true, k);
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<long double> a = row(x, i, k);
      long double sum = 0;
      for (int64_t j = 0; j < m; ++j) sum += measure.reference(a, row(y, j, k), p) * static_cast<long double>(v.get(j));
      out.set(i, static_cast<double>(sum));
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> nearest_operation() { return std::make_unique<Nearest>(); }
std::unique_ptr<sdk::Operation> kernel_sum_operation() { return std::make_unique<KernelSum>(); }

}  // namespace fugue::pairwise
