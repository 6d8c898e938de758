// A Python abstract syntax tree in the shape of CPython's `ast` module (Python 3.11): node type
// names, field names and field order are ast's ("Attribute" with value, attr, ctx), so that a
// tree converted from the interpreter's own `ast.parse` (the Python binding does that in the
// judge host) and one read by the C++ parser (python_parser.h) are the same tree, and the static
// audit reads either.
#ifndef LIBMKB_JUDGE_PYTHON_SYNTAX_H_
#define LIBMKB_JUDGE_PYTHON_SYNTAX_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace mkb {

struct PyNode;

// One field value: a node, a list, or a constant. Constants keep ast's types: identifiers and
// str constants are kStr (UTF-8; lone surrogates as their 3-byte WTF-8 form), bytes kBytes
// (raw), int kInt (decimal text), float kFloat and complex kComplex ("%.17g" text, complex as
// "<real>+<imag>j"), bool kBool ("True" / "False"), None kNone, `...` kEllipsis.
struct PyValue {
  enum class Kind { kNone, kNode, kList, kStr, kBytes, kInt, kFloat, kComplex, kBool, kEllipsis };
  Kind kind = Kind::kNone;
  std::unique_ptr<PyNode> node;  // kNode
  std::vector<PyValue> items;    // kList
  std::string text;              // the constants
  // A str constant whose value the C++ parser could not decode exactly (a \N{...} escape): the
  // audit treats it as unknown. Always false in trees converted from CPython's ast.
  bool inexact = false;

  static PyValue Node(std::unique_ptr<PyNode> node);
  static PyValue Str(std::string text);
  static PyValue Constant(Kind kind, std::string text = "");
  static PyValue List(std::vector<PyValue> items);
};

struct PyNode {
  std::string type;  // ast's class name: "Call", "Name", "Load", "arguments"
  int line = 0;      // ast's lineno (1-based); 0 for node types that have none
  std::vector<std::pair<std::string, PyValue>> fields;  // in ast's _fields order

  // The field, or nullptr when the node has no such field.
  const PyValue* Get(absl::string_view field) const;
  // The node held by a field, or nullptr (absent, None or not a node).
  const PyNode* Child(absl::string_view field) const;
  // The items of a list field; empty when absent or not a list.
  const std::vector<PyValue>& Items(absl::string_view field) const;
  // The text of a kStr field, or "" (absent, None, or another kind).
  absl::string_view Str(absl::string_view field) const;

  bool Is(absl::string_view node_type) const { return type == node_type; }
};

// The deepest nesting of nodes either front end accepts. CPython refuses deeper source
// ("maximum recursion depth exceeded during compilation" at about 3,000 nested expressions);
// the audit's walks recurse, so a bound keeps them within any thread's stack.
inline constexpr int kMaxPySyntaxDepth = 4000;

// A deterministic text form of the tree, for tests and diagnostics:
// `Type@line(field=value, ...)`, lists in brackets, constants as `'str'`, `b'bytes'` (bytes
// outside printable ASCII as \xNN), numbers, `None`, `True`, `...`. Equal trees give equal
// text.
std::string DumpPySyntax(const PyNode& node);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_PYTHON_SYNTAX_H_
