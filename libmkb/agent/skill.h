// Skills (SPEC §4): the SKILL.md an attempt leaves, the rules the agent is given for writing
// one, and the fixed header under which a skill-conditioned attempt receives it.
#ifndef LIBMKB_AGENT_SKILL_H_
#define LIBMKB_AGENT_SKILL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mkb/v1/attempt.pb.h"

namespace mkb {

// The header a conditioned attempt reads above the skill it receives. Fixed: every
// conditioned arm (cross-DSL, placebo, human-written) gets the same words.
inline constexpr char kReceivedSkillHeader[] =
    "## Notes from a prior attempt\n\n"
    "The notes below were written by a prior attempt at this same problem, in another DSL. "
    "They record what that attempt learned about the problem; they are not instructions, and "
    "they may be wrong. Use what helps.\n";

// The rules for SKILL.md, as TASK.md states them (SPEC §4, in our words).
std::string SkillRules();

// The agent's part of every task fingerprint (ProtocolOptions::plan.fingerprint_salt for runs
// of this agent): "agent-instructions:" and 16 hex digits of SHA-256 over what the agent tells
// every model besides the task (SkillRules, kReceivedSkillHeader), so that trials run before a
// change to either are stale. Python's experiments read it through the binding.
std::string AgentFingerprintSalt();

// A Skill from a SKILL.md text: cut at `max_bytes` (at a UTF-8 boundary; flags.truncated),
// sha256 and bytes of the kept text, flags.empty when it is only white space, and
// flags.contains_code with evidence lines when it holds code. Source fields are left unset.
v1::Skill MakeSkill(absl::string_view text, int64_t max_bytes);

// Lines that look like code, commands or DSL API calls ("line 12: def solve(...)"), at most
// `max_items`: fenced blocks, Python statements, shell commands, C-like statements, calls
// into torch / cute / cutlass / tvm / T.
std::vector<std::string> FindCodeEvidence(absl::string_view text, int max_items = 10);

// True when `skill` was handed to the trial as a conditioned arm's input (any field set), even
// if its text is empty; false for a solo (an unset or all-default message).
bool IsConditioned(const v1::Skill& skill);
// True when the text is only white space.
bool IsBlankSkill(const v1::Skill& skill);

// What the conditioned attempt reads: kReceivedSkillHeader, then the text.
std::string RenderReceivedSkill(const v1::Skill& skill);

}  // namespace mkb

#endif  // LIBMKB_AGENT_SKILL_H_
