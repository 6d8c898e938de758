// The paths the static audit tracks values as: dotted module paths, with an unknown root for
// what it cannot follow and a gap that keeps long paths finite. Internal to static_audit.cc
// and its passes.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_PATHS_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_PATHS_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace mkb::audit_detail {

// The audit tracks values as dotted paths. The root is a module name bound by an import, or
// kUnknown: an object the audit cannot follow (a parameter, a call result), which may be any
// escaped module. A path longer than kHeadParts + kTailParts components keeps its first
// kHeadParts and last kTailParts, with kGap between (rules are at most five components long,
// so matching keeps its meaning; cycles such as `m = m.x` stay finite).
inline constexpr char kUnknown[] = "?";
inline constexpr char kGap[] = "*";
inline constexpr size_t kHeadParts = 6;
inline constexpr size_t kTailParts = 3;
// A name, attribute or escaped set holding more paths than this, a fixed point that needs more
// steps than kMaxSteps, or more work than kMaxWork, is more than the audit follows:
// static.too_complex.
inline constexpr size_t kMaxPathsPerSet = 4096;
inline constexpr size_t kMaxSteps = 2000000;
// Paths extended by an attribute over the whole audit: past this the file's aliasing is more
// than the audit follows in bounded time (static.too_complex), however it is arranged.
inline constexpr size_t kMaxWork = 2000000;

using Paths = std::set<std::string>;
using Parts = std::vector<std::string>;

std::vector<std::string> SplitPath(absl::string_view path);
bool IsUnknownRooted(absl::string_view path);
// `path` + "." + `attribute`, keeping the head and tail of a long path around a gap.
std::string Append(absl::string_view path, absl::string_view attribute);
bool IsIdentifier(absl::string_view text);
bool IsDottedIdentifier(absl::string_view text);

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_PATHS_H_
