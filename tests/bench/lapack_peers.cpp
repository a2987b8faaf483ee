// lapack_peers: what a CPU user runs instead of Fugue's batched linear algebra, timed on the same cases
// as scripts/gpu_linalg.sh: LAPACKE's potrf, getrf and geqrf and CBLAS's gemm called in a loop over the
// batch, the batch split over the machine's cores (one thread each; set OPENBLAS_NUM_THREADS=1 so that
// the library does not split a small matrix further), and CLBlast's GemmStridedBatched on the first
// OpenCL device (family gemm_clblast: what an OpenCL user has for batched products). Prints one JSON
// line per case, as peers.py does:
//   {"family": "potrf", "case": "f64 n=8 batch=20000", "ms": 1.23, "GFLOPs": 4.5}
// (the best of five runs, each on fresh copies of the inputs).
// Usage: fugue_lapack_peers [potrf|getrf|geqrf|gemm|gemm_clblast]...
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cblas.h>
#include <clblast.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// Runs body(first, last) over [0, count) split into one range per hardware thread.
void split(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(count, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(body, count * t / threads, count * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

// The flops LAPACK counts for one matrix of order n.
double flops_of(const std::string& family, double n) {
  return family == "potrf" ? n * n * n / 3 : family == "getrf" ? 2 * n * n * n / 3 : family == "geqrf" ? 4 * n * n * n / 3 : 2 * n * n * n;
}

template <class T>
void report(const std::string& family, const char* tag, int64_t n, int64_t batch, double best) {
  const double flops = flops_of(family, static_cast<double>(n));
  std::printf("{\"family\": \"%s\", \"case\": \"%s n=%lld batch=%lld\", \"ms\": %.4f, \"GFLOPs\": %.3f}\n", family.c_str(), tag,
              static_cast<long long>(n), static_cast<long long>(batch), best, batch * flops / best / 1e6);
  std::fflush(stdout);
}

template <class T>
void run(const std::string& family, const char* tag, int64_t n, int64_t batch) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const int64_t nn = n * n;
  std::vector<T> a(static_cast<size_t>(batch * nn)), b(a.size()), work(a.size());
  for (auto& v : a) v = static_cast<T>(uniform(rng));
  for (auto& v : b) v = static_cast<T>(uniform(rng));
  if (family == "potrf")  // positive definite: A A^T + n I
    for (int64_t e = 0; e < batch; ++e) {
      std::vector<T> s(static_cast<size_t>(nn));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = i == j ? static_cast<double>(n) : 0.0;
          for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(a[e * nn + i * n + k]) * a[e * nn + j * n + k];
          s[i * n + j] = static_cast<T>(sum);
        }
      std::copy(s.begin(), s.end(), a.begin() + e * nn);
    }
  std::vector<lapack_int> ipiv(static_cast<size_t>(batch * n));
  std::vector<T> tau(static_cast<size_t>(batch * n));
  const int ni = static_cast<int>(n);
  auto body = [&](int64_t first, int64_t last) {
    for (int64_t e = first; e < last; ++e) {
      T* m = work.data() + e * nn;
      if (family == "potrf") {
        if constexpr (sizeof(T) == 8) LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', ni, m, ni);
        else LAPACKE_spotrf(LAPACK_ROW_MAJOR, 'L', ni, m, ni);
      } else if (family == "getrf") {
        if constexpr (sizeof(T) == 8) LAPACKE_dgetrf(LAPACK_ROW_MAJOR, ni, ni, m, ni, ipiv.data() + e * n);
        else LAPACKE_sgetrf(LAPACK_ROW_MAJOR, ni, ni, m, ni, ipiv.data() + e * n);
      } else if (family == "geqrf") {
        if constexpr (sizeof(T) == 8) LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, ni, ni, m, ni, tau.data() + e * n);
        else LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, ni, ni, m, ni, tau.data() + e * n);
      } else {
        const T* x = a.data() + e * nn;
        const T* y = b.data() + e * nn;
        if constexpr (sizeof(T) == 8)
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0, x, ni, y, ni, 0.0, m, ni);
        else
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, x, ni, y, ni, 0.0f, m, ni);
      }
    }
  };
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    work = a;  // fresh inputs: the factorizations work in place
    const auto start = std::chrono::steady_clock::now();
    split(batch, body);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (rep > 0) best = std::min(best, ms);  // the first run warms the caches and the threads
  }
  report<T>(family, tag, n, batch, best);
}

// CLBlast's GemmStridedBatched, C = A B for `batch` row-major n x n matrices on the first OpenCL device,
// timed from enqueue to finish (the inputs on the device beforehand, as Fugue's bench times its kernels).
template <class T>
bool run_clblast(const char* tag, int64_t n, int64_t batch) {
  cl_platform_id platform;
  cl_device_id device;
  cl_int err = clGetPlatformIDs(1, &platform, nullptr);
  if (err == CL_SUCCESS) err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "fugue_lapack_peers: no OpenCL device (error %d)\n", err);
    return false;
  }
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const size_t elements = static_cast<size_t>(batch * n * n), bytes = elements * sizeof(T);
  std::vector<T> host(elements);
  for (auto& v : host) v = static_cast<T>(uniform(rng));
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host.data(), &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host.data(), &err);
  cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  const size_t nn = static_cast<size_t>(n * n), un = static_cast<size_t>(n);
  double best = 1e30;
  bool ok = true;
  for (int rep = 0; rep < 6 && ok; ++rep) {  // the first run builds CLBlast's kernels
    const auto start = std::chrono::steady_clock::now();
    cl_event event = nullptr;
    const auto status = clblast::GemmStridedBatched<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, un, un, un, T{1},
                                                       a, 0, un, nn, b, 0, un, nn, T{0}, c, 0, un, nn, static_cast<size_t>(batch), &queue, &event);
    ok = status == clblast::StatusCode::kSuccess;
    if (ok) clWaitForEvents(1, &event);
    if (event) clReleaseEvent(event);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (rep > 0) best = std::min(best, ms);
    if (!ok) std::fprintf(stderr, "fugue_lapack_peers: CLBlast's GemmStridedBatched failed (%d)\n", static_cast<int>(status));
  }
  if (ok) report<T>("gemm_clblast", tag, n, batch, best);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> families(argv + 1, argv + argc);
  if (families.empty()) families = {"potrf", "getrf", "geqrf", "gemm", "gemm_clblast"};
  for (const auto& f : families) {
    if (f != "potrf" && f != "getrf" && f != "geqrf" && f != "gemm" && f != "gemm_clblast") {
      std::fprintf(stderr, "fugue_lapack_peers: unknown family '%s' (expected potrf, getrf, geqrf, gemm or gemm_clblast)\n", f.c_str());
      return 2;
    }
    for (const int64_t n : {4, 8, 16, 32, 64, 128}) {
      const int64_t batch = n > 16 ? 2000 : 20000;
      if (f == "gemm_clblast") {
        if (!run_clblast<double>("f64", n, batch) || !run_clblast<float>("f32", n, batch)) return 1;
        continue;
      }
      run<double>(f, "f64", n, batch);
      run<float>(f, "f32", n, batch);
    }
  }
  return 0;
}
