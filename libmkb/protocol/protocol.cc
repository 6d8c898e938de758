#include "libmkb/protocol/protocol.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libmkb/core/clock.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/defaults.h"
#include "libmkb/protocol/detail/resume_classifier.h"
#include "libmkb/protocol/skill_handoff.h"
#include "libmkb/protocol/thread_pool_scheduler.h"

namespace mkb {

const char* PlanActionName(PlanAction action) {
  switch (action) {
    case PlanAction::kRun:
      return "run";
    case PlanAction::kReuse:
      return "reuse";
    case PlanAction::kRerunFailed:
      return "rerun_failed";
    case PlanAction::kRerunInterrupted:
      return "rerun_interrupted";
    case PlanAction::kStale:
      return "stale";
    case PlanAction::kRerunStale:
      return "rerun_stale";
    case PlanAction::kCheckSkill:
      return "check_skill";
    case PlanAction::kBlocked:
      return "blocked";
  }
  return "run";
}

const char* TrialEventKindName(TrialEventKind kind) {
  switch (kind) {
    case TrialEventKind::kReused:
      return "reused";
    case TrialEventKind::kStarted:
      return "started";
    case TrialEventKind::kSubmission:
      return "submission";
    case TrialEventKind::kUsage:
      return "usage";
    case TrialEventKind::kFinished:
      return "finished";
    case TrialEventKind::kSkipped:
      return "skipped";
    case TrialEventKind::kRetry:
      return "retry";
    case TrialEventKind::kFailed:
      return "failed";
    case TrialEventKind::kBlocked:
      return "blocked";
  }
  return "";
}

int ExperimentStatus::Count(PlanAction action) const {
  return static_cast<int>(std::count_if(
      entries.begin(), entries.end(), [action](const PlanEntry& e) { return e.action == action; }));
}

namespace {

bool Passed(const v1::Attempt& attempt) {
  return attempt.state() != v1::ATTEMPT_FAILED && attempt.final().passed();
}

int CountedSubmissions(const v1::Attempt& attempt) {
  int counted = 0;
  for (const v1::Submission& s : attempt.submissions()) counted += s.counted() ? 1 : 0;
  return counted;
}

// ---------------------------------------------------------------------------------------------
// The run.

class ExperimentRun {
 public:
  ExperimentRun(ExperimentStatus status, ResultStore& store, TrialScheduler& scheduler,
                const ProtocolOptions& options)
      : plan_(std::move(status.plan)),
        entries_(std::move(status.entries)),
        store_(store),
        scheduler_(scheduler),
        options_(options) {}

  absl::StatusOr<RunSummary> Run();

 private:
  enum class Phase { kWaiting, kReady, kRunning, kResolved, kFailed, kBlocked, kDeferred };

  class LiveObserver;

  struct Trial {
    const PlanEntry* entry = nullptr;
    Phase phase = Phase::kWaiting;
    int stored_try = 0;  // the store's current try number
    int tries_this_run = 0;
    absl::Time not_before = absl::InfinitePast();
    std::optional<v1::Attempt> attempt;  // once resolved: the source of dependents' skills
    std::string stored_skill_digest;     // kDeferred: what it received when it ran
    std::vector<size_t> dependents;
    v1::TrialSpec running;  // the spec of the try in flight
    std::unique_ptr<LiveObserver> observer;
    // Live values of the try in flight (guarded by mutex_).
    int live_submissions = 0;
    v1::Usage live_usage;
  };

  struct Completion {
    size_t index;
    absl::StatusOr<v1::Attempt> result;
  };

