// Tests for the array generators: determinism, ranges, integer edge cases, arange, inline JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "errors.h"
#include "io/generators.h"

using namespace fugue;
using nlohmann::json;

namespace {

const DType kAll[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32};

template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected UserError, nothing thrown";
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Generators, Filled) {
  for (DType dtype : kAll) {
    const HostArray a = make_filled(dtype, {3, 2}, 7);
    EXPECT_EQ(a.dtype, dtype);
    EXPECT_EQ(a.shape, (Shape{3, 2}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(a.get(i), 7);
    const HostArray z = make_filled(dtype, {4}, 0);
    for (uint8_t b : z.bytes) EXPECT_EQ(b, 0);
  }
  EXPECT_EQ(make_filled(DType::F64, {}, 2.5).get(0), 2.5);
  EXPECT_EQ(make_filled(DType::I32, {0, 5}, 1).bytes.size(), 0u);
  EXPECT_TRUE(contains(user_error([] { make_filled(DType::U8, {2}, 300); }), "out of range for u8 (0 to 255)"));
  EXPECT_TRUE(contains(user_error([] { make_filled(DType::U32, {2}, -1); }), "out of range"));
  EXPECT_TRUE(contains(user_error([] { make_filled(DType::I32, {2}, 2.5); }), "not an integer"));
  EXPECT_TRUE(contains(user_error([] { make_filled(DType::F32, {2}, 1e39); }), "out of range for f32"));
  EXPECT_THROW(make_filled(DType::F32, {-1}, 0), UserError);
  EXPECT_THROW(make_filled(DType::F64, {int64_t{1} << 62}, 0), UserError);  // bytes would overflow
}

TEST(Generators, RandomIsDeterministic) {
  for (DType dtype : kAll) {
    const double high = dtype == DType::U8 ? 255 : 1000;
    const HostArray a = make_random(dtype, {64}, 12345, 0, high);
    const HostArray b = make_random(dtype, {64}, 12345, 0, high);
    const HostArray c = make_random(dtype, {64}, 12346, 0, high);
    EXPECT_EQ(a.bytes, b.bytes) << dtype_name(dtype);
    EXPECT_NE(a.bytes, c.bytes) << dtype_name(dtype);
  }
  // The stream itself is fixed (xoshiro256** seeded by splitmix64 from 42): these values must
  // never change, on any platform.
  const HostArray u = make_random(DType::U32, {3}, 42, 0, 4294967295.0);
  EXPECT_EQ(u.data<uint32_t>()[0], 360188718u);
  EXPECT_EQ(u.data<uint32_t>()[1], 1627707782u);
  EXPECT_EQ(u.data<uint32_t>()[2], 2920764210u);
}

TEST(Generators, RandomWithinRange) {
  for (DType dtype : kAll) {
    const double low = dtype_is_signed(dtype) ? -3.5 : 1.5, high = 9.5;
    const HostArray a = make_random(dtype, {2000}, 7, low, high);
    std::set<double> seen;
    for (int64_t i = 0; i < a.elements(); ++i) {
      const double v = a.get(i);
      seen.insert(v);
      if (dtype_is_float(dtype)) {
        EXPECT_GE(v, low);
        EXPECT_LT(v, high);
      } else {
        EXPECT_GE(v, std::ceil(low));
        EXPECT_LE(v, std::floor(high));
        EXPECT_EQ(v, std::floor(v));
      }
    }
    if (!dtype_is_float(dtype)) {  // both ends of the inclusive range occur
      EXPECT_EQ(*seen.begin(), std::ceil(low)) << dtype_name(dtype);
      EXPECT_EQ(*seen.rbegin(), std::floor(high)) << dtype_name(dtype);
      EXPECT_EQ(seen.size(), static_cast<size_t>(std::floor(high) - std::ceil(low) + 1));
    } else {
      EXPECT_GT(seen.size(), 1900u);
    }
  }
}

TEST(Generators, RandomEdgeCases) {
  // Full ranges of the integer types.
  const HostArray u8 = make_random(DType::U8, {1000}, 1, 0, 255);
  std::set<double> values;
  for (int64_t i = 0; i < 1000; ++i) values.insert(u8.get(i));
  EXPECT_EQ(*values.begin(), 0);
  EXPECT_EQ(*values.rbegin(), 255);
  EXPECT_NO_THROW(make_random(DType::I32, {100}, 1, -2147483648.0, 2147483647.0));
  EXPECT_NO_THROW(make_random(DType::U32, {100}, 1, 0, 4294967295.0));
  EXPECT_NO_THROW(make_random(DType::I64, {100}, 1, -9223372036854775808.0, 9223372036854774784.0));
  // A single value.
  const HostArray one = make_random(DType::I32, {5}, 1, 3.2, 4.9);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(one.get(i), 4);
  const HostArray same = make_random(DType::F64, {5}, 1, 2.5, 2.5);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(same.get(i), 2.5);
  EXPECT_EQ(make_random(DType::F32, {}, 1, 0, 1).elements(), 1);
  EXPECT_EQ(make_random(DType::U8, {0}, 1, 0, 1).bytes.size(), 0u);

  EXPECT_TRUE(contains(user_error([] { make_random(DType::F32, {2}, 1, 2, 1); }), "greater than"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::I32, {2}, 1, 4.2, 4.9); }), "contains no integer"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::U8, {2}, 1, 0, 300); }), "does not fit u8 (0 to 255)"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::U8, {2}, 1, -1, 10); }), "does not fit u8"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::U32, {2}, 1, 0, 4294967296.0); }), "does not fit"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::I32, {2}, 1, 0, 2147483648.0); }), "does not fit"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::I64, {2}, 1, 0, 9223372036854775808.0); }), "does not fit"));
  EXPECT_TRUE(contains(user_error([] { make_random(DType::F32, {2}, 1, 0, 1e39); }), "f32"));
  EXPECT_THROW(make_random(DType::F64, {2}, 1, -1e308, 1e308), UserError);  // width overflows
  EXPECT_THROW(make_random(DType::F64, {2}, 1, 0, INFINITY), UserError);
  EXPECT_THROW(make_random(DType::F64, {2}, 1, NAN, 1), UserError);
}

