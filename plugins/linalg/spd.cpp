// spd.cpp: the spd generator (see spd.h). Each matrix is Q diag(lambda) Q^H: eigenvalues spaced
// geometrically from 1 down to 1/cond, and Q the product of three Householder reflections of random
// directions (complex ones for complex dtypes: the matrix is then Hermitian), so that the matrix is
// dense, its condition number exactly cond, and making it costs O(n^2) per matrix (the factorizations'
// benchmarks need large batches).
#include "spd.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fugue::linalg {

namespace {

struct Parameters {
  uint64_t seed = 0;
  double cond = 10;
};

Parameters parse(const std::string& text) {
  const nlohmann::json p = nlohmann::json::parse(text, nullptr, false);
  if (!p.is_object()) throw sdk::InvalidArgument("expected an object {\"seed\": s, \"cond\": c}, found " + text);
  Parameters out;
  for (const auto& [key, value] : p.items()) {
    if (key == "seed") {
      if (!value.is_number_unsigned()) throw sdk::InvalidArgument("/seed: expected a non-negative integer, found " + value.dump());
      out.seed = value.get<uint64_t>();
    } else if (key == "cond") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 1 || value.get<double>() > 1e15)
        throw sdk::InvalidArgument("/cond: expected a condition number from 1 to 1e15, found " + value.dump());
      out.cond = value.get<double>();
    } else {
      throw sdk::InvalidArgument("/" + key + ": unknown key (expected seed, cond)");
    }
  }
  return out;
}

// SplitMix64: a small, fully specified generator, so the same parameters give the same matrices anywhere.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double uniform(uint64_t& state) { return static_cast<double>(next(state) >> 11) * 0x1.0p-53 * 2 - 1; }  // [-1, 1)

class Spd final : public sdk::Generator {
 public:
  Spd() {
    name = "spd";
    doc = "{\"seed\": s, \"cond\": c}: symmetric (complex dtypes: Hermitian) positive definite matrices [..., n, n] with "
          "eigenvalues from 1 down to 1/c (default 10), geometrically spaced, in random dense directions";
    dtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_C64) |
             FUGUE_DTYPE_BIT(FUGUE_DTYPE_C128);
  }
  void check(const std::string& parameters, const fugue_type& type) const override {
    parse(parameters);
    if (type.kind != FUGUE_KIND_ARRAY || type.rank < 2 || type.shape[type.rank - 1] != type.shape[type.rank - 2])
      throw sdk::InvalidArgument("spd makes square matrices: the array must be [..., n, n], not " + sdk::type_string(type));
  }
  void generate(const std::string& parameters, fugue_host_array& array) const override {
    const Parameters p = parse(parameters);
    sdk::HostView out(array);
    const fugue_type& t = out.type();
    const int64_t n = t.shape[t.rank - 1];
    if (n == 0) return;
    const int64_t count = out.size() / (n * n);
    using Z = std::complex<double>;
    const bool complex = t.dtype == FUGUE_DTYPE_C64 || t.dtype == FUGUE_DTYPE_C128;
    std::vector<Z> a(static_cast<size_t>(n * n)), v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
    for (int64_t m = 0; m < count; ++m) {
      uint64_t state = p.seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(m);
      std::fill(a.begin(), a.end(), Z(0));
      for (int64_t i = 0; i < n; ++i) a[i * n + i] = n > 1 ? std::pow(p.cond, -static_cast<double>(i) / (n - 1)) : 1.0;
      for (int reflection = 0; reflection < 3; ++reflection) {
        // A <- H A H with H = I - 2 v v^H / (v^H v): A - b (v w^H + w v^H) + b^2 (v^H w) v v^H, w = A v, b = 2 / v^H v.
        double vv = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double re = uniform(state);
          v[i] = complex ? Z(re, uniform(state)) : Z(re);
          vv += std::norm(v[i]);
        }
        if (vv == 0) continue;
        const double b = 2 / vv;
        double vw = 0;  // v^H w, real as A is Hermitian
        for (int64_t i = 0; i < n; ++i) {
          w[i] = 0;
          for (int64_t j = 0; j < n; ++j) w[i] += a[i * n + j] * v[j];
          vw += (std::conj(v[i]) * w[i]).real();
        }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            a[i * n + j] += -b * (v[i] * std::conj(w[j]) + w[i] * std::conj(v[j])) + b * b * vw * v[i] * std::conj(v[j]);
      }
      for (int64_t i = 0; i < n; ++i)  // exactly Hermitian, the diagonal real
        for (int64_t j = 0; j < n; ++j) {
          const Z z = i < j ? a[i * n + j] : i > j ? std::conj(a[j * n + i]) : Z(a[i * n + i].real());
          if (complex) out.set_complex(m * n * n + i * n + j, z);
          else out.set(m * n * n + i * n + j, z.real());
        }
    }
  }
};

}  // namespace

std::unique_ptr<sdk::Generator> spd_generator() { return std::make_unique<Spd>(); }

}  // namespace fugue::linalg
