#include "io/cache_folder.h"

#include <cstdlib>

namespace fugue {

std::filesystem::path cache_folder() {
  if (const char* dir = std::getenv("FUGUE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "fugue";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "fugue";
  return {};
}

}  // namespace fugue
