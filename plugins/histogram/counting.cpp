// counting.cpp: see counting.h.
#include "counting.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace fugue::histogram {

namespace {

bool is_64_bit(fugue_dtype d) { return d == FUGUE_DTYPE_I64 || d == FUGUE_DTYPE_F64; }

// Whether values in a run of equal bins are added in a register first: where updates go to h in global
// memory (no copy), so that degenerate data does not pile atomics on one address. A work-group's copy
// takes every value as it comes: on the H200 the run logic cost more than it saved, even with every
// value in one bin (256 bins of 2^28 f32: 0.288 ms with runs, 0.253 without, all in one bin).
// FUGUE_HISTOGRAM_TUNING=runs=0 or runs=1 overrides for experiments; anything else is refused.
bool use_runs(bool copy) {
  const char* text = std::getenv("FUGUE_HISTOGRAM_TUNING");
  if (!text || !*text) return !copy;
  if (std::string(text) == "runs=1") return true;
  if (std::string(text) == "runs=0") return false;
  throw sdk::InvalidArgument(std::string("FUGUE_HISTOGRAM_TUNING: \"") + text + "\": expected runs=0 or runs=1");
}

// The local copy's dtype: 32-bit counts when counting, else h's own.
fugue_dtype copy_dtype(const Counting& c) { return c.weight.empty() ? c.dtype : FUGUE_DTYPE_U32; }

}  // namespace

int64_t length_of(const sdk::Call& call) {
  constexpr int64_t kMaxLength = int64_t{1} << 30;
  const int64_t length = call.integer("length");
  if (length < 1 || length > kMaxLength)
    throw sdk::InvalidArgument("attribute length: expected 1 to " + std::to_string(kMaxLength) + ", found " + std::to_string(length));
  return length;
}

bool private_copy(const sdk::Call& call, const Counting& c) {
  const uint64_t bytes = static_cast<uint64_t>(c.bins) * abi::dtype_size(copy_dtype(c));
  return bytes > 0 && bytes <= std::min<uint64_t>(16384, call.device().local_mem_bytes / 2);
}

sdk::Plan counting_plan(const sdk::Call& call, const Counting& c, int64_t n) {
  const fugue_device_desc& device = call.device();
  if (is_64_bit(c.dtype) && !(device.features & FUGUE_DEVICE_INT64_ATOMICS))
    throw sdk::Unsupported(std::string("h is ") + sdk::dtype_name(c.dtype) + ": adding 64-bit values atomically needs " +
                           "cl_khr_int64_base_atomics, which " + device.name + " lacks; give 32-bit weights (i32, u32, f32)");
  sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_ITEM, n);
  p.phases = FUGUE_PHASE_PROLOGUE | FUGUE_PHASE_ELEMENT | FUGUE_PHASE_EPILOGUE;
  p.partitions[c.h] = sdk::partition(FUGUE_PARTITION_SCATTER, call.operand(c.h).rank);
  const bool copy = private_copy(call, c);
  if (copy) p.local_mem_bytes = static_cast<uint64_t>(c.bins) * abi::dtype_size(copy_dtype(c));
  p.registers = 8;
  // A CPU runs a work-group as a loop on one core: with one work-item per group the copy is that
  // item's own, updated by plain additions, where atomics (even on local memory) cost most of the time
  // (PoCL, 2 cores, 2^24 f32 values: see README).
  const bool alone = copy && device.type == FUGUE_DEVICE_CPU;
  if (alone) p.launch.local_min = p.launch.local_max = p.launch.local_preferred = 1;
  p.variant = alone  ? "a copy of h per work-item in local memory (work-groups of one on a CPU, " + std::to_string(c.bins) +
                          " bins), plain additions, added into h at the end"
              : copy ? "a copy of h per work-group in local memory (" + std::to_string(c.bins) + " bins), added into h at the end"
                     : "atomic updates of h in global memory (" + std::to_string(c.bins) + " bins: too many for a copy per work-group)";
  return p;
}

