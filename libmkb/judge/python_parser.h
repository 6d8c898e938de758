// A parser for Python 3.11 source that gives the tree CPython's `ast.parse` gives
// (python_syntax.h), without running or importing anything: the static audit's front end for
// C++ callers. (The Python binding, which runs in the trusted judge host, converts the
// interpreter's own `ast.parse` tree instead; tests/python/test_python_parser.py checks that
// both front ends give the same tree for the standard library and the shipped kernels.)
#ifndef LIBMKB_JUDGE_PYTHON_PARSER_H_
#define LIBMKB_JUDGE_PYTHON_PARSER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/judge/python_syntax.h"

namespace mkb {

// The `Module` node of `source` (UTF-8 text; "\r\n" and "\r" end lines as "\n" does).
// InvalidArgumentError naming the line for source that is not Python 3.11, and for what this
// parser does not read the way CPython does: identifiers with non-ASCII characters (CPython
// NFKC-normalises them), nesting beyond CPython's own limits (200 brackets) or
// kMaxPySyntaxDepth nodes.
absl::StatusOr<std::unique_ptr<PyNode>> ParsePython(absl::string_view source);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_PYTHON_PARSER_H_
