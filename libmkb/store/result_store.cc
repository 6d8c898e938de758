#include "libmkb/store/result_store.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libmkb/core/clock.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/store/detail/experiment_rows.h"
#include "libmkb/store/detail/leases.h"
#include "libmkb/store/detail/schema.h"
#include "libmkb/store/detail/sqlite.h"
#include "libmkb/store/detail/stored_values.h"
#include "libmkb/store/detail/table_views.h"
#include "libmkb/store/detail/trial_rows.h"
#include "libmkb/store/detail/try_rows.h"

namespace mkb {

using store_detail::ArchiveCurrentTry;
using store_detail::Blob;
using store_detail::CurrentTry;
using store_detail::FileIdentity;
using store_detail::HasSkill;
using store_detail::HasStartedTry;
using store_detail::MarkRunning;
using store_detail::NotInState;
using store_detail::ParseState;
using store_detail::ReadCurrentTry;
using store_detail::SelectTrials;
using store_detail::SqliteDatabase;
using store_detail::SqliteStatement;
using store_detail::SqliteTransaction;
using store_detail::StateText;
using store_detail::WriteAttemptDetails;
using store_detail::WriteEnded;
using store_detail::WriteSkill;

namespace {

absl::Status CheckIdentity(const v1::Attempt& attempt) {
  if (attempt.id().empty())
    return absl::InvalidArgumentError("attempt.id: required (the trial id)");
  switch (attempt.state()) {
    case v1::ATTEMPT_FINISHED:
    case v1::ATTEMPT_SKIPPED:
    case v1::ATTEMPT_FAILED:
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("attempt.state: an ended attempt is finished, skipped or failed, not '",
                       StateText(attempt.state()), "'"));
  }
}

// Runs `write` inside a transaction when the trial's current try is `try_number` and running.
template <typename Write>
absl::Status WriteIfRunning(SqliteDatabase& db, const std::string& trial_id, int try_number,
                            Write write) {
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, trial_id));
  if (current.state != v1::ATTEMPT_RUNNING || current.try_number != try_number) {
    return absl::OkStatus();  // a late report of a try that has ended: the attempt has it
  }
  MKB_RETURN_IF_ERROR(write());
  return transaction.Commit();
}

}  // namespace

struct ResultStore::State {
  mutable absl::Mutex mutex;
  SqliteDatabase db ABSL_GUARDED_BY(mutex);
  store_detail::LeaseHolder lease_holder = store_detail::ThisProcess();
};

ResultStore::ResultStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
ResultStore::ResultStore(ResultStore&&) noexcept = default;
ResultStore& ResultStore::operator=(ResultStore&&) noexcept = default;
ResultStore::~ResultStore() = default;

const std::string& ResultStore::path() const { return state_->db.path(); }

absl::StatusOr<ResultStore> ResultStore::Open(const std::string& path, StoreOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("store: a path is required");
  if ((!options.create || options.read_only) && access(path.c_str(), F_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": no such store"));
  }
  auto state = std::make_unique<State>();
  MKB_ASSIGN_OR_RETURN(state->db, SqliteDatabase::Open(path, options.create,
                                                       options.busy_timeout_ms, options.read_only));
  SqliteDatabase& db = state->db;
  // What the file is, before anything is written to it: a foreign file stays as it was.
  MKB_ASSIGN_OR_RETURN(FileIdentity identity, store_detail::ReadIdentity(db));
  MKB_RETURN_IF_ERROR(
      store_detail::CheckStoreFile(identity, path, /*empty_ok=*/!options.read_only));
  if (options.read_only) {
    if (identity.version < store_detail::CurrentSchemaVersion()) {
      // An older store is read through a migrated copy in memory; the file is left as it is.
      MKB_ASSIGN_OR_RETURN(SqliteDatabase copy, db.CopyToMemory());
      MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(copy));
      MKB_RETURN_IF_ERROR(store_detail::Migrate(copy, identity.version));
      MKB_RETURN_IF_ERROR(transaction.Commit());
      state->db = std::move(copy);
    }
    return ResultStore(std::move(state));
  }
  // WAL: readers never block the writer, and a killed writer leaves the database intact.
  // FULL: a committed transaction survives a power loss too, not only a killed process.
  MKB_ASSIGN_OR_RETURN(SqliteStatement wal, db.Prepare("PRAGMA journal_mode = WAL"));
  MKB_ASSIGN_OR_RETURN(bool has_row, wal.Step());
  if (!has_row || wal.ColumnText(0) != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     ": the store needs SQLite's WAL journal mode, which this file "
                     "system does not support"));
  }
  wal = SqliteStatement();
  MKB_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"));

  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  // Read again under the write lock: another process may have created the schema meanwhile.
  MKB_ASSIGN_OR_RETURN(identity, store_detail::ReadIdentity(db));
  MKB_RETURN_IF_ERROR(store_detail::CheckStoreFile(identity, path, /*empty_ok=*/true));
  if (identity.application_id == 0) {
    MKB_RETURN_IF_ERROR(store_detail::CreateSchema(db));
  } else if (identity.version < store_detail::CurrentSchemaVersion()) {
    MKB_RETURN_IF_ERROR(store_detail::Migrate(db, identity.version));
  }
  MKB_RETURN_IF_ERROR(transaction.Commit());
  return ResultStore(std::move(state));
}

