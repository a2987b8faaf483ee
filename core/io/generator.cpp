#include "io/generator.h"

#include "errors.h"
#include "io/file_format.h"

namespace fugue {

Generator::Generator(std::string name, std::string doc, uint32_t dtypes)
    : name_(std::move(name)), doc_(std::move(doc)), dtypes_(dtypes) {}

Generator::Generator(std::shared_ptr<const LoadedPlugin> plugin, const fugue_generator_desc* desc)
    : plugin_(std::move(plugin)), desc_(desc), name_(desc->name), doc_(desc->doc ? desc->doc : ""),
      dtypes_(desc->dtypes) {}

namespace {

void check_status(fugue_status status, const ErrorBuffer& error, const std::string& generator, const LoadedPlugin& plugin,
                  const char* what) {
  if (status == FUGUE_OK) return;
  std::string message = error.text();
  if (message.empty()) message = "failed without a message (status " + std::to_string(status) + ")";
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED) throw UserError(message);
  throw DeviceError("generator " + generator + ": " + message + " (internal error in " + what + " of plugin '" +
                    plugin.name + "', " + plugin.file + ")");
}

}  // namespace

void Generator::check(const std::string& parameters, DType dtype, const Shape& shape) const {
  if (!desc_) throw std::logic_error("the core checks its own generator '" + name_ + "' itself");
  const abi::Type type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(dtype), shape);
  const fugue_type view = type.view();
  ErrorBuffer error;
  check_status(desc_->check(desc_, parameters.c_str(), &view, error.get()), error, name_, *plugin_, "check");
}

HostArray Generator::generate(const std::string& parameters, DType dtype, const Shape& shape) const {
  if (!desc_) throw std::logic_error("the core runs its own generator '" + name_ + "' itself");
  HostArray array(dtype, shape);
  const abi::Type type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(dtype), shape);
  const fugue_type view = type.view();
  fugue_host_array host{sizeof(fugue_host_array), &view, array.bytes.empty() ? nullptr : array.bytes.data(),
                        array.bytes.size(), 0, 0, nullptr};
  ErrorBuffer error;
  check_status(desc_->generate(desc_, parameters.c_str(), &host, error.get()), error, name_, *plugin_, "generate");
  return array;
}

bool Generator::makes_arrays() const { return !desc_ || (desc_->check && desc_->generate); }

bool Generator::makes_values() const {
  return desc_ && desc_->struct_size >= FUGUE_SIZE_UP_TO(fugue_generator_desc, generate_as) && desc_->probe_as && desc_->generate_as;
}

DeclaredType Generator::probe_as(const std::string& parameters, const std::string& declaration, const Kind& kind,
                                 const DeviceInfo* device) const {
  if (!makes_values()) throw std::logic_error("generator " + name_ + " makes no values of kinds");
  const fugue_device_desc described = device ? device->description() : fugue_device_desc{};
  return read_declared(
      [&](fugue_declared* out, fugue_error* error) {
        return desc_->probe_as(desc_, parameters.c_str(), declaration.c_str(), device ? &described : nullptr, out, error);
      },
      kind.parts(), "generator " + name_ + ": probe_as (" + kind.name() + ")", *plugin_, kind.chooser());
}

HostArray Generator::generate_as(const std::string& parameters, const std::string& declaration, const HostArray& like,
                                 const std::vector<unsigned char>& metadata, const DeviceInfo* device) const {
  if (!makes_values()) throw std::logic_error("generator " + name_ + " makes no values of kinds");
  HostArray value;
  value.dtype = like.dtype;
  value.shape = like.shape;
  value.kind_name = like.kind_name;
  for (const auto& p : like.parts) value.parts.emplace_back(p.dtype, p.shape);
  abi::Type type = type_of(value);
  type.metadata = metadata;
  const fugue_type view = type.view();
  std::vector<fugue_host_array> parts;
  fugue_host_array host = host_view(value, view, parts);
  ErrorBuffer error;
  const fugue_device_desc described = device ? device->description() : fugue_device_desc{};
  check_status(desc_->generate_as(desc_, parameters.c_str(), declaration.c_str(), device ? &described : nullptr, &host, error.get()),
               error, name_, *plugin_, "generate_as");
  return value;
}

}  // namespace fugue
