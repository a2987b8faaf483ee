// reshape.h: array.reshape, x's elements in row-major order given the shape of another operand (a
// vector of pixels as the picture it came from).
#pragma once
#include "elementwise.h"

namespace fugue::array {

// `like` lends its shape and is never read; x must have as many elements.
class Reshape final : public ElementwiseOperation {
 public:
  Reshape();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  std::string element_code(const sdk::Call& call) const override;
  bool touches(uint32_t operand) const override;
};

}  // namespace fugue::array
