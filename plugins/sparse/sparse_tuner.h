// sparse_tuner.h: `fugue tune sparse`, seed 003's offline benchmark for the format choice: every
// layout's SpMV on dense banded matrices of 1, 4, 16 and 64 entries a row (2^20 rows on CPUs, 2^21 on
// GPUs), the throughputs kept as the device's table, which format_choice.cpp reads back.
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Tuner> sparse_tuner();

}  // namespace fugue::sparse
