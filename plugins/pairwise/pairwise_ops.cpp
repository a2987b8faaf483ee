// pairwise_ops.cpp: pairwise.distance and pairwise.kernel (see pairwise_ops.h).
#include "pairwise_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "measures.h"
#include "row_vectors.h"
#include "tiles.h"

namespace fugue::pairwise {

namespace {

constexpr uint32_t kX = 0, kY = 1, kD = 2;
constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);

class Pairwise final : public sdk::Operation {
 public:
  // `kernels`: pairwise.kernel (attribute kind, parameters gamma, alpha, degree); else pairwise.distance
  // (attribute metric, parameter p).
  explicit Pairwise(bool kernels) : kernels_(kernels), table_(kernels ? pairwise::kernels() : metrics()), attr_(kernels ? "kind" : "metric") {
    name = kernels ? "pairwise.kernel" : "pairwise.distance";
    std::string list;
    for (const Measure& m : table_) list += std::string(list.empty() ? "" : "; ") + m.name + ": " + m.doc;
    doc = std::string(kernels ? "Kernel values" : "Distances") + " D[i, j] between the rows of X [n, k] and Y [m, k] (f32 or f64), by attribute " + attr_ +
          " (" + list + ")";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("X", array, kFloats, "rows [n, k]"), sdk::in("Y", array, kFloats, "rows [m, k], X's dtype"),
                sdk::out("D", array, kFloats, "[n, m]")};
    attrs = measure_attrs(kernels);
    tolerance_f32 = 2e-4;
    tolerance_f64 = 1e-11;
    test_low = 0;  // non-negative data: chi2 is for histograms
    test_high = 1;
    std::string cases = "[";
    for (const Measure& m : table_) {
      const std::string a = "\"" + attr_ + "\": \"" + m.name + "\"";
      cases += std::string(cases.size() > 1 ? ",\n" : "") + R"({"name": ")" + m.name + R"(, 17 by 9 rows of 5", "attrs": {)" + a +
               (std::string(m.name) == "minkowski" ? ", \"p\": 3" : "") + (kernels ? ", \"gamma\": 0.5" : "") +
               R"(}, "inputs": {"X": {"shape": [17, 5]}, "Y": {"shape": [9, 5]}}})";
    }
    cases += std::string(",\n") + R"({"name": "one row of 1", "inputs": {"X": {"shape": [1, 1]}, "Y": {"shape": [1, 1]}}})";
    cases += std::string(",\n") + R"({"name": "zero rows and coordinates", "attrs": {)" + "\"" + attr_ + "\": \"" + (kernels ? "intersection" : "canberra") +
             R"("}, "inputs": {"X": {"shape": [2, 3], "value": [[0, 0, 1], [0, 0, 0]]}, "Y": {"shape": [3, 3], "value": [[0, 2, 1], [0, 0, 0], [3, 0, 0]]}}})";
    cases += std::string(",\n") + R"({"name": "300 by 200 rows of 40", "inputs": {"X": {"shape": [300, 40]}, "Y": {"shape": [200, 40]}}})";
    // n m k of 2^23 and more: the tiled plan, on sizes that are multiples of no tile.
    cases += std::string(",\n") + R"({"name": "tiled: 301 by 290 rows of 97", "inputs": {"X": {"shape": [301, 97]}, "Y": {"shape": [290, 97]}}})";
    test_cases = cases + "]";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    require_rows(x, y, "X", "Y");
    parameters(call);
    types[kD] = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, {x.shape[0], y.shape[0]});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const Measure& m = measure_of(call, kernels_);
    const Blocking b = blocking_of(call, m);
    if (b.vectors) return tiled_plan(call, vector_text(vector_block(call.device(), m, vector_dtype(call, m), call.operand(kX).shape[1]), b.row));
    if (b.rows == 0) return pair_plan(call, "one element of D per work-item, its rows read from global memory (" + b.row + ")");
    return tiled_plan(call, blocking_text(b) + native_quotients_text(call, m, b));
  }

  void execute(const sdk::Call& call, const fugue_device_services& s) const override {
    const Measure& m = measure_of(call, kernels_);
    const Blocking b = blocking_of(call, m);
    if (b.vectors) enqueue_row_vectors(call, s, m, parameters(call), kX, kY, kD);
    else enqueue_tiles(call, s, m, parameters(call), b, kX, kY, kD);
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const Measure& m = measure_of(call, kernels_);
    const Parameters p = parameters(call);
    const bool f32 = x.dtype == FUGUE_DTYPE_F32;
    const std::string K = std::to_string(x.shape[1]);
    const std::string i = em.name("i"), j = em.name("j"), value = em.name("value");
    std::string code = pair_of_element(em, y.shape[0], i, j);
    code += pair_code(em, m, p, f32, (call.device().features & FUGUE_DEVICE_FP64) != 0, x.shape[1], [&](const std::string& s) { return em.read_at(kX, i + " * " + K + " + " + s); },
                      [&](const std::string& s) { return em.read_at(kY, j + " * " + K + " + " + s); }, value);
    code += em.write(kD) + " = " + value + ";\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    const double n = static_cast<double>(x.shape[0]), mm = static_cast<double>(y.shape[0]), k = static_cast<double>(x.shape[1]);
    return {sizeof(fugue_cost), (n * k + mm * k + n * mm) * static_cast<double>(abi::dtype_size(x.dtype)), 3 * n * mm * k};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]), y(arrays[kY]);
    sdk::HostView d(arrays[kD]);
    const fugue_type& xt = call.operand(kX);
    const int64_t n = xt.shape[0], k = xt.shape[1], mm = call.operand(kY).shape[0];
    const Measure& m = measure_of(call, kernels_);
    const Parameters p = parameters(call);
    std::vector<long double> a(static_cast<size_t>(k)), b(a.size());
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < k; ++s) a[static_cast<size_t>(s)] = x.get(i * k + s);
      for (int64_t j = 0; j < mm; ++j) {
        for (int64_t s = 0; s < k; ++s) b[static_cast<size_t>(s)] = y.get(j * k + s);
        d.set(i * mm + j, static_cast<double>(m.reference(a, b, p)));
      }
    }
  }

 private:
  Parameters parameters(const sdk::Call& call) const { return parameters_of(call, kernels_, call.operand(kX).shape[1]); }

  bool kernels_;
  const std::vector<Measure>& table_;
  std::string attr_;
};

}  // namespace

std::unique_ptr<sdk::Operation> distance_operation() { return std::make_unique<Pairwise>(false); }
std::unique_ptr<sdk::Operation> kernel_operation() { return std::make_unique<Pairwise>(true); }

}  // namespace fugue::pairwise
