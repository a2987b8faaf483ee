/* scatter_add.cl: array.scatter_add, h[index[i]] += values[i] for every i, by one work-item per i.
 * Repeated indices all count: the additions are atomic (compare-and-swap loops for floats, which
 * OpenCL C has no atomic addition for). Indices outside [0, size of h) are skipped.
 * Build options: -DT=<h's OpenCL C type> -DI=<index type> -DADD=<one of the add_* functions>;
 * -DCOMPONENT=<float or double> for complex T (re and im are added separately, each atomically);
 * -DVALUE(values,i)=<the i-th value: an array element, a scalar's one value or a literal>;
 * -DINT64_ATOMICS and -DFP64 where the add function needs them. */
#if defined(INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#if defined(FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

void add_i32(volatile __global int* p, int v) { atomic_add(p, v); }
void add_u32(volatile __global uint* p, uint v) { atomic_add(p, v); }

void add_f32(volatile __global float* p, float v) {
  union { uint u; float f; } old, next;
  do {
    old.f = *p;
    next.f = old.f + v;
  } while (atomic_cmpxchg((volatile __global uint*)p, old.u, next.u) != old.u);
}

#if defined(INT64_ATOMICS)
void add_i64(volatile __global long* p, long v) { atom_add(p, v); }
#endif

#if defined(INT64_ATOMICS) && defined(FP64)
void add_f64(volatile __global double* p, double v) {
  union { ulong u; double f; } old, next;
  do {
    old.f = *p;
    next.f = old.f + v;
  } while (atom_cmpxchg((volatile __global ulong*)p, old.u, next.u) != old.u);
}
#endif

__kernel void scatter_add(__global T* h, const long size, __global const I* index, __global const T* values,
                          const long n) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long k = (long)index[i];
  if (k < 0 || k >= size) return;
  const T v = VALUE(values, i);
#if defined(COMPONENT)
  ADD((volatile __global COMPONENT*)h + 2 * k, v.x);
  ADD((volatile __global COMPONENT*)h + 2 * k + 1, v.y);
#else
  ADD(h + k, v);
#endif
}
