// scalars.cl: the arithmetic the linalg plugin's own kernels (kernels/*.cl) share, put before each of
// them by the host: values of type T (float, double, or float2 / double2 for complex values, re in .x
// and im in .y) whose parts are of type R, with -DCOMPLEX for complex types, -DSMALLEST=<R's smallest
// normal number>. The emitted plans' arithmetic is scalars.h's, which this follows.

#define ZERO ((T)(0))

#ifdef COMPLEX
#define MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#define CONJ(a) ((T)((a).x, -(a).y))
#define RE(a) ((a).x)
#define FROM_REAL(r) ((T)((r), (R)0))
#define MAGNITUDE(a) (fabs((a).x) + fabs((a).y))  // LAPACK's izamax: |re| + |im|
#define IS_ZERO(a) ((a).x == (R)0 && (a).y == (R)0)
// v / p for a pivot p as LAPACK's zgetf2: times the reciprocal, made from p scaled by its larger part s
// so that neither |p|^2 nor its inverse overflows where 1 / p does not; where s is below the smallest
// normal number (the reciprocal would overflow) v conj(q) / (|q|^2 s), q = p / s, divided; an infinite
// p's reciprocal is 0 (as v / p).
inline T by_pivot(T v, T p) {
  const R s = fmax(fabs(p.x), fabs(p.y));
  if (isinf(s)) return MUL(v, ZERO);
  const T q = p / s;
  const R d = (q.x * q.x + q.y * q.y) * s;
  if (s < SMALLEST) {
    const T w = MUL(v, CONJ(q));
    return (T)(w.x / d, w.y / d);
  }
  const T r = (T)(q.x / d, -q.y / d);
  return MUL(v, r);
}
#else
#define MUL(a, b) ((a) * (b))
#define CONJ(a) (a)
#define RE(a) (a)
#define FROM_REAL(r) ((T)(r))
#define MAGNITUDE(a) fabs(a)
#define IS_ZERO(a) ((a) == (R)0)
// v / p for a pivot p as LAPACK's getf2: times the reciprocal, unless the reciprocal would overflow (p
// below the smallest normal number), then divided.
inline T by_pivot(T v, T p) { return fabs(p) >= SMALLEST ? v * ((R)1 / p) : v / p; }
#endif
