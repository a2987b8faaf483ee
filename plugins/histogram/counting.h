// counting.h: what every histogram operation shares: h[k] += v at bins k its data decide, at ITEM level
// (so the element loop fuses with the operations producing the data), h an output the core zeroes
// before the kernel (a SCATTER partition, ABI 2.5). Contention stays low whatever the data:
// - without a copy, each work-item adds up a run of equal bins in a register and updates h once per
//   run (all values in one bin: one update per work-item);
// - where h fits a share of local memory, each work-group counts into its own copy there (counts as
//   32-bit integers, the cheapest atomics) and adds the copy into h at the end, skipping empty bins,
//   each group starting at its own bin: global updates per bin and work-group, not per value.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"

namespace fugue::histogram {

struct Counting {
  uint32_t h = 0;            // the operand counted into
  int64_t bins = 0;          // its elements
  fugue_dtype dtype{};       // its dtype
  // Counts times an integer (unweighted histograms): each value adds `weight`, counted as 1 in the
  // work-group's copy and multiplied when the copy is added into h. Empty: each value adds its own.
  std::string weight;
  // The bin expression is an int (histogram.even): compared as one, without widening to 64 bits.
  bool int_bin = false;
};

// The dtypes h may have: what the device adds atomically (64-bit ones need cl_khr_int64_base_atomics).
constexpr uint32_t kCountDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32) |
                                  FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);

// The integer dtypes bins come in (bincount's indices, scatter's f results).
constexpr uint32_t kBinDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) |
                                FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32);
// h's length from attribute "length" (bincount, scatter), 1 to 2^30; throws InvalidArgument naming it.
int64_t length_of(const sdk::Call& call);

// Whether a work-group keeps its own copy of h: up to half of its local memory and 16 KiB (beyond,
// zeroing and adding the copy cost more than it saves).
bool private_copy(const sdk::Call& call, const Counting& c);

// The plan of a histogram over `n` elements: ITEM level, prologue, element loop and epilogue, h SCATTER,
// the local copy's memory. Throws Unsupported naming the device when h's dtype needs 64-bit atomics it lacks.
sdk::Plan counting_plan(const sdk::Call& call, const Counting& c, int64_t n);

// The code of em's phase. ELEMENT: `element` declares, for the current element, `bin` (a long: the bin,
// or anything outside 0..bins-1 for none) and `value` (of h's dtype; ignored when counting with a
// weight); the update follows.
std::string counting_code(const sdk::Call& call, const sdk::Emitter& em, const Counting& c, const std::string& element,
                          const std::string& bin, const std::string& value);

// The reference's accumulation: bins[k] += v in extended precision (integers wrap as the device's do),
// stored into h once at the end.
class ReferenceCounts {
 public:
  explicit ReferenceCounts(int64_t bins) : sums_(static_cast<size_t>(bins)) {}
  void add(int64_t k, long double v) {
    if (k >= 0 && k < static_cast<int64_t>(sums_.size())) sums_[static_cast<size_t>(k)] += v;
  }
  void store(sdk::HostView& h) const;

 private:
  std::vector<long double> sums_;
};

}  // namespace fugue::histogram
