/* The ABI 1.2 header as it was released, kept so that a plugin built against it can be shown to be
 * refused by the 2.0 core (tests/plugins/abi_1_plugin.c). Not for new code. */
/* fugue_plugin.h: the versioned C ABI between the Fugue core and its operation plugins.
 *
 * A plugin is a shared library that exports one function, FUGUE_PLUGIN_ENTRY_NAME, returning a table
 * (fugue_plugin) that describes the plugin and its operations. The core loads it at run time.
 *
 * Rules of the boundary (they keep old plugins working with newer cores and the other way round):
 *  - Pure C. No C++ type, exception or RTTI crosses. Every call returns a fugue_status; on failure it
 *    writes a message into the fugue_error it was given and leaves its other outputs untouched.
 *  - Every struct starts with its own size (struct_size). Minor versions only append fields at the end;
 *    a reader checks struct_size before touching a field added after 1.0. Arrays of descriptors are
 *    walked with the element's own struct_size as stride (see FUGUE_NTH).
 *  - A different major version is refused by the core, with both versions named.
 *  - Enumerations cross as int32_t, never as C enums, so their size is fixed.
 *  - Strings handed to a plugin are owned by the core and valid for the duration of the call; strings
 *    in a plugin's tables are owned by the plugin and must live as long as the library is loaded.
 */
#ifndef FUGUE_PLUGIN_H
#define FUGUE_PLUGIN_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FUGUE_ABI_VERSION_MAJOR 1
#define FUGUE_ABI_VERSION_MINOR 2 /* 1.1: STENCIL operands (fugue_call.stencils), emit read_at;
                                     1.2: fugue_op_desc.test_cases */

#define FUGUE_MAX_RANK 8
#define FUGUE_MAX_OPERANDS 16
#define FUGUE_MAX_WORKSPACES 4
#define FUGUE_ERROR_CAPACITY 2048

/* The exported entry point every plugin defines (see FUGUE_DEFINE_PLUGIN_ENTRY below). */
#define FUGUE_PLUGIN_ENTRY_NAME "fugue_plugin_entry"

/* Walk an array of descriptors whose element size is given by the first element's struct_size. */
#define FUGUE_NTH(type, base, i) \
  ((const type*)((const char*)(base) + (size_t)(i) * (size_t)((base)->struct_size)))
#define FUGUE_NTH_MUTABLE(type, base, i) \
  ((type*)((char*)(base) + (size_t)(i) * (size_t)((base)->struct_size)))

/* The size a struct has in ABI 1.0: up to and including its last 1.0 field. A reader accepts any
 * struct at least this large and reads later fields only when struct_size covers them. */
#define FUGUE_SIZE_UP_TO(type, member) (offsetof(type, member) + sizeof(((type*)0)->member))

/* ---------------------------------------------------------------------------------------------- */
/* Statuses and errors                                                                             */

typedef int32_t fugue_status;
#define FUGUE_OK 0
#define FUGUE_ERROR_INVALID_ARGUMENT 1 /* the program is wrong: operand types, shapes, attributes */
#define FUGUE_ERROR_UNSUPPORTED 2      /* valid, but this operation cannot do it (dtype, level, size) */
#define FUGUE_ERROR_DEVICE 3           /* an OpenCL call failed */
#define FUGUE_ERROR_INTERNAL 4         /* a bug in the plugin */

typedef struct fugue_error {
  uint32_t struct_size;
  char message[FUGUE_ERROR_CAPACITY]; /* NUL-terminated, one line, names the operand at fault */
} fugue_error;

/* ---------------------------------------------------------------------------------------------- */
/* Types of operands                                                                               */

typedef int32_t fugue_dtype;
#define FUGUE_DTYPE_NONE 0
#define FUGUE_DTYPE_F32 1
#define FUGUE_DTYPE_F64 2
#define FUGUE_DTYPE_I32 3
#define FUGUE_DTYPE_I64 4
#define FUGUE_DTYPE_U8 5
#define FUGUE_DTYPE_U32 6
#define FUGUE_DTYPE_COUNT 7
#define FUGUE_DTYPE_BIT(d) (1u << (uint32_t)(d))
#define FUGUE_DTYPES_FLOAT (FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64))
#define FUGUE_DTYPES_INT                                                                   \
  (FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) |                   \
   FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32))
