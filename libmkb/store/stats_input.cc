#include "libmkb/store/stats_input.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/names.h"
#include "libmkb/store/detail/usage_sum.h"

namespace mkb {
namespace {

using TrialKey = std::tuple<std::string, std::string, int>;  // arm, problem, replicate

const v1::ArmSpec* FindArm(const v1::ExperimentSpec& spec, const std::string& name) {
  for (const v1::ArmSpec& arm : spec.arms()) {
    if (arm.name() == name) return &arm;
  }
  return nullptr;
}

// The ArmResult of a trial (nullptr: not in the store). `usage`: its tries' usage, or nullptr.
v1::ArmResult ArmResultOf(const std::string& arm_name, const TrialRecord* trial,
                          const TrialUsage* usage) {
  v1::ArmResult result;
  result.set_arm(arm_name);
  if (trial == nullptr) return result;
  result.set_state(trial->state);
  if (usage != nullptr) {
    *result.mutable_interrupted_usage() = usage->interrupted;
    result.set_interrupted_tries(usage->interrupted_tries);
  }
  if (!trial->resolved()) {
    // A failed or interrupted current try spent what it reported: counted as interrupted.
    const bool ended_without_result =
        trial->state == v1::ATTEMPT_FAILED || trial->state == v1::ATTEMPT_RUNNING;
    if (ended_without_result && usage != nullptr && usage->current.has_value()) {
      store_detail::AddUsage(*usage->current, result.mutable_interrupted_usage());
      result.set_interrupted_tries(result.interrupted_tries() + 1);
    }
    return result;
  }
  result.set_resolved(true);
  result.set_skipped(trial->state == v1::ATTEMPT_SKIPPED);
  if (trial->attempt.has_value()) {
    const v1::Verdict& final = trial->attempt->final();
    result.set_passed(final.passed());
    if (final.has_speedup_vs_eager()) result.set_speedup(final.speedup_vs_eager());
    *result.mutable_usage() = trial->attempt->usage();
    if (final.passed()) {
      for (double x : final.kernel_parity().samples_ms()) result.add_kernel_samples_ms(x);
      for (double x : final.eager_parity().samples_ms()) result.add_eager_samples_ms(x);
    }
  }
  return result;
}

// The standard direction of a conditioned arm ("cutedsl2tirx"), or "" when the arm is not one
// of the standard cross-DSL arms.
std::string StandardDirection(const v1::ExperimentSpec& spec, const v1::ArmSpec& arm) {
  if (arm.skill().kind() != v1::SkillSource::ARM || !arm.skill().model().empty()) return "";
  const v1::ArmSpec* source = FindArm(spec, arm.skill().arm());
  if (source == nullptr || source->dsl() == arm.dsl()) return "";
  const std::string from = DslName(source->dsl());
  const std::string to = DslName(arm.dsl());
  if (arm.name() != absl::StrCat(from, "2", to, "_skill") ||
      source->name() != absl::StrCat("solo_", from) ||
      arm.base_arm() != absl::StrCat("solo_", to)) {
    return "";
  }
  return absl::StrCat(from, "2", to);
}

}  // namespace

absl::StatusOr<std::vector<v1::CellReplicate>> CellReplicatesFromStore(
    const ResultStore& store, const std::string& experiment) {
  MKB_ASSIGN_OR_RETURN(v1::ExperimentSpec spec, store.GetExperiment(experiment));
  MKB_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, store.ListPlannedTrials(experiment));
  using UsageByTrial = std::map<std::string, TrialUsage>;
  MKB_ASSIGN_OR_RETURN(const UsageByTrial usage, store.UsageOfTrials(experiment));
  std::map<TrialKey, const TrialRecord*> by_key;
  std::map<std::string, v1::Family> family_of;
  std::set<std::pair<std::string, int>> problem_replicates;  // ordered: problem, replicate
  for (const TrialRecord& trial : trials) {
    by_key[{trial.arm, trial.problem_slug, trial.replicate}] = &trial;
    family_of[trial.problem_slug] = trial.spec.family();
    problem_replicates.insert({trial.problem_slug, trial.replicate});
  }
  auto find = [&](const std::string& arm, const std::string& problem, int replicate) {
    auto it = by_key.find({arm, problem, replicate});
    return it == by_key.end() ? nullptr : it->second;
  };
  auto result = [&](const std::string& name, const TrialRecord* trial) {
    const TrialUsage* of = nullptr;
    if (trial != nullptr) {
      auto it = usage.find(trial->trial_id);
      if (it != usage.end()) of = &it->second;
    }
    return ArmResultOf(name, trial, of);
  };

