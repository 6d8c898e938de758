// UTF-8 as Python's source decoder and protobuf's string fields define it (RFC 3629): no
// overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. A kernel.py or a
// shell's output that breaks these rules cannot travel in a proto `string` field (the parser
// rejects the whole message) nor be compiled by Python.
#ifndef LIBMKB_CORE_UTF8_H_
#define LIBMKB_CORE_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace mkb {

// The byte offset of the first byte that does not start a valid sequence (a truncated sequence
// counts as invalid at its first byte); nullopt when `text` is valid UTF-8.
std::optional<size_t> FirstInvalidUtf8(absl::string_view text);

// `text` with each maximal invalid subpart replaced by U+FFFD (as Python's errors="replace"
// does), so that it can go into a proto string or a JSON document.
std::string ToValidUtf8(absl::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a
// character: a cut there leaves valid UTF-8 valid (e.g. "abc\xC3\xA9", 4 -> "abc").
absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes);

// Where a byte stream cut at `offset` (the bytes before it dropped) starts on a character
// boundary: `offset` moved past the continuation bytes of a character cut there (at most three).
size_t Utf8BoundaryAtOrAfter(absl::string_view text, size_t offset);

}  // namespace mkb

#endif  // LIBMKB_CORE_UTF8_H_
