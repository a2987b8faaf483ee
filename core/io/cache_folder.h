// cache_folder.h: where Fugue keeps what it may rebuild (compiled programs, plugin probe verdicts).
#pragma once
#include <filesystem>

namespace fugue {

// $FUGUE_CACHE_DIR, else $XDG_CACHE_HOME/fugue, else ~/.cache/fugue; empty when none is set.
std::filesystem::path cache_folder();

}  // namespace fugue
