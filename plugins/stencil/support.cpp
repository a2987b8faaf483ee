// support.cpp: dtype facts, literals, messages and plan skeletons of the stencil operations.
#include "support.h"

#include <charconv>
#include <stdexcept>

namespace fugue::stencil {

std::size_t dtype_bytes(fugue_dtype dtype) {
  switch (dtype) {
    case FUGUE_DTYPE_F32:
      return 4;
    case FUGUE_DTYPE_F64:
      return 8;
    case FUGUE_DTYPE_I32:
      return 4;
    case FUGUE_DTYPE_I64:
      return 8;
    case FUGUE_DTYPE_U8:
      return 1;
    case FUGUE_DTYPE_U32:
      return 4;
  }
  throw std::logic_error("no dtype numbered " + std::to_string(dtype));
}

std::string ctype(fugue_dtype dtype) {
  switch (dtype) {
    case FUGUE_DTYPE_F32:
      return "float";
    case FUGUE_DTYPE_F64:
      return "double";
    case FUGUE_DTYPE_I32:
      return "int";
    case FUGUE_DTYPE_I64:
      return "long";
    case FUGUE_DTYPE_U8:
      return "uchar";
    case FUGUE_DTYPE_U32:
      return "uint";
  }
  throw std::logic_error("no dtype numbered " + std::to_string(dtype));
}

namespace {

// The shortest decimal that reads back as `value`, as an OpenCL C literal with `suffix`.
template <class F>
std::string float_literal(F value, const char* suffix) {
  char buffer[64];
  std::string digits(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  // "3" is an integer literal, and "3f" no literal at all.
  if (digits.find_first_of(".e") == std::string::npos) digits += ".0";
  digits += suffix;
  return digits[0] == '-' ? "(" + digits + ")" : digits;
}

}  // namespace

std::string literal(fugue_dtype dtype, double value) {
  if (dtype == FUGUE_DTYPE_F32) return float_literal(static_cast<float>(value), "f");
  if (dtype == FUGUE_DTYPE_F64) return float_literal(value, "");
  // Integers: the values the stencil operations write (0 and 1) and shapes.
  const std::string digits = std::to_string(static_cast<int64_t>(value));
  return "((" + ctype(dtype) + ")" + digits + ")";
}

Real rounded(fugue_dtype dtype, Real value) {
  if (dtype == FUGUE_DTYPE_F32) return static_cast<Real>(static_cast<float>(value));
  if (dtype == FUGUE_DTYPE_F64) return static_cast<Real>(static_cast<double>(value));
  return value;
}

std::string describe(const fugue_type& type) {
  if (type.kind == FUGUE_KIND_PLUGIN)
    return std::string(sdk::dtype_name(type.dtype)) + " stencil of rank " +
           std::to_string(type.rank) + " (footprint " + sdk::shape_string(type) + ")";
  return sdk::type_string(type);
}

sdk::InvalidArgument rejection(const std::string& subject, const std::string& expected,
                               const std::string& found) {
  return sdk::InvalidArgument(subject + ": expected " + expected + ", found " + found);
}

void require_rank(const sdk::Call& call, uint32_t i, uint32_t rank) {
  const fugue_type& t = call.operand(i);
  const std::string subject = "operand " + call.operand_name(i);
  if (t.kind != FUGUE_KIND_ARRAY) throw rejection(subject, "an array", describe(t));
  if (rank == 0 && t.rank < 1) throw rejection(subject, "an array of rank 1 or more", describe(t));
  if (rank != 0 && t.rank != rank)
    throw rejection(subject, "an array of rank " + std::to_string(rank), describe(t));
}

void require_like(const sdk::Call& call, uint32_t i, uint32_t like) {
  const fugue_type& t = call.operand(i);
  const fugue_type& model = call.operand(like);
  const std::string subject = "operand " + call.operand_name(i);
  if (!sdk::same_shape(t, model))
    throw rejection(
        subject, "shape " + sdk::shape_string(model) + " like operand " + call.operand_name(like),
        describe(t));
  if (t.dtype != model.dtype)
    throw rejection(subject,
                    std::string("dtype ") + sdk::dtype_name(model.dtype) + " like operand " +
                        call.operand_name(like),
                    describe(t));
}

std::vector<int64_t> shape_of(const fugue_type& type) {
  return std::vector<int64_t>(type.shape, type.shape + type.rank);
}

sdk::Type array_type(fugue_dtype dtype, const std::vector<int64_t>& shape) {
  return sdk::make_type(FUGUE_KIND_ARRAY, dtype, shape);
}

sdk::Plan grid_plan(const sdk::Call& call, int64_t iteration) {
  sdk::Plan plan = sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, iteration);
  for (uint32_t i = 0; i < call.size(); ++i)
    plan.partitions[i] = sdk::partition(FUGUE_PARTITION_NONE);
  plan.registers = 8;
  return plan;
}

sdk::Partition elementwise(uint32_t rank, const std::vector<int64_t>& halo) {
  sdk::Partition p = sdk::partition(FUGUE_PARTITION_ELEMENTWISE, rank);
  for (size_t d = 0; d < halo.size() && d < rank; ++d) p.halo[d] = halo[d];
  return p;
}

sdk::Partition tile(uint32_t rank, const std::vector<int64_t>& halo) {
  sdk::Partition p = elementwise(rank, halo);
  p.kind = FUGUE_PARTITION_TILE;
  return p;
}

sdk::Partition whole(uint32_t rank) { return sdk::partition(FUGUE_PARTITION_WHOLE, rank); }

double array_bytes(const fugue_type& type) {
  return static_cast<double>(sdk::elements(type)) * static_cast<double>(dtype_bytes(type.dtype));
}

std::string index_ctype(int64_t elements) { return elements < (int64_t{1} << 30) ? "int" : "long"; }

void require_element_phase(const std::string& op, const sdk::Emitter& emitter) {
  if (emitter.phase() != FUGUE_PHASE_ELEMENT)
    throw std::logic_error(op + ": asked to emit phase " + std::to_string(emitter.phase()) +
                           ", but it plans only the ELEMENT phase");
}

}  // namespace fugue::stencil