  absl::Status Prepare();
  absl::Status LaunchReady();
  absl::Status Launch(size_t index);
  absl::Status Complete(size_t index, absl::StatusOr<v1::Attempt> result);
  absl::Status Resolve(size_t index, const v1::Attempt& attempt);
  absl::Status ReleaseDependents(size_t index);
  // A deferred trial kept as the store holds it (counted as reused); releases its dependents.
  absl::Status KeepStored(size_t index);
  absl::Status Block(size_t index, const std::string& why);
  absl::StatusOr<v1::Skill> SkillFor(size_t index);
  v1::Attempt Normalized(const v1::TrialSpec& spec, v1::Attempt attempt) const;
  void Emit(TrialEventKind kind, const v1::TrialSpec& spec, const v1::Attempt* attempt,
            std::string message = "");
  // Calls the listener, one event at a time, holding listener_mutex_ but not mutex_ (a
  // Python listener takes the GIL, which an executor's thread may hold while it reports).
  void Deliver(const TrialEvent& event);
  void OnLiveSubmission(size_t index, const v1::Submission& submission);
  void OnLiveUsage(size_t index, const v1::Usage& usage);
  void Warn(const absl::Status& status);
  bool Cancelled() const { return options_.cancelled && options_.cancelled(); }

  ExperimentPlan plan_;
  std::vector<PlanEntry> entries_;
  ResultStore& store_;
  TrialScheduler& scheduler_;
  const ProtocolOptions& options_;
  std::vector<Trial> trials_;
  std::map<std::string, size_t> index_;
  RunSummary summary_;
  int running_ = 0;  // coordinator's count of trials started and not completed

  // Guards the completions, the progress and the live values.
  absl::Mutex mutex_;
  absl::Mutex listener_mutex_;
  std::deque<Completion> completions_ ABSL_GUARDED_BY(mutex_);
};

// Stores a running try's live reports and feeds them to the progress.
class ExperimentRun::LiveObserver : public TrialObserver {
 public:
  LiveObserver(ExperimentRun* run, size_t index, std::string trial_id, int try_number)
      : run_(run), index_(index), trial_id_(std::move(trial_id)), try_number_(try_number) {}

  void OnTrajectoryEvent(const v1::TrajectoryEvent& event) override {
    run_->Warn(run_->store_.RecordLiveTrajectoryEvent(trial_id_, try_number_, event));
  }
  void OnSubmission(const v1::Submission& submission) override {
    run_->Warn(run_->store_.RecordLiveSubmission(trial_id_, try_number_, submission));
    run_->OnLiveSubmission(index_, submission);
  }
  void OnUsage(const v1::Usage& usage) override {
    run_->Warn(run_->store_.RecordLiveUsage(trial_id_, try_number_, usage));
    run_->OnLiveUsage(index_, usage);
  }

 private:
  ExperimentRun* run_;
  size_t index_;
  std::string trial_id_;
  int try_number_;
};

void ExperimentRun::Warn(const absl::Status& status) {
  if (status.ok()) return;
  absl::MutexLock lock(&mutex_);
  if (summary_.warnings.size() < 20) {
    summary_.warnings.push_back(absl::StrCat("a live report was not stored: ", status.message()));
  }
}

void ExperimentRun::Emit(TrialEventKind kind, const v1::TrialSpec& spec, const v1::Attempt* attempt,
                         std::string message) {
  if (options_.listener == nullptr) return;
  TrialEvent event;
  event.kind = kind;
  event.spec = &spec;
  event.attempt = attempt;
  event.message = std::move(message);
  {
    absl::MutexLock lock(&mutex_);
    event.progress = summary_.progress;
  }
  Deliver(event);
}

void ExperimentRun::Deliver(const TrialEvent& event) {
  absl::MutexLock lock(&listener_mutex_);
  options_.listener->OnTrialEvent(event);
}

void ExperimentRun::OnLiveSubmission(size_t index, const v1::Submission& submission) {
  Trial& trial = trials_[index];
  TrialEvent event;
  event.kind = TrialEventKind::kSubmission;
  event.spec = &trial.running;  // not changed while the trial runs
  event.submission = &submission;
  {
    absl::MutexLock lock(&mutex_);
    if (submission.counted()) {
      ++trial.live_submissions;
      ++summary_.progress.submissions;
    }
    event.progress = summary_.progress;
  }
  if (options_.listener != nullptr) Deliver(event);
}

void ExperimentRun::OnLiveUsage(size_t index, const v1::Usage& usage) {
  Trial& trial = trials_[index];
  TrialEvent event;
  event.kind = TrialEventKind::kUsage;
  event.spec = &trial.running;
  event.usage = &usage;
  {
    absl::MutexLock lock(&mutex_);
    RunProgress& p = summary_.progress;
    p.input_tokens += usage.input_tokens() - trial.live_usage.input_tokens();
    p.output_tokens += usage.output_tokens() - trial.live_usage.output_tokens();
    p.cost_usd += usage.cost_usd() - trial.live_usage.cost_usd();
    trial.live_usage = usage;
    event.progress = p;
  }
  if (options_.listener != nullptr) Deliver(event);
}

absl::Status ExperimentRun::Prepare() {
  trials_.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    trials_[i].entry = &entries_[i];
    trials_[i].stored_try = entries_[i].stored_try;
    index_[entries_[i].trial.spec.trial_id()] = i;
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    const std::string& source = entries_[i].trial.source_trial_id;
    if (!source.empty()) trials_[index_.at(source)].dependents.push_back(i);
  }
  summary_.progress.planned = static_cast<int>(entries_.size());

