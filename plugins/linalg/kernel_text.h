// kernel_text.h: how the linalg operations write OpenCL C: code patterns with named holes, and the
// loops a team of work-items shares.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace fugue::linalg {

// `pattern` with every $name (letters, digits, underscores after a '$') replaced by vars[name];
// throws std::logic_error naming a hole `vars` does not fill.
std::string fill(const std::string& pattern, const std::map<std::string, std::string>& vars);

// A loop that shares `count` indices among a team of `team` work-items (this one `lane`): `index`
// (declared const int) takes lane, lane + team, ... and `body` runs where index < bound (an OpenCL C
// expression, at most count). Every work-item runs the same ceil(count / team) trips: loops whose trip
// counts differed between the work-items of a group, between barriers, were miscompiled by PoCL.
// `trip` names the loop counter. One trip takes no loop (PoCL miscompiled one-trip loops too).
std::string team_loop(const std::string& trip, const std::string& lane, int64_t team, const std::string& index,
                      int64_t count, const std::string& bound, const std::string& body);

}  // namespace fugue::linalg
