// elementwise.h: the ELEMENT-level operations, whose result at element i depends only on their
// inputs at element i, and MapOperation, the table-driven kind most of them are.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "reference_math.h"
#include "signature.h"

namespace fugue::array {

// Plans, costs and emits for an operation that produces `out` one element at a time.
class ElementwiseOperation : public sdk::Operation {
 public:
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;

 protected:
  // The statements that compute element i of `out`, as an Emitter pattern; emit scopes them.
  virtual std::string element_code(const sdk::Call& call) const = 0;
  // Whether the generated code touches the operand at all (fill only takes its template's shape).
  virtual bool touches(uint32_t /*operand*/) const { return true; }

  double flops_per_element = 1;
};

// How a MapOperation computes, on the device and on the CPU. Unary formulas see only x.
struct Formula {
  // OpenCL C expression of the inputs, given as identifiers of the computation's C type.
  std::function<std::string(fugue_dtype dtype, const std::string& x, const std::string& y)> device;
  // The same for float dtypes on the CPU, in long double...
  std::function<ref::Real(ref::Real x, ref::Real y)> real;
  // ... for integer dtypes (reference_math.h); empty where the operation refuses integers...
  std::function<int64_t(int64_t x, int64_t y)> integer;
  // ... and where the inputs or the result are complex (a real input or result is x + 0i, whose
  // real part is kept); empty where the operation refuses complex numbers. Defaulted, so that the
  // formulas of real numbers alone need not mention it.
  std::function<ref::Complex(ref::Complex x, ref::Complex y)> complex = {};
};

// A Formula of one input.
Formula unary_formula(std::function<std::string(fugue_dtype, const std::string&)> device,
                      std::function<ref::Real(ref::Real)> real,
                      std::function<int64_t(int64_t)> integer = {},
                      std::function<ref::Complex(ref::Complex)> complex = {});

// out's dtype, from the dtype the inputs compute in.
using ResultRule = fugue_dtype (*)(fugue_dtype computed_in);

struct MapInput {
  std::string name;
  std::string doc;
};

// One row of the tables of element-wise operations: `out = formula(inputs)`.
struct MapSpec {
  std::string name;  // without the family: "add"
  std::string doc;
  std::vector<MapInput> inputs;  // one or two
  uint32_t dtypes = 0;           // accepted for the inputs
  Formula formula;
  fugue_dtype result = FUGUE_DTYPE_NONE;  // NONE: result_rule's, else the inputs' dtype
  ResultRule result_rule = nullptr;
  double flops_per_element = 1;
  Tolerance tolerance = kRounding;
  double test_low = -1, test_high = 1;
  uint32_t traits = 0;  // FUGUE_OP_*
  std::string test_cases;  // the conformance calls (JSON, see sdk::Operation); empty: derived

  MapSpec& with_traits(uint32_t t) {
    traits = t;
    return *this;
  }
  MapSpec& with_result(fugue_dtype dtype) {
    result = dtype;
    return *this;
  }
  MapSpec& with_result(ResultRule rule) {
    result_rule = rule;
    return *this;
  }
  MapSpec& with_flops(double flops) {
    flops_per_element = flops;
    return *this;
  }
  MapSpec& with_tolerance(Tolerance t) {
    tolerance = t;
    return *this;
  }
  MapSpec& with_test_cases(std::string cases) {
    test_cases = std::move(cases);
    return *this;
  }
  MapSpec& with_domain(double low, double high) {
    test_low = low;
    test_high = high;
    return *this;
  }
};

// [x] -> out and [a, b] -> out.
MapSpec unary_map(std::string name, std::string doc, uint32_t dtypes, Formula formula);
MapSpec binary_map(std::string name, std::string doc, uint32_t dtypes, Formula formula);

// An operation out = formula(inputs), with the typing rules of typing.h: one input is an array or
// a scalar; of two, either may also be a const, and a scalar or const broadcasts (a const beside a
// complex input is a real number, x + 0i).
class MapOperation final : public ElementwiseOperation {
 public:
  explicit MapOperation(MapSpec spec);
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  std::string element_code(const sdk::Call& call) const override;

 private:
  fugue_dtype result_dtype(fugue_dtype computed_in) const;

  MapSpec spec_;
  std::vector<uint32_t> inputs_;  // operand indices
};

std::vector<std::unique_ptr<sdk::Operation>> map_operations(const std::vector<MapSpec>& specs);

}  // namespace fugue::array
