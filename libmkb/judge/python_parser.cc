#include "libmkb/judge/python_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "libmkb/core/utf8.h"

namespace mkb {
namespace {

using NodePtr = std::unique_ptr<PyNode>;
using Kind = PyValue::Kind;

// Errors unwind the recursive descent inside this file only; ParsePython returns them as a
// status.
struct ParseError {
  int line;
  std::string message;
};

[[noreturn]] void Fail(int line, std::string message) {
  throw ParseError{line, std::move(message)};
}

// CPython's tokenizer refuses more than 200 nested brackets ("too many nested parentheses").
constexpr int kMaxBracketDepth = 200;
// Unary operators, `not`, `**`, lambdas and conditional expressions nest by recursion here.
constexpr int kMaxRecursion = 1000;

struct Token {
  enum Kind { kName, kNumber, kString, kOp, kNewline, kIndent, kDedent, kEnd };
  Kind kind;
  std::string text;  // names, operators, numbers; a string's whole literal (prefix and quotes)
  int line;
};

bool IsAsciiNameStart(unsigned char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsNameByte(unsigned char c) { return absl::ascii_isalnum(c) || c == '_' || c >= 0x80; }

constexpr absl::string_view kOperators3[] = {"**=", "//=", ">>=", "<<=", "..."};
constexpr absl::string_view kOperators2[] = {"==", "!=", "<=", ">=", "+=", "-=", "*=",
                                             "/=", "%=", "&=", "|=", "^=", "@=", "**",
                                             "//", "<<", ">>", "->", ":="};
constexpr absl::string_view kOperators1 = "+-*/%@&|^~<>()[]{},:.;=";

bool IsStringPrefix(absl::string_view word) {
  const std::string lower = absl::AsciiStrToLower(word);
  return lower == "r" || lower == "u" || lower == "b" || lower == "f" || lower == "br" ||
         lower == "rb" || lower == "fr" || lower == "rf";
}

// Python's tokenizer: logical lines, INDENT / DEDENT, implicit joining inside brackets,
// backslash continuations, comments dropped. `source` has "\n" line ends only.
class Tokenizer {
 public:
  Tokenizer(absl::string_view source, int first_line) : s_(source), line_(first_line) {}

  std::vector<Token> Run() {
    std::vector<int> indents = {0};
    bool line_start = true;
    while (true) {
      if (line_start && depth_ == 0) {
        int column = 0;
        size_t j = i_;
        for (; j < s_.size(); ++j) {
          const char c = s_[j];
          if (c == ' ') {
            ++column;
          } else if (c == '\t') {
            column = (column / 8 + 1) * 8;
          } else if (c == '\f') {
            column = 0;
          } else {
            break;
          }
        }
        i_ = j;
        if (j >= s_.size()) break;
        if (s_[j] == '#' || s_[j] == '\n') {  // a blank or comment-only line
          while (i_ < s_.size() && s_[i_] != '\n') ++i_;
          if (i_ < s_.size()) {
            ++i_;
            ++line_;
          }
          continue;
        }
        if (column > indents.back()) {
          indents.push_back(column);
          Emit(Token::kIndent, "");
        } else {
          while (column < indents.back()) {
            indents.pop_back();
            Emit(Token::kDedent, "");
          }
          if (column != indents.back()) {
            Fail(line_, "unindent does not match any outer indentation level");
          }
        }
        if (indents.size() > 100) Fail(line_, "too many levels of indentation");
        line_start = false;
      }
      if (i_ >= s_.size()) break;
      const unsigned char c = s_[i_];
      if (c == '\n') {
        ++i_;
        if (depth_ == 0) {
          if (line_has_tokens_) Emit(Token::kNewline, "");
          line_has_tokens_ = false;
          line_start = true;
        }
        ++line_;
      } else if (c == ' ' || c == '\t' || c == '\f') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '\\') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
          i_ += 2;
          ++line_;
        } else if (i_ + 1 >= s_.size()) {
          Fail(line_, "unexpected EOF while parsing");
        } else {
          Fail(line_, "unexpected character after line continuation character");
        }
      } else if (IsAsciiNameStart(c) || c >= 0x80) {
        const size_t start = i_;
        bool ascii = true;
        while (i_ < s_.size() && IsNameByte(s_[i_])) {
          ascii &= static_cast<unsigned char>(s_[i_]) < 0x80;
          ++i_;
        }
        const absl::string_view word = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"') && IsStringPrefix(word)) {
          String(start);
        } else {
          if (!ascii) {
            Fail(line_,
                 "identifier with non-ASCII characters (CPython normalises those, this parser "
                 "does not)");
          }
          Emit(Token::kName, std::string(word));
        }
      } else if (c == '\'' || c == '"') {
        String(i_);
      } else if (absl::ascii_isdigit(c) ||
                 (c == '.' && i_ + 1 < s_.size() && absl::ascii_isdigit(s_[i_ + 1]))) {
        Number();
      } else {
        Operator();
      }
    }
    if (depth_ > 0) Fail(line_, "unexpected EOF in a bracketed expression");
    if (line_has_tokens_) Emit(Token::kNewline, "");
    while (indents.size() > 1) {
      indents.pop_back();
      Emit(Token::kDedent, "");
    }
    Emit(Token::kEnd, "");
    return std::move(tokens_);
  }

 private:
  void Emit(Token::Kind kind, std::string text, int line = -1) {
    tokens_.push_back({kind, std::move(text), line < 0 ? line_ : line});
    if (kind != Token::kNewline && kind != Token::kIndent && kind != Token::kDedent) {
      line_has_tokens_ = true;
    }
  }

  void Number() {
    const size_t start = i_;
    auto digits = [&](auto is_digit) {
      while (i_ < s_.size() && (is_digit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        ++i_;
      }
    };
    const auto decimal = [](unsigned char ch) { return absl::ascii_isdigit(ch) != 0; };
    if (s_[i_] == '0' && i_ + 1 < s_.size() &&
        std::string("xXoObB").find(s_[i_ + 1]) != std::string::npos) {
      i_ += 2;
      digits([](unsigned char ch) { return absl::ascii_isxdigit(ch) != 0; });
    } else {
      digits(decimal);
      if (i_ < s_.size() && s_[i_] == '.') {
        ++i_;
        digits(decimal);
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        size_t k = i_ + 1;
        if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
        if (k < s_.size() && absl::ascii_isdigit(s_[k])) {
          i_ = k;
          digits(decimal);
        }
      }
      if (i_ < s_.size() && (s_[i_] == 'j' || s_[i_] == 'J')) ++i_;
    }
    Emit(Token::kNumber, std::string(s_.substr(start, i_ - start)));
  }

  // A string literal starting at `start` (its prefix, if any, runs up to the quote at i_).
  void String(size_t start) {
    const int line = line_;
    const char quote = s_[i_];
    const bool triple = s_.substr(i_, 3) == std::string(3, quote);
    i_ += triple ? 3 : 1;
    while (true) {
      if (i_ >= s_.size()) Fail(line, "unterminated string literal");
      const char c = s_[i_];
      if (c == '\\') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '\n') ++line_;
        i_ += 2;
        continue;
      }
      if (triple) {
        if (s_.substr(i_, 3) == std::string(3, quote)) {
          i_ += 3;
          break;
        }
      } else if (c == quote) {
        ++i_;
        break;
      } else if (c == '\n') {
        Fail(line, "unterminated string literal");
      }
      if (c == '\n') ++line_;
      ++i_;
    }
    Emit(Token::kString, std::string(s_.substr(start, i_ - start)), line);
  }

  void Operator() {
    for (absl::string_view op : kOperators3) {
      if (s_.substr(i_, 3) == op) return EmitOperator(op);
    }
    for (absl::string_view op : kOperators2) {
      if (s_.substr(i_, 2) == op) return EmitOperator(op);
    }
    const char c = s_[i_];
    if (kOperators1.find(c) == absl::string_view::npos) {
      Fail(line_, absl::StrFormat("invalid character '%c' (U+%04X)", c >= 0x20 ? c : '?',
                                  static_cast<unsigned char>(c)));
    }
    if (c == '(' || c == '[' || c == '{') {
      if (++depth_ > kMaxBracketDepth) Fail(line_, "too many nested parentheses");
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth_ == 0) Fail(line_, absl::StrCat("unmatched '", std::string(1, c), "'"));
      --depth_;
    }
    EmitOperator(s_.substr(i_, 1));
  }

  void EmitOperator(absl::string_view op) {
    Emit(Token::kOp, std::string(op));
    i_ += op.size();
  }

  absl::string_view s_;
  size_t i_ = 0;
  int line_;
  int depth_ = 0;
  bool line_has_tokens_ = false;
  std::vector<Token> tokens_;
};

