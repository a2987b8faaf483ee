// measures.h: the one table of what pairwise.distance's metrics and pairwise.kernel's kinds compute for
// rows x and y of length k: accumulators over s = 0..k-1 and a final value from them, as OpenCL C and as
// an extended-precision reference. Distances as SciPy's cdist defines them (chi2 as sklearn's, without
// its sign: sum (x - y)^2 / (x + y)); kernels as scikit-learn's; chi2 and canberra take 0/0 as 0.
#pragma once
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::pairwise {

// The parameters a measure reads (attributes): minkowski's p; the kernels' gamma, alpha (coef0) and degree.
struct Parameters {
  double p = 2, gamma = 1, alpha = 0, degree = 3;
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
};

// pairwise.distance's metrics and pairwise.kernel's kinds.
const std::vector<Measure>& metrics();
const std::vector<Measure>& kernels();
// The entry named `name` of `table`; throws InvalidArgument naming attribute `attr` and the choices.
const Measure& find(const std::vector<Measure>& table, const std::string& name, const std::string& attr);

}  // namespace fugue::pairwise