std::string counting_code(const sdk::Call& call, const sdk::Emitter& em, const Counting& c, const std::string& element,
                          const std::string& bin, const std::string& value) {
  const bool copy = private_copy(call, c), counting = !c.weight.empty();
  // 32-bit run keys and counts (bins < 2^31; a run is at most one work-item's elements): 64-bit
  // integer arithmetic costs GPUs several instructions per element.
  const fugue_dtype run_dtype = counting ? FUGUE_DTYPE_U32 : c.dtype;
  const std::string t = em.ctype(c.dtype), rt = em.ctype(run_dtype), size = std::to_string(c.bins) + "L";
  const std::string run_k = em.name("run_k"), run_v = em.name("run_v");
  const std::string bins = copy ? em.local_array(copy_dtype(c), c.bins, "bins") : "";
  // A run's total into the work-group's copy (by a plain addition when the group is one work-item), or
  // (times the weight when counting) into h.
  const bool alone = copy && em.local_size() == 1;
  auto update = [&](const std::string& k, const std::string& v) {
    if (alone) return bins + "[" + k + "] += " + (counting ? "(uint)(" + v + ")" : v) + ";";
    if (copy) return em.atomic_local(FUGUE_ATOMIC_ADD, copy_dtype(c), bins + "[" + k + "]", counting ? "(uint)(" + v + ")" : v);
    return em.atomic_at(FUGUE_ATOMIC_ADD, c.h, k, counting ? "(" + t + ")((" + v + ") * " + c.weight + ")" : v);
  };
  const std::string zero = "(" + rt + ")0";
  switch (em.phase()) {
    case FUGUE_PHASE_PROLOGUE: {
      // At kernel scope: the run so far (none) and the work-group's copy, zeroed.
      std::string code = "int " + run_k + " = -1;\n" + rt + " " + run_v + " = " + zero + ";\n";
      if (copy) {
        const std::string j = em.name("j");
        code += "for (long " + j + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + "; " + j + " < " + size + "; " + j + " += " +
                em.builtin(FUGUE_BUILTIN_LOCAL_SIZE) + ") " + bins + "[" + j + "] = 0;\n" + em.barrier() + "\n";
      }
      return code;
    }
    case FUGUE_PHASE_ELEMENT: {
      const std::string k = em.name("k"), v = em.name("v"), key = em.name("key");
      // Bins outside h count nothing (a value outside the range, NaN, an index out of range). Alone in its
      // group, the work-item adds straight into its copy: runs pay only against atomics.
      const std::string kt = c.int_bin ? "int" : "long", limit = c.int_bin ? std::to_string(c.bins) : size;
      if (alone)
        return element + "{\n  const " + kt + " " + k + " = " + bin + ";\n  if (" + k + " >= 0 && " + k + " < " + limit + ") " +
               update(k, counting ? "1" : value) + "\n}\n";
      if (!use_runs(copy))
        return element + "{\n  const " + kt + " " + k + " = " + bin + ";\n  if (" + k + " >= 0 && " + k + " < " + limit + ") " +
               update(k, counting ? "1" : value) + "\n}\n";
      return element + "{\n  const " + kt + " " + k + " = " + bin + ";\n  if (" + k + " >= 0 && " + k + " < " + limit + ") {\n    const int " + key +
             " = (int)" + k + ";\n    const " + rt + " " + v + " = " + (counting ? "1" : value) + ";\n    if (" + key + " == " + run_k + ") " + run_v +
             " += " + v + ";\n    else {\n      if (" + run_k + " >= 0) " + update(run_k, run_v) + "\n      " + run_k + " = " + key + ";\n      " +
             run_v + " = " + v + ";\n    }\n  }\n}\n";
    }
    case FUGUE_PHASE_EPILOGUE: {
      std::string code = "if (" + run_k + " >= 0) " + update(run_k, run_v) + "\n";
      if (copy) {  // the copy into h: one update per bin that received anything, each group from its own bin
        const std::string j = em.name("j"), q = em.name("q"), start = em.name("start");
        const std::string into = em.atomic_at(FUGUE_ATOMIC_ADD, c.h, j,
                                              counting ? "(" + t + ")((long)" + bins + "[" + j + "] * " + c.weight + ")" : bins + "[" + j + "]");
        code += em.barrier() + "\nconst long " + start + " = ((long)" + em.builtin(FUGUE_BUILTIN_GROUP_ID) + " * 977L) % " + size + ";\nfor (long " +
                q + " = " + em.builtin(FUGUE_BUILTIN_LOCAL_ID) + "; " + q + " < " + size + "; " + q + " += " +
                em.builtin(FUGUE_BUILTIN_LOCAL_SIZE) + ") {\n  const long " + j + " = (" + q + " + " + start + ") % " + size + ";\n  if (" + bins + "[" +
                j + "] != 0) " + into + "\n}\n";
      }
      return code;
    }
  }
  throw std::logic_error("histogram: asked to emit phase " + std::to_string(em.phase()) + ", which it does not plan");
}

void ReferenceCounts::store(sdk::HostView& h) const {
  const fugue_dtype d = h.dtype();
  for (size_t k = 0; k < sums_.size(); ++k) {
    const long double s = sums_[k];
    if (d == FUGUE_DTYPE_F32 || d == FUGUE_DTYPE_F64) h.set(static_cast<int64_t>(k), static_cast<double>(s));
    else h.set_int(static_cast<int64_t>(k), static_cast<int64_t>(s));  // integer sums are exact in long double up to 2^64
  }
}

}  // namespace fugue::histogram