const std::set<std::string, std::less<>>& Keywords() {
  static const auto* keywords = new std::set<std::string, std::less<>>{
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return *keywords;
}

// --- constants ----------------------------------------------------------------------------

void AppendUtf8(uint32_t code_point, std::string* out) {
  // Lone surrogates too (WTF-8), as the binding encodes CPython's str ("surrogatepass").
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of a literal's body (between the quotes). `inexact` is set for \N{...}, which
// needs the Unicode name table.
std::string DecodeLiteral(absl::string_view body, bool raw, bool bytes, int line, bool* inexact) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    const unsigned char c = body[i];
    if (bytes && c >= 0x80) Fail(line, "bytes can only contain ASCII literal characters");
    if (c != '\\' || raw) {
      out.push_back(static_cast<char>(c));
      if (raw && c == '\\' && i + 1 < body.size()) out.push_back(body[++i]);
      continue;
    }
    if (i + 1 >= body.size()) Fail(line, "a string may not end with a backslash");
    const char e = body[++i];
    switch (e) {
      case '\n':
        break;
      case '\\':
      case '\'':
      case '"':
        out.push_back(e);
        break;
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        uint32_t value = e - '0';
        for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
             ++k) {
          value = value * 8 + (body[++i] - '0');
        }
        if (bytes) {
          out.push_back(static_cast<char>(value & 0xFF));
        } else {
          AppendUtf8(value, &out);
        }
        break;
      }
      case 'x':
      case 'u':
      case 'U': {
        if (bytes && e != 'x') {
          out.push_back('\\');
          out.push_back(e);
          break;
        }
        const int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t value = 0;
        for (int k = 0; k < width; ++k) {
          const int digit = i + 1 < body.size() ? HexValue(body[i + 1]) : -1;
          if (digit < 0) Fail(line, absl::StrCat("truncated \\", std::string(1, e), " escape"));
          value = value * 16 + digit;
          ++i;
        }
        if (value > 0x10FFFF) Fail(line, "illegal Unicode character");
        if (bytes) {
          out.push_back(static_cast<char>(value));
        } else {
          AppendUtf8(value, &out);
        }
        break;
      }
      case 'N': {
        if (bytes) {
          out.push_back('\\');
          out.push_back('N');
          break;
        }
        const size_t close = body.find('}', i);
        if (i + 1 >= body.size() || body[i + 1] != '{' || close == absl::string_view::npos) {
          Fail(line, "malformed \\N character escape");
        }
        i = close;
        AppendUtf8(0xFFFD, &out);
        *inexact = true;
        break;
      }
      default:
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return out;
}

// Digits of a non-negative integer in base 2^32, least significant first.
using BigInt = std::vector<uint32_t>;

void MultiplyAdd(BigInt* n, uint32_t factor, uint32_t addend) {
  uint64_t carry = addend;
  for (uint32_t& limb : *n) {
    const uint64_t value = static_cast<uint64_t>(limb) * factor + carry;
    limb = static_cast<uint32_t>(value);
    carry = value >> 32;
  }
  if (carry != 0) n->push_back(static_cast<uint32_t>(carry));
}

// ast's int constants as the binding writes them: decimal below 2^64, else 0x + hex.
std::string IntegerText(absl::string_view digits, int base) {
  BigInt n;
  for (char c : digits) MultiplyAdd(&n, base, HexValue(c));
  while (!n.empty() && n.back() == 0) n.pop_back();
  if (n.size() <= 2) {
    uint64_t value = 0;
    for (size_t k = n.size(); k-- > 0;) value = (value << 32) | n[k];
    return absl::StrCat(value);
  }
  std::string hex = absl::StrFormat("0x%x", n.back());
  for (size_t k = n.size() - 1; k-- > 0;) absl::StrAppendFormat(&hex, "%08x", n[k]);
  return hex;
}

PyValue NumberValue(const std::string& literal, int line) {
  const std::string text = absl::StrReplaceAll(literal, {{"_", ""}});
  const char last = text.back();
  if (last == 'j' || last == 'J') {
    const double imag = std::strtod(text.substr(0, text.size() - 1).c_str(), nullptr);
    return PyValue::Constant(Kind::kComplex, absl::StrFormat("%.17g%+.17gj", 0.0, imag));
  }
  if (text.size() > 2 && text[0] == '0') {
    const char base = absl::ascii_tolower(text[1]);
    if (base == 'x' || base == 'o' || base == 'b') {
      if (text.size() == 2) Fail(line, "invalid number literal");
      return PyValue::Constant(Kind::kInt, IntegerText(text.substr(2), base == 'x'   ? 16
                                                                       : base == 'o' ? 8
                                                                                     : 2));
    }
  }
  if (text.find_first_of(".eE") != std::string::npos) {
    return PyValue::Constant(Kind::kFloat,
                             absl::StrFormat("%.17g", std::strtod(text.c_str(), nullptr)));
  }
  if (text.size() > 4300)
    Fail(line, "Exceeds the limit (4300 digits) for integer string conversion");
  return PyValue::Constant(Kind::kInt, IntegerText(text, 10));
}

// --- the parser ---------------------------------------------------------------------------

NodePtr MakeNode(const char* type, int line) {
  auto node = std::make_unique<PyNode>();
  node->type = type;
  node->line = line;
  return node;
}

PyValue Ctx(const char* ctx) { return PyValue::Node(MakeNode(ctx, 0)); }
PyValue None() { return PyValue(); }
PyValue Nodes(std::vector<NodePtr> nodes) {
  std::vector<PyValue> items;
  items.reserve(nodes.size());
  for (NodePtr& n : nodes) items.push_back(PyValue::Node(std::move(n)));
  return PyValue::List(std::move(items));
}
PyValue Int(int value) { return PyValue::Constant(Kind::kInt, absl::StrCat(value)); }

void Set(PyNode* node, const char* field, PyValue value) {
  node->fields.emplace_back(field, std::move(value));
}

NodePtr Name(std::string id, int line, const char* ctx = "Load") {
  NodePtr node = MakeNode("Name", line);
  Set(node.get(), "id", PyValue::Str(std::move(id)));
  Set(node.get(), "ctx", Ctx(ctx));
  return node;
}

NodePtr ConstantNode(PyValue value, int line, PyValue kind = PyValue()) {
  NodePtr node = MakeNode("Constant", line);
  Set(node.get(), "value", std::move(value));
  Set(node.get(), "kind", std::move(kind));
  return node;
}

NodePtr BinOp(NodePtr left, const char* op, NodePtr right, int line) {
  NodePtr node = MakeNode("BinOp", line);
  Set(node.get(), "left", PyValue::Node(std::move(left)));
  Set(node.get(), "op", PyValue::Node(MakeNode(op, 0)));
  Set(node.get(), "right", PyValue::Node(std::move(right)));
  return node;
}

NodePtr UnaryOp(const char* op, NodePtr operand, int line) {
  NodePtr node = MakeNode("UnaryOp", line);
  Set(node.get(), "op", PyValue::Node(MakeNode(op, 0)));
  Set(node.get(), "operand", PyValue::Node(std::move(operand)));
  return node;
}

NodePtr Sequence(const char* type, std::vector<NodePtr> elts, int line, const char* ctx) {
  NodePtr node = MakeNode(type, line);
  Set(node.get(), "elts", Nodes(std::move(elts)));
  if (ctx != nullptr) Set(node.get(), "ctx", Ctx(ctx));
  return node;
}

