// fill.h: array.fill, an array (or scalar) of one value, shaped like another operand.
#pragma once
#include "elementwise.h"

namespace fugue::array {

// `like` lends its shape, and its dtype unless attribute `dtype` names one; it is never read.
class Fill final : public ElementwiseOperation {
 public:
  Fill();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  std::string element_code(const sdk::Call& call) const override;
  bool touches(uint32_t operand) const override;

 private:
  fugue_dtype result_dtype(const sdk::Call& call) const;
};

}  // namespace fugue::array
