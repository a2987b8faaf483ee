// cast.h: array.cast, conversion to the dtype attribute `dtype`, element by element.
#pragma once
#include "elementwise.h"

namespace fugue::array {

// Float to integer and wider to narrower integer saturate (NaN gives 0), as OpenCL's
// convert_<type>_sat; every other conversion is C's. A real converts to complex as re + 0i, complex
// to complex part by part; complex to real is refused: which real (the real part, the magnitude)
// is for the program to say, with array.real or array.abs.
class Cast final : public ElementwiseOperation {
 public:
  Cast();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  std::string element_code(const sdk::Call& call) const override;
};

}  // namespace fugue::array