#define FUGUE_DTYPES_ALL (FUGUE_DTYPES_FLOAT | FUGUE_DTYPES_INT)

typedef int32_t fugue_kind;
#define FUGUE_KIND_NONE 0
#define FUGUE_KIND_ARRAY 1  /* dense, row-major, lives on the device */
#define FUGUE_KIND_SCALAR 2 /* one value that lives on the device (a result, or a run-time value) */
#define FUGUE_KIND_CONST 3  /* a value known when kernels are generated: baked into the source */
/* ABI 1.1: a stencil (points with integer offsets and weights, and a border rule), known when kernels
 * are generated. Its type has the weights' dtype, rank = the grid's rank, shape = the footprint
 * (2 * radius + 1 per axis); the points themselves are in fugue_call.stencils. */
#define FUGUE_KIND_STENCIL 4
#define FUGUE_KIND_BIT(k) (1u << (uint32_t)(k))

typedef struct fugue_type {
  uint32_t struct_size;
  fugue_kind kind;
  fugue_dtype dtype;
  uint32_t rank; /* 0 for scalars and consts */
  int64_t shape[FUGUE_MAX_RANK];
  double const_value; /* kind == CONST: the value */
} fugue_type;

/* ---------------------------------------------------------------------------------------------- */
/* Signature                                                                                       */

typedef int32_t fugue_role;
#define FUGUE_ROLE_IN 1
#define FUGUE_ROLE_OUT 2

typedef struct fugue_operand_desc {
  uint32_t struct_size;
  const char* name;
  fugue_role role;
  uint32_t kinds;  /* FUGUE_KIND_BIT mask of accepted kinds */
  uint32_t dtypes; /* FUGUE_DTYPE_BIT mask of accepted dtypes */
  const char* doc;
} fugue_operand_desc;

typedef int32_t fugue_attr_type;
#define FUGUE_ATTR_NUMBER 1 /* a JSON number */
#define FUGUE_ATTR_INT 2    /* a JSON integer */
#define FUGUE_ATTR_STRING 3
#define FUGUE_ATTR_DTYPE 4 /* a dtype name: "f32", "i64", ... */

typedef struct fugue_attr_desc {
  uint32_t struct_size;
  const char* name;
  fugue_attr_type type;
  int32_t required;
  double default_number;      /* NUMBER and INT */
  const char* default_string; /* STRING and DTYPE */
  const char* doc;
} fugue_attr_desc;

typedef struct fugue_attr_value {
  uint32_t struct_size;
  const char* name;
  fugue_attr_type type;
  double number;      /* NUMBER */
  int64_t integer;    /* INT */
  const char* string; /* STRING */
  fugue_dtype dtype;  /* DTYPE */
} fugue_attr_value;

/* ABI 1.1: what a grid stencil does at the border (reads outside the grid). */
typedef int32_t fugue_border;
#define FUGUE_BORDER_CLAMP 1    /* the nearest cell inside */
#define FUGUE_BORDER_ZERO 2     /* zero */
#define FUGUE_BORDER_PERIODIC 3 /* wraps around */
#define FUGUE_BORDER_MIRROR 4   /* reflected about the edge cell: -1 -> 1, n -> n - 2 */

/* ABI 1.1: the value of a STENCIL operand. Point p has weight weights[p] at the offset
 * offsets[p * rank + d] along axis d (row-major axis order: for 2-D, [row, column]). */
typedef struct fugue_stencil {
  uint32_t struct_size;
  uint32_t rank;
  uint32_t num_points;
  const int64_t* offsets; /* [num_points * rank] */
  const double* weights;  /* [num_points] */
  fugue_border border;
} fugue_stencil;

/* One use of an operation in a program: its operands' types and its attributes. */
typedef struct fugue_call {
  uint32_t struct_size;
  uint32_t num_operands;       /* the signature's operand count */
  const fugue_type* operands;  /* signature order; OUT entries are valid only after infer */
  uint32_t num_attrs;          /* the signature's attribute count */
  const fugue_attr_value* attrs; /* signature order; the core fills in defaults */
  /* ABI 1.1 (read only when struct_size covers it): [num_operands], walk with FUGUE_NTH; entry k
   * describes operand k when it is a STENCIL (other entries have num_points 0). */
  const fugue_stencil* stencils;
} fugue_call;

