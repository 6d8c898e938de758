#include "libmkb/store/detail/trial_rows.h"

#include <utility>

#include "libmkb/core/clock.h"
#include "libmkb/model/names.h"
#include "libmkb/store/detail/stored_values.h"

namespace mkb::store_detail {
namespace {

v1::Attempt WithoutTrajectory(const v1::Attempt& attempt) {
  v1::Attempt out = attempt;
  out.clear_trajectory();
  return out;
}

}  // namespace

absl::StatusOr<TrialRecord> ReadTrialRow(const SqliteStatement& row) {
  TrialRecord record;
  record.trial_id = row.ColumnText(0);
  record.experiment = row.ColumnText(1);
  record.problem_slug = row.ColumnText(2);
  record.arm = row.ColumnText(3);
  record.model = row.ColumnText(4);
  absl::StatusOr<v1::Dsl> dsl = ParseDsl(row.ColumnText(5));
  record.dsl = dsl.ok() ? *dsl : v1::DSL_UNSPECIFIED;
  record.replicate = static_cast<int>(row.ColumnInt(6));
  const std::string where = absl::StrCat("trial ", record.trial_id);
  MKB_ASSIGN_OR_RETURN(record.state, ParseState(row.ColumnText(7), where));
  record.try_number = static_cast<int>(row.ColumnInt(8));
  record.task_fingerprint = row.ColumnText(9);
  record.skill_digest = row.ColumnText(10);
  MKB_ASSIGN_OR_RETURN(record.spec, ParseMessage<v1::TrialSpec>(row.ColumnText(11), where));
  if (!row.IsNull(12)) {
    MKB_ASSIGN_OR_RETURN(record.attempt, ParseMessage<v1::Attempt>(row.ColumnText(12), where));
  }
  record.error = row.ColumnText(13);
  record.updated_unix = row.ColumnDouble(14);
  return record;
}

absl::StatusOr<CurrentTry> ReadCurrentTry(SqliteDatabase& db, const std::string& trial_id) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       db.Prepare("SELECT state, try_number FROM trials WHERE trial_id = ?"));
  MKB_RETURN_IF_ERROR(select.BindAll(trial_id));
  MKB_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return absl::NotFoundError(absl::StrCat(db.path(), ": no trial '", trial_id, "'"));
  MKB_ASSIGN_OR_RETURN(v1::AttemptState state,
                       ParseState(select.ColumnText(0), absl::StrCat("trial ", trial_id)));
  return CurrentTry{state, static_cast<int>(select.ColumnInt(1))};
}

bool HasStartedTry(v1::AttemptState state) {
  return state == v1::ATTEMPT_RUNNING || state == v1::ATTEMPT_FINISHED ||
         state == v1::ATTEMPT_SKIPPED || state == v1::ATTEMPT_FAILED;
}

absl::Status NotInState(const std::string& path, const std::string& trial_id,
                        const CurrentTry& current, absl::string_view expected) {
  return absl::FailedPreconditionError(absl::StrCat(path, ": trial '", trial_id, "' is ",
                                                    StateText(current.state), " (try ",
                                                    current.try_number, "), expected ", expected));
}

absl::Status WriteEnded(SqliteDatabase& db, const v1::Attempt& attempt) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement update,
      db.Prepare("UPDATE trials SET state = ?, attempt = ?, error = ?, passed = ?, speedup = ?, "
                 "final_status = ?, best_submission = ?, stop_reason = ?, finished_unix = ?, "
                 "updated_unix = ? WHERE trial_id = ? AND try_number = ?"));
  const std::string bytes = WithoutTrajectory(attempt).SerializeAsString();
  const v1::Verdict& final = attempt.final();
  const bool has_final = attempt.has_final();
  const double now = NowUnix();
  MKB_RETURN_IF_ERROR(update.BindAll(
      StateText(attempt.state()), Blob{bytes}, attempt.error(),
      has_final ? std::optional<bool>(final.passed()) : std::nullopt,
      Finite(has_final && final.has_speedup_vs_eager(), final.speedup_vs_eager()),
      has_final ? std::optional<std::string>(VerdictStatusName(final.status())) : std::nullopt,
      attempt.best_submission(),
      EnumShortName(v1::StopReason_descriptor()->FindValueByNumber(attempt.stop_reason())),
      attempt.finished_unix() > 0 ? attempt.finished_unix() : now, now, attempt.id(),
      attempt.try_number()));
  return update.Run();
}

