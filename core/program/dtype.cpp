#include "program/dtype.h"

#include "fugue/abi_values.hpp"

namespace fugue {

const fugue_dtype_info& dtype_info(DType dtype) { return abi::dtype_info(static_cast<fugue_dtype>(dtype)); }

std::string_view dtype_name(DType dtype) { return abi::dtype_name(static_cast<fugue_dtype>(dtype)); }

std::optional<DType> parse_dtype(std::string_view name) {
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if (fugue_dtype_supported(d) && name == fugue_dtype_info_of(d)->name) return static_cast<DType>(d);
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) { return dtype_info(dtype).size; }
std::string_view dtype_ctype(DType dtype) { return dtype_info(dtype).ctype; }
bool dtype_is_float(DType dtype) { return abi::is_float(static_cast<fugue_dtype>(dtype)); }
bool dtype_is_complex(DType dtype) { return abi::is_complex(static_cast<fugue_dtype>(dtype)); }
bool dtype_is_signed(DType dtype) { return abi::is_signed(static_cast<fugue_dtype>(dtype)); }
std::string dtype_names(uint32_t mask) { return abi::dtype_names(mask); }

}  // namespace fugue
