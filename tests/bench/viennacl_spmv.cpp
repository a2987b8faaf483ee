// ViennaCL's sparse matrix-vector products on the OpenCL device Fugue uses (PoCL here): the peer of
// scripts/pocl_sparse.sh. The matrix is the 5-point Laplacian of an n x n grid, as the sparse plugin's
// poisson generator makes it; each of ViennaCL's formats (compressed = CSR, coordinate = COO, ell,
// sliced_ell, hyb) is timed as the median of `repeat` products y = A x, finished each time.
//   fugue_viennacl_peers N REPEAT  ->  one JSON line per format: {"format", "n", "nnz", "ms", "GFLOPs"}
#define VIENNACL_WITH_OPENCL
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/coordinate_matrix.hpp>
#include <viennacl/ell_matrix.hpp>
#include <viennacl/hyb_matrix.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/sliced_ell_matrix.hpp>
#include <viennacl/tools/timer.hpp>
#include <viennacl/vector.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace {

std::vector<std::map<unsigned int, float>> poisson(unsigned int n) {
  std::vector<std::map<unsigned int, float>> rows(static_cast<size_t>(n) * n);
  for (unsigned int b = 0; b < n; ++b)
    for (unsigned int c = 0; c < n; ++c) {
      const unsigned int i = b * n + c;
      auto& row = rows[i];
      row[i] = 4;
      if (b > 0) row[i - n] = -1;
      if (c > 0) row[i - 1] = -1;
      if (c + 1 < n) row[i + 1] = -1;
      if (b + 1 < n) row[i + n] = -1;
    }
  return rows;
}

template <class Matrix>
void time_format(const char* name, const std::vector<std::map<unsigned int, float>>& host, unsigned int n, int repeat) {
  Matrix a;
  viennacl::copy(host, a);
  const size_t rows = host.size();
  size_t nnz = 0;
  for (const auto& r : host) nnz += r.size();
  std::vector<float> xs(rows);
  for (size_t i = 0; i < rows; ++i) xs[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  viennacl::vector<float> x(rows), y(rows);
  viennacl::copy(xs, x);
  y = viennacl::linalg::prod(a, x);  // warm-up: kernels built
  viennacl::backend::finish();
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    y = viennacl::linalg::prod(a, x);
    viennacl::backend::finish();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("{\"format\": \"%s\", \"n\": %u, \"nnz\": %zu, \"ms\": %.4f, \"GFLOPs\": %.3f}\n", name, n, nnz, median,
              2.0 * static_cast<double>(nnz) / median / 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned int n = argc > 1 ? static_cast<unsigned int>(std::atoi(argv[1])) : 2048;
  const int repeat = argc > 2 ? std::atoi(argv[2]) : 10;
  const auto host = poisson(n);
  time_format<viennacl::compressed_matrix<float>>("csr", host, n, repeat);
  time_format<viennacl::coordinate_matrix<float>>("coo", host, n, repeat);
  time_format<viennacl::ell_matrix<float>>("ell", host, n, repeat);
  time_format<viennacl::sliced_ell_matrix<float>>("sell", host, n, repeat);
  time_format<viennacl::hyb_matrix<float>>("hyb", host, n, repeat);
  return 0;
}
