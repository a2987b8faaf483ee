// initial_values.h: the value a symbol starts with, from its source (file, inline, generator).
#pragma once
#include <functional>
#include "program/host_array.h"
#include "program/program.h"

namespace fugue {

// Throws UserError naming the symbol's declaration when a file no longer matches it.
HostArray initial_value(const Symbol& symbol);

// A value of a kind with storage that the program gives part by part ("parts"): its kind's check of the
// parts together (a sparse matrix's indices in range), before anything runs. `part` gives each part's
// initial value, null for a part without one (a value an operation writes: not checked). UserError naming
// the symbol's "parts" when the kind refuses it; nothing for other symbols.
void check_given_parts(const Symbol& symbol, const std::function<const HostArray*(const std::string&)>& part);

}  // namespace fugue