TEST(Generators, Arange) {
  const HostArray f = make_arange(DType::F64, {2, 3}, 1.5, 0.25);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(f.get(i), 1.5 + 0.25 * static_cast<double>(i));
  const HostArray g = make_arange(DType::F32, {4}, 0, 0.1);
  EXPECT_EQ(g.data<float>()[3], static_cast<float>(3 * 0.1));
  const HostArray i32 = make_arange(DType::I32, {5}, 10, -3);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(i32.get(i), 10 - 3 * i);
  const HostArray u8 = make_arange(DType::U8, {256}, 0, 1);
  EXPECT_EQ(u8.data<uint8_t>()[255], 255);
  // Exact for i64 beyond 2^53.
  const HostArray i64 = make_arange(DType::I64, {3}, 9007199254740992.0, 1);
  EXPECT_EQ(i64.data<int64_t>()[1], 9007199254740993);
  // i * step overflows, start + i * step does not.
  const HostArray wide = make_arange(DType::I64, {2}, -9223372036854775808.0, 9223372036854774784.0 * 2 / 2);
  EXPECT_EQ(wide.data<int64_t>()[1], -9223372036854775807 - 1 + 9223372036854774784);
  EXPECT_EQ(make_arange(DType::U8, {0}, 1000, 1).elements(), 0);
  EXPECT_EQ(make_arange(DType::I32, {}, 7, 1).get(0), 7);

  EXPECT_TRUE(contains(user_error([] { make_arange(DType::U8, {257}, 0, 1); }), "out of range for u8"));
  EXPECT_TRUE(contains(user_error([] { make_arange(DType::U32, {2}, 0, -1); }), "out of range"));
  EXPECT_TRUE(contains(user_error([] { make_arange(DType::I32, {2}, 0, 0.5); }), "not an integer"));
  EXPECT_TRUE(contains(user_error([] { make_arange(DType::I32, {2}, -3000000000.0, 1); }), "out of range"));
  EXPECT_THROW(make_arange(DType::I64, {3}, 0, 9223372036854774784.0), UserError);
  EXPECT_THROW(make_arange(DType::F32, {3}, 0, 3e38), UserError);
}

