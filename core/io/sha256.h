// sha256.h: SHA-256 (FIPS 180-4) as lowercase hex: what `sha256sum` prints.
// The output manifest (io/output_files.h) records each output's digest so readers can check it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fugue {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

std::string sha256_hex(const void* data, size_t size);

}  // namespace fugue
