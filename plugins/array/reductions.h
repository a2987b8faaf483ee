// reductions.h: the ITEM-level reductions sum, min, max, dot and norm2, which reduce whole arrays
// to a device scalar of their dtype. sum and dot also take complex numbers (dot conjugating a).
//
// Each work-item accumulates its grid-stride share of the elements (PROLOGUE, ELEMENT), each
// work-group combines its work-items' accumulators in local memory into one partial in the
// workspace (EPILOGUE, reduce_partial.cl), and a finalize kernel of one work-group combines the
// partials into the result (FINALIZE, reduce_finalize.cl).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "kernel_template.h"

namespace fugue::array {

// What each element contributes.
enum class Term { Value, Product, Square };
// How contributions combine.
enum class Combine { Sum, Min, Max };

struct ReductionSpec {
  std::string name;  // without the family: "sum"
  std::string doc;
  Term term;  // Product takes two inputs, a and b; the others one, x
  Combine combine;
  bool root;  // the result is the square root of the combination (norm2)
  uint32_t dtypes;
  double flops_per_element;
};

// Accumulates in the input's dtype: integer sums wrap around in it, as the reference's do.
class Reduction final : public sdk::Operation {
 public:
  explicit Reduction(ReductionSpec spec);
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 private:
  std::string identity(fugue_dtype dtype) const;
  std::string combine(fugue_dtype dtype, const std::string& x, const std::string& y) const;
  // $COMBINE of the templates.
  KernelTemplate::Function combiner(fugue_dtype dtype) const;
  std::string element_code(fugue_dtype dtype) const;
  std::string group_tree(const sdk::Emitter& emitter, fugue_dtype dtype) const;
  std::string epilogue(const sdk::Emitter& emitter, fugue_dtype dtype) const;
  std::string finalize(const sdk::Emitter& emitter, fugue_dtype dtype) const;

  ReductionSpec spec_;
  std::vector<uint32_t> inputs_;  // operand indices
  uint32_t out_;
};

std::vector<std::unique_ptr<sdk::Operation>> reduction_operations();

}  // namespace fugue::array
