// The interpreter's own parse of a kernel source (`ast.parse`, in the trusted judge host),
// converted to the tree the static audit reads (libmkb/judge/python_syntax.h). Parsing with the
// interpreter that will run the kernel leaves no room for a parser difference (identifier
// normalisation, new syntax): the audit sees what runs.
#ifndef BINDINGS_PYTHON_AST_H_
#define BINDINGS_PYTHON_AST_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libmkb/judge/python_syntax.h"

namespace mkb::python {

// Needs the GIL. InvalidArgumentError when ast.parse refuses the source (the message is
// CPython's) or its tree nests deeper than kMaxPySyntaxDepth.
absl::StatusOr<std::unique_ptr<PyNode>> CPythonSyntaxTree(const std::string& source);

}  // namespace mkb::python

#endif  // BINDINGS_PYTHON_AST_H_
