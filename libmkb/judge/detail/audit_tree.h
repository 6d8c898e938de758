// Helpers over the syntax tree (python_syntax.h) shared by the static audit's passes.
#ifndef LIBMKB_JUDGE_DETAIL_AUDIT_TREE_H_
#define LIBMKB_JUDGE_DETAIL_AUDIT_TREE_H_

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libmkb/judge/python_syntax.h"

namespace mkb::audit_detail {

template <size_t N>
bool Contains(const char* const (&names)[N], absl::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// Calls `visit` on every node directly below `node` (fields in order, list items in order).
template <typename Visit>
void ForEachChild(const PyNode& node, Visit&& visit) {
  for (const auto& [name, value] : node.fields) {
    if (value.kind == PyValue::Kind::kNode) {
      visit(*value.node);
    } else if (value.kind == PyValue::Kind::kList) {
      for (const PyValue& item : value.items) {
        if (item.kind == PyValue::Kind::kNode) visit(*item.node);
      }
    }
  }
}

inline std::vector<const PyNode*> NodeItems(const PyNode& node, absl::string_view field) {
  std::vector<const PyNode*> out;
  for (const PyValue& item : node.Items(field)) {
    out.push_back(item.kind == PyValue::Kind::kNode ? item.node.get() : nullptr);
  }
  return out;
}

inline absl::string_view ContextOf(const PyNode& node) {
  const PyNode* ctx = node.Child("ctx");
  return ctx == nullptr ? "Load" : absl::string_view(ctx->type);
}

inline bool IsDisplay(const PyNode& node) {
  return node.Is("Tuple") || node.Is("List") || node.Is("Set");
}

// A str constant's value, when the node is one the audit can read exactly.
inline std::optional<std::string> StringConstant(const PyNode* node) {
  if (node == nullptr || !node->Is("Constant")) return std::nullopt;
  const PyValue* value = node->Get("value");
  if (value == nullptr || value->kind != PyValue::Kind::kStr || value->inexact) return std::nullopt;
  return value->text;
}

// The source-like text of a Name / Attribute chain ("T.cuda.graph"), "" for anything else.
inline std::string ChainText(const PyNode& node) {
  if (node.Is("Name")) return std::string(node.Str("id"));
  if (node.Is("Attribute")) {
    const PyNode* value = node.Child("value");
    const std::string base = value != nullptr ? ChainText(*value) : "";
    return absl::StrCat(base.empty() ? "(...)" : base, ".", node.Str("attr"));
  }
  return "";
}

}  // namespace mkb::audit_detail

#endif  // LIBMKB_JUDGE_DETAIL_AUDIT_TREE_H_
