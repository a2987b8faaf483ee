/* abi_1_plugin.c: a sound plugin written in plain C against ABI 1.x (built with the 1.2 header in
 * abi_1_2/, using only 1.0's layout), to show that the 2.0 core refuses it naming both versions:
 * old.negate, y = -x (f32). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fugue_plugin.h"

static fugue_status infer(const fugue_op_desc* op, const fugue_call* call, fugue_type* types, fugue_error* error) {
  (void)op;
  const fugue_type* x = FUGUE_NTH(fugue_type, call->operands, 1);
  if (x->kind != FUGUE_KIND_ARRAY || x->dtype != FUGUE_DTYPE_F32) {
    snprintf(error->message, sizeof error->message, "operand x: expected an f32 array");
    return FUGUE_ERROR_INVALID_ARGUMENT;
  }
  fugue_type* y = FUGUE_NTH_MUTABLE(fugue_type, types, 0);
  uint32_t size = y->struct_size;
  memcpy(y, x, size < x->struct_size ? size : x->struct_size);
  y->struct_size = size;
  return FUGUE_OK;
}

static int64_t elements(const fugue_type* t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

static fugue_status plan(const fugue_op_desc* op, const fugue_call* call, fugue_plan* plan, fugue_error* error) {
  (void)op;
  (void)error;
  const fugue_type* x = FUGUE_NTH(fugue_type, call->operands, 1);
  uint32_t size = plan->struct_size;
  memset(plan, 0, size);
  plan->struct_size = size;
  plan->level = FUGUE_LEVEL_ELEMENT;
  plan->launch.struct_size = sizeof(fugue_launch);
  plan->launch.work_dim = 1;
  plan->launch.iteration[0] = elements(x);
  plan->launch.iteration[1] = plan->launch.iteration[2] = 1;
  plan->launch.local_min = 1;
  plan->launch.local_max = 1024;
  plan->launch.local_multiple = 1;
  plan->launch.local_preferred = 256;
  plan->phases = FUGUE_PHASE_ELEMENT;
  plan->num_partitions = 2;
  for (int k = 0; k < 2; ++k) {
    plan->partitions[k].struct_size = sizeof(fugue_partition);
    plan->partitions[k].kind = FUGUE_PARTITION_ELEMENTWISE;
    plan->partitions[k].rank = x->rank;
  }
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
  cost->bytes = 8.0 * (double)elements(FUGUE_NTH(fugue_type, call->operands, 1));
  cost->flops = (double)elements(FUGUE_NTH(fugue_type, call->operands, 1));
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
    {sizeof(fugue_operand_desc), "y", FUGUE_ROLE_OUT, FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "-x"},
    {sizeof(fugue_operand_desc), "x", FUGUE_ROLE_IN, FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "input"},
};

/* ABI 1.0's fugue_op_desc ends at user_data: the struct is declared as 1.0 knew it. */
static fugue_op_desc negate = {FUGUE_SIZE_UP_TO(fugue_op_desc, user_data),
                               "old.negate", "y = -x, from a plugin of ABI 1.0", 2, operands, 0, NULL,
                               infer, plan, emit, NULL, cost, reference, 0.0, 0.0, -1.0, 1.0, NULL, 0};
static const fugue_op_desc* ops[1] = {&negate};
static const fugue_plugin table = {sizeof(fugue_plugin), 1, 0, "old", "1.0.0", "A plugin of ABI 1.0", 1, ops};

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  return &table;
}
