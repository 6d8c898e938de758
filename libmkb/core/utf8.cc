#include "libmkb/core/utf8.h"

namespace mkb {
namespace {

// The length of the valid sequence starting at text[i], or 0 when none does. For an invalid
// start, *skip is the length of its maximal invalid subpart (at least 1): the bytes that a
// decoder replaces by one U+FFFD.
size_t SequenceAt(absl::string_view text, size_t i, size_t* skip) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  *skip = 1;
  if (c < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xBF;  // the range allowed for the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) low = 0xA0;   // overlong
    if (c == 0xED) high = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) low = 0x90;   // overlong
    if (c == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0, C1 or F5..FF
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= text.size()) return 0;
    const unsigned char b = byte(i + k);
    const bool ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return 0;
    *skip = k + 1;
  }
  return length;
}

// A UTF-8 continuation byte (10xxxxxx): never the first byte of a character.
bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The longest sequence UTF-8 allows: a character ends at most this many bytes after it starts.
constexpr size_t kMaxSequenceBytes = 4;

}  // namespace

absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // text[end] is the first byte left out: when it continues a character, that character is cut.
  for (size_t back = 1; back < kMaxSequenceBytes && end > 0 && IsContinuation(text[end]); ++back)
    --end;
  return text.substr(0, end);
}

size_t Utf8BoundaryAtOrAfter(absl::string_view text, size_t offset) {
  size_t at = offset;
  while (at < text.size() && at < offset + kMaxSequenceBytes - 1 && IsContinuation(text[at])) ++at;
  return at;
}

std::optional<size_t> FirstInvalidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t skip;
    const size_t n = SequenceAt(text, i, &skip);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string ToValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t skip;
    const size_t n = SequenceAt(text, i, &skip);
    if (n > 0) {
      out.append(text.data() + i, n);
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += skip;
    }
  }
  return out;
}

}  // namespace mkb
