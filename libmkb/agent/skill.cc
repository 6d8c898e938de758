#include "libmkb/agent/skill.h"

#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libmkb/core/sha256.h"

namespace mkb {
namespace {

// The longest prefix of `text` of at most `max_bytes` that does not split a UTF-8 sequence.
absl::string_view CutUtf8(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

const std::vector<std::regex>& CodePatterns() {
  static const auto* patterns = new std::vector<std::regex>{
      std::regex(R"(^\s*(```|~~~))"),
      std::regex(R"(^\s*(def|class)\s+\w+\s*[(:])"),
      std::regex(R"(^\s*(import\s+[\w.]+|from\s+[\w.]+\s+import\s+))"),
      std::regex(R"(^\s*(for|while|if|elif|with)\b[^:]*:\s*$)"),
      std::regex(R"(^\s*return\s+\S)"),
      std::regex(R"(^\s*@\w+(\.\w+)*(\(.*\))?\s*$)"),
      std::regex(R"(^\s*[A-Za-z_][\w.]*(\[[^\]]*\])?\s*(=|\+=|-=|\*=|/=)\s*[\w.]+\()"),
      std::regex(R"(^\s*\$\s+\S)"),
      std::regex(R"(\b(pip3?|python3?|nvcc|mkb)\s+(install|-m|-c|eval|check)\b)"),
      std::regex(R"(^\s*#include\b|__global__|__shared__)"),
      std::regex(R"([=(]\s*.*;\s*$)"),
      std::regex(R"(\b(cute|cutlass|T|tir|tirx|tvm|torch|tl)\.[A-Za-z_][\w.]*\s*\()"),
  };
  return *patterns;
}

}  // namespace

std::string SkillRules() {
  return "SKILL.md is what this attempt hands on. It will be given, as it stands when the attempt "
         "ends, to a fresh attempt at this same problem written in the other DSL; that attempt "
         "sees nothing else of yours. It holds kernel knowledge only: evidence-backed conclusions "
         "about how this computation maps to the hardware, written so that they transfer to "
         "another DSL -- not a summary of the problem, a step-by-step account of your final "
         "kernel, or a log of benchmark numbers. An empty SKILL.md hands on nothing.\n\n"
         "Record:\n"
         "- what you changed, what you expected, what you observed (correctness, error sizes, "
         "timings), and the explanation the evidence supports;\n"
         "- which parts of the computation are worth moving out of eager PyTorch into the kernel, "
         "and which are not, with the evidence for that boundary;\n"
         "- why the approaches that failed failed;\n"
         "- the conditions under which each conclusion holds (shapes, dtypes, the GPU);\n"
         "- the questions most worth testing next.\n\n"
         "Every conclusion rests on concrete evidence: a measured change in correctness, a time or "
         "speedup the judge reported, or a specific observation about generated code or hardware "
         "behaviour. Mention DSL-specific details only where the evidence needs them, and state "
         "the conclusions without this DSL's syntax or API.\n\n"
         "Do not write code, shell commands, DSL API instructions, the rules of the contract, "
         "compilation or debugging narratives, submission mechanics, a narrative of your session, "
         "or unsupported generic advice. Update it as you experiment rather than reconstructing "
         "it from memory at the end. Concise Markdown paragraphs or lists; no title or heading "
         "(one is added when the file is handed on). At most 16 KiB; longer is cut.\n";
}

std::vector<std::string> FindCodeEvidence(absl::string_view text, int max_items) {
  std::vector<std::string> evidence;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (static_cast<int>(evidence.size()) >= max_items) break;
    const std::string s(absl::StripTrailingAsciiWhitespace(line));
    if (s.empty()) continue;
    for (const std::regex& pattern : CodePatterns()) {
      if (std::regex_search(s, pattern)) {
        std::string shown(absl::StripLeadingAsciiWhitespace(s));
        if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
        evidence.push_back(absl::StrCat("line ", line_number, ": ", shown));
        break;
      }
    }
  }
  return evidence;
}

v1::Skill MakeSkill(absl::string_view text, int64_t max_bytes) {
  v1::Skill skill;
  const absl::string_view kept =
      max_bytes > 0 ? CutUtf8(text, static_cast<size_t>(max_bytes)) : text;
  skill.set_text(std::string(kept));
  skill.set_sha256(Sha256Hex(kept));
  skill.set_bytes(static_cast<int64_t>(kept.size()));
  v1::SkillFlags* flags = skill.mutable_flags();
  flags->set_truncated(kept.size() < text.size());
  flags->set_empty(absl::StripAsciiWhitespace(kept).empty());
  for (std::string& e : FindCodeEvidence(kept)) flags->add_code_evidence(std::move(e));
  flags->set_contains_code(flags->code_evidence_size() > 0);
  return skill;
}

bool IsConditioned(const v1::Skill& skill) {
  return !skill.text().empty() || !skill.sha256().empty() || !skill.source_attempt_id().empty() ||
         !skill.origin().empty() || skill.source_dsl() != v1::DSL_UNSPECIFIED ||
         !skill.source_model().empty() || skill.flags().empty();
}

bool IsBlankSkill(const v1::Skill& skill) {
  return absl::StripAsciiWhitespace(skill.text()).empty();
}

std::string RenderReceivedSkill(const v1::Skill& skill) {
  std::string text(absl::StripTrailingAsciiWhitespace(skill.text()));
  return absl::StrCat(kReceivedSkillHeader, "\n", text, "\n");
}

}  // namespace mkb
