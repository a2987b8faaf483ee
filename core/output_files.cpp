#include "output_files.h"

#include "errors.h"
#include "image_io.h"
#include "npy_io.h"

namespace fugue {
namespace fs = std::filesystem;

void write_output_files(const Program& program, const fs::path& folder,
                        const std::function<HostArray(const std::string&)>& value_of) {
  std::vector<std::pair<fs::path, HostArray>> results;
  for (const auto& [symbol, file] : program.outputs) results.emplace_back(folder / file, value_of(symbol));
  for (const auto& [file, array] : results) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) throw UserError("cannot create output folder " + file.parent_path().string() + ": " + ec.message());
    std::string ext = file.extension().string();
    if (ext == ".png") save_gray_png(file, array);
    else if (ext == ".pgm") save_pgm(file, array);
    else save_npy(file, array);
  }
}

}  // namespace fugue
