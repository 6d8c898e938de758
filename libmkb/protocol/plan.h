// The plan of an experiment (SPEC §5): its trials — problems × arms × replicates — with their
// dependencies and the order in which they are started.
#ifndef LIBMKB_PROTOCOL_PLAN_H_
#define LIBMKB_PROTOCOL_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/suite/suite.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

// One planned trial. Its spec has try_number 0 and no skill_in: both are set when it starts.
struct PlannedTrial {
  v1::TrialSpec spec;
  // The arm's skill source.
  v1::SkillSource::Kind skill_kind = v1::SkillSource::NONE;
  // ARM, same model: the trial of this experiment whose skill_out this trial receives. It must
  // be resolved before this trial starts; this is the trial's only dependency.
  std::string source_trial_id;
  // ARM, another model (SkillSource.model): the source is looked up in the store, among that
  // model's resolved trials of `source_arm` at the same problem and replicate.
  std::string source_model;
  std::string source_arm;
  // FIXED_TEXT: the skill handed over.
  std::optional<v1::Skill> fixed_skill;
};

struct ExperimentPlan {
  v1::ExperimentSpec spec;            // defaults filled in, problems resolved to slugs
  std::vector<v1::Problem> problems;  // in number order
  // In start order: solos (no skill source) first, then conditioned arms; within each, by
  // replicate, problem number and arm order. A conditioned trial starts as soon as its own
  // source is resolved, not after every solo.
  std::vector<PlannedTrial> trials;
};

struct PlanOptions {
  // Mixed into every task fingerprint: e.g. the agent's version, so that a change to its
  // prompts makes earlier trials stale.
  std::string fingerprint_salt;
};

// "<experiment>/<problem>/<arm>/r<replicate>".
std::string TrialId(const std::string& experiment, const std::string& problem_slug,
                    const std::string& arm, int replicate);

// The problems that entries of ExperimentSpec.problems select: each a slug, a number ("28")
// or a shell glob over slugs ("*rmsnorm*"); empty: every problem. NotFoundError naming the
// entry that matches nothing.
absl::StatusOr<std::vector<v1::Problem>> SelectProblems(const Suite& suite,
                                                        const std::vector<std::string>& entries);

// What a trial's result depends on besides its skill: the problem (its fingerprint), the DSL
// and its pinned toolchain, the budget, the workload, the device, the model and the salt.
// A finished trial whose fingerprint differs from the plan's is stale.
std::string TaskFingerprint(const v1::Problem& problem, const v1::ExperimentSpec& spec,
                            const v1::ArmSpec& arm, const std::string& salt);

// The plan of `spec` (validated, defaults filled in) on `suite`.
absl::StatusOr<ExperimentPlan> BuildPlan(const v1::ExperimentSpec& spec, const Suite& suite,
                                         const PlanOptions& options = {});

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_PLAN_H_
