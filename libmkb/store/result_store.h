// The results store: one SQLite database (WAL) holding experiments, their trials (the state of
// the current try of each, and every archived try), and for each try its submissions, verdicts,
// skills, trajectory and usage.
//
// Durability: every state change is one transaction (BEGIN IMMEDIATE ... COMMIT, synchronous =
// FULL), so a process killed at any moment leaves the store as it was after its last committed
// change: at most the in-flight try is lost, and the next run archives it as "interrupted".
// Rows are keyed by (trial, try) and state changes are guarded by the state they expect, so a
// change can be neither applied twice nor applied to a try that is no longer current.
//
// Each Attempt is stored as the protobuf message it is (without its trajectory, whose events
// have their own table), next to indexed columns for queries. Thread-safe: a store serialises
// its calls on one connection. Several processes may open the same file; a run lease keeps two
// runs off the same experiment.
#ifndef LIBMKB_STORE_RESULT_STORE_H_
#define LIBMKB_STORE_RESULT_STORE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libmkb/store/table.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb {

// The current try of one trial.
struct TrialRecord {
  std::string trial_id;
  std::string experiment;
  std::string problem_slug;
  std::string arm;
  std::string model;
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  int replicate = 0;
  // PENDING (never started, or its last try archived), RUNNING (started, not ended: in flight,
  // or interrupted when no run holds the lease), FINISHED, SKIPPED, FAILED, BLOCKED (could not
  // start: the source of its skill failed, is blocked or is missing; `error` says which) or
  // RETIRED (outside its experiment's current plan; its last try archived).
  v1::AttemptState state = v1::ATTEMPT_PENDING;
  int try_number = 0;                  // of the current try; 0 before the first
  std::string task_fingerprint;        // the TrialSpec's, of the current try
  std::string skill_digest;            // sha256 of the skill the current try received; "" for solos
  v1::TrialSpec spec;                  // of the current try; as planned before the first
  std::optional<v1::Attempt> attempt;  // once ended (trajectory not included)
  std::string error;                   // FAILED: what went wrong
  double updated_unix = 0;

  // FINISHED or SKIPPED: the trial counts in the statistics.
  bool resolved() const { return state == v1::ATTEMPT_FINISHED || state == v1::ATTEMPT_SKIPPED; }
};

// Why a try was archived.
inline constexpr char kArchiveTransient[] = "transient";       // UnavailableError, retried
inline constexpr char kArchiveFailed[] = "failed";             // FAILED, rerun by a later run
inline constexpr char kArchiveInterrupted[] = "interrupted";   // RUNNING when its run died
inline constexpr char kArchiveStale[] = "stale";               // rerun with --rerun-stale
inline constexpr char kArchiveOutsidePlan[] = "outside_plan";  // no longer in the plan: retired

struct ArchivedTry {
  std::string trial_id;
  int try_number = 0;
  std::string reason;                                      // one of kArchive*
  v1::AttemptState state = v1::ATTEMPT_STATE_UNSPECIFIED;  // when it was archived
  std::string error;
  std::string task_fingerprint;
  std::string skill_digest;
  std::optional<v1::Attempt> attempt;
  double archived_unix = 0;
};

struct StoreOptions {
  bool create = true;           // create the file (and its folder's file) when missing
  int busy_timeout_ms = 30000;  // wait this long for another process's transaction
  // Open for reading only: the file is never written (no schema, no journal mode change, no
  // migration; a store of an older schema is migrated in a copy in memory). Implies !create.
  bool read_only = false;
};

// Usage of a trial's tries, from the usage table.
struct TrialUsage {
  std::optional<v1::Usage> current;  // of the current try (live or ended), when reported
  // Summed over the archived tries that ended without a result of their own (archived as
  // transient, failed or interrupted), and their count; stale and outside_plan tries left out.
  v1::Usage interrupted;
  int interrupted_tries = 0;
};

// The table views of ReadTable and the export, in export order.
std::vector<std::string> StoreTableNames();

class ResultStore {
 public:
  // Opens the store at `path`, creating and migrating its schema as needed (migrations run in
  // one transaction, oldest first; see kMigrations in detail/schema.cc). NotFoundError when it
  // does not exist and options.create is false; FailedPreconditionError when the file is not a
  // store (an empty file opened read-only, a foreign SQLite database, not SQLite at all) or a
  // store of a newer schema version. A foreign file is rejected before anything is written.
  static absl::StatusOr<ResultStore> Open(const std::string& path, StoreOptions options = {});

  ResultStore(ResultStore&&) noexcept;
  ResultStore& operator=(ResultStore&&) noexcept;
  ~ResultStore();

  const std::string& path() const;

  // --- Experiments -------------------------------------------------------------------------
  // Inserts or replaces the experiment's spec (stored with its defaults filled in).
  absl::Status PutExperiment(const v1::ExperimentSpec& spec);
  absl::StatusOr<v1::ExperimentSpec> GetExperiment(const std::string& name) const;
  absl::StatusOr<std::vector<v1::ExperimentSpec>> ListExperiments() const;

  // Claims the experiment for this process. FailedPreconditionError naming the holder when a
  // live process (same host: its pid still exists; another host: a lease renewed within the
  // last 10 minutes) holds it. A lease left by a dead process is taken over.
  absl::Status AcquireRunLease(const std::string& experiment);
  absl::Status RenewRunLease(const std::string& experiment);
  absl::Status ReleaseRunLease(const std::string& experiment);

