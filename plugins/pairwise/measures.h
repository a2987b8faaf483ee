// measures.h: the one table of what pairwise.distance's metrics and pairwise.kernel's kinds compute for
// rows x and y of length k: accumulators over s = 0..k-1 and a final value from them, as OpenCL C and as
// an extended-precision reference. Distances as SciPy's cdist defines them (chi2 as sklearn's, without
// its sign: sum (x - y)^2 / (x + y)); kernels as scikit-learn's; chi2 and canberra take 0/0 as 0.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::pairwise {

// The parameters a measure reads (attributes): minkowski's p; the kernels' gamma, alpha (coef0) and degree.
struct Parameters {
  double p = 2, gamma = 1, alpha = 0, degree = 3;
  // f32 updates of a measure with quotients (Measure::quotients) multiply by this approximate reciprocal
  // (an OpenCL C function of a float; "" for none: they divide): only in the tiled plans of a table row
  // that asks for it (Blocking::division), which compute again in f64 every pair whose f32 value is not
  // finite.
  std::string reciprocal;
};

struct Measure {
  const char* name;
  const char* doc;
  // Up to three accumulators, each starting at zero and updated for every s from x_s and y_s
  // (`x`, `y`, `acc` are OpenCL C names; T the compute type).
  int accumulators;
  bool max;  // accumulator 0 combines by max (chebyshev) instead of +
  std::string (*update)(int accumulator, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p, bool f32);
  // The value from the accumulators a0, a1, a2.
  std::string (*finish)(const std::vector<std::string>& acc, const Parameters& p, bool f32);
  // The reference: the same in long double over whole rows.
  long double (*reference)(const std::vector<long double>& x, const std::vector<long double>& y, const Parameters& p);
  // f32 data accumulated in f64 where the device has doubles (SciPy computes in f64): where f32 fails
  // on ordinary values (minkowski's powers, cosine's squares); the tiled plans sum in f32 where
  // `trusted` below says when that is enough. The others accumulate f32 in f32, as
  // torch.cdist does (squares beyond 1.8e19 overflow).
  bool wide = false;
  // More than a multiply-add or two per coordinate (divisions, powers, several accumulators): the
  // tiled plan gives it smaller register blocks (tiles.h); a measure with x_only below takes the normed
  // class's instead for f32 data.
  bool dear = false;
  // Accumulators that read only x (only y), -1 for none: the tiled plan keeps one per row (per column)
  // of a block rather than one per element (cosine's norms).
  int x_only = -1, y_only = -1;
  // For a wide measure: an OpenCL C condition on the f32 accumulators and the value computed from them
  // under which that value is close enough to f64's (nothing overflowed, nothing that counts
  // underflowed, no cancellation that leaves mostly rounding). The tiled plans then accumulate f32 data
  // in f32 and compute only the pairs that fail it again in f64 (null: always f64).
  std::string (*trusted)(const std::vector<std::string>& acc, const std::string& value) = nullptr;
  // The update for vectors of `type` (x and y vectors of it; row_vectors.h), for updates written with
  // statements or temporaries of the scalar type; null where `update` serves vectors as written.
  std::string (*vector_update)(int accumulator, const std::string& x, const std::string& y, const std::string& acc, const Parameters& p,
                               const std::string& type) = nullptr;
  // A quotient a coordinate (chi2, canberra), whose f32 division may be approximate where
  // Parameters::reciprocal says: a denominator outside the reciprocal's range gives a value that is not
  // finite (or the exact 0 of a zero numerator), which the tiled plan computes again in f64.
  bool quotients = false;
};

// The arithmetic of a measure on data of dtype f32 (else f64) on a device with or without doubles:
// `in_f32` sums in f32 (else f64); `guarded`, f32 sums whose pairs failing Measure::trusted are computed
// again in f64 (pair_in_double).
struct Arithmetic {
  bool in_f32 = false, guarded = false;
};
Arithmetic arithmetic_of(const Measure& m, bool f32, bool doubles);
// OpenCL C of `double pair_in_double(X, Y, i, j)`: the measure of rows i of X and j of Y (f32 data, k
// coordinates) summed in f64, for the guarded pairs.
std::string pair_in_double(const Measure& m, const Parameters& p, int64_t k);

// OpenCL C declaring `const T value` = the measure of one pair of rows: accumulators over s = 0..k-1,
// x_at(s) and y_at(s) the rows' elements (expressions of the loop index), then the final value. `stem`
// names the temporaries (em.name).
std::string pair_code(const sdk::Emitter& em, const Measure& m, const Parameters& p, bool f32, bool doubles, int64_t k,
                      const std::function<std::string(const std::string&)>& x_at, const std::function<std::string(const std::string&)>& y_at,
                      const std::string& value);

// The attributes choosing a measure and its parameters: "metric" and "p" (distances), or "kind",
// "gamma", "alpha" and "degree" (kernels); and the checked parameters of a call for rows of length k
// (gamma 0 becoming 1 / k, scikit-learn's default), throwing InvalidArgument naming the attribute.
std::vector<sdk::AttrSpec> measure_attrs(bool kernels);
const Measure& measure_of(const sdk::Call& call, bool kernels);
Parameters parameters_of(const sdk::Call& call, bool kernels, int64_t k);
// Checks rows X [n, k] and Y [m, k] of one float dtype, none empty, k < 2^31, naming the operand at fault.
void require_rows(const fugue_type& x, const fugue_type& y, const std::string& x_name, const std::string& y_name);

// The plan of an operation computing D [n, m] from rows X and Y (operands 0 and 1): one element
// of D per work-item at ELEMENT level, the rows read whole; `variant` as explain shows it.
sdk::Plan pair_plan(const sdk::Call& call, const std::string& variant);

// OpenCL C declaring longs `i` and `j` (names from em): the row of X and of Y of the current element of D
// [n, m] (ELEMENT level, the flat index over m columns).
std::string pair_of_element(const sdk::Emitter& em, int64_t m, const std::string& i, const std::string& j);

// pairwise.distance's metrics and pairwise.kernel's kinds.
const std::vector<Measure>& metrics();
const std::vector<Measure>& kernels();
// The entry named `name` of `table`; throws InvalidArgument naming attribute `attr` and the choices.
const Measure& find(const std::vector<Measure>& table, const std::string& name, const std::string& attr);

}  // namespace fugue::pairwise