// Sets the expression context of an assignment, for or with target, or a del target.
void SetContext(PyNode* node, const char* ctx) {
  if (node->Is("Name") || node->Is("Attribute") || node->Is("Subscript") || node->Is("Starred") ||
      node->Is("Tuple") || node->Is("List")) {
    for (auto& [name, value] : node->fields) {
      if (name == "ctx") value = Ctx(ctx);
    }
    if (node->Is("Starred")) {
      for (auto& [name, value] : node->fields) {
        if (name == "value" && value.node != nullptr) SetContext(value.node.get(), ctx);
      }
    } else if (node->Is("Tuple") || node->Is("List")) {
      for (auto& [name, value] : node->fields) {
        if (name != "elts") continue;
        for (PyValue& item : value.items) SetContext(item.node.get(), ctx);
      }
    }
    return;
  }
  Fail(node->line,
       absl::StrCat("cannot ", std::string(ctx) == "Del" ? "delete " : "assign to ", node->type));
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  NodePtr Module() {
    std::vector<NodePtr> body;
    while (Tok().kind != Token::kEnd) {
      if (Tok().kind == Token::kNewline) {
        ++p_;
        continue;
      }
      Statement(&body);
    }
    NodePtr module = MakeNode("Module", 0);
    Set(module.get(), "body", Nodes(std::move(body)));
    Set(module.get(), "type_ignores", PyValue::List({}));
    return module;
  }

  // The expression of an f-string replacement field, tokenized from "(" + text + ")".
  NodePtr FStringExpression() {
    NodePtr value = StarExpressions();
    while (Tok().kind == Token::kNewline) ++p_;
    if (Tok().kind != Token::kEnd) Fail(Tok().line, "f-string: invalid syntax");
    return value;
  }

 private:
  // Bounds the recursion of nested unary operators, lambdas and conditional expressions.
  class Recursion {
   public:
    explicit Recursion(Parser* parser) : parser_(parser) {
      if (++parser_->recursion_ > kMaxRecursion) {
        Fail(parser_->Tok().line, "expression nested too deeply");
      }
    }
    ~Recursion() { --parser_->recursion_; }

   private:
    Parser* parser_;
  };

  const Token& Tok(size_t ahead = 0) const {
    return tokens_[std::min(p_ + ahead, tokens_.size() - 1)];
  }
  int Line() const { return Tok().line; }
  bool IsOp(absl::string_view op, size_t ahead = 0) const {
    const Token& t = Tok(ahead);
    return t.kind == Token::kOp && t.text == op;
  }
  bool IsKeyword(absl::string_view keyword, size_t ahead = 0) const {
    const Token& t = Tok(ahead);
    return t.kind == Token::kName && t.text == keyword;
  }
  bool IsName(size_t ahead = 0) const {
    const Token& t = Tok(ahead);
    return t.kind == Token::kName && Keywords().count(t.text) == 0;
  }
  bool AcceptOp(absl::string_view op) {
    if (!IsOp(op)) return false;
    ++p_;
    return true;
  }
  bool AcceptKeyword(absl::string_view keyword) {
    if (!IsKeyword(keyword)) return false;
    ++p_;
    return true;
  }
  [[noreturn]] void Invalid() const {
    const Token& t = Tok();
    Fail(t.line, t.kind == Token::kIndent   ? "unexpected indent"
                 : t.kind == Token::kDedent ? "unexpected unindent"
                 : t.kind == Token::kEnd    ? "unexpected end of file"
                 : t.kind == Token::kNewline
                     ? "invalid syntax (unexpected end of line)"
                     : absl::StrCat("invalid syntax at '", Utf8Prefix(t.text, 40), "'"));
  }
  void ExpectOp(absl::string_view op) {
    if (!AcceptOp(op)) Invalid();
  }
  void ExpectKeyword(absl::string_view keyword) {
    if (!AcceptKeyword(keyword)) Invalid();
  }
  std::string ExpectName() {
    if (!IsName()) Invalid();
    return tokens_[p_++].text;
  }
  void ExpectNewline() {
    if (Tok().kind == Token::kNewline) {
      ++p_;
    } else if (Tok().kind != Token::kEnd) {
      Invalid();
    }
  }

  // True where an expression may start (after a trailing comma, after `return`).
  bool AtExpressionStart() const {
    const Token& t = Tok();
    switch (t.kind) {
      case Token::kNumber:
      case Token::kString:
        return true;
      case Token::kName:
        return Keywords().count(t.text) == 0 || t.text == "lambda" || t.text == "not" ||
               t.text == "await" || t.text == "None" || t.text == "True" || t.text == "False";
      case Token::kOp:
        return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" ||
               t.text == "~" || t.text == "*" || t.text == "...";
      default:
        return false;
    }
  }

  // --- statements -------------------------------------------------------------------------

  void Statement(std::vector<NodePtr>* out) {
    const Token& t = Tok();
    if (t.kind == Token::kIndent || t.kind == Token::kDedent) Invalid();
    if (t.kind == Token::kOp && t.text == "@") return out->push_back(Decorated());
    if (t.kind == Token::kName) {
      if (t.text == "if") return out->push_back(If());
      if (t.text == "while") return out->push_back(While());
      if (t.text == "for") return out->push_back(For(false, t.line));
      if (t.text == "try") return out->push_back(Try());
      if (t.text == "with") return out->push_back(With(false, t.line));
      if (t.text == "def") return out->push_back(FunctionDef({}, false, t.line));
      if (t.text == "class") return out->push_back(ClassDef({}));
      if (t.text == "async") {
        const int line = t.line;
        ++p_;
        if (IsKeyword("def")) return out->push_back(FunctionDef({}, true, line));
        if (IsKeyword("for")) return out->push_back(For(true, line));
        if (IsKeyword("with")) return out->push_back(With(true, line));
        Invalid();
      }
      if (t.text == "match" && !IsOp("=", 1) && !IsOp(".", 1)) {
        const size_t start = p_;
        try {
          return out->push_back(Match());
        } catch (const ParseError&) {
          p_ = start;  // `match` is a soft keyword: an ordinary name after all
        }
      }
    }
    SimpleStatements(out);
  }

  void SimpleStatements(std::vector<NodePtr>* out) {
    while (true) {
      out->push_back(SimpleStatement());
      if (!AcceptOp(";")) break;
      if (Tok().kind == Token::kNewline || Tok().kind == Token::kEnd) break;
    }
    ExpectNewline();
  }

  std::vector<NodePtr> Block() {
    std::vector<NodePtr> body;
    if (Tok().kind != Token::kNewline) {
      SimpleStatements(&body);
      return body;
    }
    ++p_;
    if (Tok().kind != Token::kIndent) Fail(Line(), "expected an indented block");
    ++p_;
    while (Tok().kind != Token::kDedent && Tok().kind != Token::kEnd) Statement(&body);
    AcceptDedent();
    return body;
  }

  void AcceptDedent() {
    if (Tok().kind == Token::kDedent) ++p_;
  }

  NodePtr SimpleStatement() {
    const Token& t = Tok();
    const int line = t.line;
    if (t.kind == Token::kName) {
      if (t.text == "pass" || t.text == "break" || t.text == "continue") {
        ++p_;
        return MakeNode(t.text == "pass" ? "Pass" : t.text == "break" ? "Break" : "Continue", line);
      }
      if (t.text == "return") {
        ++p_;
        NodePtr node = MakeNode("Return", line);
        Set(node.get(), "value", AtExpressionStart() ? PyValue::Node(StarExpressions()) : None());
        return node;
      }
      if (t.text == "raise") {
        ++p_;
        NodePtr node = MakeNode("Raise", line);
        NodePtr exc, cause;
        if (AtExpressionStart()) {
          exc = Expression();
          if (AcceptKeyword("from")) cause = Expression();
        }
        Set(node.get(), "exc", PyValue::Node(std::move(exc)));
        Set(node.get(), "cause", PyValue::Node(std::move(cause)));
        return node;
      }
      if (t.text == "global" || t.text == "nonlocal") {
        NodePtr node = MakeNode(t.text == "global" ? "Global" : "Nonlocal", line);
        ++p_;
        std::vector<PyValue> names;
        do {
          names.push_back(PyValue::Str(ExpectName()));
        } while (AcceptOp(","));
        Set(node.get(), "names", PyValue::List(std::move(names)));
        return node;
      }
      if (t.text == "del") {
        ++p_;
        std::vector<NodePtr> targets;
        do {
          if (!AtExpressionStart()) break;
          NodePtr target = BitwiseOr();
          SetContext(target.get(), "Del");
          targets.push_back(std::move(target));
        } while (AcceptOp(","));
        if (targets.empty()) Invalid();
        NodePtr node = MakeNode("Delete", line);
        Set(node.get(), "targets", Nodes(std::move(targets)));
        return node;
      }
      if (t.text == "assert") {
        ++p_;
        NodePtr node = MakeNode("Assert", line);
        Set(node.get(), "test", PyValue::Node(Expression()));
        Set(node.get(), "msg", AcceptOp(",") ? PyValue::Node(Expression()) : None());
        return node;
      }
      if (t.text == "import") return Import();
      if (t.text == "from") return ImportFrom();
    }
    return ExpressionStatement();
  }

  NodePtr AssignedValue() { return IsKeyword("yield") ? YieldExpression() : StarExpressions(); }

  NodePtr ExpressionStatement() {
    const int line = Line();
    const bool starts_with_paren = IsOp("(");
    NodePtr first = AssignedValue();
    if (AcceptOp(":")) {
      if (!first->Is("Name") && !first->Is("Attribute") && !first->Is("Subscript")) {
        Fail(line, "illegal target for annotation");
      }
      const bool simple = first->Is("Name") && !starts_with_paren;
      SetContext(first.get(), "Store");
      NodePtr node = MakeNode("AnnAssign", line);
      Set(node.get(), "target", PyValue::Node(std::move(first)));
      Set(node.get(), "annotation", PyValue::Node(Expression()));
      Set(node.get(), "value", AcceptOp("=") ? PyValue::Node(AssignedValue()) : None());
      Set(node.get(), "simple", Int(simple ? 1 : 0));
      return node;
    }
    if (const char* op = AugmentedOperator()) {
      ++p_;
      if (!first->Is("Name") && !first->Is("Attribute") && !first->Is("Subscript")) {
        Fail(line, "illegal expression for augmented assignment");
      }
      SetContext(first.get(), "Store");
      NodePtr node = MakeNode("AugAssign", line);
      Set(node.get(), "target", PyValue::Node(std::move(first)));
      Set(node.get(), "op", PyValue::Node(MakeNode(op, 0)));
      Set(node.get(), "value", PyValue::Node(AssignedValue()));
      return node;
    }
    if (IsOp("=")) {
      std::vector<NodePtr> targets;
      NodePtr value = std::move(first);
      while (AcceptOp("=")) {
        SetContext(value.get(), "Store");
        targets.push_back(std::move(value));
        value = AssignedValue();
      }
      NodePtr node = MakeNode("Assign", line);
      Set(node.get(), "targets", Nodes(std::move(targets)));
      Set(node.get(), "value", PyValue::Node(std::move(value)));
      Set(node.get(), "type_comment", None());
      return node;
    }
    NodePtr node = MakeNode("Expr", line);
    Set(node.get(), "value", PyValue::Node(std::move(first)));
    return node;
  }

  const char* AugmentedOperator() const {
    if (Tok().kind != Token::kOp) return nullptr;
    static const std::pair<const char*, const char*> kOps[] = {
        {"+=", "Add"},      {"-=", "Sub"},     {"*=", "Mult"},    {"@=", "MatMult"},
        {"/=", "Div"},      {"%=", "Mod"},     {"&=", "BitAnd"},  {"|=", "BitOr"},
        {"^=", "BitXor"},   {"<<=", "LShift"}, {">>=", "RShift"}, {"**=", "Pow"},
        {"//=", "FloorDiv"}};
    for (const auto& [text, op] : kOps) {
      if (Tok().text == text) return op;
    }
    return nullptr;
  }

  std::string DottedName() {
    std::string name = ExpectName();
    while (AcceptOp(".")) absl::StrAppend(&name, ".", ExpectName());
    return name;
  }

  NodePtr Alias(std::string name, int line) {
    NodePtr alias = MakeNode("alias", line);
    Set(alias.get(), "name", PyValue::Str(std::move(name)));
    Set(alias.get(), "asname", AcceptKeyword("as") ? PyValue::Str(ExpectName()) : None());
    return alias;
  }

  NodePtr Import() {
    const int line = Line();
    ++p_;
    std::vector<NodePtr> names;
    do {
      const int alias_line = Line();
      names.push_back(Alias(DottedName(), alias_line));
    } while (AcceptOp(","));
    NodePtr node = MakeNode("Import", line);
    Set(node.get(), "names", Nodes(std::move(names)));
    return node;
  }

  NodePtr ImportFrom() {
    const int line = Line();
    ++p_;
    int level = 0;
    while (IsOp(".") || IsOp("...")) level += static_cast<int>(tokens_[p_++].text.size());
    PyValue module;
    if (!(level > 0 && IsKeyword("import"))) module = PyValue::Str(DottedName());
    ExpectKeyword("import");
    std::vector<NodePtr> names;
    if (IsOp("*")) {
      names.push_back(MakeNode("alias", Line()));
      ++p_;
      Set(names.back().get(), "name", PyValue::Str("*"));
      Set(names.back().get(), "asname", None());
    } else {
      const bool parenthesized = AcceptOp("(");
      do {
        if (parenthesized && IsOp(")")) break;
        const int alias_line = Line();
        names.push_back(Alias(ExpectName(), alias_line));
      } while (AcceptOp(","));
      if (parenthesized) ExpectOp(")");
      if (names.empty()) Invalid();
    }
    NodePtr node = MakeNode("ImportFrom", line);
    Set(node.get(), "module", std::move(module));
    Set(node.get(), "names", Nodes(std::move(names)));
    Set(node.get(), "level", Int(level));
    return node;
  }

  NodePtr If() {
    const int line = Line();
    ++p_;  // if / elif
    NodePtr node = MakeNode("If", line);
    Set(node.get(), "test", PyValue::Node(NamedExpression()));
    ExpectOp(":");
    Set(node.get(), "body", Nodes(Block()));
    std::vector<NodePtr> orelse;
    if (IsKeyword("elif")) {
      orelse.push_back(If());
    } else if (AcceptKeyword("else")) {
      ExpectOp(":");
      orelse = Block();
    }
    Set(node.get(), "orelse", Nodes(std::move(orelse)));
    return node;
  }

  std::vector<NodePtr> ElseBlock() {
    if (!AcceptKeyword("else")) return {};
    ExpectOp(":");
    return Block();
  }

  NodePtr While() {
    const int line = Line();
    ++p_;
    NodePtr node = MakeNode("While", line);
    Set(node.get(), "test", PyValue::Node(NamedExpression()));
    ExpectOp(":");
    Set(node.get(), "body", Nodes(Block()));
    Set(node.get(), "orelse", Nodes(ElseBlock()));
    return node;
  }

  NodePtr For(bool async, int line) {
    ExpectKeyword("for");
    NodePtr node = MakeNode(async ? "AsyncFor" : "For", line);
    NodePtr target = StarTargets();
    ExpectKeyword("in");
    Set(node.get(), "target", PyValue::Node(std::move(target)));
    Set(node.get(), "iter", PyValue::Node(StarExpressions()));
    ExpectOp(":");
    Set(node.get(), "body", Nodes(Block()));
    Set(node.get(), "orelse", Nodes(ElseBlock()));
    Set(node.get(), "type_comment", None());
    return node;
  }

  NodePtr WithItem() {
    NodePtr item = MakeNode("withitem", 0);
    Set(item.get(), "context_expr", PyValue::Node(Expression()));
    NodePtr vars;
    if (AcceptKeyword("as")) {
      vars = StarTarget();
      SetContext(vars.get(), "Store");
    }
    Set(item.get(), "optional_vars", PyValue::Node(std::move(vars)));
    return item;
  }

  NodePtr With(bool async, int line) {
    ExpectKeyword("with");
    std::vector<NodePtr> items;
    bool parsed = false;
    if (IsOp("(")) {  // with (a as b, c): ... -- or a parenthesized expression after all
      const size_t start = p_;
      try {
        ++p_;
        do {
          if (IsOp(")")) break;
          items.push_back(WithItem());
        } while (AcceptOp(","));
        ExpectOp(")");
        ExpectOp(":");
        parsed = !items.empty();
      } catch (const ParseError&) {
      }
      if (!parsed) {
        p_ = start;
        items.clear();
      }
    }
    if (!parsed) {
      do {
        items.push_back(WithItem());
      } while (AcceptOp(","));
      ExpectOp(":");
    }
    NodePtr node = MakeNode(async ? "AsyncWith" : "With", line);
    Set(node.get(), "items", Nodes(std::move(items)));
    Set(node.get(), "body", Nodes(Block()));
    Set(node.get(), "type_comment", None());
    return node;
  }

  NodePtr Try() {
    const int line = Line();
    ++p_;
    ExpectOp(":");
    std::vector<NodePtr> body = Block();
    std::vector<NodePtr> handlers;
    bool star = false;
    while (IsKeyword("except")) {
      const int handler_line = Line();
      ++p_;
      star |= AcceptOp("*");
      NodePtr handler = MakeNode("ExceptHandler", handler_line);
      NodePtr type;
      PyValue name;
      if (!IsOp(":")) {
        type = Expression();
        if (AcceptKeyword("as")) name = PyValue::Str(ExpectName());
      }
      ExpectOp(":");
      Set(handler.get(), "type", PyValue::Node(std::move(type)));
      Set(handler.get(), "name", std::move(name));
      Set(handler.get(), "body", Nodes(Block()));
      handlers.push_back(std::move(handler));
    }
    std::vector<NodePtr> orelse = ElseBlock();
    std::vector<NodePtr> finalbody;
    if (AcceptKeyword("finally")) {
      ExpectOp(":");
      finalbody = Block();
    }
    if (handlers.empty() && finalbody.empty()) Fail(line, "expected 'except' or 'finally' block");
    NodePtr node = MakeNode(star ? "TryStar" : "Try", line);
    Set(node.get(), "body", Nodes(std::move(body)));
    Set(node.get(), "handlers", Nodes(std::move(handlers)));
    Set(node.get(), "orelse", Nodes(std::move(orelse)));
    Set(node.get(), "finalbody", Nodes(std::move(finalbody)));
    return node;
  }

  NodePtr Decorated() {
    std::vector<NodePtr> decorators;
    while (AcceptOp("@")) {
      decorators.push_back(NamedExpression());
      ExpectNewline();
    }
    if (IsKeyword("class")) return ClassDef(std::move(decorators));
    const int line = Line();
    const bool async = AcceptKeyword("async");
    return FunctionDef(std::move(decorators), async, line);
  }

  NodePtr FunctionDef(std::vector<NodePtr> decorators, bool async, int line) {
    if (!async) line = Line();
    ExpectKeyword("def");
    NodePtr node = MakeNode(async ? "AsyncFunctionDef" : "FunctionDef", line);
    Set(node.get(), "name", PyValue::Str(ExpectName()));
    ExpectOp("(");
    NodePtr arguments = Arguments(")", true);
    ExpectOp(")");
    NodePtr returns = AcceptOp("->") ? Expression() : nullptr;
    ExpectOp(":");
    Set(node.get(), "args", PyValue::Node(std::move(arguments)));
    Set(node.get(), "body", Nodes(Block()));
    Set(node.get(), "decorator_list", Nodes(std::move(decorators)));
    Set(node.get(), "returns", PyValue::Node(std::move(returns)));
    Set(node.get(), "type_comment", None());
    return node;
  }

  NodePtr Arg(bool annotations, bool starred_annotation) {
    NodePtr arg = MakeNode("arg", Line());
    Set(arg.get(), "arg", PyValue::Str(ExpectName()));
    NodePtr annotation;
    if (annotations && AcceptOp(":")) {
      if (starred_annotation && IsOp("*")) {
        const int line = Line();
        ++p_;
        annotation = MakeNode("Starred", line);
        Set(annotation.get(), "value", PyValue::Node(Expression()));
        Set(annotation.get(), "ctx", Ctx("Load"));
      } else {
        annotation = Expression();
      }
    }
    Set(arg.get(), "annotation", PyValue::Node(std::move(annotation)));
    Set(arg.get(), "type_comment", None());
    return arg;
  }

  // Parameters of a def (annotations) or a lambda, up to `end`.
  NodePtr Arguments(absl::string_view end, bool annotations) {
    std::vector<NodePtr> posonly, args, kwonly, defaults;
    std::vector<PyValue> kw_defaults;
    NodePtr vararg, kwarg;
    bool star = false;
    while (!IsOp(end)) {
      if (AcceptOp("/")) {
        if (star || !posonly.empty() || args.empty()) Invalid();
        posonly = std::move(args);
        args.clear();
      } else if (AcceptOp("**")) {
        kwarg = Arg(annotations, false);
      } else if (AcceptOp("*")) {
        if (star) Invalid();
        star = true;
        if (!IsOp(",") && !IsOp(end)) vararg = Arg(annotations, true);
      } else {
        const int line = Line();
        NodePtr arg = Arg(annotations, false);
        NodePtr value = AcceptOp("=") ? Expression() : nullptr;
        if (star) {
          kwonly.push_back(std::move(arg));
          kw_defaults.push_back(PyValue::Node(std::move(value)));
        } else {
          args.push_back(std::move(arg));
          if (value != nullptr) {
            defaults.push_back(std::move(value));
          } else if (!defaults.empty()) {
            Fail(line, "non-default argument follows default argument");
          }
        }
      }
      if (!AcceptOp(",")) break;
    }
    NodePtr node = MakeNode("arguments", 0);
    Set(node.get(), "posonlyargs", Nodes(std::move(posonly)));
    Set(node.get(), "args", Nodes(std::move(args)));
    Set(node.get(), "vararg", PyValue::Node(std::move(vararg)));
    Set(node.get(), "kwonlyargs", Nodes(std::move(kwonly)));
    Set(node.get(), "kw_defaults", PyValue::List(std::move(kw_defaults)));
    Set(node.get(), "kwarg", PyValue::Node(std::move(kwarg)));
    Set(node.get(), "defaults", Nodes(std::move(defaults)));
    return node;
  }

  NodePtr ClassDef(std::vector<NodePtr> decorators) {
    const int line = Line();
    ExpectKeyword("class");
    NodePtr node = MakeNode("ClassDef", line);
    Set(node.get(), "name", PyValue::Str(ExpectName()));
    std::vector<NodePtr> bases, keywords;
    if (AcceptOp("(")) {
      CallArguments(line, &bases, &keywords);
      ExpectOp(")");
    }
    ExpectOp(":");
    Set(node.get(), "bases", Nodes(std::move(bases)));
    Set(node.get(), "keywords", Nodes(std::move(keywords)));
    Set(node.get(), "body", Nodes(Block()));
    Set(node.get(), "decorator_list", Nodes(std::move(decorators)));
    return node;
  }

  // --- match ------------------------------------------------------------------------------

  NodePtr Match() {
    const int line = Line();
    ++p_;  // match
    const int subject_line = Line();
    NodePtr subject = StarNamedExpression();
    if (IsOp(",")) {
      std::vector<NodePtr> elts;
      elts.push_back(std::move(subject));
      while (AcceptOp(",")) {
        if (IsOp(":")) break;
        elts.push_back(StarNamedExpression());
      }
      subject = Sequence("Tuple", std::move(elts), subject_line, "Load");
    }
    ExpectOp(":");
    if (Tok().kind != Token::kNewline || Tok(1).kind != Token::kIndent) Invalid();
    p_ += 2;
    std::vector<NodePtr> cases;
    while (IsKeyword("case")) {
      ++p_;
      NodePtr match_case = MakeNode("match_case", 0);
      Set(match_case.get(), "pattern", PyValue::Node(Patterns()));
      Set(match_case.get(), "guard",
          AcceptKeyword("if") ? PyValue::Node(NamedExpression()) : None());
      ExpectOp(":");
      Set(match_case.get(), "body", Nodes(Block()));
      cases.push_back(std::move(match_case));
    }
    if (cases.empty()) Invalid();
    if (Tok().kind != Token::kDedent && Tok().kind != Token::kEnd) Invalid();
    AcceptDedent();
    NodePtr node = MakeNode("Match", line);
    Set(node.get(), "subject", PyValue::Node(std::move(subject)));
    Set(node.get(), "cases", Nodes(std::move(cases)));
    return node;
  }

  NodePtr PatternNode(const char* type, int line,
                      std::vector<std::pair<const char*, PyValue>> fields) {
    NodePtr node = MakeNode(type, line);
    for (auto& [name, value] : fields) Set(node.get(), name, std::move(value));
    return node;
  }

  NodePtr Patterns() {
    const int line = Line();
    NodePtr first = MaybeStarPattern();
    if (!IsOp(",")) return first;
    std::vector<NodePtr> patterns;
    patterns.push_back(std::move(first));
    while (AcceptOp(",")) {
      if (IsOp(":") || IsKeyword("if")) break;
      patterns.push_back(MaybeStarPattern());
    }
    std::vector<std::pair<const char*, PyValue>> fields;
    fields.emplace_back("patterns", Nodes(std::move(patterns)));
    return PatternNode("MatchSequence", line, std::move(fields));
  }

  NodePtr MaybeStarPattern() {
    if (!IsOp("*")) return Pattern();
    const int line = Line();
    ++p_;
    const std::string name = ExpectName();
    std::vector<std::pair<const char*, PyValue>> fields;
    fields.emplace_back("name", name == "_" ? None() : PyValue::Str(name));
    return PatternNode("MatchStar", line, std::move(fields));
  }

  NodePtr Pattern() {
    Recursion guard(this);
    const int line = Line();
    NodePtr pattern = OrPattern();
    if (!AcceptKeyword("as")) return pattern;
    std::vector<std::pair<const char*, PyValue>> fields;
    fields.emplace_back("pattern", PyValue::Node(std::move(pattern)));
    fields.emplace_back("name", PyValue::Str(ExpectName()));
    return PatternNode("MatchAs", line, std::move(fields));
  }

  NodePtr OrPattern() {
    const int line = Line();
    std::vector<NodePtr> patterns;
    patterns.push_back(ClosedPattern());
    while (AcceptOp("|")) patterns.push_back(ClosedPattern());
    if (patterns.size() == 1) return std::move(patterns[0]);
    std::vector<std::pair<const char*, PyValue>> fields;
    fields.emplace_back("patterns", Nodes(std::move(patterns)));
    return PatternNode("MatchOr", line, std::move(fields));
  }

  // A literal pattern's value: a signed number, a complex sum, or strings.
  NodePtr LiteralExpression() {
    const int line = Line();
    if (Tok().kind == Token::kString) return Strings();
    NodePtr value;
    if (AcceptOp("-")) {
      if (Tok().kind != Token::kNumber) Invalid();
      value = UnaryOp("USub", Number(), line);
    } else if (Tok().kind == Token::kNumber) {
      value = Number();
    } else {
      Invalid();
    }
    if (IsOp("+") || IsOp("-")) {
      const char* op = IsOp("+") ? "Add" : "Sub";
      ++p_;
      if (Tok().kind != Token::kNumber) Invalid();
      value = BinOp(std::move(value), op, Number(), line);
    }
    return value;
  }

  NodePtr ValueOrName(std::string* single_name) {
    const int line = Line();
    std::string name = ExpectName();
    NodePtr value = Name(name, line);
    bool dotted = false;
    while (AcceptOp(".")) {
      dotted = true;
      NodePtr attribute = MakeNode("Attribute", line);
      Set(attribute.get(), "value", PyValue::Node(std::move(value)));
      Set(attribute.get(), "attr", PyValue::Str(ExpectName()));
      Set(attribute.get(), "ctx", Ctx("Load"));
      value = std::move(attribute);
    }
    *single_name = dotted ? "" : name;
    return value;
  }

  NodePtr ClosedPattern() {
    const int line = Line();
    const Token& t = Tok();
    std::vector<std::pair<const char*, PyValue>> fields;
    if (t.kind == Token::kNumber || t.kind == Token::kString ||
        (t.kind == Token::kOp && t.text == "-")) {
      fields.emplace_back("value", PyValue::Node(LiteralExpression()));
      return PatternNode("MatchValue", line, std::move(fields));
    }
    if (t.kind == Token::kName && (t.text == "None" || t.text == "True" || t.text == "False")) {
      fields.emplace_back("value",
                          t.text == "None" ? None() : PyValue::Constant(Kind::kBool, t.text));
      ++p_;
      return PatternNode("MatchSingleton", line, std::move(fields));
    }
    if (t.kind == Token::kOp && (t.text == "(" || t.text == "[")) {
      const std::string close = t.text == "(" ? ")" : "]";
      const bool paren = t.text == "(";
      ++p_;
      std::vector<NodePtr> patterns;
      bool comma = false;
      while (!IsOp(close)) {
        patterns.push_back(MaybeStarPattern());
        if (!AcceptOp(",")) break;
        comma = true;
      }
      ExpectOp(close);
      if (paren && patterns.size() == 1 && !comma && !patterns[0]->Is("MatchStar")) {
        return std::move(patterns[0]);  // a group
      }
      fields.emplace_back("patterns", Nodes(std::move(patterns)));
      return PatternNode("MatchSequence", line, std::move(fields));
    }
    if (t.kind == Token::kOp && t.text == "{") {
      ++p_;
      std::vector<NodePtr> keys, patterns;
      PyValue rest;
      while (!IsOp("}")) {
        if (AcceptOp("**")) {
          rest = PyValue::Str(ExpectName());
          AcceptOp(",");
          break;
        }
        if (IsName()) {
          std::string single;
          keys.push_back(ValueOrName(&single));
          if (!single.empty()) Invalid();  // mapping keys are literals or dotted names
        } else if (IsKeyword("None") || IsKeyword("True") || IsKeyword("False")) {
          const std::string word = tokens_[p_++].text;
          keys.push_back(
              ConstantNode(word == "None" ? None() : PyValue::Constant(Kind::kBool, word), line));
        } else {
          keys.push_back(LiteralExpression());
        }
        ExpectOp(":");
        patterns.push_back(Pattern());
        if (!AcceptOp(",")) break;
      }
      ExpectOp("}");
      fields.emplace_back("keys", Nodes(std::move(keys)));
      fields.emplace_back("patterns", Nodes(std::move(patterns)));
      fields.emplace_back("rest", std::move(rest));
      return PatternNode("MatchMapping", line, std::move(fields));
    }
    if (IsName()) {
      if (t.text == "_" && !IsOp(".", 1) && !IsOp("(", 1)) {
        ++p_;
        fields.emplace_back("pattern", None());
        fields.emplace_back("name", None());
        return PatternNode("MatchAs", line, std::move(fields));
      }
      std::string single;
      NodePtr value = ValueOrName(&single);
      if (AcceptOp("(")) {
        std::vector<NodePtr> patterns, kwd_patterns;
        std::vector<PyValue> kwd_attrs;
        while (!IsOp(")")) {
          if (IsName() && IsOp("=", 1)) {
            kwd_attrs.push_back(PyValue::Str(ExpectName()));
            ++p_;
            kwd_patterns.push_back(Pattern());
          } else {
            patterns.push_back(Pattern());
          }
          if (!AcceptOp(",")) break;
        }
        ExpectOp(")");
        fields.emplace_back("cls", PyValue::Node(std::move(value)));
        fields.emplace_back("patterns", Nodes(std::move(patterns)));
        fields.emplace_back("kwd_attrs", PyValue::List(std::move(kwd_attrs)));
        fields.emplace_back("kwd_patterns", Nodes(std::move(kwd_patterns)));
        return PatternNode("MatchClass", line, std::move(fields));
      }
      if (!single.empty()) {
        fields.emplace_back("pattern", None());
        fields.emplace_back("name", PyValue::Str(single));
        return PatternNode("MatchAs", line, std::move(fields));
      }
      fields.emplace_back("value", PyValue::Node(std::move(value)));
      return PatternNode("MatchValue", line, std::move(fields));
    }
    Invalid();
  }

  // --- expressions ------------------------------------------------------------------------

  NodePtr StarExpressions() {
    const int line = Line();
    NodePtr first = StarExpression();
    if (!IsOp(",")) return first;
    std::vector<NodePtr> elts;
    elts.push_back(std::move(first));
    while (AcceptOp(",")) {
      if (!AtExpressionStart()) break;
      elts.push_back(StarExpression());
    }
    return Sequence("Tuple", std::move(elts), line, "Load");
  }

  NodePtr Starred(int line) {
    ++p_;  // *
    NodePtr node = MakeNode("Starred", line);
    Set(node.get(), "value", PyValue::Node(BitwiseOr()));
    Set(node.get(), "ctx", Ctx("Load"));
    return node;
  }

  NodePtr StarExpression() { return IsOp("*") ? Starred(Line()) : Expression(); }

  NodePtr StarNamedExpression() { return IsOp("*") ? Starred(Line()) : NamedExpression(); }

  NodePtr NamedExpression() {
    if (IsName() && IsOp(":=", 1)) {
      const int line = Line();
      NodePtr target = Name(tokens_[p_].text, line, "Store");
      p_ += 2;
      NodePtr node = MakeNode("NamedExpr", line);
      Set(node.get(), "target", PyValue::Node(std::move(target)));
      Set(node.get(), "value", PyValue::Node(Expression()));
      return node;
    }
    return Expression();
  }

  // Targets of a for loop or comprehension: `a`, `a, *b`, `(a, b), c`.
  NodePtr StarTargets() {
    const int line = Line();
    NodePtr first = StarTarget();
    if (IsOp(",")) {
      std::vector<NodePtr> elts;
      elts.push_back(std::move(first));
      while (AcceptOp(",")) {
        if (IsKeyword("in") || IsOp("=")) break;
        elts.push_back(StarTarget());
      }
      first = Sequence("Tuple", std::move(elts), line, "Load");
    }
    SetContext(first.get(), "Store");
    return first;
  }

  NodePtr StarTarget() { return IsOp("*") ? Starred(Line()) : BitwiseOr(); }

  NodePtr Expression() {
    Recursion guard(this);
    if (IsKeyword("lambda")) return Lambda();
    const int line = Line();
    NodePtr body = Disjunction();
    if (!AcceptKeyword("if")) return body;
    NodePtr node = MakeNode("IfExp", line);
    Set(node.get(), "test", PyValue::Node(Disjunction()));
    ExpectKeyword("else");
    Set(node.get(), "body", PyValue::Node(std::move(body)));
    Set(node.get(), "orelse", PyValue::Node(Expression()));
    // ast's field order: test, body, orelse.
    return node;
  }

  NodePtr Lambda() {
    const int line = Line();
    ++p_;
    NodePtr node = MakeNode("Lambda", line);
    Set(node.get(), "args", PyValue::Node(Arguments(":", false)));
    ExpectOp(":");
    Set(node.get(), "body", PyValue::Node(Expression()));
    return node;
  }

  NodePtr BoolOperation(const char* keyword, const char* op, NodePtr (Parser::*operand)()) {
    const int line = Line();
    NodePtr first = (this->*operand)();
    if (!IsKeyword(keyword)) return first;
    std::vector<NodePtr> values;
    values.push_back(std::move(first));
    while (AcceptKeyword(keyword)) values.push_back((this->*operand)());
    NodePtr node = MakeNode("BoolOp", line);
    Set(node.get(), "op", PyValue::Node(MakeNode(op, 0)));
    Set(node.get(), "values", Nodes(std::move(values)));
    return node;
  }

  NodePtr Disjunction() { return BoolOperation("or", "Or", &Parser::Conjunction); }
  NodePtr Conjunction() { return BoolOperation("and", "And", &Parser::Inversion); }

  NodePtr Inversion() {
    if (!IsKeyword("not")) return Comparison();
    Recursion guard(this);
    const int line = Line();
    ++p_;
    return UnaryOp("Not", Inversion(), line);
  }

  const char* ComparisonOperator() {
    const Token& t = Tok();
    if (t.kind == Token::kOp) {
      static const std::pair<const char*, const char*> kOps[] = {
          {"==", "Eq"}, {"!=", "NotEq"}, {"<", "Lt"}, {"<=", "LtE"}, {">", "Gt"}, {">=", "GtE"}};
      for (const auto& [text, op] : kOps) {
        if (t.text == text) {
          ++p_;
          return op;
        }
      }
      return nullptr;
    }
    if (IsKeyword("in")) {
      ++p_;
      return "In";
    }
    if (IsKeyword("not") && IsKeyword("in", 1)) {
      p_ += 2;
      return "NotIn";
    }
    if (IsKeyword("is")) {
      ++p_;
      return AcceptKeyword("not") ? "IsNot" : "Is";
    }
    return nullptr;
  }

  NodePtr Comparison() {
    const int line = Line();
    NodePtr left = BitwiseOr();
    std::vector<NodePtr> ops, comparators;
    while (const char* op = ComparisonOperator()) {
      ops.push_back(MakeNode(op, 0));
      comparators.push_back(BitwiseOr());
    }
    if (ops.empty()) return left;
    NodePtr node = MakeNode("Compare", line);
    Set(node.get(), "left", PyValue::Node(std::move(left)));
    Set(node.get(), "ops", Nodes(std::move(ops)));
    Set(node.get(), "comparators", Nodes(std::move(comparators)));
    return node;
  }

  // A left-associative binary operator level.
  NodePtr Binary(std::initializer_list<std::pair<const char*, const char*>> ops,
                 NodePtr (Parser::*operand)()) {
    const int line = Line();
    NodePtr left = (this->*operand)();
    while (Tok().kind == Token::kOp) {
      const char* op = nullptr;
      for (const auto& [text, name] : ops) {
        if (Tok().text == text) op = name;
      }
      if (op == nullptr) break;
      ++p_;
      left = BinOp(std::move(left), op, (this->*operand)(), line);
    }
    return left;
  }

  NodePtr BitwiseOr() { return Binary({{"|", "BitOr"}}, &Parser::BitwiseXor); }
  NodePtr BitwiseXor() { return Binary({{"^", "BitXor"}}, &Parser::BitwiseAnd); }
  NodePtr BitwiseAnd() { return Binary({{"&", "BitAnd"}}, &Parser::Shift); }
  NodePtr Shift() { return Binary({{"<<", "LShift"}, {">>", "RShift"}}, &Parser::Sum); }
  NodePtr Sum() { return Binary({{"+", "Add"}, {"-", "Sub"}}, &Parser::Term); }
  NodePtr Term() {
    return Binary({{"*", "Mult"}, {"/", "Div"}, {"//", "FloorDiv"}, {"%", "Mod"}, {"@", "MatMult"}},
                  &Parser::Factor);
  }

  NodePtr Factor() {
    const Token& t = Tok();
    if (t.kind == Token::kOp && (t.text == "+" || t.text == "-" || t.text == "~")) {
      Recursion guard(this);
      const int line = t.line;
      const char* op = t.text == "+" ? "UAdd" : t.text == "-" ? "USub" : "Invert";
      ++p_;
      return UnaryOp(op, Factor(), line);
    }
    return Power();
  }

  NodePtr Power() {
    const int line = Line();
    NodePtr base = AwaitPrimary();
    if (!AcceptOp("**")) return base;
    Recursion guard(this);
    return BinOp(std::move(base), "Pow", Factor(), line);
  }

  NodePtr AwaitPrimary() {
    if (!IsKeyword("await")) return Primary();
    const int line = Line();
    ++p_;
    NodePtr node = MakeNode("Await", line);
    Set(node.get(), "value", PyValue::Node(Primary()));
    return node;
  }

  NodePtr Primary() {
    const int line = Line();
    NodePtr node = Atom();
    while (true) {
      if (AcceptOp(".")) {
        NodePtr attribute = MakeNode("Attribute", line);
        Set(attribute.get(), "value", PyValue::Node(std::move(node)));
        Set(attribute.get(), "attr", PyValue::Str(ExpectName()));
        Set(attribute.get(), "ctx", Ctx("Load"));
        node = std::move(attribute);
      } else if (IsOp("(")) {
        const int paren_line = Line();
        ++p_;
        std::vector<NodePtr> args, keywords;
        CallArguments(paren_line, &args, &keywords);
        ExpectOp(")");
        NodePtr call = MakeNode("Call", line);
        Set(call.get(), "func", PyValue::Node(std::move(node)));
        Set(call.get(), "args", Nodes(std::move(args)));
        Set(call.get(), "keywords", Nodes(std::move(keywords)));
        node = std::move(call);
      } else if (AcceptOp("[")) {
        NodePtr subscript = MakeNode("Subscript", line);
        Set(subscript.get(), "value", PyValue::Node(std::move(node)));
        Set(subscript.get(), "slice", PyValue::Node(Slices()));
        Set(subscript.get(), "ctx", Ctx("Load"));
        ExpectOp("]");
        node = std::move(subscript);
      } else {
        return node;
      }
    }
  }

  void CallArguments(int paren_line, std::vector<NodePtr>* args, std::vector<NodePtr>* keywords) {
    while (!IsOp(")")) {
      const int line = Line();
      if (IsOp("*")) {
        ++p_;
        NodePtr starred = MakeNode("Starred", line);
        Set(starred.get(), "value", PyValue::Node(Expression()));
        Set(starred.get(), "ctx", Ctx("Load"));
        args->push_back(std::move(starred));
      } else if (AcceptOp("**")) {
        NodePtr keyword = MakeNode("keyword", line);
        Set(keyword.get(), "arg", None());
        Set(keyword.get(), "value", PyValue::Node(Expression()));
        keywords->push_back(std::move(keyword));
      } else if (IsName() && IsOp("=", 1)) {
        NodePtr keyword = MakeNode("keyword", line);
        Set(keyword.get(), "arg", PyValue::Str(ExpectName()));
        ++p_;
        Set(keyword.get(), "value", PyValue::Node(Expression()));
        keywords->push_back(std::move(keyword));
      } else {
        NodePtr value = NamedExpression();
        if (IsKeyword("for") || (IsKeyword("async") && IsKeyword("for", 1))) {
          NodePtr generator = MakeNode("GeneratorExp", paren_line);
          Set(generator.get(), "elt", PyValue::Node(std::move(value)));
          Set(generator.get(), "generators", Nodes(Comprehensions()));
          value = std::move(generator);
        }
        args->push_back(std::move(value));
      }
      if (!AcceptOp(",")) break;
    }
  }

  NodePtr Slices() {
    const int line = Line();
    NodePtr first = Slice();
    if (!IsOp(",")) {
      if (!first->Is("Starred")) return first;
      std::vector<NodePtr> elts;  // a[*b] indexes with a one-element tuple
      elts.push_back(std::move(first));
      return Sequence("Tuple", std::move(elts), line, "Load");
    }
    std::vector<NodePtr> elts;
    elts.push_back(std::move(first));
    while (AcceptOp(",")) {
      if (IsOp("]")) break;
      elts.push_back(Slice());
    }
    return Sequence("Tuple", std::move(elts), line, "Load");
  }

  NodePtr Slice() {
    const int line = Line();
    if (IsOp("*")) return Starred(line);
    NodePtr lower;
    if (!IsOp(":")) {
      lower = NamedExpression();
      if (!IsOp(":")) return lower;
    }
    ExpectOp(":");
    auto at_end = [&] { return IsOp("]") || IsOp(","); };
    NodePtr upper = (!IsOp(":") && !at_end()) ? Expression() : nullptr;
    NodePtr step;
    if (AcceptOp(":") && !at_end()) step = Expression();
    NodePtr node = MakeNode("Slice", line);
    Set(node.get(), "lower", PyValue::Node(std::move(lower)));
    Set(node.get(), "upper", PyValue::Node(std::move(upper)));
    Set(node.get(), "step", PyValue::Node(std::move(step)));
    return node;
  }

  std::vector<NodePtr> Comprehensions() {
    std::vector<NodePtr> generators;
    while (IsKeyword("for") || (IsKeyword("async") && IsKeyword("for", 1))) {
      const bool async = AcceptKeyword("async");
      ExpectKeyword("for");
      NodePtr comprehension = MakeNode("comprehension", 0);
      Set(comprehension.get(), "target", PyValue::Node(StarTargets()));
      ExpectKeyword("in");
      Set(comprehension.get(), "iter", PyValue::Node(Disjunction()));
      std::vector<NodePtr> ifs;
      while (AcceptKeyword("if")) ifs.push_back(Disjunction());
      Set(comprehension.get(), "ifs", Nodes(std::move(ifs)));
      Set(comprehension.get(), "is_async", Int(async ? 1 : 0));
      generators.push_back(std::move(comprehension));
    }
    return generators;
  }

  NodePtr YieldExpression() {
    const int line = Line();
    ExpectKeyword("yield");
    if (AcceptKeyword("from")) {
      NodePtr node = MakeNode("YieldFrom", line);
      Set(node.get(), "value", PyValue::Node(Expression()));
      return node;
    }
    NodePtr node = MakeNode("Yield", line);
    Set(node.get(), "value", AtExpressionStart() ? PyValue::Node(StarExpressions()) : None());
    return node;
  }

  NodePtr Comprehension(const char* type, NodePtr elt, int line) {
    NodePtr node = MakeNode(type, line);
    Set(node.get(), "elt", PyValue::Node(std::move(elt)));
    Set(node.get(), "generators", Nodes(Comprehensions()));
    return node;
  }

  bool AtComprehension() const {
    return IsKeyword("for") || (IsKeyword("async") && IsKeyword("for", 1));
  }

  NodePtr Atom() {
    const Token& t = Tok();
    const int line = t.line;
    switch (t.kind) {
      case Token::kName:
        if (t.text == "None" || t.text == "True" || t.text == "False") {
          ++p_;
          return ConstantNode(t.text == "None" ? None() : PyValue::Constant(Kind::kBool, t.text),
                              line);
        }
        if (Keywords().count(t.text) > 0) Invalid();
        ++p_;
        return Name(t.text, line);
      case Token::kNumber:
        return Number();
      case Token::kString:
        return Strings();
      case Token::kOp:
        break;
      default:
        Invalid();
    }
    if (t.text == "...") {
      ++p_;
      return ConstantNode(PyValue::Constant(Kind::kEllipsis), line);
    }
    if (t.text == "(") {
      ++p_;
      if (AcceptOp(")")) return Sequence("Tuple", {}, line, "Load");
      if (IsKeyword("yield")) {
        NodePtr value = YieldExpression();
        ExpectOp(")");
        return value;
      }
      NodePtr first = StarNamedExpression();
      if (AtComprehension()) {
        NodePtr generator = Comprehension("GeneratorExp", std::move(first), line);
        ExpectOp(")");
        return generator;
      }
      if (AcceptOp(")")) {
        if (first->Is("Starred")) Fail(line, "cannot use starred expression here");
        return first;
      }
      std::vector<NodePtr> elts;
      elts.push_back(std::move(first));
      while (AcceptOp(",")) {
        if (IsOp(")")) break;
        elts.push_back(StarNamedExpression());
      }
      ExpectOp(")");
      return Sequence("Tuple", std::move(elts), line, "Load");
    }
    if (t.text == "[") {
      ++p_;
      if (AcceptOp("]")) return Sequence("List", {}, line, "Load");
      NodePtr first = StarNamedExpression();
      if (AtComprehension()) {
        NodePtr comprehension = Comprehension("ListComp", std::move(first), line);
        ExpectOp("]");
        return comprehension;
      }
      std::vector<NodePtr> elts;
      elts.push_back(std::move(first));
      while (AcceptOp(",")) {
        if (IsOp("]")) break;
        elts.push_back(StarNamedExpression());
      }
      ExpectOp("]");
      return Sequence("List", std::move(elts), line, "Load");
    }
    if (t.text == "{") {
      ++p_;
      return Braces(line);
    }
    Invalid();
  }

  NodePtr Braces(int line) {
    std::vector<PyValue> keys;
    std::vector<NodePtr> values;
    if (AcceptOp("}")) return DictNode(std::move(keys), std::move(values), line);
    NodePtr first;
    if (AcceptOp("**")) {
      keys.push_back(None());
      values.push_back(BitwiseOr());
    } else {
      first = StarNamedExpression();
      if (AcceptOp(":")) {
        NodePtr value = Expression();
        if (AtComprehension()) {
          NodePtr node = MakeNode("DictComp", line);
          Set(node.get(), "key", PyValue::Node(std::move(first)));
          Set(node.get(), "value", PyValue::Node(std::move(value)));
          Set(node.get(), "generators", Nodes(Comprehensions()));
          ExpectOp("}");
          return node;
        }
        keys.push_back(PyValue::Node(std::move(first)));
        values.push_back(std::move(value));
      } else {
        if (AtComprehension()) {
          NodePtr node = Comprehension("SetComp", std::move(first), line);
          ExpectOp("}");
          return node;
        }
        std::vector<NodePtr> elts;
        elts.push_back(std::move(first));
        while (AcceptOp(",")) {
          if (IsOp("}")) break;
          elts.push_back(StarNamedExpression());
        }
        ExpectOp("}");
        NodePtr node = MakeNode("Set", line);
        Set(node.get(), "elts", Nodes(std::move(elts)));
        return node;
      }
    }
    while (AcceptOp(",")) {
      if (IsOp("}")) break;
      if (AcceptOp("**")) {
        keys.push_back(None());
        values.push_back(BitwiseOr());
      } else {
        keys.push_back(PyValue::Node(Expression()));
        ExpectOp(":");
        values.push_back(Expression());
      }
    }
    ExpectOp("}");
    return DictNode(std::move(keys), std::move(values), line);
  }

  NodePtr DictNode(std::vector<PyValue> keys, std::vector<NodePtr> values, int line) {
    NodePtr node = MakeNode("Dict", line);
    Set(node.get(), "keys", PyValue::List(std::move(keys)));
    Set(node.get(), "values", Nodes(std::move(values)));
    return node;
  }

  NodePtr Number() {
    const Token& t = Tok();
    ++p_;
    return ConstantNode(NumberValue(t.text, t.line), t.line);
  }

  // --- strings ----------------------------------------------------------------------------

  struct Literal {
    bool raw = false, bytes = false, unicode = false, f = false;
    absl::string_view body;
    size_t body_offset = 0;  // in the token's text
  };

  static Literal SplitLiteral(const std::string& text) {
    Literal literal;
    size_t quote = 0;
    while (text[quote] != '\'' && text[quote] != '"') {
      const char c = absl::ascii_tolower(text[quote]);
      literal.raw |= c == 'r';
      literal.bytes |= c == 'b';
      literal.unicode |= c == 'u';
      literal.f |= c == 'f';
      ++quote;
    }
    const size_t width =
        text.compare(quote, 3, std::string(3, text[quote])) == 0 && text.size() >= quote + 6 ? 3
                                                                                             : 1;
    literal.body_offset = quote + width;
    literal.body =
        absl::string_view(text).substr(literal.body_offset, text.size() - quote - 2 * width);
    return literal;
  }

  // Parts of a JoinedStr under construction: adjacent literal text merges.
  struct Parts {
    std::vector<NodePtr> nodes;
    std::string text;
    bool inexact = false;
    int line = 0;

    void Flush() {
      if (text.empty()) return;
      PyValue value = PyValue::Str(std::move(text));
      value.inexact = inexact;
      nodes.push_back(ConstantNode(std::move(value), line));
      text.clear();
      inexact = false;
    }
  };

  NodePtr Strings() {
    const int line = Line();
    bool any_f = false, any_bytes = false, any_text = false, inexact = false;
    const bool unicode = SplitLiteral(Tok().text).unicode;
    std::string value;
    Parts parts;
    parts.line = line;
    while (Tok().kind == Token::kString) {
      const Token& t = tokens_[p_++];
      const Literal literal = SplitLiteral(t.text);
      (literal.bytes ? any_bytes : any_text) = true;
      if (any_bytes && any_text) Fail(t.line, "cannot mix bytes and nonbytes literals");
      if (literal.f) {
        any_f = true;
        // Literal text before the f-string merges with the f-string's own first part.
        const std::string& body_text = t.text;
        FString(literal.body, literal.raw, t.line, body_text, literal.body_offset, &parts, 0);
      } else {
        bool part_inexact = false;
        std::string decoded =
            DecodeLiteral(literal.body, literal.raw, literal.bytes, t.line, &part_inexact);
        inexact |= part_inexact;
        parts.inexact |= part_inexact;
        parts.text += decoded;
        value += decoded;
      }
    }
    if (!any_f) {
      PyValue constant = PyValue::Constant(any_bytes ? Kind::kBytes : Kind::kStr, std::move(value));
      constant.inexact = inexact;
      return ConstantNode(std::move(constant), line, unicode ? PyValue::Str("u") : None());
    }
    parts.Flush();
    NodePtr node = MakeNode("JoinedStr", line);
    Set(node.get(), "values", Nodes(std::move(parts.nodes)));
    return node;
  }

  // The contents of an f-string (or of a format spec, when `depth` > 0, which ends at an
  // unmatched '}'), appended to `parts`. Returns the end offset in `body`. `token_text` and
  // `offset` place body[0] in its token, for line numbers.
  size_t FString(absl::string_view body, bool raw, int line, const std::string& token_text,
                 size_t offset, Parts* parts, int depth) {
    if (depth > 2) Fail(line, "f-string: expressions nested too deeply");
    std::string chunk;  // undecoded literal text
    auto flush_chunk = [&] {
      bool chunk_inexact = false;
      parts->text += DecodeLiteral(chunk, raw, false, line, &chunk_inexact);
      parts->inexact |= chunk_inexact;
      chunk.clear();
    };
    size_t i = 0;
    while (i < body.size()) {
      const char c = body[i];
      if (c == '{' || c == '}') {
        if (i + 1 < body.size() && body[i + 1] == c && depth == 0) {
          chunk.push_back(c);
          i += 2;
          continue;
        }
        if (c == '}') {
          if (depth > 0) break;
          Fail(line, "f-string: single '}' is not allowed");
        }
        flush_chunk();
        i = Field(body, i + 1, raw, line, token_text, offset, parts, depth);
        continue;
      }
      if (c == '\\' && !raw && i + 1 < body.size()) {
        if (body[i + 1] == 'N' && i + 2 < body.size() && body[i + 2] == '{') {
          const size_t close = body.find('}', i);
          if (close == absl::string_view::npos) Fail(line, "malformed \\N character escape");
          absl::StrAppend(&chunk, body.substr(i, close + 1 - i));
          i = close + 1;
          continue;
        }
        absl::StrAppend(&chunk, body.substr(i, 2));
        i += 2;
        continue;
      }
      chunk.push_back(c);
      ++i;
    }
    flush_chunk();
    return i;
  }

  // A replacement field whose expression starts at body[start]; returns the offset after '}'.
  size_t Field(absl::string_view body, size_t start, bool raw, int line,
               const std::string& token_text, size_t offset, Parts* parts, int depth) {
    size_t i = start;
    int nesting = 0;
    char quote = 0;
    bool triple = false;
    bool debug = false;
    for (; i < body.size(); ++i) {
      const char c = body[i];
      if (quote != 0) {
        if (c == quote && (!triple || body.substr(i, 3) == std::string(3, quote))) {
          if (triple) i += 2;
          quote = 0;
        }
        continue;
      }
      if (c == '\\') Fail(line, "f-string expression part cannot include a backslash");
      if (c == '\'' || c == '"') {
        quote = c;
        triple = body.substr(i, 3) == std::string(3, c);
        if (triple) i += 2;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        ++nesting;
        continue;
      }
      if (c == ')' || c == ']' || c == '}') {
        if (nesting == 0) {
          if (c == '}') break;
          Fail(line, "f-string: unmatched bracket");
        }
        --nesting;
        continue;
      }
      if (nesting > 0) continue;
      if (c == '#') Fail(line, "f-string expression part cannot include '#'");
      if (c == '!' && i + 1 < body.size() && body[i + 1] != '=') break;
      if (c == ':') break;
      if (c == '=' && i + 1 < body.size() && body[i + 1] != '=' && i > start &&
          std::string("=!<>").find(body[i - 1]) == std::string::npos) {
        debug = true;
        break;
      }
    }
    if (i >= body.size()) Fail(line, "f-string: expecting '}'");
    const absl::string_view expression = body.substr(start, i - start);
    if (expression.find_first_not_of(" \t\n\r\f") == absl::string_view::npos) {
      Fail(line, "f-string: empty expression not allowed");
    }
    int expression_line = line;
    for (size_t k = 0; k < offset + start && k < token_text.size(); ++k) {
      if (token_text[k] == '\n') ++expression_line;
    }
    if (debug) {
      ++i;
      while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n')) ++i;
      absl::StrAppend(&parts->text, body.substr(start, i - start));
    }
    int conversion = -1;
    if (i < body.size() && body[i] == '!') {
      if (i + 1 >= body.size()) Fail(line, "f-string: expecting '}'");
      const char letter = body[i + 1];
      if (letter != 's' && letter != 'r' && letter != 'a') {
        Fail(line, "f-string: invalid conversion character");
      }
      conversion = letter;
      i += 2;
    }
    NodePtr format_spec;
    if (i < body.size() && body[i] == ':') {
      Parts spec;
      spec.line = parts->line;
      const size_t end =
          i + 1 +
          FString(body.substr(i + 1), raw, line, token_text, offset + i + 1, &spec, depth + 1);
      spec.Flush();
      // ast (3.11) places a format spec at its own string token, and its literal parts too
      // unless the spec holds replacement fields.
      const bool nested = std::any_of(spec.nodes.begin(), spec.nodes.end(),
                                      [](const NodePtr& n) { return n->Is("FormattedValue"); });
      if (!nested) {
        for (NodePtr& n : spec.nodes) n->line = line;
      }
      format_spec = MakeNode("JoinedStr", line);
      Set(format_spec.get(), "values", Nodes(std::move(spec.nodes)));
      i = end;
    }
    if (i >= body.size() || body[i] != '}') Fail(line, "f-string: expecting '}'");
    ++i;
    if (debug && conversion == -1 && format_spec == nullptr) conversion = 'r';
    std::vector<Token> tokens =
        Tokenizer(absl::StrCat("(", expression, ")"), expression_line).Run();
    NodePtr value = Parser(std::move(tokens)).FStringExpression();
    parts->Flush();
    // ast places the parts of a JoinedStr at the first string of the concatenation.
    NodePtr node = MakeNode("FormattedValue", parts->line);
    Set(node.get(), "value", PyValue::Node(std::move(value)));
    Set(node.get(), "conversion", Int(conversion));
    Set(node.get(), "format_spec", PyValue::Node(std::move(format_spec)));
    parts->nodes.push_back(std::move(node));
    return i;
  }

  std::vector<Token> tokens_;
  size_t p_ = 0;
  int recursion_ = 0;
};

