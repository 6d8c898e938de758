// The static audit's rules (what SPEC §2 forbids, as dotted paths) and the paths it tracks
// values as. Internal to static_audit.cc and its passes.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace mkb::audit_detail {

// A rule's pattern is a dotted path that matches itself and everything below it; a last
// component "*" matches only what is below ("os.*": os.system, not os itself), one ending in
// "*" a family ("os.exec*": os.execv, os.execlp). The most specific matching pattern decides;
// a rule without a code allows (an exception under a broader rule).
struct Rule {
  const char* pattern;
  const char* code;
  const char* reason;
  // Modules: whether the rule also matches where its first component is reached as an
  // attribute inside a chain (torch.ctypes, x.subprocess). Off for names that are ordinary
  // words as attributes (tensor.select, torch.signal): those are import rules only.
  bool inside_chains = true;
};

inline constexpr char kImport[] = "static.forbidden_import";
inline constexpr char kCall[] = "static.forbidden_call";
inline constexpr char kIntrospection[] = "static.introspection";
inline constexpr char kDynamicImport[] = "static.dynamic_import";
inline constexpr char kDynamicCode[] = "static.dynamic_code";
inline constexpr char kDynamicAttribute[] = "static.dynamic_attribute";
inline constexpr char kModulePatch[] = "static.module_patch";
inline constexpr char kJudge[] = "static.judge_access";
inline constexpr char kReference[] = "static.reference_access";
inline constexpr char kSeed[] = "static.seed_access";

// The most specific rule matching parts[begin, end) from its start (the path or an ancestor of
// it), or nullptr; a rule without a code allows. `inside_chain`: begin is not the chain's root
// (only rules that match inside chains apply).
const Rule* BestRule(const std::vector<std::string>& parts, size_t begin, size_t end,
                     bool inside_chain);

// True when some rule's pattern starts with parts[begin, end) and goes further: a path with
// that tail may still reach a forbidden one by more attributes.
bool IsRuleStem(const std::vector<std::string>& parts, size_t begin, size_t end);

// The rule for a builtin's name (eval, open, reference), or nullptr.
const Rule* BuiltinRule(absl::string_view name);
// Module globals that reach the interpreter (__builtins__, __loader__, __spec__).
bool IsInterpreterGlobal(absl::string_view name);
// getattr, setattr, delattr, hasattr: allowed only as direct calls with a literal name.
bool IsAttributeBuiltin(absl::string_view name);
// Builtins that only read what is passed to them (print, repr, type, isinstance).
bool IsInertBuiltin(absl::string_view name);
// Attributes that reach the interpreter's internals from any object (__globals__, f_back).
bool IsIntrospectionAttribute(absl::string_view name);
// Library compute only the runtime audit can weigh (torch.matmul and below).
bool IsLibraryCompute(absl::string_view path);

// The audit tracks values as dotted paths. The root is a module name bound by an import, or
// kUnknown: an object the audit cannot follow (a parameter, a call result), which may be any
// escaped module. A path longer than kHeadParts + kTailParts components keeps its first
// kHeadParts and last kTailParts, with kGap between (rules are at most five components long,
// so matching keeps its meaning; cycles such as `m = m.x` stay finite).
inline constexpr char kUnknown[] = "?";
inline constexpr char kGap[] = "*";
inline constexpr size_t kHeadParts = 6;
inline constexpr size_t kTailParts = 3;
// A name, attribute or escaped set holding more paths than this, or a fixed point that needs
// more steps than kMaxSteps, is more than the audit follows: static.too_complex.
inline constexpr size_t kMaxPathsPerSet = 4096;
inline constexpr size_t kMaxSteps = 2000000;

using Paths = std::set<std::string>;
using Parts = std::vector<std::string>;

std::vector<std::string> SplitPath(absl::string_view path);
bool IsUnknownRooted(absl::string_view path);
// `path` + "." + `attribute`, keeping the head and tail of a long path around a gap.
std::string Append(absl::string_view path, absl::string_view attribute);
// The same as a value: an unknown-rooted path keeps only the tail further attributes can
// combine with into a rule.
std::string AppendToValue(absl::string_view path, absl::string_view attribute);
bool IsIdentifier(absl::string_view text);
bool IsDottedIdentifier(absl::string_view text);

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_RULES_H_