/* ---------------------------------------------------------------------------------------------- */
/* Plans: level, launch parameters and one partition per operand                                  */

typedef int32_t fugue_level;
#define FUGUE_LEVEL_DEVICE 0  /* the operation enqueues its own kernels (execute) */
#define FUGUE_LEVEL_BLOCK 1   /* one kernel body per work-group (emit, phase BODY) */
#define FUGUE_LEVEL_ITEM 2    /* code inside a work-item; barriers and local memory allowed */
#define FUGUE_LEVEL_ELEMENT 3 /* code inside the per-element loop; no communication */

/* A partition is a promise: the operation reads or writes nothing of the operand outside it. */
typedef int32_t fugue_partition_kind;
#define FUGUE_PARTITION_NONE 0 /* not touched by core-generated code (device level owns it) */
/* Element i of the iteration space touches element i of the operand (same shape), widened by
 * `halo` on reads. The core turns it into concrete tiles once it has chosen launch parameters. */
#define FUGUE_PARTITION_ELEMENTWISE 1
/* Explicit tiles: each work-group owns group_tile elements per axis, each work-item item_tile
 * elements spaced item_stride apart, with a read halo; `cyclic` = tiles repeat every
 * (groups x group_tile), i.e. a grid-stride loop. */
#define FUGUE_PARTITION_TILE 2
#define FUGUE_PARTITION_BATCH 3 /* one entry along batch_axis per work-group */
#define FUGUE_PARTITION_WHOLE 4 /* any work-item may read all of it; written only by one work-item */

typedef struct fugue_partition {
  uint32_t struct_size;
  fugue_partition_kind kind;
  uint32_t rank;
  int64_t group_tile[FUGUE_MAX_RANK];
  int64_t item_tile[FUGUE_MAX_RANK];
  int64_t item_stride[FUGUE_MAX_RANK];
  int64_t halo[FUGUE_MAX_RANK];
  int32_t batch_axis;
  int32_t cyclic;
  /* Plans embed partitions by value, so their layout is fixed: later minor versions give these
   * fields a meaning, with 0 meaning the 1.0 behaviour. Leave them 0. */
  int64_t reserved[4];
} fugue_partition;

/* Launch parameters an operation accepts; the core picks the work-group size within them. */
typedef struct fugue_launch {
  uint32_t struct_size;
  uint32_t work_dim;
  int64_t iteration[3];   /* ELEMENT/ITEM: the index space (elements); BLOCK: work-groups */
  int64_t local_min;      /* accepted work-group sizes (items, dimension 0) */
  int64_t local_max;
  int64_t local_multiple; /* the size must be a multiple of this (1: any) */
  int64_t local_preferred;
  int64_t reserved[4]; /* embedded in fugue_plan by value: see fugue_partition.reserved */
} fugue_launch;

/* Code phases of core-generated kernels, in the order they appear. */
#define FUGUE_PHASE_PROLOGUE 1u  /* before the element loop (declare accumulators) */
#define FUGUE_PHASE_ELEMENT 2u   /* inside the element loop */
#define FUGUE_PHASE_EPILOGUE 4u  /* after the loop; barriers and local memory allowed (ITEM) */
#define FUGUE_PHASE_FINALIZE 8u  /* a second kernel of one work-group reading the workspaces */
#define FUGUE_PHASE_BODY 16u     /* BLOCK level: the whole work-group body */

typedef struct fugue_plan {
  uint32_t struct_size;
  fugue_level level;
  fugue_launch launch;
  uint32_t phases; /* FUGUE_PHASE_* mask the operation emits */
  uint32_t num_partitions; /* = num_operands */
  fugue_partition partitions[FUGUE_MAX_OPERANDS];
  /* Global scratch the core allocates: workspace k holds workspace_elements[k] values of
   * workspace_dtype[k] per work-group (+ the FINALIZE kernel reads them all). */
  uint32_t num_workspaces;
  fugue_dtype workspace_dtype[FUGUE_MAX_WORKSPACES];
  int64_t workspace_elements[FUGUE_MAX_WORKSPACES];
  uint64_t local_mem_bytes; /* per work-group, for the planner's cost model */
  uint32_t registers;       /* estimated live values per work-item */
} fugue_plan;

/* ---------------------------------------------------------------------------------------------- */
/* Emit: OpenCL C through accessors the core provides                                              */

