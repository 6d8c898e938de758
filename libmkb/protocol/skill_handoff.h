// The skill a conditioned trial receives (SPEC §4): the source attempt's SKILL.md, or a fixed
// text, with its digest — the "skill digest" of stale detection.
#ifndef LIBMKB_PROTOCOL_SKILL_HANDOFF_H_
#define LIBMKB_PROTOCOL_SKILL_HANDOFF_H_

#include <string>

#include "absl/strings/string_view.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb {

// skill_in for a trial conditioned on `source`'s skill: its skill_out text (as the source's
// executor capped and flagged it), the text's SHA-256, its size, the source's id, DSL and model,
// origin "attempt". flags.empty when the text is nothing but white space.
v1::Skill SkillFromAttempt(const v1::Attempt& source);

// skill_in for a fixed text; origin from SkillSource.origin ("placebo", "human"), else
// "fixed_text".
v1::Skill SkillFromFixedText(const v1::SkillSource& source);

// Whether a skill has nothing to hand over: the conditioned arm is then skipped (it counts as
// its base, SPEC §4).
bool IsEmptySkill(const v1::Skill& skill);

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_SKILL_HANDOFF_H_
