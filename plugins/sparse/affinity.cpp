#include "affinity.h"

#include <CL/cl.h>

#include <fugue/sdk_device.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "affinity_cl.h"  // kernel_source_affinity, embedded from kernels/affinity.cl
#include "layouts.h"

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kW = 0, kImage = 1;
constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr size_t kGroup = 128;

// The neighbours within the radius, ordered by the diagonal they make (dy major: dy * width + dx
// ascends because the image is wider than the disc).
struct Neighbours {
  std::vector<int> dy, dx;
  int count() const { return static_cast<int>(dy.size()); }
};
Neighbours neighbours_within(int64_t radius) {
  Neighbours n;
  for (int64_t dy = -radius; dy <= radius; ++dy)
    for (int64_t dx = -radius; dx <= radius; ++dx)
      if (dy * dy + dx * dx <= radius * radius) n.dy.push_back(static_cast<int>(dy)), n.dx.push_back(static_cast<int>(dx));
  return n;
}

// 1 / sigma^2, at most the dtype's largest finite value: a sigma so small that this overflows (or that
// its square underflows) would give 0 * infinity = NaN for a pixel and itself, where the weight is 1.
double inverse_square(double sigma, fugue_dtype dtype) {
  const double largest = dtype == FUGUE_DTYPE_F64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  return std::min(1 / (sigma * sigma), largest);
}

