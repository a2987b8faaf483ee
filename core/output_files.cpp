#include "output_files.h"

#include "errors.h"
#include "file_names.h"
#include "image_io.h"
#include "npy_io.h"

namespace fugue {
namespace fs = std::filesystem;

void write_output_files(const Program& program, const fs::path& folder,
                        const std::function<HostArray(const std::string&)>& value_of) {
  std::vector<std::pair<fs::path, HostArray>> results;
  for (const auto& [symbol, file] : program.outputs) results.emplace_back(folder / file, value_of(symbol));
  // Each file is first written beside its final name; only when all are written are they renamed, so
  // a failure part-way leaves no new output at all.
  std::vector<std::pair<fs::path, fs::path>> staged;  // temporary, final
  auto discard = [&] {
    std::error_code ignored;
    for (const auto& [temporary, final_name] : staged) fs::remove(temporary, ignored);
  };
  try {
    for (const auto& [file, array] : results) {
      std::error_code ec;
      fs::create_directories(file.parent_path(), ec);
      if (ec) throw UserError("cannot create output folder " + file.parent_path().string() + ": " + ec.message());
      if (fs::is_directory(file, ec)) throw UserError("cannot write " + file.string() + ": it is a folder");
      fs::path temporary = file.parent_path() / ("." + file.filename().string() + ".fugue-new");
      std::string ext = lowercase_extension(file);
      if (ext == ".png") save_gray_png(temporary, array);
      else if (ext == ".pgm") save_pgm(temporary, array);
      else save_npy(temporary, array);
      staged.emplace_back(temporary, file);
    }
    for (const auto& [temporary, final_name] : staged) {
      std::error_code ec;
      fs::rename(temporary, final_name, ec);
      if (ec) throw UserError("cannot write " + final_name.string() + ": " + ec.message());
    }
  } catch (...) {
    discard();
    throw;
  }
}

}  // namespace fugue