absl::Status MarkRunning(SqliteDatabase& db, const std::string& path, const v1::TrialSpec& spec) {
  MKB_ASSIGN_OR_RETURN(CurrentTry current, ReadCurrentTry(db, spec.trial_id()));
  if ((current.state != v1::ATTEMPT_PENDING && current.state != v1::ATTEMPT_BLOCKED) ||
      current.try_number >= spec.try_number()) {
    return NotInState(path, spec.trial_id(), current,
                      absl::StrCat("pending before try ", spec.try_number()));
  }
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement update,
      db.Prepare("UPDATE trials SET state = 'running', try_number = ?, spec = ?, "
                 "task_fingerprint = ?, skill_digest = ?, error = '', started_unix = ?, "
                 "finished_unix = NULL, updated_unix = ? WHERE trial_id = ?"));
  const std::string bytes = spec.SerializeAsString();
  const double now = NowUnix();
  MKB_RETURN_IF_ERROR(update.BindAll(spec.try_number(), Blob{bytes}, spec.task_fingerprint(),
                                     spec.skill_in().sha256(), now, now, spec.trial_id()));
  return update.Run();
}

absl::Status ArchiveCurrentTry(SqliteDatabase& db, const std::string& trial_id,
                               const std::string& reason, const std::string& error,
                               const char* next_state) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement copy,
      db.Prepare("INSERT INTO archived_tries SELECT trial_id, try_number, ?, state, "
                 "CASE WHEN ? = '' THEN error ELSE ? END, task_fingerprint, skill_digest, spec, "
                 "attempt, started_unix, ? FROM trials WHERE trial_id = ?"));
  MKB_RETURN_IF_ERROR(copy.BindAll(reason, error, error, NowUnix(), trial_id));
  MKB_RETURN_IF_ERROR(copy.Run());
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement reset,
      db.Prepare("UPDATE trials SET state = ?, attempt = NULL, error = '', "
                 "passed = NULL, speedup = NULL, final_status = NULL, best_submission = NULL, "
                 "stop_reason = NULL, started_unix = NULL, finished_unix = NULL, "
                 "updated_unix = ? WHERE trial_id = ?"));
  MKB_RETURN_IF_ERROR(reset.BindAll(next_state, NowUnix(), trial_id));
  return reset.Run();
}

absl::StatusOr<std::vector<ArchivedTry>> ReadArchivedTries(SqliteDatabase& db,
                                                           const std::string& trial_id) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       db.Prepare("SELECT try_number, reason, state, error, task_fingerprint, "
                                  "skill_digest, attempt, archived_unix FROM archived_tries "
                                  "WHERE trial_id = ? ORDER BY try_number"));
  MKB_RETURN_IF_ERROR(select.BindAll(trial_id));
  std::vector<ArchivedTry> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    ArchivedTry& archived = out.emplace_back();
    archived.trial_id = trial_id;
    archived.try_number = static_cast<int>(select.ColumnInt(0));
    archived.reason = select.ColumnText(1);
    const std::string where = absl::StrCat("archived try ", archived.try_number, " of ", trial_id);
    MKB_ASSIGN_OR_RETURN(archived.state, ParseState(select.ColumnText(2), where));
    archived.error = select.ColumnText(3);
    archived.task_fingerprint = select.ColumnText(4);
    archived.skill_digest = select.ColumnText(5);
    if (!select.IsNull(6)) {
      MKB_ASSIGN_OR_RETURN(archived.attempt,
                           ParseMessage<v1::Attempt>(select.ColumnText(6), where));
    }
    archived.archived_unix = select.ColumnDouble(7);
  }
  return out;
}

absl::StatusOr<std::optional<ArchivedTry>> RestorableTryIn(SqliteDatabase& db,
                                                           const std::string& trial_id) {
  MKB_ASSIGN_OR_RETURN(std::vector<ArchivedTry> tries, ReadArchivedTries(db, trial_id));
  if (tries.empty()) return std::optional<ArchivedTry>();
  ArchivedTry& last = tries.back();
  if (last.reason != kArchiveOutsidePlan || !last.attempt.has_value() ||
      (last.state != v1::ATTEMPT_FINISHED && last.state != v1::ATTEMPT_SKIPPED)) {
    return std::optional<ArchivedTry>();
  }
  return std::optional<ArchivedTry>(std::move(last));
}

absl::Status RestoreTry(SqliteDatabase& db, const ArchivedTry& restored) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement update,
      db.Prepare("UPDATE trials SET state = a.state, try_number = a.try_number, "
                 "task_fingerprint = a.task_fingerprint, skill_digest = a.skill_digest, "
                 "spec = a.spec, started_unix = a.started_unix, error = a.error "
                 "FROM (SELECT * FROM archived_tries WHERE trial_id = ?1 AND try_number = ?2) a "
                 "WHERE trials.trial_id = ?1"));
  MKB_RETURN_IF_ERROR(update.BindAll(restored.trial_id, restored.try_number));
  MKB_RETURN_IF_ERROR(update.Run());
  MKB_RETURN_IF_ERROR(WriteEnded(db, *restored.attempt));
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement remove,
      db.Prepare("DELETE FROM archived_tries WHERE trial_id = ? AND try_number = ?"));
  MKB_RETURN_IF_ERROR(remove.BindAll(restored.trial_id, restored.try_number));
  return remove.Run();
}

}  // namespace mkb::store_detail