class Affinity final : public Operation {
 public:
  Affinity() {
    name = "sparse.affinity";
    doc = "The affinity matrix of an image [H, W] (normalized cuts): pixels p and q no farther apart than `radius` "
          "have weight exp(-(I_p - I_q)^2 / sigma_intensity^2 - |p - q|^2 / sigma_distance^2), others none; W is a dia "
          "[H W, H W] (pixels in row-major order) of one diagonal per offset within the radius (radius 5: 81). matrix "
          "\"laplacian\" (the default) gives I - D^-1/2 W D^-1/2, D the diagonal of W's row sums, whose smallest "
          "eigenvectors segment the image; \"weights\" gives W";
    operands = {out_kind("W", "dia", kFloats, "the matrix [H W, H W], the image's dtype"),
                in("image", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloats, "the brightness [H, W], wider than 2 radius")};
    attrs = {{"sigma_intensity", FUGUE_ATTR_NUMBER, true, 0, "", "the brightness scale, in the image's units (> 0)"},
             {"sigma_distance", FUGUE_ATTR_NUMBER, false, 4, "", "the distance scale in pixels (> 0)"},
             {"radius", FUGUE_ATTR_INT, false, 5, "", "the largest distance coupled, in pixels (1 .. 20)"},
             {"matrix", FUGUE_ATTR_STRING, false, 0, "laplacian", "\"laplacian\" or \"weights\""}};
    tolerance_f32 = 2e-5;
    tolerance_f64 = 1e-12;
    test_low = 0;
    test_high = 1;
    test_cases = R"([
      {"name": "laplacian, radius 2", "shape": [9, 11], "attrs": {"sigma_intensity": 0.3, "radius": 2},
       "outputs": {"W": {"kind": "dia", "shape": [99, 99], "diagonals": 13}}},
      {"name": "weights, radius 1", "shape": [4, 5], "attrs": {"sigma_intensity": 0.5, "sigma_distance": 2, "radius": 1, "matrix": "weights"},
       "outputs": {"W": {"kind": "dia", "shape": [20, 20], "diagonals": 5}}},
      {"name": "two rows of pixels", "shape": [2, 13], "attrs": {"sigma_intensity": 0.2, "radius": 3},
       "outputs": {"W": {"kind": "dia", "shape": [26, 26], "diagonals": 29}}}
    ])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& image = call.operand(kImage);
    if (image.rank != 2 || image.shape[0] < 1) throw InvalidArgument("operand image: expected an image [H, W], found " + type_string(image));
    const int64_t radius = call.integer("radius"), height = image.shape[0], width = image.shape[1];
    if (radius < 1 || radius > 20) throw InvalidArgument("attribute radius: expected 1 .. 20, found " + std::to_string(radius));
    if (width <= 2 * radius)
      throw InvalidArgument("operand image: " + std::to_string(width) + " pixels wide, not wider than twice the radius (" + std::to_string(radius) +
                            "): the diagonals of neighbours on different rows would coincide");
    for (const char* scale : {"sigma_intensity", "sigma_distance"})
      if (!(call.number(scale) > 0) || !std::isfinite(call.number(scale)))
        throw InvalidArgument(std::string("attribute ") + scale + ": expected a number > 0, found " + std::to_string(call.number(scale)));
    const std::string matrix = call.string("matrix");
    if (matrix != "laplacian" && matrix != "weights")
      throw InvalidArgument("attribute matrix: expected \"laplacian\" or \"weights\", found \"" + matrix + "\"");
    const int64_t pixels = height * width, count = neighbours_within(radius).count();
    if (height > (int64_t{1} << 31) / width || pixels > (int64_t{1} << 56) / count)
      throw InvalidArgument("operand image: " + std::to_string(height) + " x " + std::to_string(width) + " pixels, more than a matrix of " +
                            std::to_string(count) + " diagonals can index");
    Facts f;
    f.layout = Layout::Dia;
    f.dtype = image.dtype;
    f.index = FUGUE_DTYPE_I32;
    f.rows = f.cols = pixels;
    f.diagonals = count;
    const Declared d = declared_type(f);
    Type w(FUGUE_KIND_PLUGIN, d.dtype, d.shape);
    w.kind_name = "dia";
    w.metadata = d.metadata;
    for (const PartType& part : d.parts) w.parts.emplace_back(FUGUE_KIND_ARRAY, part.dtype, part.shape);
    types[kW] = w;
  }

  Plan plan(const Call& call) const override {
    // W's declaration sizes its parts (infer's cannot cross to the core): they must hold what is made.
    const int64_t diagonals = neighbours_within(call.integer("radius")).count();
    const fugue_type& w = call.operand(kW);
    const fugue_type* offsets = w.num_parts == 2 ? FUGUE_NTH(fugue_type, w.parts, 0) : nullptr;
    if (!offsets || offsets->rank != 1 || offsets->shape[0] != diagonals)
      throw InvalidArgument("operand W: radius " + std::to_string(call.integer("radius")) + " makes a dia of " + std::to_string(diagonals) +
                            " diagonals, but W is declared with " + (offsets && offsets->rank == 1 ? std::to_string(offsets->shape[0]) : std::string("other parts")) +
                            ": declare \"diagonals\": " + std::to_string(diagonals));
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
    p.variant = "a pixel per work-item: row sums, then " + std::to_string(diagonals) + " diagonals";
    return p;
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    const fugue_type& image = call.operand(kImage);
    require_dtype(s, image.dtype, name);
    const bool f64 = image.dtype == FUGUE_DTYPE_F64;
    const Neighbours n = neighbours_within(call.integer("radius"));
    const cl_long height = image.shape[0], width = image.shape[1], pixels = height * width;
    std::vector<cl_int> offsets(n.dy.size());
    for (size_t k = 0; k < offsets.size(); ++k) offsets[k] = static_cast<cl_int>(n.dy[k] * width + n.dx[k]);
    const size_t table = offsets.size() * sizeof(cl_int);
    // W's offsets in the index dtype its declaration gives (i32 unless it says i64).
    const std::vector<cl_long> wide(offsets.begin(), offsets.end());
    const bool long_index = FUGUE_NTH(fugue_type, call.operand(kW).parts, 0)->dtype == FUGUE_DTYPE_I64;
    check_cl(clEnqueueWriteBuffer(s.queue, part(s, call, "W", 0), CL_TRUE, 0, long_index ? wide.size() * sizeof(cl_long) : table,
                                  long_index ? static_cast<const void*>(wide.data()) : offsets.data(), 0, nullptr, nullptr),
             name + ": offsets");
    cl_mem dy = scratch(s, table), dx = scratch(s, table);
    check_cl(clEnqueueWriteBuffer(s.queue, dy, CL_TRUE, 0, table, n.dy.data(), 0, nullptr, nullptr), name + ": dy");
    check_cl(clEnqueueWriteBuffer(s.queue, dx, CL_TRUE, 0, table, n.dx.data(), 0, nullptr, nullptr), name + ": dx");
    const bool laplacian = call.string("matrix") == "laplacian";
    cl_mem degree = scratch(s, static_cast<size_t>(pixels) * dtype_bytes(image.dtype));
    const std::string source = std::string(f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_affinity;
    cl_program program = build_program(s, source, std::string("-DREAL=") + (f64 ? "double" : "float"));
    const double inv_intensity2 = inverse_square(call.number("sigma_intensity"), image.dtype);
    const double inv_distance2 = inverse_square(call.number("sigma_distance"), image.dtype);
    size_t group = kGroup;
    while (group > 1 && group > max_work_group_size(s)) group /= 2;
    auto scales = [&](Kernel& k, cl_uint i) -> Kernel& {
      if (f64) k.arg(i, inv_intensity2).arg(i + 1, inv_distance2);
      else k.arg(i, static_cast<float>(inv_intensity2)).arg(i + 1, static_cast<float>(inv_distance2));
      return k;
    };
    cl_mem pixels_buffer = buffer(s, call, "image");
    if (laplacian) {
      Kernel degrees(program, "affinity_degrees");
      degrees.args(pixels_buffer, height, width, cl_int{n.count()}, dy, dx);
      scales(degrees, 6).arg(8, degree).enqueue(s, static_cast<size_t>(pixels), group, "affinity degrees");
    }
    Kernel entries(program, "affinity_entries");
    entries.args(pixels_buffer, height, width, cl_int{n.count()}, dy, dx);
    scales(entries, 6).arg(8, degree).arg(9, cl_int{laplacian ? 1 : 0}).arg(10, part(s, call, "W", 1));
    entries.enqueue(s, static_cast<size_t>(pixels), group, "affinity entries");
  }

  fugue_cost cost(const Call& call) const override {
    const fugue_type& image = call.operand(kImage);
    const double pixels = static_cast<double>(image.shape[0] * image.shape[1]), k = neighbours_within(call.integer("radius")).count();
    const double bytes = static_cast<double>(dtype_bytes(image.dtype)) * pixels * (k + 2);
    return {sizeof(fugue_cost), bytes, 12 * k * pixels * (call.string("matrix") == "laplacian" ? 2 : 1)};
  }

  void reference(const Call& call, fugue_host_array* arrays) const override {
    const fugue_type& type = call.operand(kImage);
    HostView image(arrays[kImage]), w(arrays[kW]);
    HostView offsets = w.part(0), data = w.part(1);
    const Neighbours n = neighbours_within(call.integer("radius"));
    const int64_t height = type.shape[0], width = type.shape[1], pixels = height * width;
    const double inv_intensity2 = inverse_square(call.number("sigma_intensity"), type.dtype);
    const double inv_distance2 = inverse_square(call.number("sigma_distance"), type.dtype);
    auto weight = [&](int64_t p, int k) {
      const int64_t y = p / width + n.dy[k], x = p % width + n.dx[k];
      if (y < 0 || y >= height || x < 0 || x >= width) return 0.0;
      const double difference = image.get(p) - image.get(y * width + x);
      return std::exp(-difference * difference * inv_intensity2 - static_cast<double>(n.dy[k] * n.dy[k] + n.dx[k] * n.dx[k]) * inv_distance2);
    };
    const bool laplacian = call.string("matrix") == "laplacian";
    std::vector<double> degree(static_cast<size_t>(pixels));
    for (int64_t p = 0; p < pixels; ++p)
      for (int k = 0; k < n.count(); ++k) degree[static_cast<size_t>(p)] += weight(p, k);
    for (int k = 0; k < n.count(); ++k) {
      offsets.set_int(k, n.dy[k] * width + n.dx[k]);
      for (int64_t p = 0; p < pixels; ++p) {
        double v = weight(p, k);
        if (laplacian) {
          const int64_t q = p + n.dy[k] * width + n.dx[k];
          v = v == 0 ? 0 : -v / std::sqrt(degree[static_cast<size_t>(p)] * degree[static_cast<size_t>(q)]);
          if (n.dy[k] == 0 && n.dx[k] == 0) v += 1;
        }
        data.set(k * pixels + p, v);
      }
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> affinity_operation() { return std::make_unique<Affinity>(); }

}  // namespace fugue::sparse
