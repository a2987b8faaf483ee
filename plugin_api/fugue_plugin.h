/* fugue_plugin.h: the versioned C ABI between the Fugue core and its operation plugins (ABI 2.0).
 *
 * A plugin is a shared library that exports one function, FUGUE_PLUGIN_ENTRY_NAME, returning a table
 * (fugue_plugin) that describes the plugin and its operations. The core loads it at run time.
 *
 * Rules of the boundary (they keep old plugins working with newer cores and the other way round):
 *  - Pure C. No C++ type, exception or RTTI crosses. Every call returns a fugue_status; on failure it
 *    writes a message into the fugue_error it was given and leaves its other outputs untouched.
 *  - Every struct starts with its own size (struct_size). Minor versions only append fields at the end
 *    ("end of 2.0" marks where 2.0 stops); a reader checks struct_size before touching a later field.
 *    Arrays of descriptors are walked with the element's own struct_size as stride (see FUGUE_NTH).
 *  - No struct embeds another struct: they refer to each other by pointer, so each can grow on its own.
 *    Arrays cross as pointer + count; there are no fixed capacities inside structs. Where a plugin
 *    writes into memory the core owns (an output's shape, a plan's partitions), the core says how many
 *    entries there are.
 *  - plugin_api/fugue_plugin_layout.c asserts the offset of every field: 2.x may only append.
 *  - A different major version is refused by the core, with both versions named. The first three
 *    fields of fugue_plugin (struct_size, abi_major, abi_minor) keep their place in every version.
 *  - Enumerations cross as int32_t, never as C enums, so their size is fixed.
 *  - Strings and arrays handed to a plugin are owned by the core and valid for the duration of the
 *    call; strings in a plugin's tables are owned by the plugin and must live as long as the library.
 */
#ifndef FUGUE_PLUGIN_H
#define FUGUE_PLUGIN_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "fugue_dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FUGUE_ABI_VERSION_MAJOR 2
#define FUGUE_ABI_VERSION_MINOR 22

/* The exported entry point every plugin defines (see FUGUE_DEFINE_PLUGIN_ENTRY below). */
#define FUGUE_PLUGIN_ENTRY_NAME "fugue_plugin_entry"

/* Walk an array of structs whose element size is given by the first element's struct_size. */
#define FUGUE_NTH(type, base, i) \
  ((const type*)((const char*)(base) + (size_t)(i) * (size_t)((base)->struct_size)))
#define FUGUE_NTH_MUTABLE(type, base, i) \
  ((type*)((char*)(base) + (size_t)(i) * (size_t)((base)->struct_size)))

/* The size of a struct up to and including `member`: a reader accepts any struct at least as large as
 * the version it needs and reads later fields only when struct_size covers them. */
#define FUGUE_SIZE_UP_TO(type, member) (offsetof(type, member) + sizeof(((type*)0)->member))

/* ---------------------------------------------------------------------------------------------- */
/* Statuses and errors                                                                             */

typedef int32_t fugue_status;
#define FUGUE_OK 0
#define FUGUE_ERROR_INVALID_ARGUMENT 1 /* the program is wrong: operand types, shapes, attributes */
#define FUGUE_ERROR_UNSUPPORTED 2      /* valid, but this operation cannot do it (dtype, level, size) */
#define FUGUE_ERROR_DEVICE 3           /* an OpenCL call failed */
#define FUGUE_ERROR_INTERNAL 4         /* a bug in the plugin */

/* Where a failing call writes its message: at most `capacity` bytes, NUL included, one line, naming
 * the operand at fault. The buffer is the core's. */
typedef struct fugue_error {
  uint32_t struct_size;
  uint32_t capacity;
  char* message;
  /* end of 2.0 */
} fugue_error;

/* ---------------------------------------------------------------------------------------------- */
/* Types of operands                                                                               */

typedef int32_t fugue_kind;
#define FUGUE_KIND_NONE 0
#define FUGUE_KIND_ARRAY 1  /* dense, row-major, lives on the device */
#define FUGUE_KIND_SCALAR 2 /* one value that lives on the device (a result, or a run-time value) */
#define FUGUE_KIND_CONST 3  /* a real number known when kernels are generated: baked into the source */
/* A kind a plugin defines (fugue_kind_desc), named by fugue_type.kind_name: a stencil, a sparse
 * format. An operand accepts plugin kinds by name (fugue_operand_desc.plugin_kinds). */
#define FUGUE_KIND_PLUGIN 4
/* 2.2: a user function, a program's "function" symbol: parameters and a body of element-wise operations.
 * It has no device value (dtype FUGUE_DTYPE_NONE, rank 0): the operation calls it in its own code
 * (fugue_emit_api.call_function) and its reference evaluates it (fugue_call.functions). */
#define FUGUE_KIND_FUNCTION 5
#define FUGUE_KIND_BIT(k) (1u << (uint32_t)(k))

/* An element offset and per-axis strides (in elements, negative allowed) into the array a value
 * views. 2.0 defines the layout only: the core refuses a call whose operand has a view. */
typedef struct fugue_view {
  uint32_t struct_size;
  uint32_t rank;
  int64_t offset;
  const int64_t* strides; /* [rank] */
  /* end of 2.0 */
} fugue_view;

typedef struct fugue_type {
  uint32_t struct_size;
  fugue_kind kind;
  fugue_dtype dtype;
  uint32_t rank; /* 0 for scalars and consts */
  /* [rank] extents. An output handed to infer points at `shape_capacity` entries the plugin may
   * write (and sets rank); everywhere else the plugin must not write through it. */
  int64_t* shape;
  uint32_t shape_capacity;
  double const_value; /* kind == CONST: the value */
  const fugue_view* view; /* NULL: dense row-major (the only layout 2.0 runs) */
  /* Compile-time data of the kind (a stencil's points, in the layout its plugin documents), owned
   * by the core; NULL when it has none. */
  const void* metadata;
  uint64_t metadata_bytes;
  const char* kind_name; /* kind == PLUGIN: the kind's name ("stencil"); NULL otherwise. An OUT entry
                            infer writes points at a string that lives as long as the plugin. */
  /* Run-time extents: bit d set when axis d's length is known only at run time; shape[d] is then its
   * capacity (the most it can be). 2.0 allows axis 0 only, so the elements present are always the
   * first ones, row-major. Only operations with FUGUE_OP_RUNTIME_EXTENTS take such operands. */
  uint32_t runtime_axes;
  /* A kind with device storage (FUGUE_KIND_FLAG_STORAGE): its parts, each a dense array (kind ARRAY,
   * its own dtype and shape), in the order the kind descriptor names them; walk with FUGUE_NTH. 0 and
   * NULL for every other type. Owned by the core. */
  uint32_t num_parts;
  const struct fugue_type* parts;
  /* end of 2.0 */
} fugue_type;

/* ---------------------------------------------------------------------------------------------- */
/* Signature                                                                                       */

typedef int32_t fugue_role;
#define FUGUE_ROLE_IN 1  /* read only */
#define FUGUE_ROLE_OUT 2 /* written; its type comes from infer */
/* Read and updated in place: the operation sees the old value and leaves the new one in the same
 * storage (a device buffer, a host array); no fresh buffer is made. Its type is the input's: infer
 * must not write it. An array, a scalar or a kind with storage, never a compile-time kind. A program names the same symbol
 * in `out` and in `in` for it. */
