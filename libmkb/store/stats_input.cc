#include "libmkb/store/stats_input.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

using TrialKey = std::tuple<std::string, std::string, int>;  // arm, problem, replicate

const v1::ArmSpec* FindArm(const v1::ExperimentSpec& spec, const std::string& name) {
  for (const v1::ArmSpec& arm : spec.arms()) {
    if (arm.name() == name) return &arm;
  }
  return nullptr;
}

v1::ArmResult ArmResultOf(const std::string& arm_name, const TrialRecord* trial) {
  v1::ArmResult result;
  result.set_arm(arm_name);
  if (trial == nullptr || !trial->resolved()) return result;
  result.set_resolved(true);
  result.set_skipped(trial->state == v1::ATTEMPT_SKIPPED);
  if (trial->attempt.has_value()) {
    const v1::Verdict& final = trial->attempt->final();
    result.set_passed(final.passed());
    if (final.has_speedup_vs_eager()) result.set_speedup(final.speedup_vs_eager());
    *result.mutable_usage() = trial->attempt->usage();
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
  MKB_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, store.ListTrials(experiment));
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
      *cell.mutable_skill() = ArmResultOf(arm.name(), skill);
      *cell.mutable_base() = ArmResultOf(arm.base_arm(), base);
      if (arm.skill().kind() == v1::SkillSource::ARM) {
        if (arm.skill().model().empty() || arm.skill().model() == spec.model()) {
          *cell.mutable_source() =
              ArmResultOf(arm.skill().arm(), find(arm.skill().arm(), problem, replicate));
        } else {
          MKB_ASSIGN_OR_RETURN(
              std::optional<TrialRecord> source,
              store.FindResolvedTrial(arm.skill().model(), arm.skill().arm(), problem, replicate));
          *cell.mutable_source() =
              ArmResultOf(absl::StrCat(arm.skill().model(), ":", arm.skill().arm()),
                          source.has_value() ? &*source : nullptr);
        }
      }
      if (control != nullptr) {
        *cell.mutable_control() =
            ArmResultOf(control->name(), find(control->name(), problem, replicate));
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
                          "input_tokens",
                          "cached_input_tokens",
                          "output_tokens",
                          "cost_usd",
                          "agent_seconds"};
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
      row.push_back(arm->usage().input_tokens());
      row.push_back(arm->usage().cached_input_tokens());
      row.push_back(arm->usage().output_tokens());
      row.push_back(arm->usage().cost_usd());
      row.push_back(arm->usage().agent_seconds());
    }
  }
  return table;
}

}  // namespace mkb
