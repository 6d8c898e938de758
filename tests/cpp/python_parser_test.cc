#include "libmkb/judge/python_parser.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/core/utf8.h"
#include "libmkb/judge/python_syntax.h"

// The shape of each tree is CPython's: tests/python/test_python_parser.py compares the two
// parsers on the standard library and the shipped kernels. These tests pin what the audit
// relies on without an interpreter.

namespace {

std::string Dump(const std::string& source) {
  auto module = mkb::ParsePython(source);
  REQUIRE(module.ok());
  return mkb::DumpPySyntax(**module);
}

}  // namespace

TEST_CASE("the tree has ast's node types, fields and lines") {
  CHECK(Dump("import torch as t\nt.os.system('id')\n") ==
        "Module(body=[Import@1(names=[alias@1(name='torch', asname='t')]), "
        "Expr@2(value=Call@2(func=Attribute@2(value=Attribute@2(value=Name@2(id='t', ctx=Load()), "
        "attr='os', ctx=Load()), attr='system', ctx=Load()), args=[Constant@2(value='id', "
        "kind=None)], keywords=[]))], type_ignores=[])");
  CHECK(Dump("a, b = x\n") ==
        "Module(body=[Assign@1(targets=[Tuple@1(elts=[Name@1(id='a', ctx=Store()), Name@1(id='b', "
        "ctx=Store())], ctx=Store())], value=Name@1(id='x', ctx=Load()), type_comment=None)], "
        "type_ignores=[])");
}

TEST_CASE("string literals are decoded as Python decodes them") {
  CHECK(absl::StrContains(Dump("s = 'o' 's'\n"), "value='os'"));
  CHECK(absl::StrContains(Dump("s = '\\x6fs'\n"), "value='os'"));
  CHECK(absl::StrContains(Dump("s = '\\157\\163'\n"), "value='os'"));
  CHECK(absl::StrContains(Dump("s = '\\u006fs'\n"), "value='os'"));
  CHECK(absl::StrContains(Dump("s = r'\\x6f'\n"), "value='\\\\x6f'"));
  CHECK(absl::StrContains(Dump("s = b'\\x00'\n"), "value=b'\\x00'"));
  // A \N{...} escape needs the Unicode name table: the value is marked inexact.
  CHECK(absl::StrContains(Dump("s = '\\N{LATIN SMALL LETTER O}s'\n"), "<inexact>"));
  // f-strings: the replacement fields are expressions of the tree.
  CHECK(absl::StrContains(Dump("s = f\"{__import__('os')!r:>{w}}\"\n"),
                          "FormattedValue@1(value=Call@1(func=Name@1(id='__import__'"));
}

TEST_CASE("line ends, continuations and soft keywords") {
  // "\r" ends a line: the comment does not hide the import.
  CHECK(absl::StrContains(Dump("x = 1 #\rimport ctypes\n"), "Import@2"));
  CHECK(absl::StrContains(Dump("x = (1 +\n     2)\ny = 1 + \\\n    2\n"), "Assign@3"));
  CHECK(absl::StrContains(Dump("match = 1\nmatch(x)\n"), "Name@1(id='match', ctx=Store())"));
  CHECK(absl::StrContains(Dump("match x:\n    case [a, *r] if a:\n        pass\n"),
                          "MatchSequence@2(patterns=[MatchAs@2(pattern=None, name='a'), "
                          "MatchStar@2(name='r')])"));
  CHECK(absl::StrContains(Dump("with (open(f) as a, b):\n    pass\n"),
                          "items=[withitem(context_expr=Call@1"));
}

TEST_CASE("what the parser does not read is an error naming the line") {
  auto bad = mkb::ParsePython("x = 1\ny = = 2\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(absl::StrContains(bad.status().message(), "line 2"));
  // CPython NFKC-normalises identifiers; this parser refuses rather than differ.
  auto fullwidth = mkb::ParsePython("x = \xef\xbd\x85val('1')\n");
  REQUIRE_FALSE(fullwidth.ok());
  CHECK(absl::StrContains(fullwidth.status().message(), "non-ASCII"));
  CHECK(mkb::ParsePython("s = 'caf\xc3\xa9'  # \xc3\xa9\n").ok());  // in strings and comments
  CHECK_FALSE(mkb::ParsePython(std::string("x = 1\0", 6)).ok());
  // The message quotes the token's first 40 bytes, cut where a character starts (a verdict's
  // message must be UTF-8): here byte 40 is the middle of an e-acute.
  std::string accents = "x = 1 '";
  for (int i = 0; i < 30; ++i) accents += "\xc3\xa9";
  auto cut = mkb::ParsePython(accents + "'\n");
  REQUIRE_FALSE(cut.ok());
  CHECK(absl::StrContains(cut.status().message(), "invalid syntax at '"));
  CHECK_FALSE(mkb::FirstInvalidUtf8(cut.status().message()).has_value());
  // Nesting: CPython's own limits (200 brackets), and kMaxPySyntaxDepth nodes.
  CHECK_FALSE(mkb::ParsePython(std::string(201, '(') + std::string(201, ')') + "\n").ok());
  std::string chain = "x = a";
  for (int i = 0; i < mkb::kMaxPySyntaxDepth + 10; ++i) chain += ".b";
  auto deep = mkb::ParsePython(chain + "\n");
  REQUIRE_FALSE(deep.ok());
  CHECK(absl::StrContains(deep.status().message(), "nests deeper"));
  CHECK_FALSE(mkb::ParsePython(std::string(2000, '-') + "1\n").ok());
}
