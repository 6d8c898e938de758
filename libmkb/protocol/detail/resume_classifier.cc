#include "libmkb/protocol/detail/resume_classifier.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/protocol/skill_handoff.h"

namespace mkb::detail {
namespace {

class Classifier {
 public:
  Classifier(const ExperimentPlan& plan, const ResultStore* store,
             const std::map<std::string, TrialRecord>& records)
      : plan_(plan), store_(store), records_(records) {
    for (size_t i = 0; i < plan.trials.size(); ++i) index_[plan.trials[i].spec.trial_id()] = i;
    entries_.resize(plan.trials.size());
    done_.assign(plan.trials.size(), false);
  }

  absl::StatusOr<std::vector<PlanEntry>> Classify(bool rerun_stale) {
    rerun_stale_ = rerun_stale;
    for (size_t i = 0; i < plan_.trials.size(); ++i) MKB_RETURN_IF_ERROR(Visit(i));
    return std::move(entries_);
  }

 private:
  absl::Status Visit(size_t i) {
    if (done_[i]) return absl::OkStatus();
    done_[i] = true;  // cycles are rejected by BuildPlan
    const PlannedTrial& trial = plan_.trials[i];
    PlanEntry& entry = entries_[i];
    entry.trial = trial;
    if (!trial.source_trial_id.empty()) {
      entry.depends_on = trial.source_trial_id;
    } else if (!trial.source_model.empty()) {
      entry.depends_on = absl::StrCat(trial.source_model, ":", trial.source_arm);
    }
    auto it = records_.find(trial.spec.trial_id());
    if (it == records_.end()) {
      entry.action = PlanAction::kRun;
      return MaybeBlocked(entry);
    }
    const TrialRecord& record = it->second;
    entry.stored_state = record.state;
    entry.stored_try = record.try_number;
    switch (record.state) {
      case v1::ATTEMPT_RUNNING:
        entry.action = PlanAction::kRerunInterrupted;
        entry.reason = absl::StrCat("try ", record.try_number, " was interrupted");
        return MaybeBlocked(entry);
      case v1::ATTEMPT_FAILED:
        entry.action = PlanAction::kRerunFailed;
        entry.reason = record.error;
        return MaybeBlocked(entry);
      case v1::ATTEMPT_FINISHED:
      case v1::ATTEMPT_SKIPPED:
        break;
      default:
        entry.action = PlanAction::kRun;
        return MaybeBlocked(entry);
    }
    if (record.task_fingerprint != trial.spec.task_fingerprint()) {
      return Stale(entry,
                   "task fingerprint changed (the problem, toolchain, budget, workload, "
                   "device, model or agent's instructions)");
    }
    if (trial.skill_kind == v1::SkillSource::NONE) {
      entry.action = PlanAction::kReuse;
      return absl::OkStatus();
    }
    std::string digest;
    if (trial.fixed_skill.has_value()) {
      digest = trial.fixed_skill->sha256();
    } else if (!trial.source_trial_id.empty()) {
      const size_t source = index_.at(trial.source_trial_id);
      MKB_RETURN_IF_ERROR(Visit(source));
      const PlanEntry& source_entry = entries_[source];
      if (source_entry.action != PlanAction::kReuse) {
        entry.action = PlanAction::kCheckSkill;
        entry.reason = absl::StrCat("its source ", trial.source_trial_id, " runs again");
        return absl::OkStatus();
      }
      digest = SkillFromAttempt(*records_.at(trial.source_trial_id).attempt).sha256();
    } else {
      MKB_ASSIGN_OR_RETURN(std::optional<TrialRecord> source, ExternalSource(trial));
      if (!source.has_value() || !source->attempt.has_value()) {
        entry.action = PlanAction::kReuse;  // its source left the store: nothing to compare with
        return absl::OkStatus();
      }
      digest = SkillFromAttempt(*source->attempt).sha256();
    }
    if (digest != record.skill_digest) {
      return Stale(entry, "skill digest changed (its source left another skill)");
    }
    entry.action = PlanAction::kReuse;
    return absl::OkStatus();
  }

