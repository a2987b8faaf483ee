#include "dtype.h"

#include <stdexcept>

namespace fugue {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  const char* ctype;
};
constexpr DTypeInfo kInfo[] = {
    {DType::F32, "f32", 4, "float"}, {DType::F64, "f64", 8, "double"},
    {DType::I32, "i32", 4, "int"},   {DType::I64, "i64", 8, "long"},
    {DType::U8, "u8", 1, "uchar"},   {DType::U32, "u32", 4, "uint"},
};
const DTypeInfo& info(DType dtype) {
  for (const auto& i : kInfo)
    if (i.dtype == dtype) return i;
  throw std::logic_error("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}
}  // namespace

std::string_view dtype_name(DType dtype) {
  return dtype == DType::None ? "none" : info(dtype).name;
}
std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (name == i.name) return i.dtype;
  return std::nullopt;
}
std::size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_ctype(DType dtype) { return info(dtype).ctype; }
bool dtype_is_float(DType dtype) { return dtype == DType::F32 || dtype == DType::F64; }
bool dtype_is_signed(DType dtype) {
  return dtype_is_float(dtype) || dtype == DType::I32 || dtype == DType::I64;
}
std::string dtype_names(uint32_t mask) {
  std::string out;
  for (const auto& i : kInfo) {
    if (!(mask & FUGUE_DTYPE_BIT(static_cast<int32_t>(i.dtype)))) continue;
    if (!out.empty()) out += ", ";
    out += i.name;
  }
  return out;
}

}  // namespace fugue