#define FUGUE_ROLE_INOUT 3

typedef struct fugue_operand_desc {
  uint32_t struct_size;
  const char* name;
  fugue_role role;
  uint32_t kinds;  /* FUGUE_KIND_BIT mask of accepted kinds */
  uint32_t dtypes; /* FUGUE_DTYPE_BIT mask of accepted dtypes */
  const char* doc;
  /* With FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN) in kinds: the plugin kinds accepted, by name, separated by
   * spaces ("stencil"); NULL otherwise. */
  const char* plugin_kinds;
  /* end of 2.0 */
  uint32_t flags; /* 2.3: FUGUE_OPERAND_* */
  /* end of 2.3 */
  /* 2.5: an optional IN operand a program leaves out reads as this number, a const, as if the program
   * had written the number in its `in` list. */
  double default_value;
  /* end of 2.5 */
} fugue_operand_desc;

/* 2.3: an OUT operand a program may leave out of its `out` list (an operation's extra results, such as
 * a factorization's `info`): only the last ones of the list may be left out. The operation still writes
 * it; the core gives it a temporary no program can name, dead once the operation is done. 2.5: also an
 * IN operand, the last ones of `in` (weights a histogram may do without): it must accept
 * FUGUE_KIND_CONST, and left out it is the const default_value. */
#define FUGUE_OPERAND_OPTIONAL 1u

typedef int32_t fugue_attr_type;
#define FUGUE_ATTR_NUMBER 1 /* a JSON number */
#define FUGUE_ATTR_INT 2    /* a JSON integer */
#define FUGUE_ATTR_STRING 3
#define FUGUE_ATTR_DTYPE 4 /* a dtype name: "f32", "i64", ... */
#define FUGUE_ATTR_BOOL 5  /* 2.3: a JSON true or false; the value's integer (and number) is 1 or 0 */

typedef struct fugue_attr_desc {
  uint32_t struct_size;
  const char* name;
  fugue_attr_type type;
  int32_t required;
  double default_number;      /* NUMBER and INT */
  const char* default_string; /* STRING and DTYPE */
  const char* doc;
  /* end of 2.0 */
} fugue_attr_desc;

typedef struct fugue_attr_value {
  uint32_t struct_size;
  const char* name;
  fugue_attr_type type;
  double number;      /* NUMBER */
  int64_t integer;    /* INT */
  const char* string; /* STRING */
  fugue_dtype dtype;  /* DTYPE */
  /* end of 2.0 */
} fugue_attr_value;

/* What the core knows of the device a call is planned for. Strings and arrays are the core's. */
typedef int32_t fugue_device_type;
#define FUGUE_DEVICE_CPU 1
#define FUGUE_DEVICE_GPU 2
#define FUGUE_DEVICE_ACCELERATOR 3
#define FUGUE_DEVICE_OTHER 4

#define FUGUE_DEVICE_FP64 1u             /* doubles (cl_khr_fp64 or OpenCL 1.2+ with double config) */
#define FUGUE_DEVICE_INT64_ATOMICS 2u    /* cl_khr_int64_base_atomics */
#define FUGUE_DEVICE_SUBGROUPS 4u        /* cl_khr_subgroups or OpenCL 3.0 sub-groups */

typedef struct fugue_device_desc {
  uint32_t struct_size;
  fugue_device_type type;
  const char* name;
  const char* vendor;
  const char* driver_version;
  uint32_t compute_units;
  uint32_t features;            /* FUGUE_DEVICE_* */
  uint64_t max_work_group_size;
  uint64_t local_mem_bytes;     /* per work-group */
  uint64_t global_mem_bytes;
  uint64_t max_alloc_bytes;     /* the largest single buffer */
  uint32_t num_subgroup_sizes;  /* 0 when unknown */
  const uint64_t* subgroup_sizes;
  const char* extensions;       /* space-separated, as OpenCL reports them */
  /* end of 2.0 */
  /* 2.8: the folder holding this device's tuning tables, one "<tuner>.json" each as `fugue tune
   * <tuner>` writes them (fugue_tuner_desc); a table that is not there is the plugin's to default.
   * NULL or "" where the machine has no cache folder. */
  const char* tuning_folder;
  /* end of 2.8 */
  /* 2.10: how many values of f32 and of f64 the device's arithmetic takes at once (OpenCL's
   * CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT and _DOUBLE: a CPU's SIMD lanes, 1 on GPUs, which run work-items
   * side by side instead); 0 when unknown. Plans for CPUs size their vector types from it. */
  uint32_t native_vector_width_float;
  uint32_t native_vector_width_double;
  /* end of 2.10 */
  /* 2.15: the device's instruction set where the driver says it, so that plans may use instructions
   * only some generations have: "sm_90" for an NVIDIA GPU of compute capability 9.0 (the driver's
   * cl_nv_device_attribute_query; its OpenCL compiler takes inline PTX of that architecture), "" where
   * unknown (other vendors, descriptions that do not give it). Never NULL from a 2.15 core. */
  const char* architecture;
  /* end of 2.15 */
} fugue_device_desc;

/* 2.2: what an operation may ask of its FUNCTION operands (user functions), in every call that gets a
 * fugue_call. Functions take any dtypes their bodies' operations take: the result's dtype follows from
 * the arguments'. Owned by the core. */
typedef struct fugue_function_context fugue_function_context; /* opaque, owned by the core */
typedef struct fugue_function_services {
  uint32_t struct_size;
  fugue_function_context* context;
  /* How many parameters FUNCTION operand k takes; 0 for an operand that is not a function. */
  uint32_t (*arity)(fugue_function_context* context, uint32_t operand);
  /* The dtype FUNCTION operand k returns for arguments of dtypes `arg_dtypes` (its arity of them).
   * INVALID_ARGUMENT, with a message naming the function's statement at fault, when its body does not
   * take them (infer passes the message on). */
  fugue_status (*result)(fugue_function_context* context, uint32_t operand, uint32_t num_args,
                         const fugue_dtype* arg_dtypes, fugue_dtype* result, fugue_error* error);
  /* Evaluates FUNCTION operand k on the host, for references: `count` calls at once, argument i of call
   * j at args[i][j] (C arrays of arg_dtypes[i]), the result of call j into result[j] (of the dtype
   * `result` gives). The body's operations' references compute it. */
  fugue_status (*evaluate)(fugue_function_context* context, uint32_t operand, uint32_t num_args,
                           const fugue_dtype* arg_dtypes, const void* const* args, uint64_t count, void* result,
                           fugue_error* error);
  /* end of 2.2 */
} fugue_function_services;

