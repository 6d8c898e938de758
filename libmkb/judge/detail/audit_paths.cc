#include "libmkb/judge/detail/audit_paths.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mkb::audit_detail {
namespace {

std::string JoinParts(const Parts& parts) { return absl::StrJoin(parts, "."); }

}  // namespace

std::vector<std::string> SplitPath(absl::string_view path) { return absl::StrSplit(path, '.'); }

bool IsUnknownRooted(absl::string_view path) { return absl::StartsWith(path, kUnknown); }

std::string Append(absl::string_view path, absl::string_view attribute) {
  if (static_cast<size_t>(std::count(path.begin(), path.end(), '.')) + 2 <=
      kHeadParts + kTailParts) {
    return absl::StrCat(path, ".", attribute);  // short, and so without a gap
  }
  Parts parts = SplitPath(path);
  parts.emplace_back(attribute);
  const auto gap = std::find(parts.begin(), parts.end(), kGap);
  if (gap == parts.end()) {
    if (parts.size() > kHeadParts + kTailParts) {
      Parts kept(parts.begin(), parts.begin() + kHeadParts);
      kept.emplace_back(kGap);
      kept.insert(kept.end(), parts.end() - kTailParts, parts.end());
      parts = std::move(kept);
    }
  } else if (parts.end() - gap - 1 > static_cast<std::ptrdiff_t>(kTailParts)) {
    parts.erase(gap + 1, parts.end() - kTailParts);
  }
  return JoinParts(parts);
}

bool IsIdentifier(absl::string_view text) {
  if (text.empty() || absl::ascii_isdigit(text[0])) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

bool IsDottedIdentifier(absl::string_view text) {
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    if (!IsIdentifier(part)) return false;
  }
  return true;
}

}  // namespace mkb::audit_detail
