// The transfer protocol (SPEC §5): runs an experiment's trials — solos first, each skill arm as
// soon as its own source is resolved — under a concurrency limit, retrying transient failures,
// storing everything as it happens, and resuming from what a store already holds.
//
// Resume: a run of an experiment that a store already holds reuses its resolved (finished or
// skipped) trials, reruns failed ones and ones interrupted mid-try (archiving those tries), and
// runs the rest. A resolved trial is stale when its task fingerprint (plan.h: TaskFingerprint)
// or the digest of the skill it received differs from what the plan would give it now; a run
// refuses stale trials (FailedPreconditionError, nothing changed) unless rerun_stale is set,
// which archives and reruns them.
//
// Retries: a try whose executor returns UnavailableError is archived ("transient") and retried
// after retry_delay (doubling), up to ExperimentSpec.max_tries tries per run; then the trial
// is FAILED. Any other error status fails the trial at once. A failed (or blocked) source
// blocks the trials that take its skill; a later run retries them.
#ifndef LIBMKB_PROTOCOL_PROTOCOL_H_
#define LIBMKB_PROTOCOL_PROTOCOL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libmkb/protocol/plan.h"
#include "libmkb/protocol/trial_executor.h"
#include "libmkb/protocol/trial_scheduler.h"
#include "libmkb/store/result_store.h"
#include "libmkb/suite/suite.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb {

// What a run would do with a planned trial, given what the store holds.
enum class PlanAction {
  kRun,               // not in the store yet, or pending: run it
  kReuse,             // resolved and not stale: taken as it is
  kRerunFailed,       // FAILED: archived and run again
  kRerunInterrupted,  // RUNNING when its run died: archived and run again
  kStale,             // resolved, but its task or skill changed: refused without rerun_stale
  kRerunStale,        // stale, with rerun_stale: archived and run again
  // Resolved, but its source runs again: reused when the source leaves the same skill, else
  // stale (rerun with rerun_stale).
  kCheckSkill,
  kBlocked,  // another model's source is not in the store: cannot start
};
// "run", "reuse", "rerun_failed", "rerun_interrupted", "stale", "rerun_stale", "check_skill",
// "blocked".
const char* PlanActionName(PlanAction action);

struct PlanEntry {
  PlannedTrial trial;
  PlanAction action = PlanAction::kRun;
  std::string reason;  // why stale / blocked / rerun
  // What the trial waits for: its source trial's id, "<model>:<arm>" for another model's
  // skill, or "" (solos, fixed texts).
  std::string depends_on;
  // What the store holds (state PENDING, try 0 when it holds nothing).
  v1::AttemptState stored_state = v1::ATTEMPT_PENDING;
  int stored_try = 0;
};

struct ExperimentStatus {
  ExperimentPlan plan;
  std::vector<PlanEntry> entries;  // in plan order
  // Trials of the experiment in the store that the plan no longer holds: a run retires them
  // (archives their current try; they leave the statistics). Sorted.
  std::vector<std::string> outside_plan;
  int Count(PlanAction action) const;
};

// Totals of a run, as they stand after each event.
struct RunProgress {
  int planned = 0;  // trials of the plan
  int reused = 0;   // resolved trials taken from the store
  int running = 0;
  int finished = 0;  // ended FINISHED in this run
  int skipped = 0;   // SKIPPED in this run (empty skill)
  int failed = 0;    // FAILED in this run (retries exhausted, or a permanent error)
  int blocked = 0;   // could not start: their source failed or is missing
  int retries = 0;   // transient failures retried
  int passed = 0;    // resolved trials (reused or run) whose final regrade passed
  // Of this run's tries, running ones included (from their live reports):
  int submissions = 0;  // counted submissions
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;

  int done() const { return reused + finished + skipped + failed + blocked; }
};

enum class TrialEventKind {
  kReused,      // attempt: the stored one
  kStarted,     // spec: with its try number and skill
  kSubmission,  // submission: a live report
  kUsage,       // usage: a live report (totals of the try so far)
  kFinished,    // attempt
  kSkipped,     // attempt (empty skill: never run)
  kRetry,       // message: the transient error; the try was archived
  kFailed,      // message; attempt when the executor returned a FAILED one
  kBlocked,     // message: why it cannot start
};
const char* TrialEventKindName(TrialEventKind kind);

struct TrialEvent {
  TrialEventKind kind;
  const v1::TrialSpec* spec = nullptr;
  const v1::Attempt* attempt = nullptr;
  const v1::Submission* submission = nullptr;
  const v1::Usage* usage = nullptr;
  std::string message;
  RunProgress progress;  // after the event
};

// Receives a run's events, one at a time (calls are serialised), from the protocol's thread
// or, for live reports, from the executor's threads. Must not call back into the run.
class ProtocolListener {
 public:
  virtual ~ProtocolListener() = default;
  virtual void OnTrialEvent(const TrialEvent& event) = 0;
};

struct ProtocolOptions {
  bool rerun_stale = false;
  PlanOptions plan;
  // Before the second try of a transient failure; doubled for each further try.
  absl::Duration retry_delay = absl::Seconds(5);
  ProtocolListener* listener = nullptr;
  // Polled about five times a second; once it returns true, no further trial starts, running
  // ones are waited for, and the run returns CancelledError (a later run resumes).
  std::function<bool()> cancelled;
};

struct RunSummary {
  RunProgress progress;
  std::vector<std::string> failed;   // "<trial_id>: <error>"
  std::vector<std::string> blocked;  // "<trial_id>: <why>"
  std::vector<std::string>
      stale_kept;                     // resolved trials found stale mid-run, kept (no rerun_stale)
  std::vector<std::string> warnings;  // e.g. live reports that could not be stored
  // Trials of the experiment outside this run's plan, retired by it (ExperimentStatus).
  std::vector<std::string> retired;
  // Every planned trial is resolved.
  bool complete() const {
    return progress.done() == progress.planned && failed.empty() && blocked.empty();
  }
};

// What a run of `spec` would do with each trial given `store` (nullptr: an empty store). Reads
// the store only: the dry run.
absl::StatusOr<ExperimentStatus> PlanExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                                const ResultStore* store,
                                                const ProtocolOptions& options = {});

// Runs the experiment into `store` through `scheduler`, blocking until every trial that can run
// has ended (or the run was cancelled). Errors: InvalidArgumentError (spec), NotFoundError
// (problems), FailedPreconditionError (stale trials without rerun_stale; another process runs
// the experiment), CancelledError, and the store's errors, which stop the run (trials in
// flight are waited for). Trials that fail are not errors: they are in the summary.
absl::StatusOr<RunSummary> RunExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                         ResultStore& store, TrialScheduler& scheduler,
                                         const ProtocolOptions& options = {});

// The same with the local scheduler: a pool of ExperimentSpec.concurrency threads calling
// `executor`.
absl::StatusOr<RunSummary> RunExperiment(const v1::ExperimentSpec& spec, const Suite& suite,
                                         ResultStore& store, TrialExecutor& executor,
                                         const ProtocolOptions& options = {});

}  // namespace mkb

#endif  // LIBMKB_PROTOCOL_PROTOCOL_H_
