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
