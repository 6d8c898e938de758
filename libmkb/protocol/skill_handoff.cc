#include "libmkb/protocol/skill_handoff.h"

#include "absl/strings/ascii.h"
#include "libmkb/core/sha256.h"

namespace mkb {
namespace {

v1::Skill SkillOfText(const std::string& text) {
  v1::Skill skill;
  skill.set_text(text);
  skill.set_sha256(Sha256Hex(text));
  skill.set_bytes(static_cast<int64_t>(text.size()));
  if (absl::StripAsciiWhitespace(text).empty()) skill.mutable_flags()->set_empty(true);
  return skill;
}

}  // namespace

v1::Skill SkillFromAttempt(const v1::Attempt& source) {
  v1::Skill skill = SkillOfText(source.skill_out().text());
  // Flags the source's executor raised (truncated, contains_code) travel with the text.
  skill.mutable_flags()->set_truncated(source.skill_out().flags().truncated());
  skill.mutable_flags()->set_contains_code(source.skill_out().flags().contains_code());
  *skill.mutable_flags()->mutable_code_evidence() = source.skill_out().flags().code_evidence();
  skill.set_source_attempt_id(source.id());
  skill.set_source_dsl(source.dsl());
  skill.set_source_model(source.model());
  skill.set_origin("attempt");
  return skill;
}

v1::Skill SkillFromFixedText(const v1::SkillSource& source) {
  v1::Skill skill = SkillOfText(source.text());
  skill.set_origin(source.origin().empty() ? "fixed_text" : source.origin());
  return skill;
}

bool IsEmptySkill(const v1::Skill& skill) {
  return absl::StripAsciiWhitespace(skill.text()).empty();
}

}  // namespace mkb
