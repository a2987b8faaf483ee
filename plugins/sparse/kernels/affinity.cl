// The affinity matrix of an image (sparse.affinity, plugins/sparse/affinity.cpp), one work-item a
// pixel, stored by diagonals: diagonal k pairs pixel p = (y, x) with (y + dy[k], x + dx[k]).
// REAL is float or double.

// The weight between p = (y, x) and its k-th neighbour, 0 outside the image.
REAL affinity_weight(__global const REAL* image, const long height, const long width, const long y, const long x,
                     const int dy, const int dx, const REAL inv_intensity2, const REAL inv_distance2) {
  const long ny = y + dy, nx = x + dx;
  if (ny < 0 || ny >= height || nx < 0 || nx >= width) return (REAL)0;
  const REAL difference = image[y * width + x] - image[ny * width + nx];
  return exp(-difference * difference * inv_intensity2 - (REAL)(dy * dy + dx * dx) * inv_distance2);
}

// degree[p] = sum of p's weights (its row of W).
__kernel void affinity_degrees(__global const REAL* image, const long height, const long width, const int neighbours,
                               __global const int* dy, __global const int* dx, const REAL inv_intensity2,
                               const REAL inv_distance2, __global REAL* degree) {
  const long p = get_global_id(0);
  if (p >= height * width) return;
  const long y = p / width, x = p % width;
  REAL sum = 0;
  for (int k = 0; k < neighbours; ++k) sum += affinity_weight(image, height, width, y, x, dy[k], dx[k], inv_intensity2, inv_distance2);
  degree[p] = sum;
}

// data[k * pixels + p]: W's entry, or with LAPLACIAN 1 (the centre) - W / sqrt(degree[p] degree[q]).
__kernel void affinity_entries(__global const REAL* image, const long height, const long width, const int neighbours,
                               __global const int* dy, __global const int* dx, const REAL inv_intensity2,
                               const REAL inv_distance2, __global const REAL* degree, const int laplacian,
                               __global REAL* data) {
  const long p = get_global_id(0), pixels = height * width;
  if (p >= pixels) return;
  const long y = p / width, x = p % width;
  for (int k = 0; k < neighbours; ++k) {
    REAL w = affinity_weight(image, height, width, y, x, dy[k], dx[k], inv_intensity2, inv_distance2);
    if (laplacian) {
      const long q = (y + dy[k]) * width + x + dx[k];
      w = w == (REAL)0 ? (REAL)0 : -w / sqrt(degree[p] * degree[q]);
      if (dy[k] == 0 && dx[k] == 0) w += (REAL)1;
    }
    data[k * pixels + p] = w;
  }
}