// The deepest nesting of nodes in the tree, without recursion.
int TreeDepth(const PyNode& root) {
  int deepest = 0;
  std::vector<std::pair<const PyValue*, int>> stack;
  auto push_node = [&](const PyNode& node, int depth) {
    deepest = std::max(deepest, depth);
    for (const auto& [name, value] : node.fields) stack.emplace_back(&value, depth + 1);
  };
  push_node(root, 1);
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    if (value->kind == Kind::kNode) {
      push_node(*value->node, depth);
    } else if (value->kind == Kind::kList) {
      for (const PyValue& item : value->items) stack.emplace_back(&item, depth);
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PyNode>> ParsePython(absl::string_view source) {
  std::string text(source);
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) text.erase(0, 3);
  if (text.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("source code cannot contain null bytes");
  }
  text = absl::StrReplaceAll(text, {{"\r\n", "\n"}, {"\r", "\n"}});
  try {
    std::vector<Token> tokens = Tokenizer(text, 1).Run();
    std::unique_ptr<PyNode> module = Parser(std::move(tokens)).Module();
    if (TreeDepth(*module) > kMaxPySyntaxDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("the syntax tree nests deeper than ", kMaxPySyntaxDepth, " nodes"));
    }
    return module;
  } catch (const ParseError& error) {
    return absl::InvalidArgumentError(absl::StrCat("line ", error.line, ": ", error.message));
  }
}

}  // namespace mkb