TEST(Generators, JsonValues) {
  const HostArray s = array_from_json(json(2.5), DType::F64, {}, "p.json:/x");
  EXPECT_EQ(s.shape, Shape{});
  EXPECT_EQ(s.get(0), 2.5);

  const HostArray nested = array_from_json(json::parse("[[1, 2, 3], [4, 5, 6]]"), DType::I32, {2, 3}, "p");
  const HostArray flat = array_from_json(json::parse("[1, 2, 3, 4, 5, 6]"), DType::I32, {2, 3}, "p");
  EXPECT_EQ(nested.bytes, flat.bytes);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(nested.get(i), i + 1);

  const HostArray big = array_from_json(json::parse("[9007199254740993, -9223372036854775808, 9223372036854775807]"),
                                        DType::I64, {3}, "p");
  EXPECT_EQ(big.data<int64_t>()[0], 9007199254740993);
  EXPECT_EQ(big.data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(big.data<int64_t>()[2], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(array_from_json(json::parse("[4294967295, 0]"), DType::U32, {2}, "p").data<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(array_from_json(json::parse("[3.0]"), DType::U8, {1}, "p").get(0), 3);
  EXPECT_EQ(array_from_json(json::parse("[0.1]"), DType::F32, {1}, "p").data<float>()[0], 0.1f);
  EXPECT_EQ(array_from_json(json::parse("[]"), DType::F32, {0}, "p").elements(), 0);
  EXPECT_EQ(array_from_json(json::parse("[[], []]"), DType::F32, {2, 0}, "p").elements(), 0);
  EXPECT_EQ(array_from_json(json::parse("[]"), DType::F32, {2, 0}, "p").elements(), 0);
  EXPECT_EQ(array_from_json(json::parse("[[[1], [2]]]"), DType::U8, {1, 2, 1}, "p").get(1), 2);
}

TEST(Generators, JsonErrors) {
  const std::string where = "prog.json:/symbols/x/value";
  auto error = [&](const char* text, DType dtype, const Shape& shape) {
    return user_error([&] { array_from_json(json::parse(text), dtype, shape, where); });
  };
  EXPECT_EQ(error("[[1, 2, 3, 4], [1, 2, 3]]", DType::F32, {2, 4}),
            where + "/1: expected 4 values along axis 1, found 3");
  EXPECT_EQ(error("[[1, \"a\"]]", DType::F32, {1, 2}), where + "/0/1: expected a number, found a string");
  EXPECT_EQ(error("[1, 2, 3]", DType::F32, {2, 2}),
            where + ": expected 2 values along axis 0 (or a flat list of 4), found 3");
  EXPECT_EQ(error("[[1], 2]", DType::F32, {2, 1}), where + "/1: expected a list of 1 values along axis 1, found a number");
  EXPECT_EQ(error("[1, 2, [3], 4]", DType::F32, {2, 2}), where + "/2: expected a number, found a list of 1 values");
  EXPECT_EQ(error("[[1], [2]]", DType::F32, {2}), where + "/0: expected a number, found a list of 1 values");
  EXPECT_EQ(error("[true]", DType::F32, {1}), where + "/0: expected a number, found a boolean");
  EXPECT_EQ(error("[null]", DType::F32, {1}), where + "/0: expected a number, found null");
  EXPECT_EQ(error("\"7\"", DType::F32, {}), where + ": expected a number for a scalar, found a string");
  EXPECT_EQ(error("[7]", DType::F32, {}), where + ": expected a number for a scalar, found a list of 1 values");
  EXPECT_EQ(error("7", DType::F32, {1}), where + ": expected a list of values for shape [1], found a number");
  EXPECT_EQ(error("{\"a\": 1}", DType::F32, {1}), where + ": expected a list of values for shape [1], found an object");
  EXPECT_EQ(error("[256]", DType::U8, {1}), where + "/0: value 256 is out of range for u8 (0 to 255)");
  EXPECT_EQ(error("[-1]", DType::U32, {1}), where + "/0: value -1 is out of range for u32 (0 to 4294967295)");
  EXPECT_EQ(error("[2147483648]", DType::I32, {1}), where + "/0: value 2147483648 is out of range for i32 (-2147483648 to 2147483647)");
  EXPECT_EQ(error("[9223372036854775808]", DType::I64, {1}),
            where + "/0: value 9223372036854775808 is out of range for i64 (-9223372036854775808 to 9223372036854775807)");
  EXPECT_EQ(error("[3.5]", DType::I32, {1}), where + "/0: value 3.5 is not an integer, but the dtype is i32");
  EXPECT_EQ(error("[1e300]", DType::I64, {1}).rfind(where + "/0: value", 0), 0u);
  EXPECT_EQ(error("[1e39]", DType::F32, {1}).rfind(where + "/0: value", 0), 0u);
  EXPECT_EQ(error("[1]", DType::F32, {-1}).rfind(where + ": ", 0), 0u);
}

// Complex arrays: random parts independently uniform (the component dtype's stream, two draws per
// element), inline values as numbers or [re, im] pairs, fills on the real part.
TEST(Generators, Complex) {
  const HostArray c = make_random(DType::C64, {1000}, 5, -1, 1);
  const HostArray parts = make_random(DType::F32, {2000}, 5, -1, 1);
  ASSERT_EQ(c.bytes, parts.bytes);
  bool imaginary = false;
  for (int64_t i = 0; i < 1000; ++i) imaginary |= c.get_complex(i).imag() != 0;
  EXPECT_TRUE(imaginary);
  EXPECT_EQ(make_random(DType::C128, {3}, 7, 0, 1).bytes, make_random(DType::F64, {6}, 7, 0, 1).bytes);

  const HostArray v = array_from_json(json::parse("[[1, 2], 3, [-0.5, 4e3]]"), DType::C128, {3}, "p.json:/v");
  EXPECT_EQ(v.get_complex(0), std::complex<double>(1, 2));
  EXPECT_EQ(v.get_complex(1), std::complex<double>(3, 0));
  EXPECT_EQ(v.get_complex(2), std::complex<double>(-0.5, 4e3));
  const HostArray m = array_from_json(json::parse("[[[1, 2], [3, 4]], [[5, 6], 7]]"), DType::C64, {2, 2}, "p.json:/m");
  EXPECT_EQ(m.get_complex(3), std::complex<double>(7, 0));
  const std::string bad = user_error([] { array_from_json(json::parse("[[1, 2, 3]]"), DType::C64, {1}, "p.json:/b"); });
  EXPECT_TRUE(contains(bad, "p.json:/b/0: expected a number or an [re, im] pair")) << bad;
  const std::string big = user_error([] { array_from_json(json::parse("[[0, 1e39]]"), DType::C64, {1}, "p.json:/b"); });
  EXPECT_TRUE(contains(big, "imaginary part")) << big;

  const HostArray f = make_filled(DType::C64, {2}, 2.5);
  EXPECT_EQ(f.get_complex(1), std::complex<double>(2.5, 0));
}