/* One use of an operation in a program: its operands' types and its attributes. */
typedef struct fugue_call {
  uint32_t struct_size;
  uint32_t num_operands;         /* the signature's operand count */
  const fugue_type* operands;    /* signature order, walk with FUGUE_NTH; OUT entries are valid only
                                    after infer (INOUT entries always: they are inputs too). 2.18: in
                                    infer, an OUT entry whose symbol the program declared with a kind
                                    with storage holds that declared type (kind_name, parts, metadata):
                                    an operation whose result's layout the program chooses
                                    (sparse.convert) reads it there; any other OUT entry is kind NONE */
  uint32_t num_attrs;            /* the signature's attribute count */
  const fugue_attr_value* attrs; /* signature order, walk with FUGUE_NTH; the core fills in defaults */
  /* The device the call is planned for: set for plan, emit and execute; NULL for infer, cost and
   * reference, which must not depend on the device. */
  const fugue_device_desc* device;
  /* end of 2.0 */
  /* 2.2: the services of the call's FUNCTION operands; NULL when it has none. */
  const fugue_function_services* functions;
  /* end of 2.2 */
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
/* 2.2: an input read around each element, as ELEMENTWISE with `halo`, that the core may stage a
 * work-group's tile of (its elements plus the halo) in local memory: at ELEMENT level, read through
 * read_offset (from the tile where the core staged one) or read_at (always global memory). group_tile,
 * item_tile and item_stride stay 0: the core chooses the tiles. */
#define FUGUE_PARTITION_TILE 2
/* The operand is a batch of entries, one per work-group (a BLOCK-level plan: launch.iteration[0] is
 * the number of entries; with fugue_plan.entry_teams, one per team of work-items). Axes 0..batch_axis number the entries (row-major); the axes after it are one
 * entry, and element j of the current entry is reached with read_at / write_at (j in [0, entry size)).
 * batch_axis = -1: the whole operand is a single entry. Every BATCH operand of a plan has
 * launch.iteration[0] entries. The core keeps an entry in local memory where it decides to (a value
 * produced in the same kernel, an input read again and again), else in global memory. */
#define FUGUE_PARTITION_BATCH 3
#define FUGUE_PARTITION_WHOLE 4 /* any work-item may read all of it; written only by one work-item */
/* 2.1: an INOUT array the operation updates only through atomic_at, at positions its data decide
 * (h[index[i]] += v[i]); no other operation of the kernel touches it. The core may give each
 * work-group a private copy in local memory: the operation asks for none of that, it only says which
 * atomic update it makes. 2.5: or an OUT array (a histogram's counts), which the core fills with zeros
 * (all bytes 0) before the kernel, the updates starting from there. 2.7: or stores through write_at,
 * each element by one work-item at most. */
#define FUGUE_PARTITION_SCATTER 5

/* The per-axis arrays point at `rank` entries the core owns (rank = the operand's rank), zeroed
 * before plan is called. */
typedef struct fugue_partition {
  uint32_t struct_size;
  fugue_partition_kind kind;
  uint32_t rank;
  int64_t* halo;        /* ELEMENTWISE reads reach this far beyond the element, per axis */
  int64_t* group_tile;  /* TILE: 0, the core's choice (other values reserved) */
  int64_t* item_tile;
  int64_t* item_stride;
  int32_t batch_axis;   /* BATCH: the last axis that numbers entries (-1: one entry) */
  int32_t cyclic;
  /* end of 2.0 */
} fugue_partition;

/* Launch parameters an operation accepts; the core picks the work-group size within them. */
typedef struct fugue_launch {
  uint32_t struct_size;
  uint32_t work_dim;
  int64_t iteration[3];   /* ELEMENT/ITEM: the index space (elements); BLOCK: work-groups (OpenCL
                             has at most three dimensions) */
  int64_t local_min;      /* accepted work-group sizes (items, dimension 0) */
  int64_t local_max;
  int64_t local_multiple; /* the size must be a multiple of this (1: any) */
  int64_t local_preferred;
  /* end of 2.0 */
} fugue_launch;

/* Global scratch the core allocates for a kernel: `elements_per_group` values of `dtype` per
 * work-group (+ the FINALIZE kernel reads them all). 2.4, BLOCK level: per entry slot instead (per
 * team with fugue_plan.entry_teams, else per work-group), for an entry's scratch too large for local
 * memory; the emitter's `workspace` is then the current slot's own pointer, reused by the slot's
 * next entries. */
typedef struct fugue_workspace {
  uint32_t struct_size;
  fugue_dtype dtype;
  int64_t elements_per_group;
  /* end of 2.0 */
} fugue_workspace;

/* Code phases of core-generated kernels, in the order they appear. */
#define FUGUE_PHASE_PROLOGUE 1u  /* before the element loop (declare accumulators) */
#define FUGUE_PHASE_ELEMENT 2u   /* inside the element loop */
#define FUGUE_PHASE_EPILOGUE 4u  /* after the loop; barriers and local memory allowed (ITEM) */
/* FINALIZE: one work-group reading the workspaces, in a second kernel or (GPUs; 2.20) at the end of the
 * main kernel in the last work-group to finish. So its code declares names through `name` (they differ
 * from the other phases'), asks for the group's number through `builtin` (GROUP_ID is 0 there, never
 * get_group_id), and does not return. */
#define FUGUE_PHASE_FINALIZE 8u
#define FUGUE_PHASE_BODY 16u     /* BLOCK level: the whole work-group body */

/* A plan. The core owns every struct and array it points at and sets their struct_size and sizes
 * before plan is called; the plugin fills in the values. */
typedef struct fugue_plan {
  uint32_t struct_size;
  fugue_level level;
  uint32_t phases;                /* FUGUE_PHASE_* mask the operation emits */
  fugue_launch* launch;
  uint32_t num_partitions;        /* = num_operands */
  fugue_partition* partitions;    /* walk with FUGUE_NTH(_MUTABLE) */
  uint32_t workspace_capacity;    /* entries `workspaces` has room for (the core offers at least 8) */
  uint32_t num_workspaces;        /* the plugin sets how many it uses */
  fugue_workspace* workspaces;    /* walk with FUGUE_NTH(_MUTABLE) */
  uint64_t local_mem_bytes;       /* per work-group, for the planner's cost model */
  uint32_t registers;             /* estimated live values per work-item */
  /* end of 2.0 */
  /* 2.3, BLOCK level: nonzero when the BODY is written for a team of work-items per entry rather than
   * for the work-group: FUGUE_BUILTIN_LOCAL_ID and LOCAL_SIZE are then the item's place in its team
   * and the team's size, and local_array gives each team its own array. The core may then give an
   * entry to a team smaller than a work-group and run several entries per work-group side by side: one
   * work-item per entry (Ha's thread model), a few (hybrid), or the whole group (block model); the team
   * size stays within local_min..local_max, local_preferred being the one the operation wants, and
   * local_mem_bytes is per team. The core then holds every BATCH operand's entries in local memory
   * (inputs copied in by the whole work-group, coalesced; outputs copied out), and a team past the last
   * entry computes on unspecified values and writes nothing. barrier still waits for the work-group. */
  uint32_t entry_teams;
  /* end of 2.3 */
  /* 2.5: which of the operation's plan variants this is and why it was chosen, for `fugue explain`: the
   * plugin writes a NUL-terminated text of at most variant_capacity bytes, NUL included, into `variant`
   * (the core's buffer; a longer text is cut), e.g. "rows: a row per work-item, n = 12 in (8, 16] (NVIDIA
   * GPU table)". Left empty when the operation has one plan. */
  char* variant;
  uint32_t variant_capacity;
  /* end of 2.5 */
  /* 2.11, BLOCK level with entry_teams: nonzero when the work-items of a team each walk rows of their own
   * of the entries' matrices (a row per work-item, or a block of rows), reading or writing along them. The
   * core may then lay out a matrix it holds in local memory a row and a spare element apart, so that the
   * team's walks reach different banks at each step (rows of 16 doubles 16 apart all meet in one);
   * read_at and write_at take the same indices either way. Left 0 by teams that walk columns.
   * (The field sits where a 2.10 fugue_plan had padding: sizeof is 88 either way, so a 2.11 plugin under a
   * 2.10 core writes it into that padding, unread; a 2.10 plugin leaves the core's zero.) */
  uint32_t walks_rows;
  /* end of 2.11 */
  /* 2.12, ELEMENT level, operands read with a halo: how the operation treats the ends of the arrays it
   * reads around each element, so that the core may split a program's rows across devices, each device
   * holding its own rows and some of its neighbours' (reading them with the same code, the device's
   * array being the whole to it): FUGUE_ENDS_INSIDE when a read that would pass an end stays inside the
   * array (clamped, mirrored, or a constant instead), FUGUE_ENDS_WRAP when it comes from the other end
   * (periodic); either way the element's position (FUGUE_BUILTIN_INDEX) decides nothing but how near an
   * end it is. Left FUGUE_ENDS_UNSAID (0), the core never splits the rows of such an operation. */
  uint32_t ends;
  /* 2.12, ITEM level, an operation reducing arrays to scalar outputs: how its results over parts of the
   * iteration space combine into the whole's, so that the core may split a program's rows across
   * devices and combine the devices' results: FUGUE_COMBINE_SUM (complex values too), FUGUE_COMBINE_MIN,
   * FUGUE_COMBINE_MAX, FUGUE_COMBINE_ROOT_SUM_SQUARES (a Euclidean norm: the root of the parts' squares'
   * sum); and that its work-items' and work-groups' numbers serve only to share out the work. Left
   * FUGUE_COMBINE_UNSAID (0), the core never splits a program where the operation writes a scalar. */
  uint32_t combine;
  /* end of 2.12 */
  /* 2.13, any level: the operands (bit k: operand k in signature order, the first 64) cut by the rows of
   * axis 0 when the core splits a program's rows across devices, a promise that row r of every output
   * is computed from row r of the marked operands and from the whole of the others alone, whatever the
   * number of rows, and that the operation asks for its position only to find its rows. Outputs must be
   * marked, and the unmarked operands are read, never written. A kind with storage (a sparse matrix) is
   * marked only where its kind gives rows of its values (fugue_kind_desc.rows_type and rows_value): each
   * device then holds its rows as a value of the kind of its own. The core splits by partitions alone
   * where this is 0: element-wise and BATCH operands, with WHOLE ones read by every device. */
  uint64_t split_rows;
  /* end of 2.13 */
  /* 2.14, with split_rows: the operands (bit k: operand k, the first 64) that the operation reads only at
   * the columns of operand `columns_of`'s entries: row j of such an operand (read whole, never written) is
   * read by an output row only where that row of columns_of (a kind with storage, marked in split_rows,
   * whose kind gives rows_columns) holds an entry in column j; x of y = A x. A split across devices then
   * keeps current on each device only the rows of such an operand that its rows of columns_of reach, and
   * exchanges those alone between devices, where a program writes the operand by rows. */
  uint64_t read_at_columns;
  uint32_t columns_of;
  /* end of 2.14 */
  /* 2.17, BLOCK level: the operands (bit k: operand k, the first 64) that the operation reads once per
   * entry, each element at most once and all of them before it writes any output (a factorization copying
   * its matrix into storage of its own first: its output may then be written over the input). Without
   * teams, where the core would copy such an input into local memory before the operation's first read,
   * so that reads again and again find it there, it reads it where it is instead; an input that another
   * operation of the kernel reads again and again is still copied. Teams hold every operand in local
   * memory either way. (The padding after columns_of holds
   * nothing: a 2.16 plugin's struct ends before this field, and the core reads it as 0.) */
  uint64_t reads_once;
  /* end of 2.17 */
  /* 2.19, ELEMENT, ITEM or BLOCK level: nonzero when the operation's execute (its own kernels, as a
   * device-level plan would run it) is the faster way to run it where no other operation joins its kernel:
   * the plan is then what the operation offers its neighbours to fuse with, and a kernel the core would
   * build of this operation alone runs as a device-level step instead (execute, with the same call). The
   * operation must have an execute function. (A sparse product on a CPU, whose generated kernel lets y's
   * consumers join it, while its own kernel, tuned for the layout and the device, runs it faster alone.) */
  uint32_t own_kernels_alone;
  /* end of 2.19 */
} fugue_plan;

#define FUGUE_ENDS_UNSAID 0u
#define FUGUE_ENDS_INSIDE 1u
#define FUGUE_ENDS_WRAP 2u

#define FUGUE_COMBINE_UNSAID 0u
#define FUGUE_COMBINE_SUM 1u
#define FUGUE_COMBINE_MIN 2u
#define FUGUE_COMBINE_MAX 3u
#define FUGUE_COMBINE_ROOT_SUM_SQUARES 4u

/* ---------------------------------------------------------------------------------------------- */
/* Emit: OpenCL C through accessors the core provides                                              */

typedef struct fugue_emit_context fugue_emit_context; /* opaque, owned by the core */

#define FUGUE_BUILTIN_INDEX 1         /* flat index of the current element (ELEMENT phase) */
#define FUGUE_BUILTIN_LOCAL_ID 2      /* get_local_id(0) */
#define FUGUE_BUILTIN_GROUP_ID 3      /* get_group_id(0) */
#define FUGUE_BUILTIN_LOCAL_SIZE 4    /* the work-group size, a compile-time literal (any 1..1024) */
#define FUGUE_BUILTIN_NUM_GROUPS 5    /* work-groups of the main kernel (a run-time value; may be 0 in FINALIZE) */
/* 2.1 */
#define FUGUE_BUILTIN_ENTRY 6         /* BLOCK level with BATCH operands: the number of the current entry (long) */
/* 2.9: the other dimensions of 2-D and 3-D launches (the core launches kernels of tile stages in 2-D):
 * 0 (ids) and 1 (sizes, counts) in a 1-D launch. */
#define FUGUE_BUILTIN_LOCAL_ID_1 7    /* get_local_id(1) */
#define FUGUE_BUILTIN_LOCAL_ID_2 8    /* get_local_id(2) */
#define FUGUE_BUILTIN_GROUP_ID_1 9    /* get_group_id(1) */
#define FUGUE_BUILTIN_GROUP_ID_2 10   /* get_group_id(2) */
#define FUGUE_BUILTIN_LOCAL_SIZE_1 11 /* the work-group's extent along dimension 1, a literal */
#define FUGUE_BUILTIN_LOCAL_SIZE_2 12
#define FUGUE_BUILTIN_NUM_GROUPS_1 13 /* work-groups along dimension 1 (a run-time value) */
#define FUGUE_BUILTIN_NUM_GROUPS_2 14
/* The device's sub-group width, a literal: the first of fugue_device_desc.subgroup_sizes (NVIDIA's
 * warp, AMD's wavefront), 1 where the device does not say. For sizing teams and strides; work-items
 * of a sub-group are not promised to run in step (synchronize with barrier). */
#define FUGUE_BUILTIN_SUB_GROUP_SIZE 15

/* 2.1: the updates of atomic_at and atomic_local. */
#define FUGUE_ATOMIC_ADD 1
#define FUGUE_ATOMIC_MIN 2 /* floats: fmin (a NaN is ignored) */
#define FUGUE_ATOMIC_MAX 3 /* floats: fmax */

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
  /* The OpenCL C type name of a dtype ("float", "uchar", "float2" for c64, ...). */
  const char* (*ctype)(fugue_emit_context* context, fugue_dtype dtype);
  /* A fresh identifier, unique in the kernel, stable across phases of the same call for the same stem. */
  const char* (*name)(fugue_emit_context* context, const char* stem);
  /* A FUGUE_BUILTIN_* expression. */
  const char* (*builtin)(fugue_emit_context* context, int32_t which);
  /* `__global T*` naming workspace k. */
  const char* (*workspace)(fugue_emit_context* context, uint32_t k);
  /* Append code to the kernel being built. */
  void (*append)(fugue_emit_context* context, const char* code);
  /* An rvalue for the element of array operand k at `index`, an OpenCL C expression of its flat
   * row-major index, in any phase. The plan must partition the operand ELEMENTWISE with a halo
   * covering every index used, or WHOLE; the core then keeps it in global memory (a value read that
   * way is never promoted, and never produced in the same kernel). */
  const char* (*read_at)(fugue_emit_context* context, uint32_t operand, const char* index);
  /* end of 2.0 */
  /* An lvalue for the element of array operand k at `index`: for a BATCH operand, element `index` of
   * the current entry (BODY phase). The core decides where it lives (local or global memory).
   * 2.7: for a SCATTER operand, element `index` (flat, row-major) of the whole array, in any phase: a
   * plain store, for operations whose work-items write distinct elements (array.put). */
  const char* (*write_at)(fugue_emit_context* context, uint32_t operand, const char* index);
  /* The name of a `__local` array of `count` elements of `dtype`, declared by the core at the
   * kernel's outer scope (BLOCK and ITEM levels; BODY, PROLOGUE and EPILOGUE phases). A stem the call
   * asked for before gives the same array (with the same dtype and count), in any phase, ELEMENT too;
   * the plan's local_mem_bytes must cover the op's arrays together. */
  const char* (*local_array)(fugue_emit_context* context, fugue_dtype dtype, int64_t count, const char* stem);
  /* A statement that waits for every work-item of the work-group, with local and global memory
   * consistent (BODY phase; PROLOGUE and EPILOGUE at ITEM level). Every work-item must reach it. */
  const char* (*barrier)(fugue_emit_context* context);
  /* A statement that updates element `index` (flat, row-major; the operation keeps it in range) of
   * SCATTER operand k with `value` by FUGUE_ATOMIC_* `op`, atomically: native where the device has it,
   * a compare-and-swap loop otherwise. ADD for every dtype the device can (64-bit ones need
   * cl_khr_int64_base_atomics; complex: each part atomically), MIN and MAX for real dtypes. */
  const char* (*atomic_at)(fugue_emit_context* context, int32_t op, uint32_t operand, const char* index,
                           const char* value);
  /* The same update of `element`, an element of one of the operation's own local arrays (local_array)
   * holding `dtype`. */
  const char* (*atomic_local)(fugue_emit_context* context, int32_t op, fugue_dtype dtype, const char* element,
                              const char* value);
  /* The extent of array operand k along `axis` (a long expression): a kernel argument or a literal, as
   * the core chooses. Code that writes extents this way instead of as literals is the same for every
   * size, so a program run on new sizes reuses its compiled kernels. A run-time axis gives its capacity. */
  const char* (*extent)(fugue_emit_context* context, uint32_t operand, uint32_t axis);
  /* end of 2.1 */
  /* An rvalue calling FUNCTION operand k with `args` (OpenCL C expressions of dtypes `arg_dtypes`, its
   * arity of them), of the dtype fugue_function_services.result gives for them. Any phase, any level
   * but DEVICE; the core writes the function's code once per kernel and dtypes. */
  const char* (*call_function)(fugue_emit_context* context, uint32_t operand, uint32_t num_args,
                               const fugue_dtype* arg_dtypes, const char* const* args);
  /* An rvalue for the element of array operand k `offsets` (one per axis, `rank` of them) away from the
   * current element (ELEMENT phase), which the operation keeps inside the array (a stencil tests that the
   * element is away from the borders first). The plan must partition the operand ELEMENTWISE or TILE
   * with a halo covering the offsets. The core reads it at a fixed displacement from the element's address (the
   * offsets folded into constants), and decides where the value comes from. */
  const char* (*read_offset)(fugue_emit_context* context, uint32_t operand, uint32_t rank, const int64_t* offsets);
  /* end of 2.2 */
  /* 2.8: an rvalue for element `index` (an OpenCL C expression, flat) of part `part` of operand k, a kind
   * with storage the plan partitions WHOLE and only reads (a sparse matrix's col or data), in any phase;
   * the core passes each part the kernel reads as a buffer of its own. */
  const char* (*read_part_at)(fugue_emit_context* context, uint32_t operand, uint32_t part, const char* index);
  /* end of 2.8 */
  /* 2.22: an rvalue (a long) of the count of operand k, a kind with storage whose parts have a run-time
   * length (fugue_declared.runtime_axes, 2.21) the plan reads WHOLE, in any phase but FINALIZE and not in
   * a user function's body: the core passes the buffer it holds the count in, as the operation that made
   * the value wrote it. The operation bounds it by the capacity before it indexes with it. */
  const char* (*count)(fugue_emit_context* context, uint32_t operand);
  /* end of 2.22 */
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
  /* The device buffer (one int64_t) holding the actual length of operand k's run-time axis 0: an
   * input's is there to read; an OUT operand's the operation writes with its own work. NULL for an
   * operand without run-time axes. Owned by the core. 2.21: for a kind with storage whose parts have a
   * run-time length, the value's count, the length those parts share. */
  cl_mem (*extent)(fugue_services_context* context, uint32_t operand);
  /* A buffer that outlives the call: it lives as long as the program's executor, and the same `key`
   * (one name space per plugin) finds it again on every call, in loops and across statements, holding
   * what the last call left. *fresh is 1 when it was just made (contents undefined: also when a call asks
   * for another size), 0 otherwise. For what is worth keeping: scratch reused by every iteration,
   * pivots, a converted format, tuning results. Owned by the core. */
  fugue_status (*workspace)(fugue_services_context* context, const char* key, size_t bytes, cl_mem* buffer,
                            int32_t* fresh, fugue_error* error);
  /* The buffer holding part `part` of operand k, a kind with storage (its type's parts[part]); an OUT
   * operand's parts are allocated, not initialised. NULL for anything else. Owned by the core. */
  cl_mem (*part)(fugue_services_context* context, uint32_t operand, uint32_t part);
  /* end of 2.0 */
  /* 2.20: nonzero when the core keeps an event of every kernel the operation enqueues (a profile,
   * `--stats`, `fugue bench`'s timed runs): hand each to track. 0: enqueue without an event and track
   * nothing, since a driver may spend more time on a launch's event than on a small kernel. Read it
   * where struct_size covers it; a core before 2.20 always kept them. */
  int32_t wants_events;
  /* end of 2.20 */
} fugue_device_services;

