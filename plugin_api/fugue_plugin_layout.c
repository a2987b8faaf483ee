/* fugue_plugin_layout.c: the layout of ABI 2.0 and what 2.1, 2.2, 2.3, 2.5, 2.6, 2.8, 2.10, 2.11, 2.12, 2.13, 2.14 and 2.15 append, asserted field by field (LP64: Linux and macOS on
 * 64-bit machines). A change that moves a field, or puts a field before a "end of 2.0" marker, breaks
 * every plugin built against an earlier 2.x header: this file refuses to compile instead. Later minor
 * versions append fields after the marker and add their asserts below; none of these lines changes.
 *
 * Built as part of every build (CMake target fugue_abi_layout). Regenerate the numbers only when the
 * major version changes. */
#include <stddef.h>

#include "fugue_plugin.h"

#if defined(__LP64__) || defined(_LP64)
#define FUGUE_AT(type, field, offset) \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " moved: ABI 2.0 is append-only")
#define FUGUE_END_OF_2_0(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.0 ends after " #last)
#define FUGUE_END_OF_2_1(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.1 ends after " #last)
#define FUGUE_END_OF_2_2(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.2 ends after " #last)
#define FUGUE_END_OF_2_3(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.3 ends after " #last)
#define FUGUE_END_OF_2_5(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.5 ends after " #last)
#define FUGUE_END_OF_2_6(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.6 ends after " #last)
#define FUGUE_END_OF_2_8(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.8 ends after " #last)
#define FUGUE_END_OF_2_10(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.10 ends after " #last)
#define FUGUE_END_OF_2_11(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.11 ends after " #last)
#define FUGUE_END_OF_2_12(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.12 ends after " #last)
#define FUGUE_END_OF_2_13(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.13 ends after " #last)
#define FUGUE_END_OF_2_14(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.14 ends after " #last)
#define FUGUE_END_OF_2_15(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.15 ends after " #last)
#define FUGUE_END_OF_2_17(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.17 ends after " #last)
#define FUGUE_END_OF_2_19(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.19 ends after " #last)
#define FUGUE_END_OF_2_21(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.21 ends after " #last)
#define FUGUE_END_OF_2_22(type, last, size) \
  _Static_assert(FUGUE_SIZE_UP_TO(type, last) == (size), #type ": ABI 2.22 ends after " #last)

/* fugue_error */
FUGUE_AT(fugue_error, struct_size, 0);
FUGUE_AT(fugue_error, capacity, 4);
FUGUE_AT(fugue_error, message, 8);
FUGUE_END_OF_2_0(fugue_error, message, 16);

/* fugue_view */
FUGUE_AT(fugue_view, struct_size, 0);
FUGUE_AT(fugue_view, rank, 4);
FUGUE_AT(fugue_view, offset, 8);
FUGUE_AT(fugue_view, strides, 16);
FUGUE_END_OF_2_0(fugue_view, strides, 24);

/* fugue_type */
FUGUE_AT(fugue_type, struct_size, 0);
FUGUE_AT(fugue_type, kind, 4);
FUGUE_AT(fugue_type, dtype, 8);
FUGUE_AT(fugue_type, rank, 12);
FUGUE_AT(fugue_type, shape, 16);
FUGUE_AT(fugue_type, shape_capacity, 24);
FUGUE_AT(fugue_type, const_value, 32);
FUGUE_AT(fugue_type, view, 40);
FUGUE_AT(fugue_type, metadata, 48);
FUGUE_AT(fugue_type, metadata_bytes, 56);
FUGUE_AT(fugue_type, kind_name, 64);
FUGUE_AT(fugue_type, runtime_axes, 72);
FUGUE_AT(fugue_type, num_parts, 76);
FUGUE_AT(fugue_type, parts, 80);
FUGUE_END_OF_2_0(fugue_type, parts, 88);

/* fugue_operand_desc */
FUGUE_AT(fugue_operand_desc, struct_size, 0);
FUGUE_AT(fugue_operand_desc, name, 8);
FUGUE_AT(fugue_operand_desc, role, 16);
FUGUE_AT(fugue_operand_desc, kinds, 20);
FUGUE_AT(fugue_operand_desc, dtypes, 24);
FUGUE_AT(fugue_operand_desc, doc, 32);
FUGUE_AT(fugue_operand_desc, plugin_kinds, 40);
FUGUE_END_OF_2_0(fugue_operand_desc, plugin_kinds, 48);
FUGUE_AT(fugue_operand_desc, flags, 48);
FUGUE_END_OF_2_3(fugue_operand_desc, flags, 52);
FUGUE_AT(fugue_operand_desc, default_value, 56);
FUGUE_END_OF_2_5(fugue_operand_desc, default_value, 64);

/* fugue_attr_desc */
FUGUE_AT(fugue_attr_desc, struct_size, 0);
FUGUE_AT(fugue_attr_desc, name, 8);
FUGUE_AT(fugue_attr_desc, type, 16);
FUGUE_AT(fugue_attr_desc, required, 20);
FUGUE_AT(fugue_attr_desc, default_number, 24);
FUGUE_AT(fugue_attr_desc, default_string, 32);
FUGUE_AT(fugue_attr_desc, doc, 40);
FUGUE_END_OF_2_0(fugue_attr_desc, doc, 48);

/* fugue_attr_value */
FUGUE_AT(fugue_attr_value, struct_size, 0);
FUGUE_AT(fugue_attr_value, name, 8);
FUGUE_AT(fugue_attr_value, type, 16);
FUGUE_AT(fugue_attr_value, number, 24);
FUGUE_AT(fugue_attr_value, integer, 32);
FUGUE_AT(fugue_attr_value, string, 40);
FUGUE_AT(fugue_attr_value, dtype, 48);
FUGUE_END_OF_2_0(fugue_attr_value, dtype, 52);

/* fugue_device_desc */
FUGUE_AT(fugue_device_desc, struct_size, 0);
FUGUE_AT(fugue_device_desc, type, 4);
FUGUE_AT(fugue_device_desc, name, 8);
FUGUE_AT(fugue_device_desc, vendor, 16);
FUGUE_AT(fugue_device_desc, driver_version, 24);
FUGUE_AT(fugue_device_desc, compute_units, 32);
FUGUE_AT(fugue_device_desc, features, 36);
FUGUE_AT(fugue_device_desc, max_work_group_size, 40);
FUGUE_AT(fugue_device_desc, local_mem_bytes, 48);
FUGUE_AT(fugue_device_desc, global_mem_bytes, 56);
FUGUE_AT(fugue_device_desc, max_alloc_bytes, 64);
FUGUE_AT(fugue_device_desc, num_subgroup_sizes, 72);
FUGUE_AT(fugue_device_desc, subgroup_sizes, 80);
FUGUE_AT(fugue_device_desc, extensions, 88);
FUGUE_END_OF_2_0(fugue_device_desc, extensions, 96);
FUGUE_AT(fugue_device_desc, tuning_folder, 96);
FUGUE_END_OF_2_8(fugue_device_desc, tuning_folder, 104);
FUGUE_AT(fugue_device_desc, native_vector_width_float, 104);
FUGUE_AT(fugue_device_desc, native_vector_width_double, 108);
FUGUE_END_OF_2_10(fugue_device_desc, native_vector_width_double, 112);
FUGUE_AT(fugue_device_desc, architecture, 112);
FUGUE_END_OF_2_15(fugue_device_desc, architecture, 120);

/* fugue_call */
FUGUE_AT(fugue_call, struct_size, 0);
FUGUE_AT(fugue_call, num_operands, 4);
FUGUE_AT(fugue_call, operands, 8);
FUGUE_AT(fugue_call, num_attrs, 16);
FUGUE_AT(fugue_call, attrs, 24);
FUGUE_AT(fugue_call, device, 32);
FUGUE_END_OF_2_0(fugue_call, device, 40);
FUGUE_AT(fugue_call, functions, 40);
FUGUE_END_OF_2_2(fugue_call, functions, 48);

/* fugue_function_services (2.2) */
FUGUE_AT(fugue_function_services, struct_size, 0);
FUGUE_AT(fugue_function_services, context, 8);
FUGUE_AT(fugue_function_services, arity, 16);
FUGUE_AT(fugue_function_services, result, 24);
FUGUE_AT(fugue_function_services, evaluate, 32);
FUGUE_END_OF_2_2(fugue_function_services, evaluate, 40);

/* fugue_partition */
FUGUE_AT(fugue_partition, struct_size, 0);
FUGUE_AT(fugue_partition, kind, 4);
FUGUE_AT(fugue_partition, rank, 8);
FUGUE_AT(fugue_partition, halo, 16);
FUGUE_AT(fugue_partition, group_tile, 24);
FUGUE_AT(fugue_partition, item_tile, 32);
FUGUE_AT(fugue_partition, item_stride, 40);
FUGUE_AT(fugue_partition, batch_axis, 48);
FUGUE_AT(fugue_partition, cyclic, 52);
FUGUE_END_OF_2_0(fugue_partition, cyclic, 56);

/* fugue_launch */
FUGUE_AT(fugue_launch, struct_size, 0);
FUGUE_AT(fugue_launch, work_dim, 4);
FUGUE_AT(fugue_launch, iteration, 8);
FUGUE_AT(fugue_launch, local_min, 32);
FUGUE_AT(fugue_launch, local_max, 40);
FUGUE_AT(fugue_launch, local_multiple, 48);
FUGUE_AT(fugue_launch, local_preferred, 56);
FUGUE_END_OF_2_0(fugue_launch, local_preferred, 64);

/* fugue_workspace */
FUGUE_AT(fugue_workspace, struct_size, 0);
FUGUE_AT(fugue_workspace, dtype, 4);
FUGUE_AT(fugue_workspace, elements_per_group, 8);
FUGUE_END_OF_2_0(fugue_workspace, elements_per_group, 16);

/* fugue_plan */
FUGUE_AT(fugue_plan, struct_size, 0);
FUGUE_AT(fugue_plan, level, 4);
FUGUE_AT(fugue_plan, phases, 8);
FUGUE_AT(fugue_plan, launch, 16);
FUGUE_AT(fugue_plan, num_partitions, 24);
FUGUE_AT(fugue_plan, partitions, 32);
FUGUE_AT(fugue_plan, workspace_capacity, 40);
FUGUE_AT(fugue_plan, num_workspaces, 44);
FUGUE_AT(fugue_plan, workspaces, 48);
FUGUE_AT(fugue_plan, local_mem_bytes, 56);
FUGUE_AT(fugue_plan, registers, 64);
FUGUE_END_OF_2_0(fugue_plan, registers, 68);
FUGUE_AT(fugue_plan, entry_teams, 68);
FUGUE_END_OF_2_3(fugue_plan, entry_teams, 72);
/* 2.4 appends no field: it lets BLOCK-level plans ask for workspaces (see fugue_workspace). */
FUGUE_AT(fugue_plan, variant, 72);
FUGUE_AT(fugue_plan, variant_capacity, 80);
FUGUE_END_OF_2_5(fugue_plan, variant_capacity, 84);
FUGUE_AT(fugue_plan, walks_rows, 84);
FUGUE_END_OF_2_11(fugue_plan, walks_rows, 88);
FUGUE_AT(fugue_plan, ends, 88);
FUGUE_AT(fugue_plan, combine, 92);
FUGUE_END_OF_2_12(fugue_plan, combine, 96);
FUGUE_AT(fugue_plan, split_rows, 96);
FUGUE_END_OF_2_13(fugue_plan, split_rows, 104);
FUGUE_AT(fugue_plan, read_at_columns, 104);
FUGUE_AT(fugue_plan, columns_of, 112);
FUGUE_END_OF_2_14(fugue_plan, columns_of, 116);
FUGUE_AT(fugue_plan, reads_once, 120);
FUGUE_END_OF_2_17(fugue_plan, reads_once, 128);
FUGUE_AT(fugue_plan, own_kernels_alone, 128);
FUGUE_END_OF_2_19(fugue_plan, own_kernels_alone, 132);

/* fugue_emit_api */
FUGUE_AT(fugue_emit_api, struct_size, 0);
FUGUE_AT(fugue_emit_api, context, 8);
FUGUE_AT(fugue_emit_api, phase, 16);
FUGUE_AT(fugue_emit_api, read, 24);
FUGUE_AT(fugue_emit_api, write, 32);
FUGUE_AT(fugue_emit_api, ctype, 40);
FUGUE_AT(fugue_emit_api, name, 48);
FUGUE_AT(fugue_emit_api, builtin, 56);
FUGUE_AT(fugue_emit_api, workspace, 64);
FUGUE_AT(fugue_emit_api, append, 72);
FUGUE_AT(fugue_emit_api, read_at, 80);
FUGUE_END_OF_2_0(fugue_emit_api, read_at, 88);
FUGUE_AT(fugue_emit_api, write_at, 88);
FUGUE_AT(fugue_emit_api, local_array, 96);
FUGUE_AT(fugue_emit_api, barrier, 104);
FUGUE_AT(fugue_emit_api, atomic_at, 112);
FUGUE_AT(fugue_emit_api, atomic_local, 120);
FUGUE_AT(fugue_emit_api, extent, 128);
FUGUE_END_OF_2_1(fugue_emit_api, extent, 136);
FUGUE_AT(fugue_emit_api, call_function, 136);
FUGUE_AT(fugue_emit_api, read_offset, 144);
FUGUE_END_OF_2_2(fugue_emit_api, read_offset, 152);
FUGUE_AT(fugue_emit_api, read_part_at, 152);
FUGUE_END_OF_2_8(fugue_emit_api, read_part_at, 160);
FUGUE_AT(fugue_emit_api, count, 160);
FUGUE_END_OF_2_22(fugue_emit_api, count, 168);

/* fugue_device_services */
FUGUE_AT(fugue_device_services, struct_size, 0);
FUGUE_AT(fugue_device_services, context, 8);
FUGUE_AT(fugue_device_services, cl_context, 16);
FUGUE_AT(fugue_device_services, device, 24);
FUGUE_AT(fugue_device_services, queue, 32);
FUGUE_AT(fugue_device_services, buffer, 40);
FUGUE_AT(fugue_device_services, program, 48);
FUGUE_AT(fugue_device_services, scratch, 56);
FUGUE_AT(fugue_device_services, track, 64);
FUGUE_AT(fugue_device_services, extent, 72);
FUGUE_AT(fugue_device_services, workspace, 80);
FUGUE_AT(fugue_device_services, part, 88);
FUGUE_END_OF_2_0(fugue_device_services, part, 96);

/* fugue_cost */
FUGUE_AT(fugue_cost, struct_size, 0);
FUGUE_AT(fugue_cost, bytes, 8);
FUGUE_AT(fugue_cost, flops, 16);
FUGUE_END_OF_2_0(fugue_cost, flops, 24);

/* fugue_host_array */
FUGUE_AT(fugue_host_array, struct_size, 0);
FUGUE_AT(fugue_host_array, type, 8);
FUGUE_AT(fugue_host_array, data, 16);
FUGUE_AT(fugue_host_array, bytes, 24);
FUGUE_AT(fugue_host_array, length, 32);
FUGUE_AT(fugue_host_array, num_parts, 40);
FUGUE_AT(fugue_host_array, parts, 48);
FUGUE_END_OF_2_0(fugue_host_array, parts, 56);

/* fugue_op_desc */
FUGUE_AT(fugue_op_desc, struct_size, 0);
FUGUE_AT(fugue_op_desc, name, 8);
FUGUE_AT(fugue_op_desc, doc, 16);
FUGUE_AT(fugue_op_desc, num_operands, 24);
FUGUE_AT(fugue_op_desc, operands, 32);
FUGUE_AT(fugue_op_desc, num_attrs, 40);
FUGUE_AT(fugue_op_desc, attrs, 48);
FUGUE_AT(fugue_op_desc, infer, 56);
FUGUE_AT(fugue_op_desc, plan, 64);
FUGUE_AT(fugue_op_desc, emit, 72);
FUGUE_AT(fugue_op_desc, execute, 80);
FUGUE_AT(fugue_op_desc, cost, 88);
FUGUE_AT(fugue_op_desc, reference, 96);
FUGUE_AT(fugue_op_desc, tolerance_f32, 104);
FUGUE_AT(fugue_op_desc, tolerance_f64, 112);
FUGUE_AT(fugue_op_desc, test_low, 120);
FUGUE_AT(fugue_op_desc, test_high, 128);
FUGUE_AT(fugue_op_desc, user_data, 136);
FUGUE_AT(fugue_op_desc, traits, 144);
FUGUE_AT(fugue_op_desc, test_cases, 152);
FUGUE_END_OF_2_0(fugue_op_desc, test_cases, 160);

/* fugue_plugin */
FUGUE_AT(fugue_plugin, struct_size, 0);
FUGUE_AT(fugue_plugin, abi_major, 4);
FUGUE_AT(fugue_plugin, abi_minor, 8);
FUGUE_AT(fugue_plugin, name, 16);
FUGUE_AT(fugue_plugin, version, 24);
FUGUE_AT(fugue_plugin, description, 32);
FUGUE_AT(fugue_plugin, num_ops, 40);
FUGUE_AT(fugue_plugin, ops, 48);
FUGUE_AT(fugue_plugin, num_kinds, 56);
FUGUE_AT(fugue_plugin, kinds, 64);
FUGUE_AT(fugue_plugin, num_formats, 72);
FUGUE_AT(fugue_plugin, formats, 80);
FUGUE_AT(fugue_plugin, num_generators, 88);
FUGUE_AT(fugue_plugin, generators, 96);
FUGUE_END_OF_2_0(fugue_plugin, generators, 104);
FUGUE_AT(fugue_plugin, num_tuners, 104);
FUGUE_AT(fugue_plugin, tuners, 112);
FUGUE_END_OF_2_8(fugue_plugin, tuners, 120);

/* fugue_tuner_desc (2.8) */
FUGUE_AT(fugue_tuner_desc, struct_size, 0);
FUGUE_AT(fugue_tuner_desc, name, 8);
FUGUE_AT(fugue_tuner_desc, doc, 16);
FUGUE_AT(fugue_tuner_desc, programs, 24);
FUGUE_AT(fugue_tuner_desc, table, 32);
FUGUE_AT(fugue_tuner_desc, user_data, 40);
FUGUE_END_OF_2_8(fugue_tuner_desc, user_data, 48);

/* fugue_format_desc */
FUGUE_AT(fugue_format_desc, struct_size, 0);
FUGUE_AT(fugue_format_desc, name, 8);
FUGUE_AT(fugue_format_desc, doc, 16);
FUGUE_AT(fugue_format_desc, extensions, 24);
FUGUE_AT(fugue_format_desc, probe, 32);
FUGUE_AT(fugue_format_desc, read, 40);
FUGUE_AT(fugue_format_desc, accepts, 48);
FUGUE_AT(fugue_format_desc, write, 56);
FUGUE_AT(fugue_format_desc, user_data, 64);
FUGUE_END_OF_2_0(fugue_format_desc, user_data, 72);
FUGUE_AT(fugue_format_desc, probe_as, 72);
FUGUE_AT(fugue_format_desc, read_as, 80);
FUGUE_END_OF_2_6(fugue_format_desc, read_as, 88);

/* fugue_generator_desc */
FUGUE_AT(fugue_generator_desc, struct_size, 0);
FUGUE_AT(fugue_generator_desc, name, 8);
FUGUE_AT(fugue_generator_desc, doc, 16);
FUGUE_AT(fugue_generator_desc, dtypes, 24);
FUGUE_AT(fugue_generator_desc, check, 32);
FUGUE_AT(fugue_generator_desc, generate, 40);
FUGUE_AT(fugue_generator_desc, user_data, 48);
FUGUE_END_OF_2_0(fugue_generator_desc, user_data, 56);
FUGUE_AT(fugue_generator_desc, probe_as, 56);
FUGUE_AT(fugue_generator_desc, generate_as, 64);
FUGUE_END_OF_2_6(fugue_generator_desc, generate_as, 72);

/* fugue_declared */
FUGUE_AT(fugue_declared, struct_size, 0);
FUGUE_AT(fugue_declared, dtype, 4);
FUGUE_AT(fugue_declared, rank, 8);
FUGUE_AT(fugue_declared, shape, 16);
FUGUE_AT(fugue_declared, shape_capacity, 24);
FUGUE_AT(fugue_declared, metadata, 32);
FUGUE_AT(fugue_declared, metadata_capacity, 40);
FUGUE_AT(fugue_declared, metadata_bytes, 48);
FUGUE_AT(fugue_declared, parts_capacity, 56);
FUGUE_AT(fugue_declared, num_parts, 60);
FUGUE_AT(fugue_declared, parts, 64);
FUGUE_AT(fugue_declared, kind_name, 72);
FUGUE_END_OF_2_0(fugue_declared, kind_name, 80);
FUGUE_AT(fugue_declared, note, 80);
FUGUE_AT(fugue_declared, note_capacity, 88);
FUGUE_END_OF_2_6(fugue_declared, note_capacity, 92);
FUGUE_AT(fugue_declared, runtime_axes, 92);
FUGUE_END_OF_2_21(fugue_declared, runtime_axes, 96);

/* fugue_text */
FUGUE_AT(fugue_text, struct_size, 0);
FUGUE_AT(fugue_text, text, 8);
FUGUE_AT(fugue_text, capacity, 16);
FUGUE_AT(fugue_text, length, 24);
FUGUE_END_OF_2_0(fugue_text, length, 32);

/* fugue_kind_desc */
FUGUE_AT(fugue_kind_desc, struct_size, 0);
FUGUE_AT(fugue_kind_desc, name, 8);
FUGUE_AT(fugue_kind_desc, doc, 16);
FUGUE_AT(fugue_kind_desc, flags, 24);
FUGUE_AT(fugue_kind_desc, keys, 32);
FUGUE_AT(fugue_kind_desc, declare, 40);
FUGUE_AT(fugue_kind_desc, example, 48);
FUGUE_AT(fugue_kind_desc, user_data, 56);
FUGUE_AT(fugue_kind_desc, parts, 64);
FUGUE_END_OF_2_0(fugue_kind_desc, parts, 72);
FUGUE_AT(fugue_kind_desc, check_value, 72);
FUGUE_END_OF_2_6(fugue_kind_desc, check_value, 80);
FUGUE_AT(fugue_kind_desc, rows_type, 80);
FUGUE_AT(fugue_kind_desc, rows_value, 88);
FUGUE_END_OF_2_13(fugue_kind_desc, rows_value, 96);
FUGUE_AT(fugue_kind_desc, rows_columns, 96);
FUGUE_END_OF_2_14(fugue_kind_desc, rows_columns, 104);

/* fugue_dtype_info */
FUGUE_AT(fugue_dtype_info, dtype, 0);
FUGUE_AT(fugue_dtype_info, name, 8);
FUGUE_AT(fugue_dtype_info, size, 16);
FUGUE_AT(fugue_dtype_info, ctype, 24);
FUGUE_AT(fugue_dtype_info, npy_descr, 32);
FUGUE_AT(fugue_dtype_info, flags, 40);
FUGUE_AT(fugue_dtype_info, component, 44);
FUGUE_AT(fugue_dtype_info, int_lowest, 48);
FUGUE_AT(fugue_dtype_info, int_highest, 56);
FUGUE_END_OF_2_0(fugue_dtype_info, int_highest, 64);

/* The prefix the core reads before it knows a plugin's version: the same in every major version. */
_Static_assert(offsetof(fugue_plugin, abi_major) == 4 && offsetof(fugue_plugin, abi_minor) == 8,
               "fugue_plugin must start with struct_size, abi_major, abi_minor");
#endif

/* A translation unit must declare something. */
int fugue_abi_layout_checked(void);
int fugue_abi_layout_checked(void) { return FUGUE_ABI_VERSION_MAJOR; }
