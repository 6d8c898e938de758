// SHA-256 (FIPS 180-4) for fingerprints of problems, kernels and skills, and HMAC-SHA256 for
// the judge's authenticated messages.
#ifndef LIBMKB_CORE_SHA256_H_
#define LIBMKB_CORE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace mkb {

// Incremental SHA-256. Update() any number of times, then HexDigest() once.
class Sha256 {
 public:
  Sha256();
  void Update(absl::string_view data);
  // Finishes the hash; the object must not be updated afterwards.
  std::array<uint8_t, 32> Digest();
  std::string HexDigest();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;  // bytes in buffer_
  uint64_t total_bytes_ = 0;
};

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

// HMAC-SHA256 (RFC 2104) of `message` under `key`: the raw 32-byte tag.
std::array<uint8_t, 32> HmacSha256(absl::string_view key, absl::string_view message);

// Compares two byte strings in time independent of where they differ.
bool ConstantTimeEqual(absl::string_view a, absl::string_view b);

}  // namespace mkb

#endif  // LIBMKB_CORE_SHA256_H_
