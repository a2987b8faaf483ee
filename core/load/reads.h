// reads.h: how many times a program's operations read a symbol, counted from the body as written (before
// the loader checks it), for kinds that weigh what a value costs to make against its uses (ABI 2.16:
// a sparse matrix's format chosen against the products the program runs).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fugue::load {

// Every statement whose "in" names `name` counts once for each iteration of the loops around it; a
// branch counts as the larger of its two sides (a "break" is ignored: the counts are the most a run
// reads). A loop's "count" is a number, or a name `count_of` gives the value of (a const, --set
// applied); where it gives none (a scalar, known only at run time) and the loop reads `name`, the count
// is unknown: -1. Statements of unexpected shape count nothing (the loader reports them). Saturates at
// 2^53.
int64_t reads_in(const nlohmann::json& body, const std::string& name,
                 const std::function<std::optional<double>(const std::string&)>& count_of);

}  // namespace fugue::load