/* ---------------------------------------------------------------------------------------------- */
/* Costs and CPU references                                                                        */

typedef struct fugue_cost {
  uint32_t struct_size;
  double bytes; /* global memory moved (read + written) when the op runs alone */
  double flops;
  /* end of 2.0 */
} fugue_cost;

typedef struct fugue_host_array {
  uint32_t struct_size;
  const fugue_type* type;
  void* data; /* C order; IN operands are read-only, INOUT ones hold the old value on entry */
  uint64_t bytes;
  /* The type has a run-time axis 0: its actual length (data holds that many rows; bytes covers the
   * capacity). An input's is given; an OUT operand's reference sets it. 2.21: a kind with storage whose
   * parts have a run-time length (fugue_declared.runtime_axes): the value's count, the length those parts
   * share; an input's is given (on the whole and on each such part), an OUT operand's reference sets it
   * on the whole. */
  int64_t length;
  /* A kind with storage: one host array per part (type->parts' order), each with its own data; `data`
   * is NULL and `bytes` 0 for the whole. 0 and NULL otherwise. */
  uint32_t num_parts;
  struct fugue_host_array* parts; /* walk with FUGUE_NTH(_MUTABLE) */
  /* end of 2.0 */
} fugue_host_array;

/* ---------------------------------------------------------------------------------------------- */
/* Operations and plugins                                                                          */