// ---------------------------------------------------------------------------------------------
// Experiments

absl::Status ResultStore::PutExperiment(const v1::ExperimentSpec& spec) {
  if (spec.name().empty()) return absl::InvalidArgumentError("experiment: name is required");
  const v1::ExperimentSpec filled = WithDefaults(spec);
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_RETURN_IF_ERROR(store_detail::WriteExperiment(db, filled));
  return transaction.Commit();
}

absl::StatusOr<v1::ExperimentSpec> ResultStore::GetExperiment(const std::string& name) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(std::optional<v1::ExperimentSpec> spec,
                       store_detail::ReadExperiment(state_->db, name));
  if (!spec.has_value()) {
    return absl::NotFoundError(absl::StrCat(path(), ": no experiment '", name, "'"));
  }
  return *std::move(spec);
}

absl::StatusOr<std::vector<v1::ExperimentSpec>> ResultStore::ListExperiments() const {
  absl::MutexLock lock(&state_->mutex);
  std::map<std::string, v1::ExperimentSpec> specs;
  MKB_ASSIGN_OR_RETURN(specs, store_detail::ReadExperiments(state_->db));
  std::vector<v1::ExperimentSpec> out;
  for (auto& [name, spec] : specs) out.push_back(std::move(spec));
  return out;
}

absl::Status ResultStore::AcquireRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::AcquireLease(state_->db, state_->lease_holder, experiment);
}

absl::Status ResultStore::RenewRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::RenewLease(state_->db, state_->lease_holder, experiment);
}

absl::Status ResultStore::ReleaseRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::ReleaseLease(state_->db, state_->lease_holder, experiment);
}

// ---------------------------------------------------------------------------------------------
// Trials

absl::StatusOr<TrialRecord> ResultStore::GetTrial(const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(std::vector<TrialRecord> found,
                       SelectTrials(state_->db, "trial_id = ?", trial_id));
  if (found.empty()) {
    return absl::NotFoundError(absl::StrCat(path(), ": no trial '", trial_id, "'"));
  }
  return std::move(found.front());
}

absl::StatusOr<std::vector<TrialRecord>> ResultStore::ListTrials(
    const std::string& experiment) const {
  absl::MutexLock lock(&state_->mutex);
  return SelectTrials(state_->db, "experiment = ? ORDER BY trial_id", experiment);
}

absl::StatusOr<std::vector<TrialRecord>> ResultStore::ListPlannedTrials(
    const std::string& experiment) const {
  MKB_ASSIGN_OR_RETURN(std::vector<TrialRecord> trials, ListTrials(experiment));
  trials.erase(std::remove_if(trials.begin(), trials.end(),
                              [](const TrialRecord& t) { return t.state == v1::ATTEMPT_RETIRED; }),
               trials.end());
  return trials;
}

absl::StatusOr<std::optional<TrialRecord>> ResultStore::FindResolvedTrial(
    const std::string& model, const std::string& arm, const std::string& problem_slug,
    int replicate) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(
      std::vector<TrialRecord> found,
      SelectTrials(state_->db,
                   "model = ? AND arm = ? AND problem_slug = ? AND replicate = ? "
                   "AND state IN ('finished', 'skipped') ORDER BY updated_unix DESC LIMIT 1",
                   model, arm, problem_slug, replicate));
  if (found.empty()) return std::optional<TrialRecord>();
  return std::optional<TrialRecord>(std::move(found.front()));
}