  // Archive what is rerun, in plan order; each archive is its own transaction.
  for (size_t i = 0; i < entries_.size(); ++i) {
    const PlanEntry& entry = entries_[i];
    const std::string& id = entry.trial.spec.trial_id();
    const char* reason = nullptr;
    switch (entry.action) {
      case PlanAction::kRerunFailed:
        reason = kArchiveFailed;
        break;
      case PlanAction::kRerunInterrupted:
        reason = kArchiveInterrupted;
        break;
      case PlanAction::kRerunStale:
        reason = kArchiveStale;
        break;
      default:
        break;
    }
    if (reason != nullptr) {
      MKB_RETURN_IF_ERROR(
          store_.ArchiveTry(id, entry.stored_try, reason,
                            entry.action == PlanAction::kRerunStale ? entry.reason : ""));
    }
  }
  // Resolved trials first (they release their dependents), then the rest.
  for (size_t i = 0; i < entries_.size(); ++i) {
    Trial& trial = trials_[i];
    const PlanEntry& entry = entries_[i];
    if (entry.action == PlanAction::kReuse || entry.action == PlanAction::kCheckSkill) {
      MKB_ASSIGN_OR_RETURN(TrialRecord record, store_.GetTrial(entry.trial.spec.trial_id()));
      trial.attempt = std::move(record.attempt);
      trial.stored_skill_digest = record.skill_digest;
      if (entry.action == PlanAction::kReuse) {
        trial.phase = Phase::kResolved;
        {
          absl::MutexLock lock(&mutex_);
          ++summary_.progress.reused;
          if (trial.attempt.has_value() && Passed(*trial.attempt)) ++summary_.progress.passed;
        }
        Emit(TrialEventKind::kReused, entry.trial.spec,
             trial.attempt.has_value() ? &*trial.attempt : nullptr);
      } else {
        trial.phase = Phase::kDeferred;
      }
    }
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    Trial& trial = trials_[i];
    const PlanEntry& entry = entries_[i];
    if (trial.phase != Phase::kWaiting) continue;
    if (entry.action == PlanAction::kBlocked) {
      MKB_RETURN_IF_ERROR(Block(i, entry.reason));
      continue;
    }
    if (entry.trial.source_trial_id.empty()) {
      trial.phase = Phase::kReady;
      continue;
    }
    const Trial& source = trials_[index_.at(entry.trial.source_trial_id)];
    if (source.phase == Phase::kResolved) trial.phase = Phase::kReady;
  }
  return absl::OkStatus();
}

absl::Status ExperimentRun::KeepStored(size_t index) {
  Trial& trial = trials_[index];
  trial.phase = Phase::kResolved;
  {
    absl::MutexLock lock(&mutex_);
    ++summary_.progress.reused;
    if (trial.attempt.has_value() && Passed(*trial.attempt)) ++summary_.progress.passed;
  }
  Emit(TrialEventKind::kReused, trial.entry->trial.spec,
       trial.attempt.has_value() ? &*trial.attempt : nullptr);
  return ReleaseDependents(index);
}

absl::Status ExperimentRun::Block(size_t index, const std::string& why) {
  Trial& trial = trials_[index];
  // A deferred trial ran before with the source's earlier skill, which stays in the store.
  if (trial.phase == Phase::kDeferred) return KeepStored(index);
  if (trial.phase != Phase::kWaiting && trial.phase != Phase::kReady) return absl::OkStatus();
  trial.phase = Phase::kBlocked;
  const std::string& id = trial.entry->trial.spec.trial_id();
  MKB_RETURN_IF_ERROR(store_.BlockTrial(id, why));
  {
    absl::MutexLock lock(&mutex_);
    ++summary_.progress.blocked;
    summary_.blocked.push_back(absl::StrCat(id, ": ", why));
  }
  Emit(TrialEventKind::kBlocked, trial.entry->trial.spec, nullptr, why);
  for (size_t dependent : trial.dependents) {
    MKB_RETURN_IF_ERROR(Block(dependent, absl::StrCat("its source ", id, " is blocked")));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Skill> ExperimentRun::SkillFor(size_t index) {
  const PlannedTrial& planned = trials_[index].entry->trial;
  if (planned.fixed_skill.has_value()) return *planned.fixed_skill;
  if (!planned.source_trial_id.empty()) {
    const Trial& source = trials_[index_.at(planned.source_trial_id)];
    if (!source.attempt.has_value()) {
      return absl::InternalError(
          absl::StrCat("source ", planned.source_trial_id, " is resolved without an attempt"));
    }
    return SkillFromAttempt(*source.attempt);
  }
  MKB_ASSIGN_OR_RETURN(
      std::optional<TrialRecord> source,
      store_.FindResolvedTrial(planned.source_model, planned.source_arm,
                               planned.spec.problem_slug(), planned.spec.replicate()));
  if (!source.has_value() || !source->attempt.has_value()) {
    return absl::NotFoundError(absl::StrCat("no resolved trial of model '", planned.source_model,
                                            "', arm '", planned.source_arm, "' in the store"));
  }
  return SkillFromAttempt(*source->attempt);
}

v1::Attempt ExperimentRun::Normalized(const v1::TrialSpec& spec, v1::Attempt attempt) const {
  // The executor may leave identity fields empty; the protocol's spec is authoritative.
  attempt.set_id(spec.trial_id());
  attempt.set_experiment(spec.experiment());
  attempt.set_problem_slug(spec.problem_slug());
  attempt.set_problem_number(spec.problem_number());
  attempt.set_family(spec.family());
  attempt.set_arm(spec.arm());
  attempt.set_dsl(spec.dsl());
  attempt.set_model(spec.model());
  attempt.set_replicate(spec.replicate());
  attempt.set_try_number(spec.try_number());
  if (!attempt.has_budget()) *attempt.mutable_budget() = spec.budget();
  if (!attempt.has_skill_in() && spec.has_skill_in()) *attempt.mutable_skill_in() = spec.skill_in();
  if (attempt.skill_digest().empty()) attempt.set_skill_digest(spec.skill_in().sha256());
  if (attempt.task_fingerprint().empty()) attempt.set_task_fingerprint(spec.task_fingerprint());
  if (attempt.state() != v1::ATTEMPT_SKIPPED && attempt.state() != v1::ATTEMPT_FAILED) {
    attempt.set_state(v1::ATTEMPT_FINISHED);
  }
  if (attempt.finished_unix() == 0) attempt.set_finished_unix(NowUnix());
  return attempt;
}

absl::Status ExperimentRun::Launch(size_t index) {
  Trial& trial = trials_[index];
  const PlannedTrial& planned = trial.entry->trial;
  v1::TrialSpec spec = planned.spec;
  spec.set_try_number(trial.stored_try + 1);
  if (planned.skill_kind != v1::SkillSource::NONE) {
    absl::StatusOr<v1::Skill> skill = SkillFor(index);
    if (!skill.ok()) {
      if (!absl::IsNotFound(skill.status())) return skill.status();
      return Block(index, std::string(skill.status().message()));
    }
    *spec.mutable_skill_in() = *std::move(skill);
    if (IsEmptySkill(spec.skill_in())) {
      spec.mutable_skill_in()->mutable_flags()->set_empty(true);
      v1::Attempt skipped;
      skipped.set_state(v1::ATTEMPT_SKIPPED);
      skipped.set_best_submission(-1);
      skipped.set_started_unix(NowUnix());
      skipped = Normalized(spec, std::move(skipped));
      MKB_RETURN_IF_ERROR(store_.RecordSkipped(spec, skipped));
      trial.stored_try = spec.try_number();
      trial.running = spec;
      {
        absl::MutexLock lock(&mutex_);
        ++summary_.progress.skipped;
      }
      return Resolve(index, skipped);
    }
  }
  MKB_RETURN_IF_ERROR(store_.StartTry(spec));
  trial.stored_try = spec.try_number();
  ++trial.tries_this_run;
  trial.phase = Phase::kRunning;
  trial.running = spec;
  trial.observer = std::make_unique<LiveObserver>(this, index, spec.trial_id(), spec.try_number());
  {
    absl::MutexLock lock(&mutex_);
    trial.live_submissions = 0;
    trial.live_usage.Clear();
    ++summary_.progress.running;
  }
  ++running_;
  Emit(TrialEventKind::kStarted, trial.running, nullptr);
  scheduler_.Start(spec, trial.observer.get(), [this, index](absl::StatusOr<v1::Attempt> result) {
    absl::MutexLock lock(&mutex_);
    completions_.push_back(Completion{index, std::move(result)});
  });
  return absl::OkStatus();
}

absl::Status ExperimentRun::LaunchReady() {
  const absl::Time now = absl::Now();
  for (size_t i = 0; i < trials_.size() && running_ < plan_.spec.concurrency(); ++i) {
    Trial& trial = trials_[i];
    if (trial.phase != Phase::kReady || trial.not_before > now) continue;
    MKB_RETURN_IF_ERROR(Launch(i));
  }
  return absl::OkStatus();
}

absl::Status ExperimentRun::Resolve(size_t index, const v1::Attempt& attempt) {
  Trial& trial = trials_[index];
  trial.phase = Phase::kResolved;
  trial.attempt = attempt;
  const bool skipped = attempt.state() == v1::ATTEMPT_SKIPPED;
  {
    absl::MutexLock lock(&mutex_);
    if (Passed(attempt)) ++summary_.progress.passed;
  }
  Emit(skipped ? TrialEventKind::kSkipped : TrialEventKind::kFinished, trial.running, &attempt);
  return ReleaseDependents(index);
}

absl::Status ExperimentRun::ReleaseDependents(size_t index) {
  const Trial& source = trials_[index];
  for (size_t d : source.dependents) {
    Trial& dependent = trials_[d];
    if (dependent.phase == Phase::kWaiting) {
      dependent.phase = Phase::kReady;
      continue;
    }
    if (dependent.phase != Phase::kDeferred) continue;
    // It ran with the source's earlier skill: still valid if the new one is the same.
    const std::string digest = SkillFromAttempt(*source.attempt).sha256();
    const std::string& id = dependent.entry->trial.spec.trial_id();
    if (digest == dependent.stored_skill_digest) {
      MKB_RETURN_IF_ERROR(KeepStored(d));
    } else if (options_.rerun_stale) {
      MKB_RETURN_IF_ERROR(store_.ArchiveTry(id, dependent.stored_try, kArchiveStale,
                                            "skill digest changed (its source ran again)"));
      dependent.attempt.reset();
      dependent.phase = Phase::kReady;
    } else {
      // Kept as it is, and reported: a later run refuses it until rerun_stale.
      {
        absl::MutexLock lock(&mutex_);
        summary_.stale_kept.push_back(
            absl::StrCat(id, ": skill digest changed (its source ran again)"));
      }
      MKB_RETURN_IF_ERROR(KeepStored(d));
    }
  }
  return absl::OkStatus();
}

absl::Status ExperimentRun::Complete(size_t index, absl::StatusOr<v1::Attempt> result) {
  Trial& trial = trials_[index];
  const v1::TrialSpec& spec = trial.running;
  --running_;
  {
    absl::MutexLock lock(&mutex_);
    RunProgress& p = summary_.progress;
    --p.running;
    p.submissions -= trial.live_submissions;
    p.input_tokens -= trial.live_usage.input_tokens();
    p.output_tokens -= trial.live_usage.output_tokens();
    p.cost_usd -= trial.live_usage.cost_usd();
    trial.live_submissions = 0;
    trial.live_usage.Clear();
  }
  trial.observer.reset();  // the executor returned: no further reports

  if (result.ok()) {
    const v1::Attempt attempt = Normalized(spec, *std::move(result));
    MKB_RETURN_IF_ERROR(store_.FinishTry(attempt));
    {
      absl::MutexLock lock(&mutex_);
      RunProgress& p = summary_.progress;
      p.submissions += CountedSubmissions(attempt);
      p.input_tokens += attempt.usage().input_tokens();
      p.output_tokens += attempt.usage().output_tokens();
      p.cost_usd += attempt.usage().cost_usd();
      if (attempt.state() == v1::ATTEMPT_FAILED) {
        ++p.failed;
        summary_.failed.push_back(absl::StrCat(spec.trial_id(), ": ", attempt.error()));
      } else if (attempt.state() == v1::ATTEMPT_SKIPPED) {
        ++p.skipped;
      } else {
        ++p.finished;
      }
    }
    if (attempt.state() == v1::ATTEMPT_FAILED) {
      trial.phase = Phase::kFailed;
      Emit(TrialEventKind::kFailed, spec, &attempt, attempt.error());
      for (size_t d : trial.dependents) {
        MKB_RETURN_IF_ERROR(Block(d, absl::StrCat("its source ", spec.trial_id(), " failed")));
      }
      return absl::OkStatus();
    }
    return Resolve(index, attempt);
  }

  const absl::Status& status = result.status();
  if (absl::IsUnavailable(status) && trial.tries_this_run < plan_.spec.max_tries()) {
    MKB_RETURN_IF_ERROR(store_.ArchiveTry(spec.trial_id(), spec.try_number(), kArchiveTransient,
                                          status.ToString()));
    trial.phase = Phase::kReady;
    trial.not_before =
        absl::Now() + options_.retry_delay * (1 << std::min(trial.tries_this_run - 1, 10));
    {
      absl::MutexLock lock(&mutex_);
      ++summary_.progress.retries;
    }
    Emit(TrialEventKind::kRetry, spec, nullptr, status.ToString());
    return absl::OkStatus();
  }
  const std::string error =
      absl::IsUnavailable(status)
          ? absl::StrCat("transient failure on each of ", trial.tries_this_run,
                         " tries; the last: ", status.ToString())
          : status.ToString();
  MKB_RETURN_IF_ERROR(store_.FailTry(spec.trial_id(), spec.try_number(), error));
  trial.phase = Phase::kFailed;
  {
    absl::MutexLock lock(&mutex_);
    ++summary_.progress.failed;
    summary_.failed.push_back(absl::StrCat(spec.trial_id(), ": ", error));
  }
  Emit(TrialEventKind::kFailed, spec, nullptr, error);
  for (size_t d : trial.dependents) {
    MKB_RETURN_IF_ERROR(Block(d, absl::StrCat("its source ", spec.trial_id(), " failed")));
  }
  return absl::OkStatus();
}

absl::StatusOr<RunSummary> ExperimentRun::Run() {
  absl::Status fatal = Prepare();
  bool cancelled = false;
  absl::Time next_renewal = absl::Now() + absl::Minutes(1);
  while (true) {
    // Polled even once cancelled: the hook may need to see further requests (a second Ctrl-C).
    cancelled = Cancelled() || cancelled;
    if (fatal.ok() && !cancelled) fatal = LaunchReady();
    if (running_ == 0) {
      bool ready = false;
      absl::Time earliest = absl::InfiniteFuture();
      for (const Trial& trial : trials_) {
        if (trial.phase == Phase::kReady) {
          ready = true;
          earliest = std::min(earliest, trial.not_before);
        }
      }
      if (!ready || !fatal.ok() || cancelled) break;
      // Only retries waiting for their delay: sleep until the first (or a cancel poll).
      const absl::Duration wait =
          std::min(absl::Milliseconds(200), std::max(earliest - absl::Now(), absl::ZeroDuration()));
      absl::SleepFor(wait);
      continue;
    }
    std::deque<Completion> completions;
    {
      absl::MutexLock lock(&mutex_);
      mutex_.AwaitWithTimeout(
          absl::Condition(
              +[](std::deque<Completion>* queue) { return !queue->empty(); }, &completions_),
          absl::Milliseconds(200));
      completions.swap(completions_);
    }
    for (Completion& completion : completions) {
      absl::Status status = Complete(completion.index, std::move(completion.result));
      if (fatal.ok()) fatal = status;
    }
    if (absl::Now() >= next_renewal) {
      if (fatal.ok()) fatal = store_.RenewRunLease(plan_.spec.name());
      next_renewal = absl::Now() + absl::Minutes(1);
    }
  }
  scheduler_.Wait();
  if (!fatal.ok()) return fatal;
  // Trials still waiting had a source that never resolved (it was deferred and kept).
  for (size_t i = 0; i < trials_.size(); ++i) {
    if (trials_[i].phase == Phase::kWaiting && !cancelled) {
      MKB_RETURN_IF_ERROR(Block(i, "its source did not resolve"));
    }
  }
  if (cancelled) {
    return absl::CancelledError(absl::StrCat("the run of experiment '", plan_.spec.name(),
                                             "' was cancelled after ", summary_.progress.done(),
                                             " of ", summary_.progress.planned,
                                             " trials; run it again to resume"));
  }
  return summary_;
}

}  // namespace

absl::StatusOr<ExperimentStatus> PlanExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                                const ResultStore* store,
                                                const ProtocolOptions& options) {
  ExperimentStatus status;
  MKB_ASSIGN_OR_RETURN(status.plan, BuildPlan(spec, suite, options.plan));
  MKB_ASSIGN_OR_RETURN(auto records, detail::StoredTrials(store, status.plan.spec.name()));
  MKB_ASSIGN_OR_RETURN(status.entries,
                       detail::ClassifyTrials(status.plan, store, records, options.rerun_stale));
  std::set<std::string> planned;
  for (const PlannedTrial& trial : status.plan.trials) planned.insert(trial.spec.trial_id());
  for (const auto& [id, record] : records) {
    if (planned.count(id) == 0 && record.state != v1::ATTEMPT_RETIRED) {
      status.outside_plan.push_back(id);
    }
  }
  return status;
}

absl::StatusOr<RunSummary> RunExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                         ResultStore& store, TrialScheduler& scheduler,
                                         const ProtocolOptions& options) {
  MKB_ASSIGN_OR_RETURN(ExperimentPlan plan, BuildPlan(spec, suite, options.plan));
  const std::string name = plan.spec.name();
  MKB_RETURN_IF_ERROR(store.AcquireRunLease(name));
  auto run = [&]() -> absl::StatusOr<RunSummary> {
    MKB_ASSIGN_OR_RETURN(ExperimentStatus status, PlanExperiment(spec, suite, &store, options));
    MKB_RETURN_IF_ERROR(detail::StaleRefusal(store, status.entries));
    MKB_RETURN_IF_ERROR(store.PutExperiment(status.plan.spec));
    std::vector<v1::TrialSpec> specs;
    std::vector<std::string> planned;
    for (const PlannedTrial& trial : status.plan.trials) {
      specs.push_back(trial.spec);
      planned.push_back(trial.spec.trial_id());
    }
    std::sort(planned.begin(), planned.end());
    MKB_RETURN_IF_ERROR(store.PlanTrials(specs));
    MKB_ASSIGN_OR_RETURN(std::vector<std::string> retired,
                         store.RetireTrialsOutside(name, planned));
    ExperimentRun experiment_run(std::move(status), store, scheduler, options);
    absl::StatusOr<RunSummary> summary = experiment_run.Run();
    if (summary.ok()) summary->retired = std::move(retired);
    return summary;
  };
  absl::StatusOr<RunSummary> summary = run();
  absl::Status released = store.ReleaseRunLease(name);
  if (summary.ok() && !released.ok()) return released;
  return summary;
}

absl::StatusOr<RunSummary> RunExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                         ResultStore& store, TrialExecutor& executor,
                                         const ProtocolOptions& options) {
  const v1::ExperimentSpec filled = WithDefaults(spec);
  ThreadPoolScheduler scheduler(executor, filled.concurrency());
  return RunExperiment(spec, suite, store, scheduler, options);
}

}  // namespace mkb