  // --- Trials ------------------------------------------------------------------------------
  // Inserts a PENDING row (try 0) for each spec whose trial_id is not in the store; existing
  // trials are left as they are, except RETIRED ones, which get their RestorableTry back or
  // become PENDING. One transaction.
  absl::Status PlanTrials(const std::vector<v1::TrialSpec>& specs);
  // NotFoundError when the trial is not in the store.
  absl::StatusOr<TrialRecord> GetTrial(const std::string& trial_id) const;
  // Every trial of the experiment, ordered by trial_id.
  absl::StatusOr<std::vector<TrialRecord>> ListTrials(const std::string& experiment) const;
  // The most recently updated resolved trial of (model, arm, problem, replicate) in any
  // experiment: where another model's skill is taken from. nullopt when there is none.
  absl::StatusOr<std::optional<TrialRecord>> FindResolvedTrial(const std::string& model,
                                                               const std::string& arm,
                                                               const std::string& problem_slug,
                                                               int replicate) const;

  // Every planned trial of `experiment` that is not RETIRED (what the statistics read).
  absl::StatusOr<std::vector<TrialRecord>> ListPlannedTrials(const std::string& experiment) const;
  // The try a RETIRED trial gets back when a plan holds it again (PlanTrials): its latest
  // archived try, when that was archived as outside_plan while FINISHED or SKIPPED; else
  // nullopt (the trial is then PENDING again).
  absl::StatusOr<std::optional<ArchivedTry>> RestorableTry(const std::string& trial_id) const;
  // Retires every trial of `experiment` whose id is not in `planned` (sorted) and that is not
  // retired already: its current try, if it started, is archived (reason outside_plan) and the
  // trial becomes RETIRED. One transaction. Returns the retired trials' ids.
  absl::StatusOr<std::vector<std::string>> RetireTrialsOutside(
      const std::string& experiment, const std::vector<std::string>& planned);
  // PENDING or BLOCKED -> BLOCKED with `why`. FailedPreconditionError in any other state.
  absl::Status BlockTrial(const std::string& trial_id, const std::string& why);
  // Usage of the tries of every trial of `experiment`, by trial id (trials without any report
  // are absent).
  absl::StatusOr<std::map<std::string, TrialUsage>> UsageOfTrials(
      const std::string& experiment) const;

  // PENDING (or BLOCKED) -> RUNNING for try spec.try_number, which must exceed the current try
  // number. FailedPreconditionError when the trial is not pending (already started elsewhere).
  absl::Status StartTry(const v1::TrialSpec& spec);
  // RUNNING (try attempt.try_number) -> the attempt's state: FINISHED, SKIPPED or FAILED.
  // Writes its submissions, verdicts, skills, usage and trajectory, replacing what live
  // reports left for the try. The attempt's identity must match the trial's.
  absl::Status FinishTry(const v1::Attempt& attempt);
  // PENDING -> SKIPPED in one step (a conditioned arm whose skill was empty: never run).
  absl::Status RecordSkipped(const v1::TrialSpec& spec, const v1::Attempt& attempt);
  // RUNNING (try `try_number`) -> FAILED with `error`.
  absl::Status FailTry(const std::string& trial_id, int try_number, const std::string& error);
  // Moves the current try (RUNNING, FINISHED, SKIPPED or FAILED) to the archive with `reason`
  // and `error`, and makes the trial PENDING again, keeping its try number (the next try is
  // try_number + 1). Its submissions, verdicts, skills, trajectory and usage stay, under
  // their try number. FailedPreconditionError when `expected_try` is not the current try.
  absl::Status ArchiveTry(const std::string& trial_id, int expected_try, const std::string& reason,
                          const std::string& error);

  // Live reports of a RUNNING try (TrialObserver); ignored (OK) when the try is no longer the
  // running one.
  absl::Status RecordLiveSubmission(const std::string& trial_id, int try_number,
                                    const v1::Submission& submission);
  absl::Status RecordLiveTrajectoryEvent(const std::string& trial_id, int try_number,
                                         const v1::TrajectoryEvent& event);
  absl::Status RecordLiveUsage(const std::string& trial_id, int try_number, const v1::Usage& usage);

  // The trajectory of a try (0: the current one), in order.
  absl::StatusOr<std::vector<v1::TrajectoryEvent>> Trajectory(const std::string& trial_id,
                                                              int try_number = 0) const;
  // Archived tries of a trial, oldest first.
  absl::StatusOr<std::vector<ArchivedTry>> ArchivedTries(const std::string& trial_id) const;

  // --- Reading -----------------------------------------------------------------------------
  // One table view (StoreTableNames()), restricted to an experiment unless `experiment` is
  // empty. InvalidArgumentError naming the known tables for an unknown name.
  absl::StatusOr<Table> ReadTable(const std::string& name,
                                  const std::string& experiment = "") const;
  // Writes a consistent copy of the store, at the current schema version, to the new file
  // `path` (SQLite's VACUUM INTO; works on a read-only store, and on one other processes are
  // writing). AlreadyExistsError when `path` exists.
  absl::Status SnapshotTo(const std::string& path) const;
  // SQLite's integrity check and the store's own invariants (every try's rows belong to a
  // trial; no running trial without a started try). DataLossError describing the first
  // problem.
  absl::Status CheckIntegrity() const;

 private:
  struct State;
  explicit ResultStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace mkb

#endif  // LIBMKB_STORE_RESULT_STORE_H_