typedef struct fugue_emit_context fugue_emit_context; /* opaque, owned by the core */

#define FUGUE_BUILTIN_INDEX 1         /* flat index of the current element (ELEMENT phase) */
#define FUGUE_BUILTIN_LOCAL_ID 2      /* get_local_id(0) */
#define FUGUE_BUILTIN_GROUP_ID 3      /* get_group_id(0) */
#define FUGUE_BUILTIN_LOCAL_SIZE 4    /* the work-group size, a compile-time literal (any 1..1024) */
#define FUGUE_BUILTIN_NUM_GROUPS 5    /* work-groups of the main kernel (a run-time value; may be 0 in FINALIZE) */

/* Strings returned by the accessors are owned by the core and valid until emit returns. */
typedef struct fugue_emit_api {
  uint32_t struct_size;
  fugue_emit_context* context;
  uint32_t phase; /* the FUGUE_PHASE_* being emitted */
  /* An rvalue for operand k at the current element (array, ELEMENT phase), or its value (scalar,
   * const: a double literal to cast). Outside the ELEMENT phase an array reads as its pointer. */
  const char* (*read)(fugue_emit_context* context, uint32_t operand);
  /* An lvalue for operand k at the current element (array) or the value (scalar). */
  const char* (*write)(fugue_emit_context* context, uint32_t operand);
  /* The OpenCL C type name of a dtype ("float", "uchar", ...). */
  const char* (*ctype)(fugue_emit_context* context, fugue_dtype dtype);
  /* A fresh identifier, unique in the kernel, stable across phases of the same call for the same stem. */
  const char* (*name)(fugue_emit_context* context, const char* stem);
  /* A FUGUE_BUILTIN_* expression. */
  const char* (*builtin)(fugue_emit_context* context, int32_t which);
  /* `__global T*` naming workspace k. */
  const char* (*workspace)(fugue_emit_context* context, uint32_t k);
  /* Append code to the kernel being built. */
  void (*append)(fugue_emit_context* context, const char* code);
  /* ABI 1.1 (check struct_size): an rvalue for the element of array operand k at `index`, an OpenCL C
   * expression of its flat row-major index, in any phase. The plan must partition the operand
   * ELEMENTWISE with a halo covering every index used, or WHOLE; the core then keeps it in global
   * memory (a value read that way is never promoted, and never produced in the same kernel). */
  const char* (*read_at)(fugue_emit_context* context, uint32_t operand, const char* index);
} fugue_emit_api;

/* ---------------------------------------------------------------------------------------------- */
/* Execute: device-level operations enqueue their own work through core services                  */

typedef struct fugue_services_context fugue_services_context; /* opaque, owned by the core */

typedef struct fugue_device_services {
  uint32_t struct_size;
  fugue_services_context* context;
  cl_context cl_context;
  cl_device_id device;
  cl_command_queue queue; /* in-order, profiling enabled */
  /* The buffer holding operand k (a scalar is a one-element buffer). Owned by the core. */
  cl_mem (*buffer)(fugue_services_context* context, uint32_t operand);
  /* A program built from source (cached in memory and on disk). Owned by the core. */
  fugue_status (*program)(fugue_services_context* context, const char* source, const char* options,
                          cl_program* program, fugue_error* error);
  /* A scratch buffer, released by the core once the operation's work has finished. */
  fugue_status (*scratch)(fugue_services_context* context, size_t bytes, cl_mem* buffer,
                          fugue_error* error);
  /* Hand an event of enqueued work to the core, for profiles and benchmarks; the core releases it. */
  void (*track)(fugue_services_context* context, cl_event event, const char* name);
} fugue_device_services;

/* ---------------------------------------------------------------------------------------------- */
/* Costs and CPU references                                                                        */

typedef struct fugue_cost {
  uint32_t struct_size;
  double bytes; /* global memory moved (read + written) when the op runs alone */
  double flops;
} fugue_cost;

typedef struct fugue_host_array {
  uint32_t struct_size;
  fugue_type type;
  void* data; /* C order; inputs are read-only */
  uint64_t bytes;
} fugue_host_array;

/* ---------------------------------------------------------------------------------------------- */
/* Operations and plugins                                                                          */

typedef struct fugue_op_desc fugue_op_desc;

