// output_files.h: writes a program's outputs into a folder, each with the format the loader chose
// for it (io/file_format.h), and the manifest fugue-run.json that says which files make one run's
// complete set. What a reader of the folder may rely on is in README.md ("Reading --out").
//
// The order, so that no failure and no concurrent run leaves a manifest over a mixed set:
//  1. every value is read (and checked against its format) before the folder is touched;
//  2. the folder is created and locked (io/output_lock.h: a second run waits its turn); staging files
//     that killed runs left there are removed;
//  3. the checks that can fail are made: no output is a folder, free space for the .npy outputs;
//  4. each file is staged beside its final name as .<name>.fugue-<pid>-<token>.new (unique to the
//     run), read back for its size and SHA-256, and flushed to disk; the new manifest is staged too;
//  5. `before_commit` runs (fugue run writes its --profile trace there);
//  6. the old manifest is removed, the staged files are renamed over the outputs, and the new manifest
//     is renamed into place last. Only renames happen after the old manifest is gone.
// A failure before step 6 removes every staging file and leaves the folder as it was.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "program/host_array.h"
#include "program/program.h"

namespace fugue {

// The manifest's name, in the output folder.
inline constexpr const char* kOutputManifest = "fugue-run.json";

// What the manifest records about the command, and how the write behaves.
struct OutputRun {
  std::string command = "run";
  nlohmann::ordered_json options = nlohmann::ordered_json::object();  // the command's options, as given
  // Called after every output is staged and checked, before the first one replaces an older file. If
  // it throws, nothing in the folder changes and the exception goes on.
  std::function<void()> before_commit;
  // How long to wait for another run that holds the folder's lock before giving up (UserError).
  std::chrono::milliseconds lock_timeout = std::chrono::minutes(10);
};

void write_output_files(const Program& program, const std::filesystem::path& folder,
                        const std::function<HostArray(const std::string& symbol)>& value_of,
                        const OutputRun& run = {});

// Whether `name` (a file name, no folder) is a staging file of write_output_files, and if so the pid
// of the process that made it (0 for the older ".<name>.fugue-new", which names none).
bool is_output_staging_name(const std::string& name, long* pid = nullptr);

}  // namespace fugue
