#include "libmkb/core/sha256.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors") {
  CHECK(mkb::Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(mkb::Sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(mkb::Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(mkb::Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 is the same however the input is split") {
  const std::string text =
      "The quick brown fox jumps over the lazy dog, sixty-four bytes and more than that.";
  mkb::Sha256 pieces;
  for (size_t i = 0; i < text.size(); i += 7) pieces.Update(text.substr(i, 7));
  CHECK(pieces.HexDigest() == mkb::Sha256Hex(text));
}

namespace {
std::string Hex(const std::array<uint8_t, 32>& d) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}
}  // namespace

TEST_CASE("HMAC-SHA256 matches RFC 2104 / Python's hmac", "[sha256]") {
  CHECK(Hex(mkb::HmacSha256("key", "The quick brown fox jumps over the lazy dog")) ==
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
  // A key longer than the block is hashed first.
  CHECK(Hex(mkb::HmacSha256(std::string(100, 'k'), "msg")) ==
        "bd56a1782c2830e8abc6ed866a57a1230661e650b84c62f7ee3accc5fa5af491");
  CHECK(mkb::ConstantTimeEqual("abc", "abc"));
  CHECK_FALSE(mkb::ConstantTimeEqual("abc", "abd"));
  CHECK_FALSE(mkb::ConstantTimeEqual("abc", "ab"));
}
