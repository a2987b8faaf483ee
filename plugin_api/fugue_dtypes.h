/* fugue_dtypes.h: the one table of element types, shared by the core, the SDK and every plugin.
 *
 * Every fact about a dtype (its name in programs and messages, its size, its OpenCL C and NumPy
 * spellings, whether it is a float, an integer or a complex number) lives in fugue_dtype_info_of();
 * nothing else spells them out. Pure C, header-only: a plugin reads it without linking the core.
 *
 * Complex dtypes are interleaved (re, im) pairs, the same bytes as NumPy's complex64/complex128 and
 * OpenCL C's float2/double2. f16 and bf16 are reserved: their ids are fixed, but no part of Fugue
 * accepts them yet (FUGUE_DTYPE_FLAG_RESERVED).
 */
#ifndef FUGUE_DTYPES_H
#define FUGUE_DTYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t fugue_dtype;
#define FUGUE_DTYPE_NONE 0
#define FUGUE_DTYPE_F32 1
#define FUGUE_DTYPE_F64 2
#define FUGUE_DTYPE_I32 3
#define FUGUE_DTYPE_I64 4
#define FUGUE_DTYPE_U8 5
#define FUGUE_DTYPE_U32 6
#define FUGUE_DTYPE_C64 7  /* complex: two f32, (re, im) */
#define FUGUE_DTYPE_C128 8 /* complex: two f64, (re, im) */
#define FUGUE_DTYPE_F16 9  /* reserved */
#define FUGUE_DTYPE_BF16 10 /* reserved */
#define FUGUE_DTYPE_COUNT 11 /* ids are below this; later minor versions may raise it */

#define FUGUE_DTYPE_BIT(d) (1u << (uint32_t)(d))
#define FUGUE_DTYPES_FLOAT (FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64))
#define FUGUE_DTYPES_INT                                                                   \
  (FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) |                   \
   FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32))
#define FUGUE_DTYPES_COMPLEX (FUGUE_DTYPE_BIT(FUGUE_DTYPE_C64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_C128))
/* Real numbers: what an operation that compares or orders values accepts. */
#define FUGUE_DTYPES_REAL (FUGUE_DTYPES_FLOAT | FUGUE_DTYPES_INT)
/* Every dtype Fugue supports (the reserved ones are not in it). */
#define FUGUE_DTYPES_ALL (FUGUE_DTYPES_REAL | FUGUE_DTYPES_COMPLEX)

#define FUGUE_DTYPE_FLAG_FLOAT 1u    /* a real floating-point type */
#define FUGUE_DTYPE_FLAG_INTEGER 2u  /* an integer type */
#define FUGUE_DTYPE_FLAG_SIGNED 4u   /* holds negative values (floats, complex, signed integers) */
#define FUGUE_DTYPE_FLAG_COMPLEX 8u  /* (re, im) pairs of `component` */
#define FUGUE_DTYPE_FLAG_RESERVED 16u /* an id kept for later; nothing accepts it yet */

typedef struct fugue_dtype_info {
  fugue_dtype dtype;
  const char* name;      /* in programs and messages: "f32", "c64" */
  uint32_t size;         /* bytes per element */
  const char* ctype;     /* OpenCL C: "float", "uchar", "float2" for c64 */
  const char* npy_descr; /* NumPy's little-endian descr: "<f4", "|u1", "<c8" */
  uint32_t flags;        /* FUGUE_DTYPE_FLAG_* */
  fugue_dtype component; /* complex: the dtype of re and im; otherwise the dtype itself */
  int64_t int_lowest;    /* integers: their range; 0 for the others */
  uint64_t int_highest;
} fugue_dtype_info;

/* The row of `dtype`, or NULL for NONE and ids outside the table. */
static inline const fugue_dtype_info* fugue_dtype_info_of(fugue_dtype dtype) {
  static const fugue_dtype_info table[FUGUE_DTYPE_COUNT] = {
      {FUGUE_DTYPE_NONE, "none", 0, "void", "", 0, FUGUE_DTYPE_NONE, 0, 0},
      {FUGUE_DTYPE_F32, "f32", 4, "float", "<f4", FUGUE_DTYPE_FLAG_FLOAT | FUGUE_DTYPE_FLAG_SIGNED,
       FUGUE_DTYPE_F32, 0, 0},
      {FUGUE_DTYPE_F64, "f64", 8, "double", "<f8", FUGUE_DTYPE_FLAG_FLOAT | FUGUE_DTYPE_FLAG_SIGNED,
       FUGUE_DTYPE_F64, 0, 0},
      {FUGUE_DTYPE_I32, "i32", 4, "int", "<i4", FUGUE_DTYPE_FLAG_INTEGER | FUGUE_DTYPE_FLAG_SIGNED,
       FUGUE_DTYPE_I32, INT32_MIN, INT32_MAX},
      {FUGUE_DTYPE_I64, "i64", 8, "long", "<i8", FUGUE_DTYPE_FLAG_INTEGER | FUGUE_DTYPE_FLAG_SIGNED,
       FUGUE_DTYPE_I64, INT64_MIN, INT64_MAX},
      {FUGUE_DTYPE_U8, "u8", 1, "uchar", "|u1", FUGUE_DTYPE_FLAG_INTEGER, FUGUE_DTYPE_U8, 0, UINT8_MAX},
      {FUGUE_DTYPE_U32, "u32", 4, "uint", "<u4", FUGUE_DTYPE_FLAG_INTEGER, FUGUE_DTYPE_U32, 0,
       UINT32_MAX},
      {FUGUE_DTYPE_C64, "c64", 8, "float2", "<c8", FUGUE_DTYPE_FLAG_COMPLEX | FUGUE_DTYPE_FLAG_SIGNED,
       FUGUE_DTYPE_F32, 0, 0},
      {FUGUE_DTYPE_C128, "c128", 16, "double2", "<c16",
       FUGUE_DTYPE_FLAG_COMPLEX | FUGUE_DTYPE_FLAG_SIGNED, FUGUE_DTYPE_F64, 0, 0},
      {FUGUE_DTYPE_F16, "f16", 2, "half", "<f2",
       FUGUE_DTYPE_FLAG_FLOAT | FUGUE_DTYPE_FLAG_SIGNED | FUGUE_DTYPE_FLAG_RESERVED, FUGUE_DTYPE_F16, 0,
       0},
      {FUGUE_DTYPE_BF16, "bf16", 2, "ushort", "",
       FUGUE_DTYPE_FLAG_FLOAT | FUGUE_DTYPE_FLAG_SIGNED | FUGUE_DTYPE_FLAG_RESERVED, FUGUE_DTYPE_BF16,
       0, 0},
  };
  if (dtype <= FUGUE_DTYPE_NONE || dtype >= FUGUE_DTYPE_COUNT) return NULL;
  return &table[dtype];
}

/* Whether `dtype` is one Fugue supports (known, not reserved). */
static inline int fugue_dtype_supported(fugue_dtype dtype) {
  const fugue_dtype_info* info = fugue_dtype_info_of(dtype);
  return info != NULL && !(info->flags & FUGUE_DTYPE_FLAG_RESERVED);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUGUE_DTYPES_H */
