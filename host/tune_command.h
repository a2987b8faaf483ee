// tune_command.h: `fugue tune <tuner>`: times a plugin tuner's programs on one device and keeps the
// table the tuner makes of the timings in the device's tuning folder, where the plugin reads it back.
#pragma once
#include <string>
#include <vector>

namespace fugue {

struct TuneOptions {
  std::string tuner;  // empty: list the tuners
  std::string device;
  int repeat = 5;
  bool quick = false;
  std::vector<std::string> plugins;  // --plugin files
};

// Exit status 0; UserError and DeviceError as the other commands.
int run_tune(const TuneOptions& options);

}  // namespace fugue
