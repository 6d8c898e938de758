// A tokenizer for Python source, enough for the static audit: names, strings (with their
// literal value when it is a plain literal), numbers and operators, with line numbers. It never
// executes or imports anything, and accepts any bytes (unknown characters become operators).
#ifndef LIBMKB_JUDGE_PYTHON_TOKENIZER_H_
#define LIBMKB_JUDGE_PYTHON_TOKENIZER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace mkb {

struct PythonToken {
  enum Kind { kName, kNumber, kString, kOp, kNewline };
  Kind kind;
  std::string text;  // names, operators, numbers; for strings the decoded value (best effort)
  int line;          // 1-based
  bool f_string = false;
};

// Tokens of `source`. Comments are dropped; NEWLINE tokens mark the ends of logical lines
// (not inside brackets or after a backslash). The expressions inside f-string braces are
// tokenized too and appear right after the f-string's own token.
std::vector<PythonToken> TokenizePython(absl::string_view source);

}  // namespace mkb

#endif  // LIBMKB_JUDGE_PYTHON_TOKENIZER_H_
