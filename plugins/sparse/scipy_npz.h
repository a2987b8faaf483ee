// scipy_npz.h: sparse matrices in SciPy's .npz files (scipy.sparse.save_npz and load_npz): a ZIP of
// .npy members, "format" (b'csr', b'csc' or b'coo'), "shape" [rows, cols], "data", and "indptr" and
// "indices" (csr: row pointers and column indices; csc: the other way round) or "row" and "col" (coo).
// Read from any of the three (the entries sorted; a position given twice refused, as in Matrix Market
// files: SciPy's sum_duplicates() merges them); written as csr, its members stored.
#pragma once

#include <string>

#include <fugue/sdk.hpp>

#include "coordinates.h"

namespace fugue::sparse {

// The matrix in `path`; InvalidArgument naming the member (not the file: its reader's caller names it)
// for anything SciPy would not have written (a member missing, a dtype or shape that does not fit, an
// index out of range, pointers that go back, a value that is not finite).
Coordinates read_scipy_npz(const std::string& path);

// `m` as a csr .npz: data in `dtype` (f32 or f64), indices and pointers int32 where they fit (SciPy's
// choice), int64 otherwise.
void write_scipy_npz(const std::string& path, const Coordinates& m, fugue_dtype dtype);

}  // namespace fugue::sparse
