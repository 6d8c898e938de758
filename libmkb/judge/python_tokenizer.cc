#include "libmkb/judge/python_tokenizer.h"

#include "absl/strings/ascii.h"

namespace mkb {
namespace {

bool IsNameStart(unsigned char c) { return absl::ascii_isalpha(c) || c == '_' || c >= 0x80; }
bool IsNameChar(unsigned char c) { return absl::ascii_isalnum(c) || c == '_' || c >= 0x80; }

// Three-character, then two-character operators, longest first.
constexpr absl::string_view kOps3[] = {"**=", "//=", ">>=", "<<=", "...", "!=="};
constexpr absl::string_view kOps2[] = {"==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=",
                                       "|=", "^=", "@=", "**", "//", "<<", ">>", "->", ":="};

class Tokenizer {
 public:
  explicit Tokenizer(absl::string_view source, int first_line = 1)
      : s_(source), line_(first_line) {}

  std::vector<PythonToken> Run() {
    while (i_ < s_.size()) {
      const unsigned char c = s_[i_];
      if (c == '\n') {
        if (depth_ == 0 && !tokens_.empty() && tokens_.back().kind != PythonToken::kNewline) {
          tokens_.push_back({PythonToken::kNewline, "", line_});
        }
        ++line_;
        ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        i_ += 2;
        ++line_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (IsNameStart(c)) {
        const size_t start = i_;
        while (i_ < s_.size() && IsNameChar(s_[i_])) ++i_;
        const absl::string_view word = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"') && IsStringPrefix(word)) {
          String(word);
        } else {
          tokens_.push_back({PythonToken::kName, std::string(word), line_});
        }
      } else if (c == '\'' || c == '"') {
        String("");
      } else if (absl::ascii_isdigit(c) ||
                 (c == '.' && i_ + 1 < s_.size() && absl::ascii_isdigit(s_[i_ + 1]))) {
        const size_t start = i_;
        while (i_ < s_.size() &&
               (IsNameChar(s_[i_]) || s_[i_] == '.' ||
                ((s_[i_] == '+' || s_[i_] == '-') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E')))) {
          ++i_;
        }
        tokens_.push_back({PythonToken::kNumber, std::string(s_.substr(start, i_ - start)), line_});
      } else {
        Operator();
      }
    }
    if (!tokens_.empty() && tokens_.back().kind != PythonToken::kNewline) {
      tokens_.push_back({PythonToken::kNewline, "", line_});
    }
    return std::move(tokens_);
  }

 private:
  static bool IsStringPrefix(absl::string_view word) {
    if (word.size() > 2) return false;
    for (char ch : word) {
      const char lower = absl::ascii_tolower(ch);
      if (lower != 'r' && lower != 'b' && lower != 'u' && lower != 'f') return false;
    }
    return true;
  }

  void Operator() {
    for (absl::string_view op : kOps3) {
      if (s_.substr(i_, 3) == op) return Emit(op);
    }
    for (absl::string_view op : kOps2) {
      if (s_.substr(i_, 2) == op) return Emit(op);
    }
    const char c = s_[i_];
    if (c == '(' || c == '[' || c == '{') ++depth_;
    if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
    Emit(s_.substr(i_, 1));
  }

  void Emit(absl::string_view op) {
    tokens_.push_back({PythonToken::kOp, std::string(op), line_});
    i_ += op.size();
  }

  void String(absl::string_view prefix) {
    bool raw = false, f = false;
    for (char ch : prefix) {
      raw |= absl::ascii_tolower(ch) == 'r';
      f |= absl::ascii_tolower(ch) == 'f';
    }
    const char quote = s_[i_];
    const bool triple = s_.substr(i_, 3) == std::string(3, quote);
    const int start_line = line_;
    i_ += triple ? 3 : 1;
    std::string value;
    std::vector<std::pair<std::string, int>> expressions;  // f-string {...} contents
    int brace = 0;
    std::string expression;
    int expression_line = line_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (triple ? s_.substr(i_, 3) == std::string(3, quote) : c == quote) {
        i_ += triple ? 3 : 1;
        break;
      }
      if (!triple && c == '\n') break;  // unterminated: stop at the end of the line
      if (c == '\n') ++line_;
      if (c == '\\' && !raw && i_ + 1 < s_.size()) {
        const char next = s_[i_ + 1];
        if (next == '\n') ++line_;
        value += Unescape(next);
        if (brace > 0) expression += next;
        i_ += 2;
        continue;
      }
      if (f && c == '{') {
        if (brace == 0 && i_ + 1 < s_.size() && s_[i_ + 1] == '{') {
          value += '{';
          i_ += 2;
          continue;
        }
        if (brace++ == 0) {
          expression.clear();
          expression_line = line_;
          ++i_;
          continue;
        }
      } else if (f && c == '}' && brace > 0) {
        if (--brace == 0) {
          expressions.emplace_back(expression, expression_line);
          ++i_;
          continue;
        }
      }
      if (brace > 0) {
        expression += c;
      } else {
        value += c;
      }
      ++i_;
    }
    PythonToken token{PythonToken::kString, value, start_line};
    token.f_string = f;
    tokens_.push_back(token);
    for (const auto& [text, line] : expressions) {
      std::vector<PythonToken> inner = Tokenizer(text, line).Run();
      for (PythonToken& t : inner) {
        if (t.kind != PythonToken::kNewline) tokens_.push_back(std::move(t));
      }
    }
  }

  static char Unescape(char c) {
    switch (c) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case '0':
        return '\0';
      default:
        return c;
    }
  }

  absl::string_view s_;
  size_t i_ = 0;
  int line_;
  int depth_ = 0;
  std::vector<PythonToken> tokens_;
};

}  // namespace

std::vector<PythonToken> TokenizePython(absl::string_view source) {
  return Tokenizer(source).Run();
}

}  // namespace mkb
