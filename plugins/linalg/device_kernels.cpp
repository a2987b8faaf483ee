// device_kernels.cpp: see device_kernels.h.
#include "device_kernels.h"

#include "matrices.h"
#include "scalars.h"
#include "scalars_cl.h"

namespace fugue::linalg {

sdk::Plan device_plan(const sdk::Call& call, std::string variant) {
  sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
  for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
  p.variant = std::move(variant);
  return p;
}

std::string blocked_reason(int64_t n, int64_t limit) {
  return n > limit ? "order " + std::to_string(n) + " > " + std::to_string(limit)
                   : "order " + std::to_string(n) + ": the loop plan's matrix exceeds local memory";
}

cl_program linalg_program(const sdk::Call& call, const fugue_device_services& s, fugue_dtype dtype, const char* kernel_source,
                          const std::string& options) {
  const Scalars sc(dtype);
  const bool doubles = part_dtype(dtype) == FUGUE_DTYPE_F64;
  const std::string common = "-DT=" + sc.type + " -DR=" + sc.real_type + (sc.complex ? " -DCOMPLEX" : "") + " -DSMALLEST=" +
                             smallest_normal(part_dtype(dtype)) + " -DUNROLL=" + (call.device().type == FUGUE_DEVICE_CPU ? "0" : "1");
  return sdk::build_program(s, std::string(doubles ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_scalars + kernel_source,
                            common + " " + options);
}

void require_work_group(const fugue_device_services& s, int64_t items, const std::string& op, const std::string& field) {
  if (sdk::max_work_group_size(s) < static_cast<size_t>(items))
    throw sdk::Unsupported(op + "'s blocked plan runs work-groups of " + std::to_string(items) + ", more than this device's " +
                           std::to_string(sdk::max_work_group_size(s)) + "; FUGUE_LINALG_TUNING=" + field +
                           "=0 takes a plan of one work-group a matrix");
}

}  // namespace fugue::linalg
