// The trials table (one row per trial: its current try) and the archived_tries table (its
// earlier tries), and the moves of a try between them. State changes are guarded by the state
// they expect; none opens a transaction, which is the caller's.
#ifndef LIBMKB_STORE_DETAIL_TRIAL_ROWS_H_
#define LIBMKB_STORE_DETAIL_TRIAL_ROWS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/detail/sqlite.h"
#include "libmkb/store/result_store.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/experiment.pb.h"

namespace mkb::store_detail {

// Columns of the trials table that make a TrialRecord, in order (ReadTrialRow).
inline constexpr char kTrialColumns[] =
    "trial_id, experiment, problem_slug, arm, model, dsl, replicate, state, try_number, "
    "task_fingerprint, skill_digest, spec, attempt, error, updated_unix";

// The TrialRecord of the current row of a SELECT of kTrialColumns.
absl::StatusOr<TrialRecord> ReadTrialRow(const SqliteStatement& row);

// The trials whose rows satisfy `condition` (SQL after WHERE, with a ? for each of `args`; it
// may end in ORDER BY and LIMIT), in the order the query gives.
template <typename... Args>
absl::StatusOr<std::vector<TrialRecord>> SelectTrials(SqliteDatabase& db,
                                                      absl::string_view condition,
                                                      const Args&... args) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare(absl::StrCat("SELECT ", kTrialColumns, " FROM trials WHERE ", condition)));
  MKB_RETURN_IF_ERROR(select.BindAll(args...));
  std::vector<TrialRecord> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    MKB_ASSIGN_OR_RETURN(out.emplace_back(), ReadTrialRow(select));
  }
  return out;
}

// The current state and try of a trial, inside a transaction.
struct CurrentTry {
  v1::AttemptState state;
  int try_number;
};

// NotFoundError when the trial is not in the store.
absl::StatusOr<CurrentTry> ReadCurrentTry(SqliteDatabase& db, const std::string& trial_id);

// Whether a trial in `state` has a current try that started (and can be archived).
bool HasStartedTry(v1::AttemptState state);

// FailedPreconditionError: the trial is in `current`, not in the `expected` state.
absl::Status NotInState(const std::string& path, const std::string& trial_id,
                        const CurrentTry& current, absl::string_view expected);

// Sets the ended-attempt columns of the trial's row, guarded by the try.
absl::Status WriteEnded(SqliteDatabase& db, const v1::Attempt& attempt);

// Moves a pending trial to its next try, running under `spec`. FailedPreconditionError
// (NotInState) when the trial is not pending before that try.
absl::Status MarkRunning(SqliteDatabase& db, const std::string& path, const v1::TrialSpec& spec);

// Copies the trial's current try to the archive with `reason` (and `error`, when not empty,
// in place of the try's own) and resets the trial's row to `next_state` with no attempt.
absl::Status ArchiveCurrentTry(SqliteDatabase& db, const std::string& trial_id,
                               const std::string& reason, const std::string& error,
                               const char* next_state);

// Archived tries of a trial, oldest first.
absl::StatusOr<std::vector<ArchivedTry>> ReadArchivedTries(SqliteDatabase& db,
                                                           const std::string& trial_id);

// ResultStore::RestorableTry: the try a RETIRED trial gets back when planned again, or nullopt.
absl::StatusOr<std::optional<ArchivedTry>> RestorableTryIn(SqliteDatabase& db,
                                                           const std::string& trial_id);

// Makes `restored` (RestorableTryIn) the current try of its RETIRED trial again.
absl::Status RestoreTry(SqliteDatabase& db, const ArchivedTry& restored);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_TRIAL_ROWS_H_