typedef struct fugue_op_desc fugue_op_desc;

typedef fugue_status (*fugue_infer_fn)(const fugue_op_desc* op, const fugue_call* call,
                                       fugue_type* types /* [num_operands], stride struct_size:
                                                            write OUT entries only */,
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
                                           fugue_host_array* operands /* [num_operands], stride
                                                                         struct_size */,
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
                           tolerance * max(1, |reference|) (relative above 1, absolute below);
                           c64 uses it too, on |re| and |im| */
  double tolerance_f64; /* f64 and c128 */
  double test_low;      /* the domain random test inputs are drawn from */
  double test_high;
  void* user_data;      /* the plugin's own */
  uint32_t traits;      /* FUGUE_OP_* */
  /* May be NULL: the calls the conformance suite (`fugue conformance`) runs, as JSON text: an array
   * of cases, each an object with
   *   "shape":  the shape of array inputs not named in "inputs" (e.g. [7, 5]);
   *   "inputs": per input operand, a symbol in the program syntax ({"kind": "const", "value": 2},
   *             {"kind": "stencil", "border": "clamp", "points": [...]}, {"kind": "array",
   *             "shape": [3], "dtype": "u8"}); dtype defaults to the dtype under test;
   *   "attrs":  attribute values;
   *   "dtypes": the dtypes to run it with (default: every dtype the first array input accepts);
   *   "name":   a label for the report (default "case N");
 *   "outputs": per output of a kind with storage, its declaration ({"kind": "dia", "shape": [99, 99],
 *             "diagonals": 13}; dtype defaults to the dtype under test); default: the kind's example.
   * NULL: the suite derives calls from the signature (arrays of one shape, ranks 1 to 3). */
  const char* test_cases;
  /* end of 2.0 */
};

