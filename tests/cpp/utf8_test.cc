// Strict UTF-8 (libmkb/core/utf8.h) agrees with protobuf's string fields, which is what makes a
// kernel.py unable to travel to the judge host.
#include "libmkb/core/utf8.h"

#include <catch2/catch_test_macros.hpp>
#include <random>
#include <string>

#include "google/protobuf/stubs/common.h"
#include "mkb/v1/judge.pb.h"
#if GOOGLE_PROTOBUF_VERSION < 4022000
#include "google/protobuf/stubs/logging.h"
#endif

namespace {

// Whether protobuf parses an EvaluationRequest whose kernel_source holds `bytes`.
bool ProtobufAccepts(const std::string& bytes) {
  std::string wire = "\x0a";  // field 1 (problem_dir, a string), length-delimited
  size_t n = bytes.size();
  do {
    wire += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n > 0);
  wire += bytes;
  mkb::v1::EvaluationRequest request;
  return request.ParseFromString(wire);
}

}  // namespace

TEST_CASE("strict UTF-8: overlongs, surrogates, values over U+10FFFF and cut sequences fail") {
  CHECK_FALSE(mkb::FirstInvalidUtf8("plain ascii").has_value());
  CHECK_FALSE(mkb::FirstInvalidUtf8("\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9").has_value());
  CHECK(mkb::FirstInvalidUtf8("ab\xff") == 2);
  CHECK(mkb::FirstInvalidUtf8("\xc0\x80") == 0);          // overlong NUL
  CHECK(mkb::FirstInvalidUtf8("x\xed\xa0\x80") == 1);     // a surrogate
  CHECK(mkb::FirstInvalidUtf8("\xf4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(mkb::FirstInvalidUtf8("ok\xe2\x82") == 2);        // cut short
  CHECK(mkb::ToValidUtf8("a\xe2\x82") == "a\xef\xbf\xbd");
  CHECK(mkb::ToValidUtf8("\xe2\x82\xac") == "\xe2\x82\xac");
}

TEST_CASE("strict UTF-8 is exactly what protobuf's string fields accept") {
#if GOOGLE_PROTOBUF_VERSION < 4022000
  // Each rejected string would log an error line.
  google::protobuf::LogHandler* previous = google::protobuf::SetLogHandler(nullptr);
#endif
  // Every string of one and two bytes, and random short strings from a mix of interesting bytes.
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    CHECK(mkb::FirstInvalidUtf8(one).has_value() != ProtobufAccepts(one));
    for (int b = 0; b < 256; ++b) {
      const std::string two = one + static_cast<char>(b);
      INFO(a << " " << b);
      CHECK(mkb::FirstInvalidUtf8(two).has_value() != ProtobufAccepts(two));
    }
  }
  const unsigned char pool[] = {0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf,
                                0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee,
                                0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
  std::mt19937 random(12);
  for (int i = 0; i < 50000; ++i) {
    std::string s(3 + random() % 4, '\0');
    for (char& c : s) c = static_cast<char>(pool[random() % sizeof(pool)]);
    const bool valid = !mkb::FirstInvalidUtf8(s).has_value();
    if (valid != ProtobufAccepts(s)) FAIL_CHECK("disagree on " << i);
    CHECK_FALSE(mkb::FirstInvalidUtf8(mkb::ToValidUtf8(s)).has_value());
  }
#if GOOGLE_PROTOBUF_VERSION < 4022000
  google::protobuf::SetLogHandler(previous);
#endif
}

TEST_CASE("a cut of UTF-8 text falls on a character boundary") {
  const std::string euro = "ab\xe2\x82\xac";  // "ab" and a three-byte character
  CHECK(mkb::Utf8Prefix(euro, 2) == "ab");
  CHECK(mkb::Utf8Prefix(euro, 3) == "ab");
  CHECK(mkb::Utf8Prefix(euro, 4) == "ab");
  CHECK(mkb::Utf8Prefix(euro, 5) == euro);
  CHECK(mkb::Utf8Prefix(euro, 50) == euro);
  CHECK(mkb::Utf8Prefix("\xf0\x9f\x98\x80", 3).empty());
  CHECK(mkb::Utf8BoundaryAtOrAfter(euro, 3) == 5);
  CHECK(mkb::Utf8BoundaryAtOrAfter(euro, 2) == 2);
  CHECK(mkb::Utf8BoundaryAtOrAfter(euro, 5) == 5);
  // Not UTF-8: a run of continuation bytes moves the cut by three at most.
  CHECK(mkb::Utf8BoundaryAtOrAfter(std::string(10, '\x80'), 1) == 4);
  CHECK(mkb::Utf8Prefix(std::string(10, '\x80'), 5) == std::string(2, '\x80'));
}
