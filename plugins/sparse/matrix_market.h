// matrix_market.h: Matrix Market coordinate files (.mtx), as NIST's format describes them: a banner
// "%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>",
// comment lines starting with %, a size line "rows cols entries", then one line per entry "i j [value]",
// 1-based. Symmetric files hold one triangle (the other is mirrored; skew-symmetric mirrors negated,
// with no diagonal); pattern entries are 1.
#pragma once

#include <string>

#include "coordinates.h"

namespace fugue::sparse {

// The matrix a file holds, sorted, every entry of a symmetric file mirrored. A bad file throws
// InvalidArgument naming the line ("line 7: ...").
Coordinates read_matrix_market(const std::string& path);

// Writes `m` as a general real coordinate file, values with `digits` significant digits (9 for f32, 17
// for f64: read back exactly).
void write_matrix_market(const std::string& path, const Coordinates& m, int digits);

}  // namespace fugue::sparse
