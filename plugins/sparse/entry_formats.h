// entry_formats.h: the files that hold a sparse matrix's entries, each read as any sparse kind (the
// declaration's, converting as it reads) and written from any: "mtx", Matrix Market coordinate files
// (written as general real files), and "npz", SciPy's .npz files (scipy_npz.h; written as csr).
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Format> matrix_market_format();
std::unique_ptr<sdk::Format> scipy_npz_format();

}  // namespace fugue::sparse