  absl::Status Stale(PlanEntry& entry, const std::string& reason) {
    entry.action = rerun_stale_ ? PlanAction::kRerunStale : PlanAction::kStale;
    entry.reason = reason;
    return absl::OkStatus();
  }

  // Another model's source must be in the store before the trial can start.
  absl::Status MaybeBlocked(PlanEntry& entry) {
    if (entry.trial.source_model.empty()) return absl::OkStatus();
    MKB_ASSIGN_OR_RETURN(std::optional<TrialRecord> source, ExternalSource(entry.trial));
    if (!source.has_value()) {
      entry.action = PlanAction::kBlocked;
      entry.reason = absl::StrCat("no resolved trial of model '", entry.trial.source_model,
                                  "', arm '", entry.trial.source_arm,
                                  "' at this problem and "
                                  "replicate in the store: run that model's experiment first");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<TrialRecord>> ExternalSource(const PlannedTrial& trial) {
    if (store_ == nullptr) return std::optional<TrialRecord>();
    return store_->FindResolvedTrial(trial.source_model, trial.source_arm,
                                     trial.spec.problem_slug(), trial.spec.replicate());
  }

  const ExperimentPlan& plan_;
  const ResultStore* store_;
  const std::map<std::string, TrialRecord>& records_;
  std::map<std::string, size_t> index_;
  std::vector<PlanEntry> entries_;
  std::vector<bool> done_;
  bool rerun_stale_ = false;
};

}  // namespace

absl::StatusOr<std::vector<PlanEntry>> ClassifyTrials(
    const ExperimentPlan& plan, const ResultStore* store,
    const std::map<std::string, TrialRecord>& records, bool rerun_stale) {
  Classifier classifier(plan, store, records);
  return classifier.Classify(rerun_stale);
}

absl::StatusOr<std::map<std::string, TrialRecord>> StoredTrials(const ResultStore* store,
                                                                const std::string& experiment) {
  std::map<std::string, TrialRecord> records;
  if (store == nullptr) return records;
  MKB_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, store->ListTrials(experiment));
  for (TrialRecord& record : trials) {
    const std::string id = record.trial_id;
    if (record.state == v1::ATTEMPT_RETIRED) {
      // Planned again, it gets back the try it was retired with, if that one had ended
      // (ResultStore::PlanTrials): classified as that try.
      MKB_ASSIGN_OR_RETURN(std::optional<ArchivedTry> restorable, store->RestorableTry(id));
      if (restorable.has_value()) {
        record.state = restorable->state;
        record.try_number = restorable->try_number;
        record.task_fingerprint = restorable->task_fingerprint;
        record.skill_digest = restorable->skill_digest;
        record.attempt = restorable->attempt;
        record.error = restorable->error;
      }
    }
    records.emplace(id, std::move(record));
  }
  return records;
}

absl::Status StaleRefusal(const ResultStore& store, const std::vector<PlanEntry>& entries) {
  // Stale trials by reason, in plan order.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  size_t total = 0;
  for (const PlanEntry& entry : entries) {
    if (entry.action != PlanAction::kStale) continue;
    ++total;
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& group) { return group.first == entry.reason; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {entry.reason, {}});
    it->second.push_back(entry.trial.spec.trial_id());
  }
  if (total == 0) return absl::OkStatus();
  std::vector<std::string> groups;
  for (const auto& [reason, ids] : by_reason) {
    const size_t shown = std::min<size_t>(ids.size(), 3);
    groups.push_back(
        absl::StrCat(reason, ": ", absl::StrJoin(ids.begin(), ids.begin() + shown, ", "),
                     ids.size() > shown ? absl::StrCat(" and ", ids.size() - shown, " more") : ""));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      store.path(), ": ", total, " resolved trial", total == 1 ? " is" : "s are", " stale. ",
      absl::StrJoin(groups, ". "),
      ". Nothing was run. Rerun them with --rerun-stale (rerun_stale=True), or use another "
      "experiment name"));
}

}  // namespace mkb::detail
