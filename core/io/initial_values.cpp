#include "io/initial_values.h"

#include "errors.h"
#include "io/generators.h"

namespace fugue {

HostArray initial_value(const Symbol& s) {
  const auto& src = s.source;
  const Shape shape = s.kind == SymbolKind::Array ? s.shape : Shape{};
  switch (src.kind) {
    case SymbolSource::Kind::File: {
      HostArray a = src.format->read(src.file, src.contents);
      if (s.kind == SymbolKind::Scalar) a.shape.clear();  // stored as (), (1,) or any one value
      return a;
    }
    case SymbolSource::Kind::Inline:
      return array_from_json(src.inline_value, s.dtype, shape, s.where + "/value");
    case SymbolSource::Kind::Fill:
      return make_filled(s.dtype, shape, src.value);
    case SymbolSource::Kind::Random:
      return make_random(s.dtype, shape, src.seed, src.low, src.high);
    case SymbolSource::Kind::Arange:
      return make_arange(s.dtype, shape, src.start, src.step);
    case SymbolSource::Kind::Generated: {
      if (s.kind != SymbolKind::Plugin) return src.generator->generate(src.parameters, s.dtype, shape);
      HostArray like;  // the type of a value of a kind with storage (generate_as allocates it)
      like.dtype = s.dtype;
      like.shape = s.shape;
      like.kind_name = s.kind_name;
      for (const auto& part : s.part_types) {
        like.parts.emplace_back();
        like.parts.back().dtype = part.dtype;
        like.parts.back().shape = part.shape;
      }
      return src.generator->generate_as(src.parameters, src.declaration, like, s.metadata, src.device.get());
    }
    case SymbolSource::Kind::None:
      break;
  }
  throw std::logic_error("initial_value of symbol '" + s.name + "' without a source");
}

void check_given_parts(const Symbol& s, const std::function<const HostArray*(const std::string&)>& part) {
  if (!s.compound() || s.source.kind != SymbolSource::Kind::None || !s.kind_object) return;
  HostArray whole;
  whole.dtype = s.dtype;
  whole.shape = s.shape;
  whole.kind_name = s.kind_name;
  for (const auto& name : s.parts) {
    const HostArray* given = part(name);
    if (!given) return;
    whole.parts.push_back(*given);
  }
  if (const std::string problem = s.kind_object->check_value(whole, s.metadata); !problem.empty())
    throw UserError(s.where + "/parts: " + problem);
}

}  // namespace fugue
