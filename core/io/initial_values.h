// initial_values.h: the value a symbol starts with, from its source (file, inline, generator).
#pragma once
#include "program/host_array.h"
#include "program/program.h"

namespace fugue {

// Throws UserError naming the symbol's declaration when a file no longer matches it.
HostArray initial_value(const Symbol& symbol);

}  // namespace fugue
