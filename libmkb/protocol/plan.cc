#include "libmkb/protocol/plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libmkb/core/sha256.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/model/validation.h"
#include "libmkb/protocol/skill_handoff.h"

namespace mkb {
namespace {

bool IsGlob(const std::string& entry) { return entry.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::string TrialId(const std::string& experiment, const std::string& problem_slug,
                    const std::string& arm, int replicate) {
  return absl::StrCat(experiment, "/", problem_slug, "/", arm, "/r", replicate);
}

absl::StatusOr<std::vector<v1::Problem>> SelectProblems(const Suite& suite,
                                                        const std::vector<std::string>& entries) {
  std::set<int> numbers;
  if (entries.empty()) {
    for (const v1::Problem& problem : suite.problems()) numbers.insert(problem.number());
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string entry(absl::StripAsciiWhitespace(entries[i]));
    if (IsGlob(entry)) {
      const std::vector<const v1::Problem*> matches = suite.Matching(entry);
      if (matches.empty()) {
        return absl::NotFoundError(
            absl::StrCat("problems[", i, "]: '", entry, "' matches no problem of ", suite.root()));
      }
      for (const v1::Problem* problem : matches) numbers.insert(problem->number());
      continue;
    }
    absl::StatusOr<const v1::Problem*> problem = suite.Find(entry);
    if (!problem.ok()) {
      return absl::Status(problem.status().code(),
                          absl::StrCat("problems[", i, "]: ", problem.status().message()));
    }
    numbers.insert((*problem)->number());
  }
  std::vector<v1::Problem> out;
  for (const v1::Problem& problem : suite.problems()) {
    if (numbers.count(problem.number())) out.push_back(problem);
  }
  return out;
}

std::string TaskFingerprint(const v1::Problem& problem, const v1::ExperimentSpec& spec,
                            const v1::ArmSpec& arm, const std::string& salt) {
  Sha256 hash;
  auto field = [&hash](absl::string_view name, absl::string_view value) {
    hash.Update(name);
    hash.Update("=");
    hash.Update(absl::StrCat(value.size()));  // length-prefixed: fields cannot run together
    hash.Update(":");
    hash.Update(value);
    hash.Update("\n");
  };
  field("format", "mkb-task-v1");
  field("problem", problem.fingerprint());
  field("dsl", DslName(arm.dsl()));
  for (const v1::PackagePin& pin : DefaultToolchain(arm.dsl())) {
    field("toolchain", absl::StrCat(pin.name(), "==", pin.version()));
  }
  field("budget", WithDefaults(spec.budget()).SerializeAsString());
  field("workload", spec.workload());
  field("device", DeviceKindName(spec.device()));
  field("model", spec.model());
  field("salt", salt);
  return hash.HexDigest();
}

absl::StatusOr<ExperimentPlan> BuildPlan(const v1::ExperimentSpec& spec, const Suite& suite,
                                         const PlanOptions& options) {
  ExperimentPlan plan;
  plan.spec = WithDefaults(spec);
  if (absl::Status status = ValidateExperimentSpec(plan.spec); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("experiment.", status.message()));
  }
  const std::vector<std::string> entries(spec.problems().begin(), spec.problems().end());
  MKB_ASSIGN_OR_RETURN(plan.problems, SelectProblems(suite, entries));
  plan.spec.clear_problems();
  for (const v1::Problem& problem : plan.problems) plan.spec.add_problems(problem.slug());
  for (const v1::Problem& problem : plan.problems) {
    bool has_workload = false;
    for (const v1::Workload& workload : problem.workloads()) {
      has_workload |= workload.name() == plan.spec.workload();
    }
    if (!has_workload) {
      return absl::InvalidArgumentError(absl::StrCat("experiment.workload: problem ",
                                                     problem.slug(), " has no workload '",
                                                     plan.spec.workload(), "'"));
    }
  }

  // Order key: solos before conditioned arms, then replicate, problem number, arm position.
  using Key = std::tuple<bool, int, int, int>;
  std::vector<std::pair<Key, PlannedTrial>> keyed;
  const v1::ExperimentSpec& s = plan.spec;
  for (int replicate = 0; replicate < s.replicates(); ++replicate) {
    for (const v1::Problem& problem : plan.problems) {
      for (int a = 0; a < s.arms_size(); ++a) {
        const v1::ArmSpec& arm = s.arms(a);
        PlannedTrial trial;
        v1::TrialSpec& t = trial.spec;
        t.set_experiment(s.name());
        t.set_trial_id(TrialId(s.name(), problem.slug(), arm.name(), replicate));
        t.set_problem_slug(problem.slug());
        t.set_problem_number(problem.number());
        t.set_family(problem.family());
        t.set_arm(arm.name());
        t.set_dsl(arm.dsl());
        t.set_model(s.model());
        t.set_replicate(replicate);
        *t.mutable_budget() = s.budget();
        t.set_workload(s.workload());
        t.set_device(s.device());
        t.set_task_fingerprint(TaskFingerprint(problem, s, arm, options.fingerprint_salt));
        trial.skill_kind = arm.skill().kind();
        switch (arm.skill().kind()) {
          case v1::SkillSource::ARM:
            if (arm.skill().model().empty() || arm.skill().model() == s.model()) {
              trial.source_trial_id =
                  TrialId(s.name(), problem.slug(), arm.skill().arm(), replicate);
            } else {
              trial.source_model = arm.skill().model();
              trial.source_arm = arm.skill().arm();
            }
            break;
          case v1::SkillSource::FIXED_TEXT:
            trial.fixed_skill = SkillFromFixedText(arm.skill());
            break;
          default:
            break;
        }
        const bool conditioned = arm.skill().kind() != v1::SkillSource::NONE;
        keyed.push_back({Key{conditioned, replicate, problem.number(), a}, std::move(trial)});
      }
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, trial] : keyed) plan.trials.push_back(std::move(trial));

  // A same-model source must itself be a trial of the plan, started earlier; a chain of skill
  // arms (a skill arm whose source is a skill arm) is fine as long as it has no cycle.
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < plan.trials.size(); ++i) position[plan.trials[i].spec.trial_id()] = i;
  for (const PlannedTrial& trial : plan.trials) {
    std::string at = trial.spec.trial_id();
    std::set<std::string> seen{at};
    for (const PlannedTrial* t = &trial; !t->source_trial_id.empty();) {
      auto it = position.find(t->source_trial_id);
      if (it == position.end()) break;  // validated above: the arm exists
      t = &plan.trials[it->second];
      if (!seen.insert(t->spec.trial_id()).second) {
        return absl::InvalidArgumentError(absl::StrCat("experiment.arms: arm '", trial.spec.arm(),
                                                       "' takes its skill, through a cycle of "
                                                       "skill sources, from itself"));
      }
    }
  }
  return plan;
}

}  // namespace mkb