/* Traits of an operation. */
/* Its one output equals its one input, element for element (same kind, dtype and shape): the core
 * may replace a call by a buffer swap when the input's value is not needed afterwards. */
#define FUGUE_OP_IDENTITY 1u
/* Its float results depend on the order in which work-items combine values (atomic additions): two
 * runs agree within the operation's tolerance, not bit for bit. Integer results stay exact. */
#define FUGUE_OP_UNORDERED 2u
/* It takes operands with run-time extents (fugue_type.runtime_axes). At ELEMENT and ITEM level it
 * touches them only through the accessors and FUGUE_BUILTIN_INDEX, so the core runs its iteration
 * space over the elements present; at DEVICE level it reads their lengths (services.extent). Its
 * infer gives outputs the run-time axes of the inputs they follow. */
#define FUGUE_OP_RUNTIME_EXTENTS 4u
/* 2.21: it takes and makes values of kinds whose parts have a run-time length (fugue_declared.runtime_axes),
 * a count it reads and writes as services.extent and fugue_host_array.length say. Only such operations
 * get one as an operand; an operation of a plugin built before 2.21 never does. */
#define FUGUE_OP_RUNTIME_COUNTS 8u

/* ---------------------------------------------------------------------------------------------- */
/* Kinds a plugin defines                                                                          */

/* A kind known when kernels are generated: it has a type (dtype, shape) and metadata, no device
 * storage, and is never written. */
#define FUGUE_KIND_FLAG_COMPILE_TIME 1u
/* A kind whose values live on the device as parts: dense arrays, each with its own dtype and shape
 * (a sparse matrix's row pointers, columns and values), named by fugue_kind_desc.parts. Its declare
 * gives every part's type. Values come from files (a format that reads the kind), from the program's
 * per-part sources, or from operations that write the kind; outputs go through a format that writes
 * it. Operations reach the parts at DEVICE level (fugue_device_services.part) and in references
 * (fugue_host_array.parts); dataflow, allocation and liveness work per part. Exactly one of
 * COMPILE_TIME and STORAGE is set. */
#define FUGUE_KIND_FLAG_STORAGE 2u
/* 2.6: a kind that chooses, for each declaration, one of its plugin's kinds with storage (a sparse matrix
 * whose format is chosen for the matrix and the device): it has no parts and no values of its own. A
 * declaration of it must take its value from a file or a generator whose probe_as chooses the kind (sets
 * fugue_declared.kind_name) and says why (note); the symbol is then of the chosen kind. Its declare is
 * called only for declarations without "from", to refuse them with a message. Set alone.
 * 2.16: where the chooser's plugin was built for 2.16 or later, the kind lists "reads" among its keys and
 * the declaration has no "reads" of its own, the declaration its source's probe_as (and read_as,
 * generate_as) gets carries "reads": how many
 * times the program's operations read the value, each statement that takes it as an input counted once
 * for every iteration of the loops around it (a branch: the larger of its two sides), or -1 where a loop
 * around such a statement counts to a scalar known only at run time. A chooser weighs what a kind costs to
 * make against that many uses; a program may also give the number itself. */
#define FUGUE_KIND_FLAG_CHOOSER 4u

/* Where declare writes a symbol's type. The core owns every pointer and says how much room each has;
 * when the metadata needs more than metadata_capacity, declare sets metadata_bytes to the size it
 * needs, writes nothing else and returns FUGUE_OK: the core calls again with that much room. */
