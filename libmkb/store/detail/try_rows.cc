#include "libmkb/store/detail/try_rows.h"

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/names.h"
#include "libmkb/store/detail/stored_values.h"
#include "libmkb/store/detail/usage_sum.h"

namespace mkb::store_detail {
namespace {

absl::Status DeleteTryRows(SqliteDatabase& db, const char* table, const std::string& trial_id,
                           int try_number) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement remove,
      db.Prepare(absl::StrCat("DELETE FROM ", table, " WHERE trial_id = ? AND try_number = ?")));
  MKB_RETURN_IF_ERROR(remove.BindAll(trial_id, try_number));
  return remove.Run();
}

}  // namespace

absl::Status WriteSkill(SqliteDatabase& db, const std::string& trial_id, int try_number,
                        const char* role, const v1::Skill& skill) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement insert,
                       db.Prepare("INSERT OR REPLACE INTO skills VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(insert.BindAll(trial_id, try_number, role, skill.sha256(), skill.bytes(),
                                     skill.origin(), skill.source_attempt_id(),
                                     DslName(skill.source_dsl()), skill.source_model(),
                                     skill.flags().empty(), skill.flags().truncated(),
                                     skill.flags().contains_code(), skill.text()));
  return insert.Run();
}

bool HasSkill(const v1::Skill& skill) {
  return !skill.text().empty() || !skill.sha256().empty() || skill.flags().empty();
}

absl::Status WriteSubmission(SqliteDatabase& db, const std::string& trial_id, int try_number,
                             const v1::Submission& submission) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement insert,
                       db.Prepare("INSERT OR REPLACE INTO submissions VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(insert.BindAll(trial_id, try_number, submission.index(), submission.counted(),
                                     submission.at_agent_seconds(), submission.kernel_sha256(),
                                     submission.kernel_bytes(), submission.kernel_source()));
  return insert.Run();
}

absl::Status WriteVerdict(SqliteDatabase& db, const std::string& trial_id, int try_number,
                          const char* role, int index, const v1::Verdict& verdict) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement insert,
                       db.Prepare("INSERT OR REPLACE INTO verdicts VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  const std::string bytes = verdict.SerializeAsString();
  MKB_RETURN_IF_ERROR(insert.BindAll(
      trial_id, try_number, role, index, VerdictStatusName(verdict.status()), verdict.passed(),
      verdict.correct(), verdict.correct_draws(), verdict.total_draws(),
      Finite(verdict.has_speedup_vs_eager(), verdict.speedup_vs_eager()),
      Finite(verdict.has_speedup_span(), verdict.speedup_span()),
      Finite(verdict.kernel_parity().samples() > 0, verdict.kernel_parity().median_ms()),
      Finite(verdict.eager_parity().samples() > 0, verdict.eager_parity().median_ms()),
      verdict.message(), Blob{bytes}));
  return insert.Run();
}

absl::Status WriteTrajectoryEvent(SqliteDatabase& db, const std::string& trial_id, int try_number,
                                  const v1::TrajectoryEvent& event) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement insert,
                       db.Prepare("INSERT OR REPLACE INTO trajectory_events VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(insert.BindAll(trial_id, try_number, event.index(), event.t_seconds(),
                                     event.kind(), event.tool(), event.text(), event.json(),
                                     event.input_tokens(), event.output_tokens(), event.seconds()));
  return insert.Run();
}

