#include "io/output_files.h"

#include "errors.h"

namespace fugue {
namespace fs = std::filesystem;

void write_output_files(const Program& program, const fs::path& folder,
                        const std::function<HostArray(const std::string&)>& value_of) {
  std::vector<std::pair<fs::path, HostArray>> results;
  for (const auto& out : program.outputs) {
    results.emplace_back(folder / out.file, value_of(out.symbol));
    // The loader chose the format from the declared type; checked again on the value, before any
    // file is written.
    const HostArray& a = results.back().second;
    if (const std::string why = out.format->refuses(a.dtype, a.shape); !why.empty())
      throw UserError("cannot write " + (folder / out.file).string() + ": '" + out.symbol + "' is " +
                      std::string(dtype_name(a.dtype)) + " " + shape_string(a.shape) + "; " + why);
  }
  // Each file is first written beside its final name; only when all are written are they renamed, so
  // a failure part-way leaves no new output at all.
  std::vector<std::pair<fs::path, fs::path>> staged;  // temporary, final
  auto discard = [&] {
    std::error_code ignored;
    for (const auto& [temporary, final_name] : staged) fs::remove(temporary, ignored);
  };
  try {
    for (size_t k = 0; k < results.size(); ++k) {
      const auto& [file, array] = results[k];
      std::error_code ec;
      fs::create_directories(file.parent_path(), ec);
      if (ec) throw UserError("cannot create output folder " + file.parent_path().string() + ": " + ec.message());
      if (fs::is_directory(file, ec)) throw UserError("cannot write " + file.string() + ": it is a folder");
      fs::path temporary = file.parent_path() / ("." + file.filename().string() + ".fugue-new");
      program.outputs[k].format->write(temporary, array);
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
