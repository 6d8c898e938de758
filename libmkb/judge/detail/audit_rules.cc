#include "libmkb/judge/detail/audit_rules.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mkb::audit_detail {
namespace {

bool Contains(absl::Span<const char* const> names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every rule, indexed by its first component.
class RuleIndex {
 public:
  struct Entry {
    const Rule* rule;
    Parts pattern;
    bool module_rule;
  };

  static const RuleIndex& Get() {
    static const RuleIndex* index = new RuleIndex();
    return *index;
  }

  // The most specific rule matching parts[begin, end) from its start (the path or an ancestor
  // of it), or nullptr. `inside_chain`: begin is not the chain's root.
  const Entry* Best(const Parts& parts, size_t begin, size_t end, bool inside_chain) const {
    auto it = by_first_.find(parts[begin]);
    if (it == by_first_.end()) return nullptr;
    const Entry* best = nullptr;
    int best_score = -1;
    for (const Entry* entry : it->second) {
      if (inside_chain && !entry->rule->inside_chains) continue;
      int score = 0;
      bool matched = true;
      for (size_t k = 0; k < entry->pattern.size(); ++k) {
        const std::string& want = entry->pattern[k];
        if (begin + k >= end) {
          matched = false;
          break;
        }
        const std::string& have = parts[begin + k];
        // Exact components weigh most, then families ("exec*"), then "anything below" ("*").
        if (want == kGap) {
          score += 2;
        } else if (want.back() == '*') {
          if (!absl::StartsWith(have, absl::string_view(want).substr(0, want.size() - 1))) {
            matched = false;
            break;
          }
          score += 3;
        } else if (want == have) {
          score += 4;
        } else {
          matched = false;
          break;
        }
      }
      if (matched && score > best_score) {
        best = entry;
        best_score = score;
      }
    }
    return best;
  }

  // True when some rule's pattern starts with parts[begin, end) and goes further: a path
  // with that tail may still reach a forbidden one by more attributes.
  bool IsStem(const Parts& parts, size_t begin, size_t end) const {
    if (begin >= end) return false;
    auto it = by_first_.find(parts[begin]);
    if (it == by_first_.end()) return false;
    for (const Entry* entry : it->second) {
      if (entry->pattern.size() <= end - begin) continue;
      bool prefix = true;
      for (size_t k = 0; k < end - begin && prefix; ++k) {
        prefix = entry->pattern[k] == parts[begin + k];
      }
      if (prefix) return true;
    }
    return false;
  }

  // True when parts[begin, end) is a run of consecutive components of some rule's pattern
  // (not starting at a trailing "*", which matches anything below its parent): a value whose
  // path ends with that run may still complete a rule by more attributes.
  bool IsFactor(const Parts& parts, size_t begin, size_t end) const {
    if (begin >= end) return false;
    auto matches = [&](const Entry& entry, size_t position) {
      if (position + (end - begin) > entry.pattern.size()) return false;
      for (size_t k = begin; k < end; ++k) {
        const std::string& want = entry.pattern[position + k - begin];
        if (want == kGap) continue;
        if (want.back() == '*') {
          if (!absl::StartsWith(parts[k], absl::string_view(want).substr(0, want.size() - 1))) {
            return false;
          }
        } else if (want != parts[k]) {
          return false;
        }
      }
      return true;
    };
    if (auto it = by_component_.find(parts[begin]); it != by_component_.end()) {
      for (const auto& [entry, position] : it->second) {
        if (matches(*entry, position)) return true;
      }
    }
    for (const auto& [entry, position] : families_) {
      if (matches(*entry, position)) return true;
    }
    return false;
  }

 private:
  RuleIndex() {
    for (const Rule& rule : ModuleRules()) {
      entries_.push_back({&rule, SplitPath(rule.pattern), true});
    }
    for (const Rule& rule : AttributeRules()) {
      entries_.push_back({&rule, SplitPath(rule.pattern), false});
    }
    for (const Entry& entry : entries_) {
      by_first_[entry.pattern[0]].push_back(&entry);
      for (size_t k = 0; k < entry.pattern.size(); ++k) {
        const std::string& part = entry.pattern[k];
        if (part == kGap) continue;
        if (part.back() == '*') {
          families_.emplace_back(&entry, k);
        } else {
          by_component_[part].emplace_back(&entry, k);
        }
      }
    }
  }

  std::vector<Entry> entries_;
  absl::flat_hash_map<std::string, std::vector<const Entry*>> by_first_;
  absl::flat_hash_map<std::string, std::vector<std::pair<const Entry*, size_t>>> by_component_;
  std::vector<std::pair<const Entry*, size_t>> families_;  // (entry, index of an "x*" part)
};

}  // namespace

// The path an attribute access gives, as a value. An unknown-rooted path keeps only its
// longest tail that is a run of some rule's pattern ("?.x.cuda" -> "?.cuda", "?.shape" ->
// "?"): that is all further attributes can combine with, and it keeps values small.
std::string AppendToValue(absl::string_view path, absl::string_view attribute) {
  if (!IsUnknownRooted(path)) return Append(path, attribute);
  Parts parts = SplitPath(path);
  parts.emplace_back(attribute);
  const RuleIndex& rules = RuleIndex::Get();
  for (size_t begin = 1; begin < parts.size(); ++begin) {
    if (std::find(parts.begin() + begin, parts.end(), kGap) != parts.end()) continue;
    if (rules.IsFactor(parts, begin, parts.size())) {
      return absl::StrCat(kUnknown, ".", absl::StrJoin(parts.begin() + begin, parts.end(), "."));
    }
  }
  return kUnknown;
}

bool IsAllowedPrivateTorchName(absl::string_view name) {
  if (absl::StartsWith(name, "__") && absl::EndsWith(name, "__")) return true;  // a dunder
  return Contains(PrivateTorchAllowed(), name);
}

const Rule* BestRule(const Parts& parts, size_t begin, size_t end, bool inside_chain) {
  const RuleIndex::Entry* entry = RuleIndex::Get().Best(parts, begin, end, inside_chain);
  if (entry == nullptr) return nullptr;
  // The private-operator rule's "_*" names the private name: its exceptions (and dunders,
  // torch.__version__) are allowed.
  if (IsPrivateOpRule(*entry->rule) &&
      IsAllowedPrivateTorchName(parts[begin + entry->pattern.size() - 1])) {
    return nullptr;
  }
  if (IsDslPrivateRule(*entry->rule)) {
    const std::string& name = parts[begin + entry->pattern.size() - 1];
    // One leading underscore: a dunder is not private, nor are TIRx's CUDA intrinsics
    // (T.cuda.__shfl_xor_sync), named after CUDA's own.
    if (absl::StartsWith(name, "__")) return nullptr;
  }
  return entry->rule;
}

bool IsRuleStem(const Parts& parts, size_t begin, size_t end) {
  return RuleIndex::Get().IsStem(parts, begin, end);
}

const Rule* BuiltinRule(absl::string_view name) {
  for (const Rule& rule : BuiltinRules()) {
    if (name == rule.pattern) return &rule;
  }
  return nullptr;
}

bool IsInterpreterGlobal(absl::string_view name) { return Contains(InterpreterGlobals(), name); }
bool IsAttributeBuiltin(absl::string_view name) { return Contains(AttributeBuiltins(), name); }
bool IsInertBuiltin(absl::string_view name) { return Contains(InertBuiltins(), name); }
bool IsIntrospectionAttribute(absl::string_view name) {
  return Contains(IntrospectionAttributes(), name);
}

const char* RawNameReason(absl::string_view name) {
  for (const RawName& raw : RawNames()) {
    if (name == raw.name) return raw.why;
  }
  return nullptr;
}

const char* ProtocolHookReason(absl::string_view name) {
  if (IsSunderName(name)) return RawNameReason(name) == nullptr ? kSunderHook : nullptr;
  if (name.size() <= 4 || !absl::StartsWith(name, "__") || !absl::EndsWith(name, "__")) {
    return nullptr;
  }
  const absl::string_view inner = name.substr(2, name.size() - 4);
  if (absl::StartsWith(inner, "_") || absl::EndsWith(inner, "_")) return nullptr;
  for (char c : inner) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return nullptr;
  }
  if (Contains(ProtocolMethodsAllowed(), name) || Contains(ModuleDundersAllowed(), name) ||
      RawNameReason(name) != nullptr || IsIntrospectionAttribute(name)) {
    return nullptr;
  }
  return kProtocolHook;
}

