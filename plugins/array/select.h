// select.h: array.select, out = cond != 0 ? a : b element by element.
#pragma once
#include "elementwise.h"

namespace fugue::array {

// cond may have any real dtype and be a const, which picks a or b when the kernel is generated; a
// and b any dtype, complex included (a const beside complex values is x + 0i).
class Select final : public ElementwiseOperation {
 public:
  Select();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  std::string element_code(const sdk::Call& call) const override;
};

}  // namespace fugue::array
