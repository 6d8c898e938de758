// The per-try tables: submissions, verdicts, skills, trajectory_events and usage, keyed by
// (trial, try). Writers replace the row they write (INSERT OR REPLACE); none checks the trial's
// state, which is the caller's (inside its transaction).
#ifndef LIBMKB_STORE_DETAIL_TRY_ROWS_H_
#define LIBMKB_STORE_DETAIL_TRY_ROWS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libmkb/store/detail/sqlite.h"
#include "libmkb/store/result_store.h"
#include "mkb/v1/attempt.pb.h"

namespace mkb::store_detail {

// Whether `skill` is one to store (it has text or a digest, or is flagged empty).
bool HasSkill(const v1::Skill& skill);

// `role`: "in" (what the try received) or "out" (the SKILL.md it left).
absl::Status WriteSkill(SqliteDatabase& db, const std::string& trial_id, int try_number,
                        const char* role, const v1::Skill& skill);
absl::Status WriteSubmission(SqliteDatabase& db, const std::string& trial_id, int try_number,
                             const v1::Submission& submission);
// `role`: "submission" (`index`: the submission's) or "final" (`index` -1).
absl::Status WriteVerdict(SqliteDatabase& db, const std::string& trial_id, int try_number,
                          const char* role, int index, const v1::Verdict& verdict);
absl::Status WriteTrajectoryEvent(SqliteDatabase& db, const std::string& trial_id, int try_number,
                                  const v1::TrajectoryEvent& event);
// `live`: a report of a running try, not the ended attempt's.
absl::Status WriteUsage(SqliteDatabase& db, const std::string& trial_id, int try_number, bool live,
                        const v1::Usage& usage);

// Writes what an ended attempt carries, replacing what live reports left for the try. The
// trajectory is replaced only when the attempt carries one.
absl::Status WriteAttemptDetails(SqliteDatabase& db, const std::string& trial_id, int try_number,
                                 const v1::Attempt& attempt);

// The trajectory of try `try_number` of a trial, in order.
absl::StatusOr<std::vector<v1::TrajectoryEvent>> ReadTrajectory(SqliteDatabase& db,
                                                                const std::string& trial_id,
                                                                int try_number);

// ResultStore::UsageOfTrials: usage of the tries of every trial of `experiment`, by trial id.
absl::StatusOr<std::map<std::string, TrialUsage>> ReadUsageOfTrials(SqliteDatabase& db,
                                                                    const std::string& experiment);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_TRY_ROWS_H_
