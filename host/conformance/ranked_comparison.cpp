#include "ranked_comparison.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace fugue::conformance {

namespace {
bool near(double a, double b, double tolerance) {
  return a == b || std::fabs(a - b) <= tolerance * std::max(1.0, std::fabs(b));
}
}  // namespace

std::string compare_ranked(const HostArray& index, const HostArray& expected_index, const HostArray& expected_value,
                           double tolerance) {
  if (index.shape != expected_index.shape || expected_value.shape != expected_index.shape || index.shape.empty())
    return "shape " + shape_string(index.shape) + " vs expected " + shape_string(expected_index.shape) +
           " ranked by " + shape_string(expected_value.shape);
  const int64_t count = index.shape.back(), rows = count ? index.elements() / count : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * count;
    std::set<int64_t> seen;
    for (int64_t q = 0; q < count; ++q) {
      const int64_t got = static_cast<int64_t>(index.get(base + q)), want = static_cast<int64_t>(expected_index.get(base + q));
      auto where = [&] {
        return "element " + std::to_string(base + q) + ": " + std::to_string(got) + ", expected " + std::to_string(want);
      };
      if (!seen.insert(got).second) return where() + " (index repeated in its row)";
      if (got == want) continue;
      const double value = expected_value.get(base + q);
      // Where the reference ranks `got` in this row, its value must tie with this place's; a
      // candidate the reference left out may only tie with the row's last kept value.
      int64_t place = -1;
      for (int64_t p = 0; p < count; ++p)
        if (static_cast<int64_t>(expected_index.get(base + p)) == got) place = p;
      const double tied_with = place >= 0 ? expected_value.get(base + place) : expected_value.get(base + count - 1);
      if (!near(tied_with, value, tolerance))
        return where() + " (its value is not within " + std::to_string(tolerance) + " of this place's " + std::to_string(value) + ")";
    }
  }
  return {};
}

}  // namespace fugue::conformance