typedef struct fugue_declared {
  uint32_t struct_size;
  fugue_dtype dtype;
  uint32_t rank;
  int64_t* shape; /* [shape_capacity] */
  uint32_t shape_capacity;
  void* metadata; /* [metadata_capacity] bytes */
  uint64_t metadata_capacity;
  uint64_t metadata_bytes;
  /* A kind with storage: one entry per part, each a fugue_declared with its own shape room (dtype,
   * rank and shape only), walk with FUGUE_NTH_MUTABLE. A kind's declare finds num_parts = parts_capacity
   * = its number of parts and fills each. A format's probe of a file holding a kind with storage sets
   * kind_name (the core copies it before the format is called again) and num_parts; when num_parts exceeds
   * parts_capacity it writes no part and the core asks again with that much room. Otherwise 0 / NULL. */
  uint32_t parts_capacity;
  uint32_t num_parts;
  struct fugue_declared* parts;
  const char* kind_name;
  /* end of 2.0 */
  /* 2.6: a format's or generator's probe_as for a chooser kind: why it chose kind_name, a NUL-terminated
   * text of at most note_capacity bytes (the core's room; a longer one is cut), shown by fugue explain. */
  char* note;
  uint32_t note_capacity;
  /* end of 2.6 */
  /* 2.21, on an entry of parts: bit 0 set when the part's axis 0 has a run-time length (shape[0] is then
   * its capacity, what the core allocates). Every such part of one value has the same length, the
   * value's count (a sparse matrix's entries, counted by the operation that makes it: its columns and
   * values), which only an operation gives: a value of such a type comes from an operation with
   * FUGUE_OP_RUNTIME_COUNTS, never from a file, a generator or per-part sources. Other bits, and
   * the bit on the value itself, are refused. Read from plugins built for 2.21 or later. */
  uint32_t runtime_axes;
  /* end of 2.21 */
} fugue_declared;

/* Text a kind writes into the core's room (an example declaration); the same protocol as metadata:
 * set `length` (without the NUL) and, when length + 1 > capacity, write nothing: the core asks again. */
typedef struct fugue_text {
  uint32_t struct_size;
  char* text;
  uint64_t capacity;
  uint64_t length;
  /* end of 2.0 */
} fugue_text;

typedef struct fugue_kind_desc fugue_kind_desc;
/* Reads a declaration, the JSON object a program gives for the symbol (as text), into its type. A
 * message about part of it starts with a JSON pointer relative to the object ("/points/2/weight:
 * expected a finite number, found 1e999"); the core puts the file and the symbol's pointer in front. */
typedef fugue_status (*fugue_declare_fn)(const fugue_kind_desc* kind, const char* declaration,
                                         fugue_declared* declared, fugue_error* error);
/* A valid declaration of the kind for an operand of `rank` axes and dtype `dtype` (JSON text), for the
 * conformance suite to feed operations that take the kind. */
typedef fugue_status (*fugue_example_fn)(const fugue_kind_desc* kind, uint32_t rank, fugue_dtype dtype,
                                         fugue_text* example, fugue_error* error);
/* 2.6: whether `value` (its parts filled) is a well-formed value of the kind: OK, or INVALID_ARGUMENT saying
 * what is wrong (a sparse matrix's column index out of range). The core asks before the run about every
 * value a program gives part by part ("parts"), whose parts nothing else has checked together. */
typedef fugue_status (*fugue_check_value_fn)(const fugue_kind_desc* kind, const fugue_host_array* value, fugue_error* error);
/* 2.13: the type of rows [first, first + count) of axis 0 of `value` (a value of the kind, its type's
 * metadata with it; 0 <= first, first + count <= its rows) as a value of the kind of its own, into the
 * core's room as declare fills it: shape [count, ...], its parts and metadata (asked again when the
 * metadata needs more room). A sparse matrix's rows: a matrix of count rows holding those rows' entries. */
typedef fugue_status (*fugue_rows_type_fn)(const fugue_kind_desc* kind, const fugue_host_array* value, int64_t first,
                                           int64_t count, fugue_declared* rows, fugue_error* error);
/* 2.13: fills `rows`, allocated by the core with the type rows_type gave (every part's data), with
 * those rows of `value`. */
typedef fugue_status (*fugue_rows_value_fn)(const fugue_kind_desc* kind, const fugue_host_array* value, int64_t first,
                                            int64_t count, fugue_host_array* rows, fugue_error* error);
/* 2.14: the columns that rows [first, first + count) of axis 0 of `value` hold entries in, as rows_type
 * gets them: columns[0] the first, columns[1] one past the last (both 0 when the rows hold none). Every
 * column an operation's code reads at for those rows must lie within them (a value it reads and then
 * discards, as a padding zero's, may come from anywhere). */
typedef fugue_status (*fugue_rows_columns_fn)(const fugue_kind_desc* kind, const fugue_host_array* value, int64_t first,
                                              int64_t count, int64_t* columns, fugue_error* error);

struct fugue_kind_desc {
  uint32_t struct_size;
  const char* name;  /* what "kind" says in a declaration; unique among the core's and plugins' kinds */
  const char* doc;
  uint32_t flags;    /* FUGUE_KIND_FLAG_* */
  const char* keys;  /* the keys a declaration may have besides "kind" and "doc", separated by spaces;
                        a kind with storage gets "from" and "parts" from the core besides */
  fugue_declare_fn declare;
  fugue_example_fn example;
  void* user_data;
  /* FUGUE_KIND_FLAG_STORAGE: its parts' names (identifiers), separated by spaces, in order: at least
   * one, at most 64. NULL for a compile-time kind. */
  const char* parts;
  /* end of 2.0 */
  fugue_check_value_fn check_value; /* 2.6: optional (NULL: every value of the right type is well-formed) */
  /* end of 2.6 */
  /* 2.13: both or neither (NULL: the kind's values are never split by rows across devices). */
  fugue_rows_type_fn rows_type;
  fugue_rows_value_fn rows_value;
  /* end of 2.13 */
  /* 2.14: optional, with rows_type (NULL: operations read no operand at the kind's columns when split). */
  fugue_rows_columns_fn rows_columns;
  /* end of 2.14 */
};

/* ---------------------------------------------------------------------------------------------- */
/* File formats and generators a plugin adds                                                       */

typedef struct fugue_format_desc fugue_format_desc;
/* The type of what `path` holds (reading no more than it needs: a header), into the core's room
 * (fugue_declared; no metadata). A bad file: INVALID_ARGUMENT with a message naming what is wrong. */
typedef fugue_status (*fugue_probe_fn)(const fugue_format_desc* format, const char* path,
                                       fugue_declared* type, fugue_error* error);
/* Reads `path` into `array`, whose type is what probe said and whose data the core allocated. */
typedef fugue_status (*fugue_read_fn)(const fugue_format_desc* format, const char* path,
                                      fugue_host_array* array, fugue_error* error);
/* Whether the format writes values of `type`: OK, or INVALID_ARGUMENT saying why not. The core asks
 * when it loads the program, before anything runs. */
typedef fugue_status (*fugue_accepts_fn)(const fugue_format_desc* format, const fugue_type* type,
                                         fugue_error* error);