absl::Status ResultStore::StartTry(const v1::TrialSpec& spec) {
  if (spec.try_number() < 1) {
    return absl::InvalidArgumentError("trial spec: try_number must be >= 1");
  }
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_RETURN_IF_ERROR(MarkRunning(db, path(), spec));
  if (HasSkill(spec.skill_in())) {
    MKB_RETURN_IF_ERROR(WriteSkill(db, spec.trial_id(), spec.try_number(), "in", spec.skill_in()));
  }
  return transaction.Commit();
}

absl::Status ResultStore::FinishTry(const v1::Attempt& attempt) {
  MKB_RETURN_IF_ERROR(CheckIdentity(attempt));
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, attempt.id()));
  if (current.state != v1::ATTEMPT_RUNNING || current.try_number != attempt.try_number()) {
    return NotInState(path(), attempt.id(), current,
                      absl::StrCat("running try ", attempt.try_number()));
  }
  MKB_RETURN_IF_ERROR(WriteEnded(db, attempt));
  MKB_RETURN_IF_ERROR(WriteAttemptDetails(db, attempt.id(), attempt.try_number(), attempt));
  return transaction.Commit();
}

absl::Status ResultStore::RecordSkipped(const v1::TrialSpec& spec, const v1::Attempt& attempt) {
  MKB_RETURN_IF_ERROR(CheckIdentity(attempt));
  if (attempt.state() != v1::ATTEMPT_SKIPPED || attempt.id() != spec.trial_id() ||
      attempt.try_number() != spec.try_number()) {
    return absl::InvalidArgumentError(
        "attempt: a skipped attempt of the spec's trial and try is required");
  }
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_RETURN_IF_ERROR(MarkRunning(db, path(), spec));
  MKB_RETURN_IF_ERROR(WriteEnded(db, attempt));
  MKB_RETURN_IF_ERROR(WriteAttemptDetails(db, attempt.id(), attempt.try_number(), attempt));
  return transaction.Commit();
}

absl::Status ResultStore::FailTry(const std::string& trial_id, int try_number,
                                  const std::string& error) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, trial_id));
  if (current.state != v1::ATTEMPT_RUNNING || current.try_number != try_number) {
    return NotInState(path(), trial_id, current, absl::StrCat("running try ", try_number));
  }
  MKB_ASSIGN_OR_RETURN(SqliteStatement fail,
                       db.Prepare("UPDATE trials SET state = 'failed', error = ?, "
                                  "finished_unix = ?, updated_unix = ? WHERE trial_id = ?"));
  const double now = NowUnix();
  MKB_RETURN_IF_ERROR(fail.BindAll(error, now, now, trial_id));
  MKB_RETURN_IF_ERROR(fail.Run());
  return transaction.Commit();
}

absl::Status ResultStore::ArchiveTry(const std::string& trial_id, int expected_try,
                                     const std::string& reason, const std::string& error) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, trial_id));
  if (!HasStartedTry(current.state) || current.try_number != expected_try) {
    return NotInState(path(), trial_id, current,
                      absl::StrCat("started, ended or failed try ", expected_try));
  }
  MKB_RETURN_IF_ERROR(ArchiveCurrentTry(db, trial_id, reason, error, "pending"));
  return transaction.Commit();
}

absl::Status ResultStore::PlanTrials(const std::vector<v1::TrialSpec>& specs) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement insert,
      db.Prepare("INSERT OR IGNORE INTO trials (trial_id, experiment, model, problem_slug, "
                 "problem_number, family, arm, dsl, replicate, state, try_number, "
                 "task_fingerprint, skill_digest, spec, updated_unix) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, '', ?, ?)"));
  MKB_ASSIGN_OR_RETURN(SqliteStatement unretire,
                       db.Prepare("UPDATE trials SET state = 'pending', updated_unix = ? "
                                  "WHERE trial_id = ? AND state = 'retired'"));
  const double now = NowUnix();
  for (const v1::TrialSpec& spec : specs) {
    if (spec.trial_id().empty()) return absl::InvalidArgumentError("trial: trial_id is required");
    const std::string bytes = spec.SerializeAsString();
    insert.Reset();
    MKB_RETURN_IF_ERROR(insert.BindAll(
        spec.trial_id(), spec.experiment(), spec.model(), spec.problem_slug(),
        spec.problem_number(), FamilyName(spec.family()), spec.arm(), DslName(spec.dsl()),
        spec.replicate(), spec.task_fingerprint(), Blob{bytes}, now));
    MKB_RETURN_IF_ERROR(insert.Run());
    if (db.Changes() > 0) continue;
    MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, spec.trial_id()));
    if (current.state != v1::ATTEMPT_RETIRED) continue;
    MKB_ASSIGN_OR_RETURN(std::optional<ArchivedTry> restorable,
                         store_detail::RestorableTryIn(db, spec.trial_id()));
    if (restorable.has_value()) {
      MKB_RETURN_IF_ERROR(store_detail::RestoreTry(db, *restorable));
    } else {
      unretire.Reset();
      MKB_RETURN_IF_ERROR(unretire.BindAll(now, spec.trial_id()));
      MKB_RETURN_IF_ERROR(unretire.Run());
    }
  }
  return transaction.Commit();
}

