#include "libmkb/judge/python_syntax.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mkb {

PyValue PyValue::Node(std::unique_ptr<PyNode> node) {
  PyValue value;
  if (node != nullptr) {
    value.kind = Kind::kNode;
    value.node = std::move(node);
  }
  return value;
}

PyValue PyValue::Str(std::string text) { return Constant(Kind::kStr, std::move(text)); }

PyValue PyValue::Constant(Kind kind, std::string text) {
  PyValue value;
  value.kind = kind;
  value.text = std::move(text);
  return value;
}

PyValue PyValue::List(std::vector<PyValue> items) {
  PyValue value;
  value.kind = Kind::kList;
  value.items = std::move(items);
  return value;
}

const PyValue* PyNode::Get(absl::string_view field) const {
  for (const auto& [name, value] : fields) {
    if (name == field) return &value;
  }
  return nullptr;
}

const PyNode* PyNode::Child(absl::string_view field) const {
  const PyValue* value = Get(field);
  return value != nullptr && value->kind == PyValue::Kind::kNode ? value->node.get() : nullptr;
}

const std::vector<PyValue>& PyNode::Items(absl::string_view field) const {
  static const std::vector<PyValue> kEmpty;
  const PyValue* value = Get(field);
  return value != nullptr && value->kind == PyValue::Kind::kList ? value->items : kEmpty;
}

absl::string_view PyNode::Str(absl::string_view field) const {
  const PyValue* value = Get(field);
  return value != nullptr && value->kind == PyValue::Kind::kStr ? absl::string_view(value->text)
                                                                : absl::string_view();
}

namespace {

void AppendQuoted(absl::string_view text, std::string* out) {
  out->push_back('\'');
  for (unsigned char c : text) {
    if (c == '\\' || c == '\'') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7f) {  // ASCII text, whatever the bytes
      absl::StrAppendFormat(out, "\\x%02x", c);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('\'');
}

void Dump(const PyValue& value, std::string* out);

void Dump(const PyNode& node, std::string* out) {
  absl::StrAppend(out, node.type);
  if (node.line > 0) absl::StrAppend(out, "@", node.line);
  out->push_back('(');
  bool first = true;
  for (const auto& [name, value] : node.fields) {
    if (!first) out->append(", ");
    first = false;
    absl::StrAppend(out, name, "=");
    Dump(value, out);
  }
  out->push_back(')');
}

void Dump(const PyValue& value, std::string* out) {
  switch (value.kind) {
    case PyValue::Kind::kNone:
      out->append("None");
      break;
    case PyValue::Kind::kNode:
      Dump(*value.node, out);
      break;
    case PyValue::Kind::kList: {
      out->push_back('[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out->append(", ");
        Dump(value.items[i], out);
      }
      out->push_back(']');
      break;
    }
    case PyValue::Kind::kStr:
      if (value.inexact) out->append("<inexact>");
      AppendQuoted(value.text, out);
      break;
    case PyValue::Kind::kBytes:
      out->push_back('b');
      AppendQuoted(value.text, out);
      break;
    case PyValue::Kind::kEllipsis:
      out->append("...");
      break;
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
    case PyValue::Kind::kComplex:
    case PyValue::Kind::kBool:
      out->append(value.text);
      break;
  }
}

}  // namespace

std::string DumpPySyntax(const PyNode& node) {
  std::string out;
  Dump(node, &out);
  return out;
}

}  // namespace mkb