/* Writes `array` to `path`, a staging file the core renames into place once every output is written. */
typedef fugue_status (*fugue_write_fn)(const fugue_format_desc* format, const char* path,
                                       const fugue_host_array* array, fugue_error* error);

/* 2.6: the type of what `path` holds read as the value `declaration` declares (the program's JSON object
 * for a symbol of a kind with storage, or of a chooser kind, "from" left out, as text): a format that
 * converts as it reads (a sparse matrix file read as CSR, ELL or DIA, whose parts' sizes come from the
 * file). Fills dtype, shape, parts and metadata as the kind's declare does (the same room protocol); for
 * a chooser kind (FUGUE_KIND_FLAG_CHOOSER) also kind_name, the kind with storage it chose, and its reasons
 * in `note`. `device` is the device the program will run on, NULL when it is loaded without one (fugue
 * validate); a choice may depend on it. A bad file or a declaration the format cannot read into:
 * INVALID_ARGUMENT saying why. */
typedef fugue_status (*fugue_probe_as_fn)(const fugue_format_desc* format, const char* path, const char* declaration,
                                          const fugue_device_desc* device, fugue_declared* declared, fugue_error* error);
/* 2.6: reads `path` into `array` as `declaration` declares it for `device` (the same as probe_as had); the
 * type is what probe_as said. */
typedef fugue_status (*fugue_read_as_fn)(const fugue_format_desc* format, const char* path, const char* declaration,
                                         const fugue_device_desc* device, fugue_host_array* array, fugue_error* error);

/* A file format, chosen by a file's extension. Where several formats share an extension, a file is
 * read by the first that reads it and written by the first that accepts the value's type. */
struct fugue_format_desc {
  uint32_t struct_size;
  const char* name;       /* "flo" */
  const char* doc;
  const char* extensions; /* lower case, with the dot, separated by spaces: ".flo" */
  fugue_probe_fn probe;   /* probe and read: both or neither (a format that only writes) */
  fugue_read_fn read;
  fugue_accepts_fn accepts; /* accepts and write: both or neither (a format that only reads) */
  fugue_write_fn write;
  void* user_data;
  /* end of 2.0 */
  /* 2.6: both or neither. A declaration of a kind with storage whose "from" names a file of this format
   * takes its type from probe_as (not the kind's declare) and its value from read_as. */
  fugue_probe_as_fn probe_as;
  fugue_read_as_fn read_as;
  /* end of 2.6 */
};

typedef struct fugue_generator_desc fugue_generator_desc;
/* Checks `parameters` (the JSON value a program gives the generator, as text) for an array of
 * `type`, before anything runs; messages about part of them start with a JSON pointer inside them. */
typedef fugue_status (*fugue_check_generator_fn)(const fugue_generator_desc* generator, const char* parameters,
                                                 const fugue_type* type, fugue_error* error);
/* Fills `array` (the core allocated it with the symbol's type). Same parameters, same values. */
typedef fugue_status (*fugue_generate_fn)(const fugue_generator_desc* generator, const char* parameters,
                                          fugue_host_array* array, fugue_error* error);

/* 2.6: a generator of whole values of kinds with storage (a Poisson matrix made as CSR or DIA): the type
 * of what `parameters` make as `declaration` declares it, as a format's probe_as gives it (kind_name and
 * note for a chooser kind; `device` as there); bad parameters or a declaration it cannot make:
 * INVALID_ARGUMENT, a message about the parameters starting with a pointer inside them. */
typedef fugue_status (*fugue_probe_generated_fn)(const fugue_generator_desc* generator, const char* parameters,
                                                 const char* declaration, const fugue_device_desc* device,
                                                 fugue_declared* declared, fugue_error* error);
/* 2.6: fills `array` (allocated with the type probe_as gave). Same parameters, same value. */
typedef fugue_status (*fugue_generate_as_fn)(const fugue_generator_desc* generator, const char* parameters,
                                             const char* declaration, const fugue_device_desc* device,
                                             fugue_host_array* array, fugue_error* error);

/* A generator of initial values: `"from": {"<name>": parameters}` in a declaration. */
struct fugue_generator_desc {
  uint32_t struct_size;
  const char* name;  /* an identifier, unique among the core's and plugins' generators */
  const char* doc;
  uint32_t dtypes;   /* FUGUE_DTYPE_BIT mask of the dtypes it makes */
  fugue_check_generator_fn check;
  fugue_generate_fn generate;
  void* user_data;
  /* end of 2.0 */
  /* 2.6: both or neither. A generator with them may make no arrays (dtypes 0, check and generate NULL). */
  fugue_probe_generated_fn probe_as;
  fugue_generate_as_fn generate_as;
  /* end of 2.6 */
};

/* 2.8: a tuner measures, offline, what a plugin's choices depend on for one device (`fugue tune <name>`):
 * the core runs the programs `programs` gives on the device and hands their timings to `table`, whose
 * text it stores as "<tuning_folder>/<name>.json"; the plugin reads that file back when it plans or
 * chooses for the device. Both return text the plugin owns, valid until its next call of either. */
typedef struct fugue_tuner_desc fugue_tuner_desc;
#define FUGUE_TUNE_QUICK 1u /* small sizes: a check that tuning works; the core keeps its table as "<name>.quick.json", which no plugin reads */
/* The programs to time, as JSON text: an array of {"label": "...", "program": {a program}}. */
typedef fugue_status (*fugue_tuning_programs_fn)(const fugue_tuner_desc* tuner, const fugue_device_desc* device,
                                                uint32_t flags, const char** programs, fugue_error* error);
/* The table, as JSON text, from `measurements`: an array of {"label", "seconds", "bytes", "flops"} in the
 * programs' order (seconds: the median device time of one run; bytes and flops: the operations' costs). */
typedef fugue_status (*fugue_tuning_table_fn)(const fugue_tuner_desc* tuner, const fugue_device_desc* device,
                                             const char* measurements, const char** table, fugue_error* error);
struct fugue_tuner_desc {
  uint32_t struct_size;
  const char* name; /* an identifier, unique among the loaded plugins' tuners: the file's name */
  const char* doc;
  fugue_tuning_programs_fn programs;
  fugue_tuning_table_fn table;
  void* user_data;
  /* end of 2.8 */
};

typedef struct fugue_plugin {
  uint32_t struct_size;
  uint32_t abi_major; /* these three keep their offsets in every ABI version */
  uint32_t abi_minor;
  const char* name;
  const char* version;
  const char* description;
  uint32_t num_ops;
  const fugue_op_desc* const* ops; /* pointers, so each op may carry its own struct_size */
  uint32_t num_kinds;
  const fugue_kind_desc* const* kinds; /* may be NULL when num_kinds == 0 */
  uint32_t num_formats;
  const fugue_format_desc* const* formats; /* may be NULL when num_formats == 0 */
  uint32_t num_generators;
  const fugue_generator_desc* const* generators; /* may be NULL when num_generators == 0 */
  /* end of 2.0 */
  uint32_t num_tuners;                    /* 2.8 */
  const fugue_tuner_desc* const* tuners;  /* may be NULL when num_tuners == 0 */
  /* end of 2.8 */
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