  std::vector<v1::CellReplicate> cells;
  for (const v1::ArmSpec& arm : spec.arms()) {
    if (arm.skill().kind() == v1::SkillSource::NONE || arm.base_arm().empty()) continue;
    const std::string standard = StandardDirection(spec, arm);
    const std::string direction = standard.empty() ? arm.name() : standard;
    const v1::ArmSpec* control = nullptr;
    for (const v1::ArmSpec& candidate : spec.arms()) {
      if (candidate.skill().kind() == v1::SkillSource::NONE &&
          candidate.base_arm() == arm.base_arm() && candidate.name() != arm.base_arm()) {
        control = &candidate;
        break;
      }
    }
    for (const auto& [problem, replicate] : problem_replicates) {
      const TrialRecord* skill = find(arm.name(), problem, replicate);
      const TrialRecord* base = find(arm.base_arm(), problem, replicate);
      if (skill == nullptr && base == nullptr) continue;
      v1::CellReplicate& cell = cells.emplace_back();
      cell.set_model(spec.model());
      cell.set_direction(direction);
      cell.set_problem_slug(problem);
      cell.set_family(family_of[problem]);
      cell.set_replicate(replicate);
      *cell.mutable_skill() = result(arm.name(), skill);
      *cell.mutable_base() = result(arm.base_arm(), base);
      if (arm.skill().kind() == v1::SkillSource::ARM) {
        if (arm.skill().model().empty() || arm.skill().model() == spec.model()) {
          *cell.mutable_source() =
              result(arm.skill().arm(), find(arm.skill().arm(), problem, replicate));
        } else {
          MKB_ASSIGN_OR_RETURN(
              std::optional<TrialRecord> source,
              store.FindResolvedTrial(arm.skill().model(), arm.skill().arm(), problem, replicate));
          // Another experiment's trial: its state and final result, not its tries' usage
          // (counted in its own experiment).
          *cell.mutable_source() =
              ArmResultOf(absl::StrCat(arm.skill().model(), ":", arm.skill().arm()),
                          source.has_value() ? &*source : nullptr, nullptr);
        }
      }
      if (control != nullptr) {
        *cell.mutable_control() =
            result(control->name(), find(control->name(), problem, replicate));
      }
    }
  }
  return cells;
}

Table CellReplicateTable(const std::vector<v1::CellReplicate>& cells) {
  Table table;
  table.name = "cells";
  table.columns = {"model", "direction", "problem_slug", "family", "replicate"};
  const char* roles[] = {"source", "base", "skill", "control"};
  const char* fields[] = {"arm",
                          "resolved",
                          "passed",
                          "speedup",
                          "skipped",
                          "state",
                          "input_tokens",
                          "cached_input_tokens",
                          "output_tokens",
                          "cost_usd",
                          "agent_seconds",
                          "interrupted_tries",
                          "interrupted_input_tokens",
                          "interrupted_cached_input_tokens",
                          "interrupted_output_tokens",
                          "interrupted_cost_usd",
                          "interrupted_agent_seconds"};
  for (const char* role : roles) {
    for (const char* field : fields) table.columns.push_back(absl::StrCat(role, "_", field));
  }
  for (const v1::CellReplicate& cell : cells) {
    std::vector<Table::Cell>& row = table.rows.emplace_back();
    row.push_back(cell.model());
    row.push_back(cell.direction());
    row.push_back(cell.problem_slug());
    row.push_back(FamilyName(cell.family()));
    row.push_back(int64_t{cell.replicate()});
    const v1::ArmResult* arms[] = {cell.has_source() ? &cell.source() : nullptr, &cell.base(),
                                   &cell.skill(), cell.has_control() ? &cell.control() : nullptr};
    for (const v1::ArmResult* arm : arms) {
      if (arm == nullptr) {
        row.resize(row.size() + std::size(fields));  // NULLs: the role is absent
        continue;
      }
      row.push_back(arm->arm());
      row.push_back(arm->resolved());
      row.push_back(arm->passed());
      if (arm->has_speedup() && std::isfinite(arm->speedup())) {
        row.push_back(arm->speedup());
      } else {
        row.emplace_back();
      }
      row.push_back(arm->skipped());
      if (arm->state() == v1::ATTEMPT_STATE_UNSPECIFIED) {
        row.emplace_back();
      } else {
        row.push_back(AttemptStateName(arm->state()));
      }
      // (Unset sub-messages are the same default instance: tell them apart by position.)
      for (int part = 0; part < 2; ++part) {
        const v1::Usage* usage = part == 0 ? &arm->usage() : &arm->interrupted_usage();
        if (part == 1) row.push_back(int64_t{arm->interrupted_tries()});
        row.push_back(usage->input_tokens());
        row.push_back(usage->cached_input_tokens());
        row.push_back(usage->output_tokens());
        row.push_back(usage->cost_usd());
        row.push_back(usage->agent_seconds());
      }
    }
  }
  return table;
}

}  // namespace mkb
