#include "io/initial_values.h"

#include "errors.h"
#include "io/file_names.h"
#include "io/flo_io.h"
#include "io/generators.h"
#include "io/image_io.h"
#include "io/npy_io.h"

namespace fugue {

HostArray initial_value(const Symbol& s) {
  const auto& src = s.source;
  const Shape shape = s.kind == SymbolKind::Array ? s.shape : Shape{};
  switch (src.kind) {
    case SymbolSource::Kind::File: {
      if (src.preloaded) return *src.preloaded;
      if (lowercase_extension(src.file) == ".npy") {
        // A scalar may be stored as shape () or (1,) (the loader checked it holds one value).
        bool scalar = s.kind == SymbolKind::Scalar;
        HostArray a = load_npy(src.file, s.dtype, scalar ? std::nullopt : std::optional<Shape>(shape));
        if (scalar) a.shape.clear();
        return a;
      }
      if (lowercase_extension(src.file) == ".flo") return load_flo(src.file, shape);
      return load_gray_image(src.file, shape);
    }
    case SymbolSource::Kind::Inline:
      return array_from_json(src.inline_value, s.dtype, shape, s.where + "/value");
    case SymbolSource::Kind::Fill:
      return make_filled(s.dtype, shape, src.value);
    case SymbolSource::Kind::Random:
      return make_random(s.dtype, shape, src.seed, src.low, src.high);
    case SymbolSource::Kind::Arange:
      return make_arange(s.dtype, shape, src.start, src.step);
    case SymbolSource::Kind::None:
      break;
  }
  throw std::logic_error("initial_value of symbol '" + s.name + "' without a source");
}

}  // namespace fugue
