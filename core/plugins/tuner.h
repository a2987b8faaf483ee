// tuner.h: a plugin's tuner (fugue_tuner_desc, ABI 2.8): the programs `fugue tune <name>` times on a
// device, and the table it makes of their timings, which the core stores in the device's tuning
// folder for the plugin to read back.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fugue_plugin.h"
#include "plugins/operation.h"

namespace fugue {

struct TuningProgram {
  std::string label;
  nlohmann::json program;
};

class Tuner {
 public:
  Tuner(std::shared_ptr<const LoadedPlugin> plugin, const fugue_tuner_desc* desc) : plugin_(std::move(plugin)), desc_(desc) {}
  std::string name() const { return desc_->name; }
  std::string doc() const { return desc_->doc ? desc_->doc : ""; }
  const LoadedPlugin* plugin() const { return plugin_.get(); }
  // The programs to time on `device` (small ones with `quick`); DeviceError naming the plugin when it
  // fails or gives text that is not such a list.
  std::vector<TuningProgram> programs(const fugue_device_desc& device, bool quick) const;
  // The table (JSON) from the measurements, an array of {"label", "seconds", "bytes", "flops"}.
  nlohmann::json table(const fugue_device_desc& device, const nlohmann::json& measurements) const;

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_tuner_desc* desc_;
};

// Why a tuner descriptor cannot be used ("" when it can).
std::string check_tuner(const fugue_tuner_desc* tuner);

}  // namespace fugue
