// Fault: infer throws a C++ exception straight across the C boundary; caught by conformance's infer check (run in a forked child).
//
// broken_infer_plugin.cpp: a plugin for the conformance suite's own tests, written against the plain
// C ABI (no SDK Operation class: the descriptor is filled by hand). broken.throwing is y = x on f32
// arrays; plan, emit, cost and reference are sound, but infer throws std::runtime_error with no
// try/catch, which the ABI forbids (every call must return a fugue_status).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "fugue_plugin.h"

namespace {

enum : uint32_t { kX, kY };

int64_t elements(const fugue_type* t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

fugue_status infer(const fugue_op_desc*, const fugue_call*, fugue_type*, fugue_error*) {
  throw std::runtime_error("broken.throwing: infer threw");  // the fault: no status, an exception
}

fugue_status plan(const fugue_op_desc*, const fugue_call* call, fugue_plan* plan, fugue_error*) {
  const fugue_type* x = FUGUE_NTH(fugue_type, call->operands, kX);
  plan->level = FUGUE_LEVEL_ELEMENT;
  plan->launch->work_dim = 1;
  plan->launch->iteration[0] = elements(x);
  plan->launch->iteration[1] = plan->launch->iteration[2] = 1;
  plan->launch->local_min = 1;
  plan->launch->local_max = 1024;
  plan->launch->local_multiple = 1;
  plan->launch->local_preferred = 256;
  plan->phases = FUGUE_PHASE_ELEMENT;
  for (uint32_t k = 0; k < plan->num_partitions; ++k)
    FUGUE_NTH_MUTABLE(fugue_partition, plan->partitions, k)->kind = FUGUE_PARTITION_ELEMENTWISE;
  plan->registers = 2;
  return FUGUE_OK;
}

fugue_status emit(const fugue_op_desc*, const fugue_call*, const fugue_plan*, const fugue_emit_api* api,
                  fugue_error* error) {
  if (api->phase != FUGUE_PHASE_ELEMENT) {
    std::snprintf(error->message, error->capacity, "broken.throwing: asked to emit phase %u",
                  api->phase);
    return FUGUE_ERROR_INTERNAL;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%s = %s;\n", api->write(api->context, kY), api->read(api->context, kX));
  api->append(api->context, line);
  return FUGUE_OK;
}

fugue_status cost(const fugue_op_desc*, const fugue_call* call, fugue_cost* cost, fugue_error*) {
  const double n = static_cast<double>(elements(FUGUE_NTH(fugue_type, call->operands, kX)));
  cost->bytes = 8.0 * n;
  cost->flops = 0.0;
  return FUGUE_OK;
}

fugue_status reference(const fugue_op_desc*, const fugue_call* call, fugue_host_array* arrays, fugue_error*) {
  const int64_t n = elements(FUGUE_NTH(fugue_type, call->operands, kX));
  const fugue_host_array* x = FUGUE_NTH(fugue_host_array, arrays, kX);
  fugue_host_array* y = FUGUE_NTH_MUTABLE(fugue_host_array, arrays, kY);
  if (n > 0) std::memcpy(y->data, x->data, static_cast<size_t>(n) * sizeof(float));
  return FUGUE_OK;
}

fugue_operand_desc operand(const char* name, fugue_role role, const char* doc) {
  fugue_operand_desc o{};
  o.struct_size = sizeof(fugue_operand_desc);
  o.name = name;
  o.role = role;
  o.kinds = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
  o.dtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32);
  o.doc = doc;
  return o;
}

const fugue_operand_desc operands[2] = {operand("x", FUGUE_ROLE_IN, "the input"),
                                        operand("y", FUGUE_ROLE_OUT, "a copy of x")};

fugue_op_desc describe() {
  fugue_op_desc d{};
  d.struct_size = sizeof(fugue_op_desc);
  d.name = "broken.throwing";
  d.doc = "y = x, but infer throws a C++ exception across the C boundary";
  d.num_operands = 2;
  d.operands = operands;
  d.num_attrs = 0;
  d.attrs = nullptr;
  d.infer = &infer;
  d.plan = &plan;
  d.emit = &emit;
  d.execute = nullptr;
  d.cost = &cost;
  d.reference = &reference;
  d.tolerance_f32 = 0.0;  // a copy is exact
  d.tolerance_f64 = 0.0;
  d.test_low = -1.0;
  d.test_high = 1.0;
  d.user_data = nullptr;
  d.traits = 0;
  d.test_cases = nullptr;
  return d;
}

const fugue_op_desc throwing = describe();
const fugue_op_desc* const ops[1] = {&throwing};

fugue_plugin table_of() {
  fugue_plugin t{};
  t.struct_size = sizeof(fugue_plugin);
  t.abi_major = FUGUE_ABI_VERSION_MAJOR;
  t.abi_minor = FUGUE_ABI_VERSION_MINOR;
  t.name = "broken_infer";
  t.version = "0.1.0";
  t.description = "An operation whose infer throws across the C boundary (conformance tests)";
  t.num_ops = 1;
  t.ops = ops;
  return t;
}

const fugue_plugin table = table_of();

}  // namespace

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  return &table;
}