absl::Status WriteUsage(SqliteDatabase& db, const std::string& trial_id, int try_number, bool live,
                        const v1::Usage& usage) {
  MKB_ASSIGN_OR_RETURN(SqliteStatement insert,
                       db.Prepare("INSERT OR REPLACE INTO usage VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(
      insert.BindAll(trial_id, try_number, live, usage.input_tokens(), usage.cached_input_tokens(),
                     usage.cache_write_tokens(), usage.output_tokens(), usage.reasoning_tokens(),
                     usage.requests(), usage.cost_usd(), usage.agent_seconds(),
                     usage.gpu_queue_seconds(), usage.llm_seconds(), usage.tool_seconds()));
  return insert.Run();
}

absl::Status WriteAttemptDetails(SqliteDatabase& db, const std::string& trial_id, int try_number,
                                 const v1::Attempt& attempt) {
  for (const char* table : {"submissions", "verdicts", "usage"}) {
    MKB_RETURN_IF_ERROR(DeleteTryRows(db, table, trial_id, try_number));
  }
  for (const v1::Submission& submission : attempt.submissions()) {
    MKB_RETURN_IF_ERROR(WriteSubmission(db, trial_id, try_number, submission));
    if (submission.has_verdict()) {
      MKB_RETURN_IF_ERROR(WriteVerdict(db, trial_id, try_number, "submission", submission.index(),
                                       submission.verdict()));
    }
  }
  if (attempt.has_final()) {
    MKB_RETURN_IF_ERROR(WriteVerdict(db, trial_id, try_number, "final", -1, attempt.final()));
  }
  if (HasSkill(attempt.skill_in())) {
    MKB_RETURN_IF_ERROR(WriteSkill(db, trial_id, try_number, "in", attempt.skill_in()));
  }
  if (HasSkill(attempt.skill_out())) {
    MKB_RETURN_IF_ERROR(WriteSkill(db, trial_id, try_number, "out", attempt.skill_out()));
  }
  MKB_RETURN_IF_ERROR(WriteUsage(db, trial_id, try_number, /*live=*/false, attempt.usage()));
  if (attempt.trajectory_size() > 0) {
    MKB_RETURN_IF_ERROR(DeleteTryRows(db, "trajectory_events", trial_id, try_number));
    for (const v1::TrajectoryEvent& event : attempt.trajectory()) {
      MKB_RETURN_IF_ERROR(WriteTrajectoryEvent(db, trial_id, try_number, event));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::TrajectoryEvent>> ReadTrajectory(SqliteDatabase& db,
                                                                const std::string& trial_id,
                                                                int try_number) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare("SELECT idx, t_seconds, kind, tool, text, json, input_tokens, output_tokens, "
                 "seconds FROM trajectory_events WHERE trial_id = ? AND try_number = ? "
                 "ORDER BY idx"));
  MKB_RETURN_IF_ERROR(select.BindAll(trial_id, try_number));
  std::vector<v1::TrajectoryEvent> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    v1::TrajectoryEvent& event = out.emplace_back();
    event.set_index(static_cast<int>(select.ColumnInt(0)));
    event.set_t_seconds(select.ColumnDouble(1));
    event.set_kind(select.ColumnText(2));
    event.set_tool(select.ColumnText(3));
    event.set_text(select.ColumnText(4));
    event.set_json(select.ColumnText(5));
    event.set_input_tokens(select.ColumnInt(6));
    event.set_output_tokens(select.ColumnInt(7));
    event.set_seconds(select.ColumnDouble(8));
  }
  return out;
}

absl::StatusOr<std::map<std::string, TrialUsage>> ReadUsageOfTrials(SqliteDatabase& db,
                                                                    const std::string& experiment) {
  // current: 1 for the current try's row, 0 for an archived try's that counts as interrupted.
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare(
          "SELECT u.trial_id, u.try_number = t.try_number AND t.state NOT IN ('pending', "
          "'blocked', 'retired') AS current, u.input_tokens, u.cached_input_tokens, "
          "u.cache_write_tokens, u.output_tokens, u.reasoning_tokens, u.requests, u.cost_usd, "
          "u.agent_seconds, u.gpu_queue_seconds, u.llm_seconds, u.tool_seconds "
          "FROM usage u JOIN trials t ON t.trial_id = u.trial_id "
          "LEFT JOIN archived_tries a ON a.trial_id = u.trial_id AND a.try_number = u.try_number "
          "WHERE t.experiment = ? AND ((u.try_number = t.try_number AND t.state NOT IN "
          "('pending', 'blocked', 'retired')) OR a.reason IN ('transient', 'failed', "
          "'interrupted')) ORDER BY u.trial_id, u.try_number"));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  std::map<std::string, TrialUsage> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    v1::Usage usage;
    usage.set_input_tokens(select.ColumnInt(2));
    usage.set_cached_input_tokens(select.ColumnInt(3));
    usage.set_cache_write_tokens(select.ColumnInt(4));
    usage.set_output_tokens(select.ColumnInt(5));
    usage.set_reasoning_tokens(select.ColumnInt(6));
    usage.set_requests(static_cast<int32_t>(select.ColumnInt(7)));
    usage.set_cost_usd(select.ColumnDouble(8));
    usage.set_agent_seconds(select.ColumnDouble(9));
    usage.set_gpu_queue_seconds(select.ColumnDouble(10));
    usage.set_llm_seconds(select.ColumnDouble(11));
    usage.set_tool_seconds(select.ColumnDouble(12));
    TrialUsage& trial = out[select.ColumnText(0)];
    if (select.ColumnInt(1) != 0) {
      trial.current = usage;
      continue;
    }
    ++trial.interrupted_tries;
    AddUsage(usage, &trial.interrupted);
  }
  return out;
}

}  // namespace mkb::store_detail
