/* Fault: a well-formed table built for the next ABI major (FUGUE_ABI_VERSION_MAJOR + 1, minor 0); caught by the registry, which refuses it naming both versions. */
/* other_major_plugin.c: plain C. Apart from abi_major its table is sound: one operation, next.negate,
 * y = -x on f32 arrays, with every function a loadable plugin needs. */
#include <stdio.h>
#include <string.h>

#include "fugue_plugin.h"

static int64_t elements(const fugue_type* t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

static fugue_status infer(const fugue_op_desc* op, const fugue_call* call, fugue_type* types, fugue_error* error) {
  (void)op;
  const fugue_type* x = FUGUE_NTH(fugue_type, call->operands, 1);
  if (x->kind != FUGUE_KIND_ARRAY || x->dtype != FUGUE_DTYPE_F32) {
    snprintf(error->message, error->capacity, "operand x: expected an f32 array");
    return FUGUE_ERROR_INVALID_ARGUMENT;
  }
  fugue_type* y = FUGUE_NTH_MUTABLE(fugue_type, types, 0);
  if (x->rank > y->shape_capacity) {
    snprintf(error->message, error->capacity, "operand x: too many axes");
    return FUGUE_ERROR_UNSUPPORTED;
  }
  y->kind = x->kind;
  y->dtype = x->dtype;
  y->rank = x->rank;
  for (uint32_t d = 0; d < x->rank; ++d) y->shape[d] = x->shape[d];
  return FUGUE_OK;
}

static fugue_status plan(const fugue_op_desc* op, const fugue_call* call, fugue_plan* plan, fugue_error* error) {
  (void)op;
  (void)error;
  const fugue_type* x = FUGUE_NTH(fugue_type, call->operands, 1);
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

static fugue_status emit(const fugue_op_desc* op, const fugue_call* call, const fugue_plan* plan,
                         const fugue_emit_api* api, fugue_error* error) {
  (void)op;
  (void)call;
  (void)plan;
  (void)error;
  char line[512];
  snprintf(line, sizeof line, "%s = -%s;\n", api->write(api->context, 0), api->read(api->context, 1));
  api->append(api->context, line);
  return FUGUE_OK;
}

static fugue_status cost(const fugue_op_desc* op, const fugue_call* call, fugue_cost* cost, fugue_error* error) {
  (void)op;
  (void)error;
  double n = (double)elements(FUGUE_NTH(fugue_type, call->operands, 1));
  cost->bytes = 8.0 * n;
  cost->flops = n;
  return FUGUE_OK;
}

static fugue_status reference(const fugue_op_desc* op, const fugue_call* call, fugue_host_array* arrays,
                              fugue_error* error) {
  (void)op;
  (void)error;
  fugue_host_array* y = FUGUE_NTH_MUTABLE(fugue_host_array, arrays, 0);
  const fugue_host_array* x = FUGUE_NTH(fugue_host_array, arrays, 1);
  int64_t n = elements(FUGUE_NTH(fugue_type, call->operands, 1));
  for (int64_t i = 0; i < n; ++i) ((float*)y->data)[i] = -((const float*)x->data)[i];
  return FUGUE_OK;
}

static const fugue_operand_desc operands[2] = {
    {sizeof(fugue_operand_desc), "y", FUGUE_ROLE_OUT, FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "-x", NULL, 0},
    {sizeof(fugue_operand_desc), "x", FUGUE_ROLE_IN, FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "input", NULL, 0},
};

static const fugue_op_desc negate = {sizeof(fugue_op_desc), "next.negate", "y = -x, from a plugin of the next ABI major",
                                     2, operands, 0, NULL, infer, plan, emit, NULL, cost, reference,
                                     0.0, 0.0, -1.0, 1.0, NULL, 0, NULL};
static const fugue_op_desc* ops[1] = {&negate};
static const fugue_plugin table = {sizeof(fugue_plugin), FUGUE_ABI_VERSION_MAJOR + 1, 0, "next_major", "3.0.0",
                                   "A sound plugin built for the next ABI major version", 1, ops, 0, NULL, 0, NULL, 0, NULL};

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  return &table;
}
