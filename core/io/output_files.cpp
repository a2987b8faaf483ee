#include "io/output_files.h"

#include "errors.h"
#include "io/file_names.h"
#include "io/flo_io.h"
#include "io/flow_colour.h"
#include "io/image_io.h"
#include "io/npy_io.h"

namespace fugue {
namespace fs = std::filesystem;

void write_output_files(const Program& program, const fs::path& folder,
                        const std::function<HostArray(const std::string&)>& value_of) {
  std::vector<std::pair<fs::path, HostArray>> results;
  for (const auto& [symbol, file] : program.outputs) {
    results.emplace_back(folder / file, value_of(symbol));
    // The loader checks this from the declared types; checked again here, before any file is written.
    const HostArray& a = results.back().second;
    const Shape& s = a.shape;
    if (lowercase_extension(file) == ".flo" &&
        (s.size() != 3 || s[2] != 2 || s[0] <= 0 || s[1] <= 0 || (a.dtype != DType::F32 && a.dtype != DType::F64)))
      throw UserError("cannot write " + (folder / file).string() + ": '" + symbol + "' is " +
                      std::string(dtype_name(a.dtype)) + " " + shape_string(s) +
                      "; a .flo file needs f32 or f64 flow of shape [H, W, 2]");
  }
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
      const bool flow = array.shape.size() == 3 && array.shape[2] == 2;  // [H, W, 2]
      if (ext == ".flo") save_flo(temporary, array);
      else if (ext == ".png" && flow) save_flow_png(temporary, array);  // the flow's colour coding
      else if (ext == ".png") save_gray_png(temporary, array);
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
