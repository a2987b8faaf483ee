// reshape.cpp: array.reshape. Element i of out is element i of x (both row-major), so it is an
// element-wise copy that fuses like any other.
#include "reshape.h"

#include <cstring>

#include "typing.h"

namespace fugue::array {

namespace {
enum : uint32_t { kX, kLike, kOut };
}

Reshape::Reshape() {
  name = "array.reshape";
  doc = "x's elements, in row-major order, in the shape of `like` (which must have as many elements; it is "
        "never read), as NumPy's x.reshape(like.shape)";
  operands = {sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "the elements"),
              sdk::in("like", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "lends its shape; any dtype; never read"),
              sdk::out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "x's dtype, like's shape")};
  flops_per_element = 0;
  set_tolerance(*this, kRounding);
  test_cases = R"([
    {"name": "a vector as a matrix", "shape": [24], "inputs": {"like": {"shape": [4, 6], "dtype": "f32"}}},
    {"name": "a matrix as a 3-D array", "shape": [6, 10], "inputs": {"like": {"shape": [3, 5, 4], "dtype": "i32"}}},
    {"name": "a 3-D array flattened", "shape": [2, 3, 7], "inputs": {"like": {"shape": [42], "dtype": "u8"}}}
  ])";
}

bool Reshape::touches(uint32_t operand) const { return operand != kLike; }

void Reshape::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_type &x = call.operand(kX), &like = call.operand(kLike);
  if (sdk::elements(x) != sdk::elements(like))
    throw rejection(name, "operand like", "an array of " + std::to_string(sdk::elements(x)) + " elements (x's count)",
                    describe(like));
  sdk::Type out(like);
  out.dtype = x.dtype;
  types[kOut] = out;
}

std::string Reshape::element_code(const sdk::Call&) const { return "  ${out=} = ${x};\n"; }

void Reshape::reference(const sdk::Call&, fugue_host_array* operands) const {
  sdk::HostView x(operands[kX]), out(operands[kOut]);
  std::memcpy(out.data(), x.data(), x.bytes());
}

}  // namespace fugue::array