absl::StatusOr<std::vector<std::string>> ResultStore::RetireTrialsOutside(
    const std::string& experiment, const std::vector<std::string>& planned) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  std::vector<std::pair<std::string, v1::AttemptState>> outside;
  {
    MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                         db.Prepare("SELECT trial_id, state FROM trials WHERE experiment = ? AND "
                                    "state != 'retired' ORDER BY trial_id"));
    MKB_RETURN_IF_ERROR(select.BindAll(experiment));
    while (true) {
      MKB_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      const std::string id = select.ColumnText(0);
      if (std::binary_search(planned.begin(), planned.end(), id)) continue;
      MKB_ASSIGN_OR_RETURN(v1::AttemptState state,
                           ParseState(select.ColumnText(1), absl::StrCat("trial ", id)));
      outside.emplace_back(id, state);
    }
  }
  MKB_ASSIGN_OR_RETURN(SqliteStatement retire,
                       db.Prepare("UPDATE trials SET state = 'retired', updated_unix = ? "
                                  "WHERE trial_id = ?"));
  std::vector<std::string> out;
  for (const auto& [id, state] : outside) {
    if (HasStartedTry(state)) {
      MKB_RETURN_IF_ERROR(ArchiveCurrentTry(db, id, kArchiveOutsidePlan,
                                            "not in the experiment's current plan", "retired"));
    } else {
      retire.Reset();
      MKB_RETURN_IF_ERROR(retire.BindAll(NowUnix(), id));
      MKB_RETURN_IF_ERROR(retire.Run());
    }
    out.push_back(id);
  }
  MKB_RETURN_IF_ERROR(transaction.Commit());
  return out;
}

absl::Status ResultStore::BlockTrial(const std::string& trial_id, const std::string& why) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, trial_id));
  if (current.state != v1::ATTEMPT_PENDING && current.state != v1::ATTEMPT_BLOCKED) {
    return NotInState(path(), trial_id, current, "pending or blocked");
  }
  MKB_ASSIGN_OR_RETURN(SqliteStatement block,
                       db.Prepare("UPDATE trials SET state = 'blocked', error = ?, "
                                  "updated_unix = ? WHERE trial_id = ?"));
  MKB_RETURN_IF_ERROR(block.BindAll(why, NowUnix(), trial_id));
  MKB_RETURN_IF_ERROR(block.Run());
  return transaction.Commit();
}

absl::StatusOr<std::map<std::string, TrialUsage>> ResultStore::UsageOfTrials(
    const std::string& experiment) const {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::ReadUsageOfTrials(state_->db, experiment);
}

absl::Status ResultStore::RecordLiveSubmission(const std::string& trial_id, int try_number,
                                               const v1::Submission& submission) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  return WriteIfRunning(db, trial_id, try_number, [&]() -> absl::Status {
    MKB_RETURN_IF_ERROR(WriteSubmission(db, trial_id, try_number, submission));
    if (!submission.has_verdict()) return absl::OkStatus();
    return WriteVerdict(db, trial_id, try_number, "submission", submission.index(),
                        submission.verdict());
  });
}

absl::Status ResultStore::RecordLiveTrajectoryEvent(const std::string& trial_id, int try_number,
                                                    const v1::TrajectoryEvent& event) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  return WriteIfRunning(db, trial_id, try_number,
                        [&] { return WriteTrajectoryEvent(db, trial_id, try_number, event); });
}