typedef fugue_status (*fugue_infer_fn)(const fugue_op_desc* op, const fugue_call* call,
                                       fugue_type* types /* [num_operands]: write OUT entries */,
                                       fugue_error* error);
typedef fugue_status (*fugue_plan_fn)(const fugue_op_desc* op, const fugue_call* call,
                                      fugue_plan* plan, fugue_error* error);
typedef fugue_status (*fugue_emit_fn)(const fugue_op_desc* op, const fugue_call* call,
                                      const fugue_plan* plan, const fugue_emit_api* api,
                                      fugue_error* error);
typedef fugue_status (*fugue_execute_fn)(const fugue_op_desc* op, const fugue_call* call,
                                         const fugue_device_services* services, fugue_error* error);
typedef fugue_status (*fugue_cost_fn)(const fugue_op_desc* op, const fugue_call* call,
                                      fugue_cost* cost, fugue_error* error);
typedef fugue_status (*fugue_reference_fn)(const fugue_op_desc* op, const fugue_call* call,
                                           fugue_host_array* operands /* [num_operands] */,
                                           fugue_error* error);

struct fugue_op_desc {
  uint32_t struct_size;
  const char* name; /* "family.op", unique across loaded plugins */
  const char* doc;
  uint32_t num_operands;
  const fugue_operand_desc* operands; /* walk with FUGUE_NTH */
  uint32_t num_attrs;
  const fugue_attr_desc* attrs; /* walk with FUGUE_NTH; may be NULL when num_attrs == 0 */
  fugue_infer_fn infer;
  fugue_plan_fn plan;
  fugue_emit_fn emit;       /* ELEMENT, ITEM and BLOCK levels */
  fugue_execute_fn execute; /* DEVICE level */
  fugue_cost_fn cost;
  fugue_reference_fn reference;
  double tolerance_f32; /* error bound vs the reference, float inputs: |device - reference| <=
                           tolerance * max(1, |reference|) (relative above 1, absolute below) */
  double tolerance_f64;
  double test_low;      /* the domain random test inputs are drawn from */
  double test_high;
  void* user_data;      /* the plugin's own */
  /* ABI 1.1 (read only when struct_size covers it): FUGUE_OP_* traits. */
  uint32_t traits;
  /* ABI 1.2 (read only when struct_size covers it; may be NULL): the calls the conformance suite
   * (`fugue conformance`) runs, as JSON text: an array of cases, each an object with
   *   "shape":  the shape of array inputs not named in "inputs" (e.g. [7, 5]);
   *   "inputs": per input operand, a symbol in the program syntax ({"kind": "const", "value": 2},
   *             {"kind": "stencil", "border": "clamp", "points": [...]}, {"kind": "array",
   *             "shape": [3], "dtype": "u8"}); dtype defaults to the dtype under test;
   *   "attrs":  attribute values;
   *   "dtypes": the dtypes to run it with (default: every dtype the first array input accepts);
   *   "name":   a label for the report (default "case N").
   * NULL: the suite derives calls from the signature (arrays of one shape, ranks 1 to 3). */
  const char* test_cases;
};

/* ABI 1.1 traits of an operation. */
/* Its one output equals its one input, element for element (same kind, dtype and shape): the core
 * may replace a call by a buffer swap when the input's value is not needed afterwards. */
#define FUGUE_OP_IDENTITY 1u

typedef struct fugue_plugin {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;
  const char* version;
  const char* description;
  uint32_t num_ops;
  const fugue_op_desc* const* ops; /* pointers, so each op may carry its own struct_size */
} fugue_plugin;

/* The entry point: the core passes its ABI version; the table stays owned by the plugin. */
typedef const fugue_plugin* (*fugue_plugin_entry_fn)(uint32_t core_abi_major, uint32_t core_abi_minor);

#if defined(_WIN32)
#define FUGUE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FUGUE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define FUGUE_EXTERN_C extern "C"
#else
#define FUGUE_EXTERN_C
#endif

/* Declares the entry point with C linkage and default visibility. */
#define FUGUE_DEFINE_PLUGIN_ENTRY                                                            \
  FUGUE_EXTERN_C FUGUE_PLUGIN_EXPORT const fugue_plugin* fugue_plugin_entry(uint32_t core_abi_major, \
                                                                            uint32_t core_abi_minor)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUGUE_PLUGIN_H */
