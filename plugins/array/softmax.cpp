// softmax.cpp: array.softmax and array.logsumexp (see softmax.h).
#include "softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dtypes.h"
#include "opencl_c.h"
#include "reference_math.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kX = 0, kOut = 1;

// What a row's work-group computes: the row normalized (softmax), or one number per row (logsumexp).
enum class RowResult { Softmax, LogSumExp };

// Team sizes (the body is written for a team of work-items per row, so short rows share a work-group):
// up to 256 items, about eight elements each on a GPU, sixteen on a CPU (whose work-items are
// iterations of one core's loop); a row of at most that many elements is one work-item's. On the H100,
// rows of 1024 f32 (softmax of [65536, 1024] fused with its producer) took 0.2092 ms with 128 items
// against 0.2275 ms with 256 (scripts/gpu_softmax.sh).
constexpr int64_t kMaxLocal = 256;
int64_t preferred_local(int64_t row, bool cpu) {
  const int64_t per_item = cpu ? 16 : 8;
  int64_t local = 1;
  while (local < kMaxLocal && local * per_item < row) local *= 2;
  return local;
}

class RowOperation final : public sdk::Operation {
 public:
  explicit RowOperation(RowResult result) : result_(result) {
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    if (result_ == RowResult::Softmax) {
      name = "array.softmax";
      doc = "y = exp(x - m) / sum(exp(x - m)) along the last axis of x, m the row's largest element; y has x's "
            "shape and dtype. A row with a NaN, or whose largest element is infinite, gives NaN, as NumPy and torch";
      operands = {sdk::in("x", array, kFloatDtypes, "the rows to normalize, along the last axis (rank >= 1)"),
                  sdk::out("y", array, kFloatDtypes, "the result, of x's shape and dtype")};
    } else {
      name = "array.logsumexp";
      doc = "out = m + log(sum(exp(x - m))) along the last axis of x, m the row's largest element: x's shape "
            "without its last axis (-inf for a row of -inf, +inf for one with +inf, NaN for one with NaN, as SciPy)";
      operands = {sdk::in("x", array, kFloatDtypes, "the rows to combine, along the last axis (rank >= 1)"),
                  sdk::out("out", array, kFloatDtypes, "one value per row: x's shape without its last axis")};
    }
    set_tolerance(*this, kSummation);
    test_low = -20;
    test_high = 20;
    test_cases = R"([
      {"name": "rows", "shape": [7, 5]},
      {"name": "one row", "shape": [1000]},
      {"name": "batches of rows, not a multiple of the work-group", "shape": [3, 4, 333]},
      {"name": "rows of one", "shape": [9, 1]},
      {"name": "long rows", "shape": [2, 4099]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    if (x.rank < 1 || sdk::elements(x) == 0 || x.shape[x.rank - 1] == 0)
      throw rejection(name, "operand x", "an array of rank >= 1 with at least one row (its last axis), of at least "
                      "one element", describe(x));
    std::vector<int64_t> shape = sdk::shape_of(x);
    if (result_ == RowResult::LogSumExp) shape.pop_back();
    types[kOut] = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, shape);
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& x = call.operand(kX);
    const fugue_type& out = call.operand(kOut);
    const int64_t row = x.shape[x.rank - 1];
    sdk::Plan plan;
    plan.level = FUGUE_LEVEL_BLOCK;
    plan.phases = FUGUE_PHASE_BODY;
    plan.launch.iteration[0] = sdk::elements(x) / row;  // one entry per row
    plan.launch.local_min = 1;
    plan.launch.local_preferred = preferred_local(row, call.device().type == FUGUE_DEVICE_CPU);
    plan.launch.local_max = plan.launch.local_preferred;  // the scratch below is sized for it
    plan.launch.local_multiple = 1;
    plan.partitions = {sdk::batch_partition(x.rank, static_cast<int32_t>(x.rank) - 2),
                       sdk::batch_partition(out.rank, static_cast<int32_t>(out.rank) -
                                                          (result_ == RowResult::Softmax ? 2 : 1))};
    plan.entry_teams = true;  // LOCAL_ID, LOCAL_SIZE and the scratch below are the row's team's
    // The combinations' scratch, for the largest team the core may choose.
    plan.local_mem_bytes = static_cast<uint64_t>(sdk::group_combine_scratch(plan.launch.local_preferred)) * dtype_bytes(x.dtype);
    plan.registers = 6;
    return plan;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const fugue_type& x = call.operand(kX);
    const fugue_dtype dtype = x.dtype;
    const std::string t = ctype(dtype), row = std::to_string(x.shape[x.rank - 1]);
    const std::string id = em.builtin(FUGUE_BUILTIN_LOCAL_ID), size = em.builtin(FUGUE_BUILTIN_LOCAL_SIZE);
    const std::string scratch = em.local_array(dtype, sdk::group_combine_scratch(em.local_size()), "combine");
    const std::string j = em.name("j"), m = em.name("m"), shift = em.name("shift"), s = em.name("s"), total = em.name("total");
    const std::string xj = em.read_at(kX, j);
    auto each = [&](const std::string& body) {
      return "for (int " + j + " = " + id + "; " + j + " < " + row + "; " + j + " += " + size + ") " + body + "\n";
    };
    std::string code = t + " " + m + " = -INFINITY;\n";
    code += each(m + " = fmax(" + m + ", " + xj + ");");
    const std::string row_max = em.name("row_max");
    code += sdk::group_combine(em, t, m, scratch, row_max,
                               [](const std::string& a, const std::string& b) { return "fmax(" + a + ", " + b + ")"; });
    // softmax shifts by the maximum, as NumPy and torch do (a row whose maximum is infinite gives NaN);
    // logsumexp by nothing when it is infinite, as SciPy does (-inf for a row of -inf, +inf with +inf).
    code += "const " + t + " " + shift + " = " +
            (result_ == RowResult::Softmax ? row_max
                                           : "isfinite(" + row_max + ") ? " + row_max + " : " + opencl::literal(dtype, 0)) +
            ";\n";
    code += t + " " + s + " = " + opencl::literal(dtype, 0) + ";\n";
    code += each(s + " += exp(" + xj + " - " + shift + ");");
    code += sdk::group_combine(em, t, s, scratch, total,
                               [](const std::string& a, const std::string& b) { return "(" + a + " + " + b + ")"; });
    if (result_ == RowResult::Softmax) {
      code += each(em.write_at(kOut, j) + " = exp(" + xj + " - " + shift + ") / " + total + ";");
    } else {
      code += "if (" + id + " == 0) " + em.write_at(kOut, "0") + " = " + shift + " + log(" + total + ");\n";
    }
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kX)));
    return {sizeof(fugue_cost), traffic_bytes(call.operand(kX), FUGUE_ROLE_IN) +
                                    traffic_bytes(call.operand(kOut), FUGUE_ROLE_OUT),
            n * (result_ == RowResult::Softmax ? 6 : 4)};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]);
    sdk::HostView out(arrays[kOut]);
    const fugue_type& t = call.operand(kX);
    const int64_t row = t.shape[t.rank - 1], rows = x.size() / row;
    using ref::Real;
    for (int64_t r = 0; r < rows; ++r) {
      Real m = -std::numeric_limits<Real>::infinity();
      for (int64_t j = 0; j < row; ++j) m = std::fmax(m, ref::value(x, r * row + j, t.dtype));
      const Real shift = result_ == RowResult::Softmax || std::isfinite(m) ? m : 0;
      Real s = 0;
      for (int64_t j = 0; j < row; ++j) s += std::exp(ref::value(x, r * row + j, t.dtype) - shift);
      if (result_ == RowResult::Softmax) {
        for (int64_t j = 0; j < row; ++j)
          out.set(r * row + j, static_cast<double>(std::exp(ref::value(x, r * row + j, t.dtype) - shift) / s));
      } else {
        out.set(r, static_cast<double>(shift + std::log(s)));
      }
    }
  }

 private:
  RowResult result_;
};

}  // namespace

std::unique_ptr<sdk::Operation> softmax_operation() { return std::make_unique<RowOperation>(RowResult::Softmax); }
std::unique_ptr<sdk::Operation> logsumexp_operation() { return std::make_unique<RowOperation>(RowResult::LogSumExp); }

}  // namespace fugue::array