absl::Status ResultStore::RecordLiveUsage(const std::string& trial_id, int try_number,
                                          const v1::Usage& usage) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  return WriteIfRunning(db, trial_id, try_number,
                        [&] { return WriteUsage(db, trial_id, try_number, /*live=*/true, usage); });
}

absl::StatusOr<std::vector<v1::TrajectoryEvent>> ResultStore::Trajectory(
    const std::string& trial_id, int try_number) const {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  if (try_number <= 0) {
    MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, trial_id));
    try_number = current.try_number;
  }
  return store_detail::ReadTrajectory(db, trial_id, try_number);
}

absl::StatusOr<std::vector<ArchivedTry>> ResultStore::ArchivedTries(
    const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::ReadArchivedTries(state_->db, trial_id);
}

absl::StatusOr<std::optional<ArchivedTry>> ResultStore::RestorableTry(
    const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  return store_detail::RestorableTryIn(state_->db, trial_id);
}

// ---------------------------------------------------------------------------------------------
// Reading

absl::StatusOr<Table> ResultStore::ReadTable(const std::string& name,
                                             const std::string& experiment) const {
  MKB_ASSIGN_OR_RETURN(const store_detail::TableView* view, store_detail::FindTableView(name));
  absl::MutexLock lock(&state_->mutex);
  return store_detail::ReadTableView(state_->db, *view, experiment);
}

absl::Status ResultStore::SnapshotTo(const std::string& path) const {
  if (access(path.c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": exists; a snapshot is a new file"));
  }
  std::string quoted = "'";
  for (char c : path) {
    quoted += c;
    if (c == '\'') quoted += c;
  }
  quoted += "'";
  absl::MutexLock lock(&state_->mutex);
  return state_->db.Exec(absl::StrCat("VACUUM INTO ", quoted));
}

absl::Status ResultStore::CheckIntegrity() const {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteStatement check, db.Prepare("PRAGMA integrity_check"));
  MKB_ASSIGN_OR_RETURN(bool row, check.Step());
  if (!row || check.ColumnText(0) != "ok") {
    return absl::DataLossError(
        absl::StrCat(path(), ": integrity check: ", row ? check.ColumnText(0) : "no answer"));
  }
  check = SqliteStatement();
  // The store's own invariants: each query counts violations.
  const std::pair<const char*, const char*> invariants[] = {
      {"a running or ended trial without a started try",
       "SELECT COUNT(*) FROM trials WHERE state NOT IN ('pending', 'blocked', 'retired') AND "
       "try_number < 1"},
      {"an ended trial without its attempt",
       "SELECT COUNT(*) FROM trials WHERE state IN ('finished', 'skipped') AND attempt IS NULL"},
      {"a pending, blocked or retired trial holding an attempt",
       "SELECT COUNT(*) FROM trials WHERE state IN ('pending', 'blocked', 'retired') AND "
       "attempt IS NOT NULL"},
      {"an archived try that is not older than its trial's current try",
       "SELECT COUNT(*) FROM archived_tries a JOIN trials t USING (trial_id) "
       "WHERE a.try_number > t.try_number OR (a.try_number = t.try_number AND "
       "t.state NOT IN ('pending', 'blocked', 'retired'))"},
      {"rows of a try that never started",
       "SELECT (SELECT COUNT(*) FROM submissions s JOIN trials t USING (trial_id) "
       "WHERE s.try_number > t.try_number) + (SELECT COUNT(*) FROM verdicts v JOIN trials t "
       "USING (trial_id) WHERE v.try_number > t.try_number)"},
      {"rows of an unknown trial",
       "SELECT (SELECT COUNT(*) FROM submissions WHERE trial_id NOT IN (SELECT trial_id FROM "
       "trials)) + (SELECT COUNT(*) FROM archived_tries WHERE trial_id NOT IN (SELECT trial_id "
       "FROM trials))"},
  };
  for (const auto& [what, sql] : invariants) {
    MKB_ASSIGN_OR_RETURN(SqliteStatement count, db.Prepare(sql));
    MKB_ASSIGN_OR_RETURN(row, count.Step());
    if (row && count.ColumnInt(0) != 0) {
      return absl::DataLossError(absl::StrCat(path(), ": ", count.ColumnInt(0), " x ", what));
    }
  }
  return absl::OkStatus();
}

}  // namespace mkb
