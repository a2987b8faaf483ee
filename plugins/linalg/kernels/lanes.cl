// lanes.cl: what the lanes kernels share (lanes.h; lanes_program puts it before lanes_qr.cl, lanes_lu.cl
// and lanes_cholesky.cl): V matrices of M x N values a work-item side by side, element x (i * N + j) of
// them one vector of V values in a private array w (row-major, element x's lanes at x * V .. x * V + V
// - 1), copied in from the matrices and back V elements at a time through an in-register transpose, so
// that both sides are read and written in vectors.
//
// Options: scalars.cl's (T, R), -DV=<lanes: 2, 4, 8 or 16> -DLANE_INT=<the integer type of T's width>
// -DM= -DN=<rows, columns>.
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define TV CAT(T, V)                   // V values
#define TI CAT(LANE_INT, V)            // V lanes' comparisons: -1 true, 0 false
#define AT(x) CAT(vload, V)((x), w)    // element x of the V matrices
#define PUT(value, x) CAT(vstore, V)((value), (x), w)
#if V == 2
#define LOG2_V 1
#elif V == 4
#define LOG2_V 2
#elif V == 8
#define LOG2_V 3
#else
#define LOG2_V 4
#endif

// Transposes the V x V block in r: r[v][c] becomes r[c][v]. A round takes rows 2i and 2i + 1 into row i
// (their even lanes, one after the other) and row i + V / 2 (their odd lanes): element (v, c) moves to
// row (v >> 1) + (c & 1) V / 2, lane (c >> 1) + (v & 1) V / 2, its row's and lane's bits read as one
// number turned right by one, so log2(V) rounds trade the row's bits for the lane's. Every move is
// a shuffle of two vectors with a constant pattern (.even, .odd).
inline void transpose_lanes(TV* r) {
#pragma unroll
  for (int round = 0; round < LOG2_V; ++round) {
    TV t[V];
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      t[i] = (TV)(r[2 * i].even, r[2 * i + 1].even);
      t[i + V / 2] = (TV)(r[2 * i].odd, r[2 * i + 1].odd);
    }
#pragma unroll
    for (int i = 0; i < V; ++i) r[i] = t[i];
  }
}

// w's elements from matrices first .. first + V - 1 of a (those at or past `count` a copy of the last).
inline void lanes_in(__global const T* a, long first, long count, T* w) {
  __global const T* from[V];
  for (int v = 0; v < V; ++v) from[v] = a + min(first + v, count - 1) * (long)(M * N);
  int x = 0;
  for (; x + V <= M * N; x += V) {
    TV r[V];
#pragma unroll
    for (int v = 0; v < V; ++v) r[v] = CAT(vload, V)(0, from[v] + x);
    transpose_lanes(r);
#pragma unroll
    for (int c = 0; c < V; ++c) PUT(r[c], x + c);
  }
  for (; x < M * N; ++x)
    for (int v = 0; v < V; ++v) w[x * V + v] = from[v][x];
}

// w's elements into matrices first .. first + V - 1 of `to`, those below `count`.
inline void lanes_out(const T* w, long first, long count, __global T* to) {
  __global T* into[V];
  for (int v = 0; v < V; ++v) into[v] = to + min(first + v, count - 1) * (long)(M * N);
  const int stored = (int)min((long)V, count - first);
  int x = 0;
  for (; x + V <= M * N; x += V) {
    TV r[V];
#pragma unroll
    for (int c = 0; c < V; ++c) r[c] = AT(x + c);
    transpose_lanes(r);
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (v < stored) CAT(vstore, V)(r[v], 0, into[v] + x);
  }
  for (; x < M * N; ++x)
    for (int v = 0; v < stored; ++v) into[v][x] = w[x * V + v];
}
