#include "plugins/tuner.h"

#include <cctype>

#include "errors.h"

namespace fugue {

namespace {

nlohmann::json parse_text(const char* text, const std::string& what) {
  if (!text) throw DeviceError(what + " gave no text");
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) throw DeviceError(what + " gave text that is not JSON");
  return parsed;
}

}  // namespace

std::string check_tuner(const fugue_tuner_desc* tuner) {
  if (!tuner) return "a null tuner descriptor";
  if (tuner->struct_size < FUGUE_SIZE_UP_TO(fugue_tuner_desc, user_data)) return "a tuner descriptor smaller than ABI 2.8's";
  bool identifier = tuner->name && *tuner->name && !std::isdigit(static_cast<unsigned char>(*tuner->name));
  for (const char* c = tuner->name; identifier && *c; ++c)
    identifier = std::isalnum(static_cast<unsigned char>(*c)) || *c == '_';
  if (!identifier) return "a tuner whose name is not an identifier";
  if (!tuner->programs || !tuner->table) return "tuner '" + std::string(tuner->name) + "' lacks programs or table";
  return {};
}

std::vector<TuningProgram> Tuner::programs(const fugue_device_desc& device, bool quick) const {
  const std::string what = "plugin '" + plugin_->name + "': tuner " + name() + ": programs";
  ErrorBuffer error;
  const char* text = nullptr;
  if (desc_->programs(desc_, &device, quick ? FUGUE_TUNE_QUICK : 0u, &text, error.get()) != FUGUE_OK)
    throw DeviceError(what + ": " + error.text());
  const nlohmann::json list = parse_text(text, what);
  if (!list.is_array() || list.empty()) throw DeviceError(what + " gave no list of programs");
  std::vector<TuningProgram> out;
  for (const auto& item : list) {
    if (!item.is_object() || !item.contains("label") || !item["label"].is_string() || !item.contains("program") ||
        !item["program"].is_object())
      throw DeviceError(what + ": an entry is not {\"label\": text, \"program\": {...}}");
    out.push_back({item["label"].get<std::string>(), item["program"]});
  }
  return out;
}

nlohmann::json Tuner::table(const fugue_device_desc& device, const nlohmann::json& measurements) const {
  const std::string what = "plugin '" + plugin_->name + "': tuner " + name() + ": table";
  ErrorBuffer error;
  const char* text = nullptr;
  const std::string given = measurements.dump();
  if (desc_->table(desc_, &device, given.c_str(), &text, error.get()) != FUGUE_OK) throw DeviceError(what + ": " + error.text());
  nlohmann::json table = parse_text(text, what);
  if (!table.is_object()) throw DeviceError(what + " gave JSON that is not an object");
  return table;
}

}  // namespace fugue
