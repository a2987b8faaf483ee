// Every array operation against its CPU reference, on fresh random inputs: f32 and f64 (and i32
// where the op takes integers), sizes 1, 7, 4096 and 1 000 003, and scalar/const operands.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "program/dtype.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

struct Case {
  std::string op;
  DType dtype;
  int64_t size;
  std::string variant;  // "arrays", "scalar_first", "const_second"
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.op << " " << dtype_name(c.dtype) << " n=" << c.size << " " << c.variant;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.op + "_" + std::string(dtype_name(info.param.dtype)) + "_" + std::to_string(info.param.size) +
                  "_" + info.param.variant;
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

bool accepts(const fugue_operand_desc* d, DType t) { return d->dtypes & FUGUE_DTYPE_BIT(static_cast<int>(t)); }

std::vector<Case> cases() {
  std::vector<Case> out;
  const auto& registry = test::bundled_plugins();
  for (const auto& plugin : registry.plugins()) {
    if (plugin->name != "array") continue;
    for (const auto* op : registry.operations_of(*plugin)) {
      const auto* first = op->operands()[op->inputs().front()];
      for (DType t : {DType::F32, DType::F64, DType::I32}) {
        if (!accepts(first, t) && op->name() != "array.select") continue;
        for (int64_t n : {1, 7, 4096, 1000003}) out.push_back({op->name(), t, n, "arrays"});
      }
      // Scalar and const operands, where the signature takes them.
      bool binary = op->inputs().size() == 2 && (first->kinds & FUGUE_KIND_BIT(FUGUE_KIND_SCALAR)) &&
                    (op->operands()[op->inputs()[1]]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST));
      if (binary)
        for (DType t : {DType::F32, DType::F64}) {
          if (!accepts(first, t)) continue;
          out.push_back({op->name(), t, 4096, "scalar_first"});
          out.push_back({op->name(), t, 4096, "const_second"});
        }
    }
  }
  return out;
}

class ArrayOps : public testing::TestWithParam<Case> {};

TEST_P(ArrayOps, MatchesReference) {
  const Case& c = GetParam();
  const auto& registry = test::bundled_plugins();
  auto op = registry.find(c.op);
  ASSERT_NE(op, nullptr);
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");

  bool is_int = !dtype_is_float(c.dtype);
  double low = is_int ? -100 : op->desc().test_low, high = is_int ? 100 : op->desc().test_high;
  json symbols = json::object(), in = json::array();
  for (size_t k = 0; k < op->inputs().size(); ++k) {
    const auto* d = op->operands()[op->inputs()[k]];
    std::string name = d->name;
    DType t = c.dtype;
    double lo = low, hi = high;
    if (name == "cond") t = DType::U8, lo = 0, hi = 1;  // a real mix of true and false
    json from = {{"random", {{"seed", seed + k}, {"low", lo}, {"high", hi}}}};
    if (c.variant == "const_second" && k == 1) {
      in.push_back(is_int ? 3.0 : 0.5 * (lo + hi) + 0.125);
      continue;
    }
    if (c.variant == "scalar_first" && k == 0) {
      symbols[name] = {{"kind", "scalar"}, {"dtype", dtype_name(t)}, {"value", is_int ? 5.0 : 0.25 * lo + 0.75 * hi}};
    } else {
      symbols[name] = {{"kind", "array"}, {"dtype", dtype_name(t)}, {"shape", {c.size}}, {"from", from}};
    }
    in.push_back(name);
  }
  json attrs = json::object();
  for (const auto* a : op->attrs()) {
    if (!a->required && std::string(a->name) != "dtype") continue;
    if (a->type == FUGUE_ATTR_DTYPE) attrs[a->name] = c.dtype == DType::F32 ? "f64" : "f32";
    else attrs[a->name] = is_int ? 3 : 1.25;
  }
  json outs = json::array(), outputs = json::object();
  for (uint32_t o : op->outputs()) {
    std::string name = std::string(op->operands()[o]->name) + "_result";
    outs.push_back(name);
    outputs[name] = name + ".npy";
  }
  json doc = {{"fugue", 1}, {"symbols", symbols},
              {"body", {{{"op", c.op}, {"in", in}, {"out", outs}, {"attrs", attrs}}}}, {"outputs", outputs}};
  Program program = parse_program(doc, "array_op_test.json", registry);
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  double tolerance = is_int ? 0.0 : (c.dtype == DType::F32 ? op->desc().tolerance_f32 : op->desc().tolerance_f64);
  for (const auto& [name, expected] : reference) {
    std::string mismatch = test::compare_arrays(device.at(name), expected, tolerance);
    EXPECT_TRUE(mismatch.empty()) << c.op << " " << name << ": " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ArrayOps, testing::ValuesIn(cases()), case_name);

TEST(ArrayPlugin, HasEveryOperationTheIssueNames) {
  for (const char* name : {"add", "sub", "mul", "div", "minimum", "maximum", "pow", "atan2", "neg", "abs", "sqrt",
                           "rsqrt", "exp", "log", "sin", "cos", "acos", "asin", "tanh", "floor", "ceil", "lt", "le", "gt",
                           "ge", "eq", "ne", "select", "copy", "fill", "cast", "sum", "min", "max", "dot", "norm2"})
    EXPECT_NE(test::bundled_plugins().find(std::string("array.") + name), nullptr) << name;
}

}  // namespace
