#include "ritz.h"

#include <CL/cl.h>

#include <fugue/sdk_device.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tridiagonal.h"

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kAlpha = 0, kBeta = 1, kSteps = 2, kTheta = 3, kS = 4, kBound = 5, kConverged = 6;
constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr uint32_t kIntegers = FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64);

// What one call computes, in double precision, from alpha and beta as the host holds them.
struct Ritz {
  std::vector<double> theta, bound;  // [count]: NaN and +inf past the values found
  std::vector<double> s;             // [m, count], row-major; rows at and past n zero
  int64_t converged = 0;
};

class RitzOperation final : public Operation {
 public:
  RitzOperation() {
    name = "sparse.ritz";
    doc = "The Ritz values and vectors of a Lanczos run after `steps` = n steps: T_n, the symmetric tridiagonal with diagonal "
          "alpha[0..n-1] and off-diagonal beta[0..n-2], has its `count` smallest eigenvalues theta (ascending) with unit "
          "eigenvectors in the columns of S [m, count] (rows n and after 0, so that X = S^T V for the run's Lanczos vectors "
          "V [m, N] in rows); bound[i] = |beta[n-1] S[n-1, i]|, the residual norm of Ritz pair i; converged, how many of the "
          "smallest have bound <= tolerance * |T_n|. Values closer than 1e3 machine epsilons of the dtype times |T_n| count "
          "once; filter \"cullum_willoughby\" drops a value found once in T_n that T_n without its first row and column also "
          "has (spurious, from lost orthogonality), \"none\" keeps it (runs that reorthogonalize). Past the values found, "
          "theta is NaN, S 0 and bound +inf; where alpha or beta is not finite (a run that divided by a zero beta), "
          "theta, S and bound are NaN and converged 0. T_n splits where an off-diagonal is below the merging tolerance "
          "(a run that found an invariant subspace), and the filter looks at each part alone; eigenvectors of one part "
          "whose values are within 1e-3 |T_n| are made orthogonal. Computed on the host in double precision, T_n scaled "
          "by the power of two at its largest element";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {in("alpha", array, kFloats, "the diagonal, alpha[j] from step j: [m]"),
                in("beta", array, kFloats, "beta[j] = |r| after step j: [m], alpha's dtype"),
                in("steps", FUGUE_KIND_BIT(FUGUE_KIND_SCALAR) | FUGUE_KIND_BIT(FUGUE_KIND_CONST), kIntegers,
                   "n, the steps taken: 1 .. m (a loop's step + 1)"),
                out("theta", array, kFloats, "the Ritz values [count], ascending"),
                out("S", array, kFloats, "their eigenvectors of T_n in columns [m, count]"),
                out("bound", array, kFloats, "their residual norms [count]"),
                out("converged", FUGUE_KIND_BIT(FUGUE_KIND_SCALAR), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64),
                    "how many of the smallest have converged")};
    attrs = {{"count", FUGUE_ATTR_INT, true, 0, "", "how many of the smallest Ritz values (1 .. m)"},
             {"filter", FUGUE_ATTR_STRING, false, 0, "cullum_willoughby", "\"cullum_willoughby\" or \"none\""},
             {"tolerance", FUGUE_ATTR_NUMBER, false, 0, "",
              "converged when bound <= tolerance * |T_n|; 0: the square root of the dtype's machine epsilon"}};
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    test_low = 0.5;
    test_high = 2;
    test_cases = R"([
      {"name": "a run of 40 steps, 6 values", "shape": [40], "attrs": {"count": 6},
       "inputs": {"steps": {"kind": "scalar", "dtype": "i64", "value": 40}}},
      {"name": "part of a run, no filter", "shape": [30], "attrs": {"count": 4, "filter": "none", "tolerance": 0.1},
       "inputs": {"steps": {"kind": "const", "value": 17}}},
      {"name": "one step", "shape": [5], "attrs": {"count": 1},
       "inputs": {"steps": {"kind": "scalar", "dtype": "i32", "value": 1}}}
    ])";
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type &alpha = call.operand(kAlpha), &beta = call.operand(kBeta);
    if (alpha.rank != 1 || alpha.shape[0] < 1)
      throw InvalidArgument("operand alpha: expected a vector [m] of one or more values, found " + type_string(alpha));
    if (beta.rank != 1 || beta.shape[0] != alpha.shape[0] || beta.dtype != alpha.dtype)
      throw InvalidArgument("operand beta: expected " + type_string(Type(FUGUE_KIND_ARRAY, alpha.dtype, {alpha.shape[0]})) +
                            " (alpha's dtype and length), found " + type_string(beta));
    const int64_t m = alpha.shape[0], count = call.integer("count");
    if (count < 1 || count > m)
      throw InvalidArgument("attribute count: expected 1 .. " + std::to_string(m) + " (alpha's length), found " + std::to_string(count));
    const std::string filter = call.string("filter");
    if (filter != "cullum_willoughby" && filter != "none")
      throw InvalidArgument("attribute filter: expected \"cullum_willoughby\" or \"none\", found \"" + filter + "\"");
    const double tolerance = call.number("tolerance");
    if (!(tolerance >= 0) || !std::isfinite(tolerance))
      throw InvalidArgument("attribute tolerance: expected a number >= 0, found " + std::to_string(tolerance));
    const fugue_type& steps = call.operand(kSteps);
    if (steps.kind == FUGUE_KIND_CONST && !(steps.const_value >= 1 && steps.const_value <= static_cast<double>(m) &&
                                            steps.const_value == std::floor(steps.const_value)))
      throw InvalidArgument("operand steps: expected an integer in 1 .. " + std::to_string(m) + ", found " + std::to_string(steps.const_value));
    types[kTheta] = Type(FUGUE_KIND_ARRAY, alpha.dtype, {count});
    types[kS] = Type(FUGUE_KIND_ARRAY, alpha.dtype, {m, count});
    types[kBound] = Type(FUGUE_KIND_ARRAY, alpha.dtype, {count});
    types[kConverged] = make_type(FUGUE_KIND_SCALAR, FUGUE_DTYPE_I64);
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
    p.variant = "on the host: bisection, " + call.string("filter") + ", inverse iteration";
    return p;
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    const fugue_type& alpha_type = call.operand(kAlpha);
    const int64_t m = alpha_type.shape[0];
    std::vector<double> alpha = read_reals(s, call, kAlpha, m), beta = read_reals(s, call, kBeta, m);
    const int64_t n = steps_of(s, call);
    const Ritz r = compute(call, alpha, beta, n);
    write_reals(s, call, kTheta, r.theta);
    write_reals(s, call, kS, r.s);
    write_reals(s, call, kBound, r.bound);
    const cl_long converged = r.converged;
    check_cl(clEnqueueWriteBuffer(s.queue, buffer(s, kConverged), CL_TRUE, 0, sizeof converged, &converged, 0, nullptr, nullptr),
             name + ": writing converged");
  }

  fugue_cost cost(const Call& call) const override {
    const double m = static_cast<double>(call.operand(kAlpha).shape[0]), count = static_cast<double>(call.integer("count"));
    const double bytes = static_cast<double>(dtype_bytes(call.operand(kAlpha).dtype)) * (2 * m + m * count + 2 * count) + 8;
    return {sizeof(fugue_cost), bytes, 64 * 4 * m * count};  // bisection steps over the order, per value
  }

  void reference(const Call& call, fugue_host_array* arrays) const override {
    const int64_t m = call.operand(kAlpha).shape[0];
    HostView a(arrays[kAlpha]), b(arrays[kBeta]), steps(arrays[kSteps]);
    std::vector<double> alpha(m), beta(m);
    for (int64_t i = 0; i < m; ++i) alpha[i] = a.get(i), beta[i] = b.get(i);
    const Ritz r = compute(call, alpha, beta, checked_steps(steps.get_int(0), m));
    HostView theta(arrays[kTheta]), S(arrays[kS]), bound(arrays[kBound]), converged(arrays[kConverged]);
    for (size_t i = 0; i < r.theta.size(); ++i) theta.set(static_cast<int64_t>(i), r.theta[i]), bound.set(static_cast<int64_t>(i), r.bound[i]);
    for (size_t i = 0; i < r.s.size(); ++i) S.set(static_cast<int64_t>(i), r.s[i]);
    converged.set_int(0, r.converged);
  }

 private:
  int64_t checked_steps(int64_t n, int64_t m) const {
    if (n < 1 || n > m)
      throw InvalidArgument("operand steps is " + std::to_string(n) + ", outside 1 .. " + std::to_string(m) +
                            " (alpha's length): call it after the first step and within the run's length");
    return n;
  }

  int64_t steps_of(const fugue_device_services& s, const Call& call) const {
    const fugue_type& steps = call.operand(kSteps);
    const int64_t m = call.operand(kAlpha).shape[0];
    if (steps.kind == FUGUE_KIND_CONST) return checked_steps(static_cast<int64_t>(steps.const_value), m);
    int64_t value = 0;
    if (steps.dtype == FUGUE_DTYPE_I64) {
      check_cl(clEnqueueReadBuffer(s.queue, buffer(s, kSteps), CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr), name + ": reading steps");
    } else {
      int32_t v32 = 0;
      check_cl(clEnqueueReadBuffer(s.queue, buffer(s, kSteps), CL_TRUE, 0, sizeof v32, &v32, 0, nullptr, nullptr), name + ": reading steps");
      value = v32;
    }
    return checked_steps(value, m);
  }

  std::vector<double> read_reals(const fugue_device_services& s, const Call& call, uint32_t k, int64_t count) const {
    std::vector<double> values(static_cast<size_t>(count));
    if (call.operand(k).dtype == FUGUE_DTYPE_F64) {
      check_cl(clEnqueueReadBuffer(s.queue, buffer(s, k), CL_TRUE, 0, values.size() * sizeof(double), values.data(), 0, nullptr, nullptr),
               name + ": reading " + call.operand_name(k));
    } else {
      std::vector<float> f(values.size());
      check_cl(clEnqueueReadBuffer(s.queue, buffer(s, k), CL_TRUE, 0, f.size() * sizeof(float), f.data(), 0, nullptr, nullptr),
               name + ": reading " + call.operand_name(k));
      for (size_t i = 0; i < f.size(); ++i) values[i] = f[i];
    }
    return values;
  }

  void write_reals(const fugue_device_services& s, const Call& call, uint32_t k, const std::vector<double>& values) const {
    if (values.empty()) return;
    if (call.operand(kAlpha).dtype == FUGUE_DTYPE_F64) {
      check_cl(clEnqueueWriteBuffer(s.queue, buffer(s, k), CL_TRUE, 0, values.size() * sizeof(double), values.data(), 0, nullptr, nullptr),
               name + ": writing " + call.operand_name(k));
    } else {
      const std::vector<float> f(values.begin(), values.end());
      check_cl(clEnqueueWriteBuffer(s.queue, buffer(s, k), CL_TRUE, 0, f.size() * sizeof(float), f.data(), 0, nullptr, nullptr),
               name + ": writing " + call.operand_name(k));
    }
  }

  Ritz compute(const Call& call, const std::vector<double>& alpha, const std::vector<double>& beta, int64_t n) const {
    const int64_t m = static_cast<int64_t>(alpha.size()), count = call.integer("count");
    const fugue_dtype dtype = call.operand(kAlpha).dtype;
    const double eps = dtype == FUGUE_DTYPE_F64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Ritz r;
    r.theta.assign(static_cast<size_t>(count), nan);
    r.bound.assign(static_cast<size_t>(count), std::numeric_limits<double>::infinity());
    r.s.assign(static_cast<size_t>(m * count), 0.0);
    Tridiagonal t;
    t.diagonal.assign(alpha.begin(), alpha.begin() + n);
    t.offdiagonal.assign(beta.begin(), beta.begin() + (n - 1));
    bool finite = std::isfinite(beta[static_cast<size_t>(n - 1)]);
    for (double v : t.diagonal) finite = finite && std::isfinite(v);
    for (double v : t.offdiagonal) finite = finite && std::isfinite(v);
    if (!finite) {  // a run that broke down (a division by a zero beta): nothing to trust
      std::fill(r.s.begin(), r.s.end(), nan);
      std::fill(r.bound.begin(), r.bound.end(), nan);
      return r;
    }
    // Scaled near norm 1 (as LAPACK's stebz does), so that squares in the Sturm counts neither overflow
    // nor underflow whatever the matrix's scale: by the power of two at its largest element, found before
    // any sum (the norm of elements near the largest double would itself overflow), so the scaling is exact.
    double largest = 0;
    for (double v : t.diagonal) largest = std::max(largest, std::abs(v));
    for (double v : t.offdiagonal) largest = std::max(largest, std::abs(v));
    const double scale = largest > 0 ? std::ldexp(1.0, std::ilogb(largest)) : 1.0;
    for (double& v : t.diagonal) v /= scale;
    for (double& v : t.offdiagonal) v /= scale;
    // |T| / scale; values merge and vectors are orthogonalized within fixed shares of it (of 1 where T is 0).
    const double norm = t.norm(), unit = norm > 0 ? norm : 1.0, given = call.number("tolerance");
    // Compared in T's scaled units: |beta_n z_n| / scale <= tolerance |T| / scale, which cannot overflow.
    const double tolerance = (given > 0 ? given : std::sqrt(eps)) * norm;
    const std::vector<RitzValue> values = smallest_ritz_values(t, count, 1e3 * eps * unit, call.string("filter") == "cullum_willoughby");
    const std::vector<std::vector<double>> vectors = ritz_vectors(t, values, 1e-3 * unit);
    // A value the output's dtype cannot hold is never converged (it is written as an infinity).
    const double largest_stored = dtype == FUGUE_DTYPE_F64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    bool leading = true;
    for (size_t i = 0; i < values.size(); ++i) {
      const std::vector<double>& z = vectors[i];
      for (int64_t row = 0; row < n; ++row) r.s[static_cast<size_t>(row * count) + i] = z[static_cast<size_t>(row)];
      r.theta[i] = values[i].value * scale;
      r.bound[i] = std::abs(beta[static_cast<size_t>(n - 1)] * z[static_cast<size_t>(n - 1)]);
      const double last = z[static_cast<size_t>(n - 1)];  // 0 in a block T splits off from the last row
      const double scaled_bound = last == 0 ? 0.0 : std::abs(beta[static_cast<size_t>(n - 1)] / scale) * std::abs(last);
      leading = leading && std::abs(r.theta[i]) <= largest_stored && scaled_bound <= tolerance;
      if (leading) ++r.converged;
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> ritz_operation() { return std::make_unique<RitzOperation>(); }

}  // namespace fugue::sparse
