// median_network.cpp: Batcher's odd-even merge sort, pruned backwards from the median's position.
#include "median_network.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fugue::stencil {

namespace {

// Batcher's network for `count` values: that of the next power of two without the comparators
// that reach past `count`, which is still a sorting network (the missing values act as +infinity,
// which no comparator moves).
std::vector<Comparator> sorting_network(int count) {
  std::vector<Comparator> network;
  for (int p = 1; p < count; p <<= 1)
    for (int k = p; k >= 1; k >>= 1)
      for (int j = k % p; j + k < count; j += 2 * k)
        for (int i = 0; i < std::min(k, count - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
            network.push_back({i + j, i + j + k, true, true});
  return network;
}

}  // namespace

std::vector<Comparator> median_network(int count) {
  if (count < 1 || count % 2 == 0) throw std::logic_error("median of an even or empty count");
  const std::vector<Comparator> full = sorting_network(count);
  // Walking backwards: the positions whose values still matter to the median.
  std::set<int> needed = {count / 2};
  std::vector<Comparator> kept;
  for (auto c = full.rbegin(); c != full.rend(); ++c) {
    const bool min_needed = needed.count(c->low) > 0, max_needed = needed.count(c->high) > 0;
    if (!min_needed && !max_needed) continue;
    kept.push_back({c->low, c->high, min_needed, max_needed});
    needed.insert(c->low);
    needed.insert(c->high);
  }
  std::reverse(kept.begin(), kept.end());
  return kept;
}

}  // namespace fugue::stencil
