// range_max.h: the maximum over ranges of a growing sequence of counts, under additions over
// ranges — what the kernel builder keeps of the registers live at each operation of a kernel.
#pragma once
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace fugue {

// The maximum of values kept per operation of a kernel, under additions over ranges of operations:
// the registers live at each operation (registers_with). O(log n) per update or query; appending
// grows it by doubling.
class RangeMax {
 public:
  static constexpr int kNone = std::numeric_limits<int>::min() / 4;  // below any count, safe to add to

  size_t size() const { return n_; }
  void clear() {
    n_ = cap_ = 0;
    max_.clear();
    add_.clear();
  }
  // Appends `value` at position size().
  void push(int value) {
    if (n_ == cap_) grow();
    set(1, 0, cap_ - 1, n_, value);
    ++n_;
  }
  // Adds `v` to every position of [l, r] (r < size()); nothing when l > r.
  void add(size_t l, size_t r, int v) {
    if (l <= r) add(1, 0, cap_ - 1, l, r, v);
  }
  // The largest value in [l, r] (r < size()); kNone when l > r.
  int max(size_t l, size_t r) const { return l <= r ? max(1, 0, cap_ - 1, l, r) : kNone; }

 private:
  // Node i covers [nl, nr]; max_[i] is the largest value below it, counting the additions of i and
  // its descendants (not of its ancestors); add_[i] what was added to all of [nl, nr] at once.
  void add(size_t i, size_t nl, size_t nr, size_t l, size_t r, int v) {
    if (r < nl || nr < l) return;
    if (l <= nl && nr <= r) {
      max_[i] += v;
      add_[i] += v;
      return;
    }
    size_t mid = (nl + nr) / 2;
    add(2 * i, nl, mid, l, r, v);
    add(2 * i + 1, mid + 1, nr, l, r, v);
    max_[i] = add_[i] + std::max(max_[2 * i], max_[2 * i + 1]);
  }
  int max(size_t i, size_t nl, size_t nr, size_t l, size_t r) const {
    if (r < nl || nr < l) return kNone;
    if (l <= nl && nr <= r) return max_[i];
    size_t mid = (nl + nr) / 2;
    return add_[i] + std::max(max(2 * i, nl, mid, l, r), max(2 * i + 1, mid + 1, nr, l, r));
  }
  void set(size_t i, size_t nl, size_t nr, size_t p, int v) {
    if (nl == nr) {
      max_[i] = v;
      add_[i] = 0;
      return;
    }
    size_t mid = (nl + nr) / 2;
    if (p <= mid) set(2 * i, nl, mid, p, v - add_[i]);
    else set(2 * i + 1, mid + 1, nr, p, v - add_[i]);
    max_[i] = add_[i] + std::max(max_[2 * i], max_[2 * i + 1]);
  }
  void values(size_t i, size_t nl, size_t nr, int above, std::vector<int>& out) const {
    if (nl >= n_) return;
    if (nl == nr) {
      out[nl] = max_[i] + above;
      return;
    }
    size_t mid = (nl + nr) / 2;
    values(2 * i, nl, mid, above + add_[i], out);
    values(2 * i + 1, mid + 1, nr, above + add_[i], out);
  }
  void grow() {
    std::vector<int> v(n_);
    if (n_) values(1, 0, cap_ - 1, 0, v);
    cap_ = std::max<size_t>(16, 2 * cap_);
    max_.assign(2 * cap_, kNone);
    add_.assign(2 * cap_, 0);
    for (size_t p = 0; p < n_; ++p) max_[cap_ + p] = v[p];
    for (size_t i = cap_; i-- > 1;) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }

  size_t n_ = 0, cap_ = 0;  // positions in use; leaves (a power of two)
  std::vector<int> max_, add_;
};

}  // namespace fugue
