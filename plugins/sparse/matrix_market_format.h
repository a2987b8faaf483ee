// matrix_market_format.h: the "mtx" format: Matrix Market coordinate files read as any sparse kind
// (the declaration's, converting as it reads) and any sparse kind written as a general real file.
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Format> matrix_market_format();

}  // namespace fugue::sparse