bool IsSunderName(absl::string_view name) {
  if (name.size() < 3 || name.front() != '_' || name.back() != '_') return false;
  if (name[1] == '_' || name[name.size() - 2] == '_') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool MayDeriveFrom(absl::string_view path) { return Contains(BaseClassesAllowed(), path); }

bool IsImportHelperName(absl::string_view name) {
  return absl::StrContains(absl::AsciiStrToLower(name), "import") ||
         Contains(ImportHelperNames(), name);
}

bool IsAttributeHelperName(absl::string_view name) {
  if (absl::StartsWith(name, "__") && absl::EndsWith(name, "__")) return false;
  if (name == "getitem") return true;
  const std::string lower = absl::AsciiStrToLower(name);
  for (const char* part : AttributeHelperParts()) {
    if (absl::StrContains(lower, part)) return true;
  }
  return false;
}

bool IsLibraryCompute(absl::string_view path) {
  for (const char* library : LibraryComputeCalls()) {
    if (path == library || absl::StartsWith(path, absl::StrCat(library, "."))) return true;
  }
  return false;
}

bool IsSideStream(absl::string_view path) {
  for (const char* prefix : SideStreamPrefixes()) {
    if (absl::StartsWith(path, prefix)) return true;
  }
  return false;
}

}  // namespace mkb::audit_detail
