#include "libmkb/store/result_store.h"

#include <errno.h>
#include <google/protobuf/util/json_util.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libmkb/core/clock.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"
#include "libmkb/store/detail/sqlite.h"

namespace mkb {

using store_detail::Blob;
using store_detail::Null;
using store_detail::SqliteDatabase;
using store_detail::SqliteStatement;
using store_detail::SqliteTransaction;

namespace {

// PRAGMA application_id of a store ("MKB1"). The schema version is PRAGMA user_version: 1 for
// kSchema, plus one for each migration of kMigrations (below) applied.
constexpr int kApplicationId = 0x4d4b4231;

// How long a lease held by a process on another host stays valid without renewal.
constexpr double kForeignLeaseSeconds = 600;

constexpr char kSchema[] = R"sql(
CREATE TABLE experiments(
  name TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  spec BLOB NOT NULL,                 -- mkb.v1.ExperimentSpec, defaults filled in
  created_unix REAL NOT NULL,
  updated_unix REAL NOT NULL);

CREATE TABLE run_leases(
  experiment TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  acquired_unix REAL NOT NULL,
  renewed_unix REAL NOT NULL);

-- One row per trial: its current try.
CREATE TABLE trials(
  trial_id TEXT PRIMARY KEY,
  experiment TEXT NOT NULL REFERENCES experiments(name),
  model TEXT NOT NULL,
  problem_slug TEXT NOT NULL,
  problem_number INTEGER NOT NULL,
  family TEXT NOT NULL,
  arm TEXT NOT NULL,
  dsl TEXT NOT NULL,
  replicate INTEGER NOT NULL,
  state TEXT NOT NULL,                -- pending, running, finished, skipped, failed (v2: blocked, retired)
  try_number INTEGER NOT NULL,        -- of the current try; 0 before the first
  task_fingerprint TEXT NOT NULL,
  skill_digest TEXT NOT NULL,         -- sha256 of the skill the try received; '' for solos
  spec BLOB NOT NULL,                 -- mkb.v1.TrialSpec (of the current try once started)
  attempt BLOB,                       -- mkb.v1.Attempt without its trajectory, once ended
  error TEXT NOT NULL DEFAULT '',
  passed INTEGER,                     -- of the final regrade
  speedup REAL,                       -- speedup_vs_eager of the final regrade
  final_status TEXT,
  best_submission INTEGER,
  stop_reason TEXT,
  started_unix REAL,
  finished_unix REAL,
  updated_unix REAL NOT NULL,
  UNIQUE(experiment, problem_slug, arm, replicate));
CREATE INDEX trials_by_state ON trials(experiment, state);
CREATE INDEX trials_by_attempt ON trials(model, arm, problem_slug, replicate, state);

-- Earlier tries of a trial: transient failures, failures rerun, interrupted and stale tries.
CREATE TABLE archived_tries(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  reason TEXT NOT NULL,               -- transient, failed, interrupted, stale (v2: outside_plan)
  state TEXT NOT NULL,                -- when archived
  error TEXT NOT NULL,
  task_fingerprint TEXT NOT NULL,
  skill_digest TEXT NOT NULL,
  spec BLOB NOT NULL,
  attempt BLOB,
  started_unix REAL,
  archived_unix REAL NOT NULL,
  PRIMARY KEY(trial_id, try_number));

-- Per try (current or archived): submissions, verdicts, skills, trajectory, usage.
CREATE TABLE submissions(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  counted INTEGER NOT NULL,
  at_agent_seconds REAL NOT NULL,
  kernel_sha256 TEXT NOT NULL,
  kernel_bytes INTEGER NOT NULL,
  kernel_source TEXT NOT NULL,
  PRIMARY KEY(trial_id, try_number, idx));

CREATE TABLE verdicts(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  role TEXT NOT NULL,                 -- submission, final
  idx INTEGER NOT NULL,               -- the submission's index; -1 for the final regrade
  status TEXT NOT NULL,
  passed INTEGER NOT NULL,
  correct INTEGER NOT NULL,
  correct_draws INTEGER NOT NULL,
  total_draws INTEGER NOT NULL,
  speedup_vs_eager REAL,
  speedup_span REAL,
  kernel_ms REAL,                     -- parity median
  eager_ms REAL,
  message TEXT NOT NULL,
  verdict BLOB NOT NULL,              -- mkb.v1.Verdict
  PRIMARY KEY(trial_id, try_number, role, idx));

CREATE TABLE skills(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  role TEXT NOT NULL,                 -- in (what the try received), out (the SKILL.md it left)
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  origin TEXT NOT NULL,
  source_attempt_id TEXT NOT NULL,
  source_dsl TEXT NOT NULL,
  source_model TEXT NOT NULL,
  empty INTEGER NOT NULL,
  truncated INTEGER NOT NULL,
  contains_code INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY(trial_id, try_number, role));

CREATE TABLE trajectory_events(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  t_seconds REAL NOT NULL,
  kind TEXT NOT NULL,
  tool TEXT NOT NULL,
  text TEXT NOT NULL,
  json TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  seconds REAL NOT NULL,
  PRIMARY KEY(trial_id, try_number, idx));

CREATE TABLE usage(
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  try_number INTEGER NOT NULL,
  live INTEGER NOT NULL,              -- 1: a report of a running try; 0: the ended attempt's
  input_tokens INTEGER NOT NULL,
  cached_input_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  agent_seconds REAL NOT NULL,
  gpu_queue_seconds REAL NOT NULL,
  llm_seconds REAL NOT NULL,
  tool_seconds REAL NOT NULL,
  PRIMARY KEY(trial_id, try_number));
)sql";

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

bool ProcessExists(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string StateText(v1::AttemptState state) { return AttemptStateName(state); }

absl::StatusOr<v1::AttemptState> ParseState(const std::string& text, const std::string& where) {
  const auto* value = FindEnumValue(v1::AttemptState_descriptor(), text);
  if (value == nullptr) {
    return absl::DataLossError(absl::StrCat(where, ": unknown trial state '", text, "'"));
  }
  return static_cast<v1::AttemptState>(value->number());
}

template <typename T>
absl::StatusOr<T> ParseMessage(const std::string& bytes, const std::string& where) {
  T message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError(
        absl::StrCat(where, ": stored ", T::descriptor()->name(), " does not parse"));
  }
  return message;
}

std::string MessageJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

std::optional<double> Finite(bool present, double value) {
  if (!present || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Columns of the trials table that make a TrialRecord, in order.
constexpr char kTrialColumns[] =
    "trial_id, experiment, problem_slug, arm, model, dsl, replicate, state, try_number, "
    "task_fingerprint, skill_digest, spec, attempt, error, updated_unix";

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

absl::Status DeleteTryRows(SqliteDatabase& db, const char* table, const std::string& trial_id,
                           int try_number) {
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement remove,
      db.Prepare(absl::StrCat("DELETE FROM ", table, " WHERE trial_id = ? AND try_number = ?")));
  MKB_RETURN_IF_ERROR(remove.BindAll(trial_id, try_number));
  return remove.Run();
}

// Writes what an ended attempt carries, replacing what live reports left for the try. The
// trajectory is replaced only when the attempt carries one.
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

// ---------------------------------------------------------------------------------------------
// Schema migrations. kMigrations[i] takes a store of version i + 1 to version i + 2, inside the
// transaction of Open; a new store gets kSchema (version 1) and then every migration, so that a
// new store and a migrated one are the same.

// Version 2: trials that could not start are BLOCKED (version 1 left them PENDING), and trials
// outside their experiment's plan can be RETIRED (nothing to migrate: version 1 kept them as
// they were). A PENDING conditioned trial whose source trial in its experiment failed or is
// blocked, or whose other model's source has no resolved trial, becomes BLOCKED.
absl::Status MigrateToVersion2(SqliteDatabase& db) {
  std::map<std::string, v1::ExperimentSpec> specs;
  {
    MKB_ASSIGN_OR_RETURN(SqliteStatement select, db.Prepare("SELECT name, spec FROM experiments"));
    while (true) {
      MKB_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      MKB_ASSIGN_OR_RETURN(
          specs[select.ColumnText(0)],
          ParseMessage<v1::ExperimentSpec>(select.ColumnText(1),
                                           absl::StrCat("experiment ", select.ColumnText(0))));
    }
  }
  struct Row {
    std::string id, experiment, model, problem, arm, state;
    int replicate = 0;
  };
  std::vector<Row> rows;
  std::map<std::tuple<std::string, std::string, std::string, int>, size_t> by_key;
  std::set<std::tuple<std::string, std::string, std::string, int>> resolved;  // model, arm, ...
  {
    MKB_ASSIGN_OR_RETURN(
        SqliteStatement select,
        db.Prepare("SELECT trial_id, experiment, model, problem_slug, arm, replicate, state "
                   "FROM trials ORDER BY trial_id"));
    while (true) {
      MKB_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      Row& r = rows.emplace_back();
      r.id = select.ColumnText(0);
      r.experiment = select.ColumnText(1);
      r.model = select.ColumnText(2);
      r.problem = select.ColumnText(3);
      r.arm = select.ColumnText(4);
      r.replicate = static_cast<int>(select.ColumnInt(5));
      r.state = select.ColumnText(6);
      by_key[{r.experiment, r.problem, r.arm, r.replicate}] = rows.size() - 1;
      if (r.state == "finished" || r.state == "skipped") {
        resolved.insert({r.model, r.arm, r.problem, r.replicate});
      }
    }
  }
  std::map<size_t, std::string> blocked;  // row -> why
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      if (r.state != "pending" || blocked.count(i) > 0) continue;
      auto spec = specs.find(r.experiment);
      if (spec == specs.end()) continue;
      const v1::ArmSpec* arm = nullptr;
      for (const v1::ArmSpec& candidate : spec->second.arms()) {
        if (candidate.name() == r.arm) arm = &candidate;
      }
      if (arm == nullptr || arm->skill().kind() != v1::SkillSource::ARM) continue;
      const std::string& source_model = arm->skill().model();
      std::string why;
      if (!source_model.empty() && source_model != spec->second.model()) {
        if (resolved.count({source_model, arm->skill().arm(), r.problem, r.replicate}) == 0) {
          why = absl::StrCat("no resolved trial of model '", source_model, "', arm '",
                             arm->skill().arm(),
                             "' at this problem and replicate in the store: run that model's "
                             "experiment first");
        }
      } else if (auto source =
                     by_key.find({r.experiment, r.problem, arm->skill().arm(), r.replicate});
                 source != by_key.end()) {
        const Row& s = rows[source->second];
        if (s.state == "failed") why = absl::StrCat("its source ", s.id, " failed");
        if (blocked.count(source->second) > 0)
          why = absl::StrCat("its source ", s.id, " is blocked");
      }
      if (!why.empty()) {
        blocked[i] = why;
        changed = true;
      }
    }
  }
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement update,
      db.Prepare("UPDATE trials SET state = 'blocked', error = ? WHERE trial_id = ? AND "
                 "state = 'pending'"));
  for (const auto& [i, why] : blocked) {
    update.Reset();
    MKB_RETURN_IF_ERROR(update.BindAll(why, rows[i].id));
    MKB_RETURN_IF_ERROR(update.Run());
  }
  return absl::OkStatus();
}

using Migration = absl::Status (*)(SqliteDatabase&);
constexpr Migration kMigrations[] = {MigrateToVersion2};
constexpr int kSchemaVersion = 1 + static_cast<int>(std::size(kMigrations));

// Applies the migrations from `version` on (the caller's transaction) and sets user_version.
absl::Status Migrate(SqliteDatabase& db, int64_t version) {
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    MKB_RETURN_IF_ERROR(kMigrations[v - 1](db));
  }
  return db.Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion, ";"));
}

// What the file holds: the application id, the schema version and the number of schema objects.
struct FileIdentity {
  int64_t application_id = 0;
  int64_t version = 0;
  int64_t objects = 0;
};

absl::StatusOr<FileIdentity> ReadIdentity(SqliteDatabase& db) {
  absl::StatusOr<SqliteStatement> ids = db.Prepare(
      "SELECT (SELECT application_id FROM pragma_application_id), "
      "(SELECT user_version FROM pragma_user_version), "
      "(SELECT COUNT(*) FROM sqlite_master)");
  absl::StatusOr<bool> row = ids.ok() ? ids->Step() : absl::StatusOr<bool>(ids.status());
  if (!row.ok()) {
    if (absl::IsDataLoss(row.status())) {  // SQLITE_NOTADB
      return absl::FailedPreconditionError(absl::StrCat(
          db.path(), ": not a MetaKernelBench results store (not an SQLite database)"));
    }
    return row.status();
  }
  return FileIdentity{ids->ColumnInt(0), ids->ColumnInt(1), ids->ColumnInt(2)};
}

// FailedPreconditionError unless the file is a store this build reads (or an empty database,
// when `empty_ok`).
absl::Status CheckStoreFile(const FileIdentity& id, const std::string& path, bool empty_ok) {
  if (id.application_id == 0 && id.objects == 0) {
    if (empty_ok) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a MetaKernelBench results store (an empty file)"));
  }
  if (id.application_id != kApplicationId) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": not a MetaKernelBench results store (an SQLite database of something else)"));
  }
  if (id.version < 1 || id.version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": store schema version ", id.version,
                                                      ", this build reads versions 1 to ",
                                                      kSchemaVersion));
  }
  return absl::OkStatus();
}

// The SQL of each table view; ?1 is the experiment ('' = all). Columns named *_json hold
// JSON; BLOB columns listed in the view's `messages` become such columns.
struct TableView {
  const char* name;
  const char* sql;
};

// The current try of a row of table `x`, for views over per-try tables.
#define MKB_CURRENT(x) \
  "(" x ".try_number = (SELECT t.try_number FROM trials t WHERE t.trial_id = " x ".trial_id))"
#define MKB_IN_EXPERIMENT(x) \
  "(?1 = '' OR " x ".trial_id IN (SELECT t.trial_id FROM trials t WHERE t.experiment = ?1))"

const TableView kViews[] = {
    {"experiments",
     "SELECT name, model, created_unix, updated_unix, spec AS spec_json FROM experiments "
     "WHERE ?1 = '' OR name = ?1 ORDER BY name"},
    {"trials",
     "SELECT t.trial_id, t.experiment, t.model, t.problem_slug, t.problem_number, t.family, t.arm, "
     "t.dsl, t.replicate, t.state, t.try_number, "
     "(SELECT COUNT(*) FROM archived_tries a WHERE a.trial_id = t.trial_id) AS archived_tries, "
     "t.passed, t.speedup, t.final_status, t.best_submission, t.stop_reason, "
     "(SELECT COUNT(*) FROM submissions s WHERE s.trial_id = t.trial_id "
     "   AND s.try_number = t.try_number) AS submissions, "
     "(SELECT COUNT(*) FROM submissions s WHERE s.trial_id = t.trial_id "
     "   AND s.try_number = t.try_number AND s.counted) AS counted_submissions, "
     "si.sha256 AS skill_in_sha256, si.origin AS skill_in_origin, "
     "so.sha256 AS skill_out_sha256, so.bytes AS skill_out_bytes, so.empty AS skill_out_empty, "
     "so.contains_code AS skill_out_contains_code, "
     "u.input_tokens, u.cached_input_tokens, u.cache_write_tokens, u.output_tokens, "
     "u.reasoning_tokens, u.requests, u.cost_usd, u.agent_seconds, u.gpu_queue_seconds, "
     "t.task_fingerprint, t.skill_digest, t.error, t.started_unix, t.finished_unix, "
     "t.updated_unix "
     "FROM trials t "
     "LEFT JOIN skills si ON si.trial_id = t.trial_id AND si.try_number = t.try_number "
     "  AND si.role = 'in' "
     "LEFT JOIN skills so ON so.trial_id = t.trial_id AND so.try_number = t.try_number "
     "  AND so.role = 'out' "
     "LEFT JOIN usage u ON u.trial_id = t.trial_id AND u.try_number = t.try_number "
     "WHERE ?1 = '' OR t.experiment = ?1 ORDER BY t.trial_id"},
    {"attempts",
     "SELECT t.trial_id, t.try_number, t.attempt AS attempt_json FROM trials t "
     "WHERE t.attempt IS NOT NULL AND (?1 = '' OR t.experiment = ?1) ORDER BY t.trial_id"},
    {"archived_tries",
     "SELECT a.trial_id, a.try_number, a.reason, a.state, a.error, a.task_fingerprint, "
     "a.skill_digest, a.started_unix, a.archived_unix, a.attempt AS attempt_json "
     "FROM archived_tries a WHERE " MKB_IN_EXPERIMENT("a") " ORDER BY a.trial_id, a.try_number"},
    {"submissions",
     "SELECT s.trial_id, s.try_number, " MKB_CURRENT(
         "s") " AS current, s.idx AS \"index\", "
              "s.counted, s.at_agent_seconds, s.kernel_sha256, s.kernel_bytes, v.status, v.passed, "
              "v.speedup_vs_eager, v.message, s.kernel_source "
              "FROM submissions s LEFT JOIN verdicts v ON v.trial_id = s.trial_id "
              "  AND v.try_number = s.try_number AND v.role = 'submission' AND v.idx = s.idx "
              "WHERE " MKB_IN_EXPERIMENT("s") " ORDER BY s.trial_id, s.try_number, s.idx"},
    {"verdicts",
     "SELECT v.trial_id, v.try_number, " MKB_CURRENT(
         "v") " AS current, v.role, "
              "v.idx AS \"index\", v.status, v.passed, v.correct, v.correct_draws, v.total_draws, "
              "v.speedup_vs_eager, v.speedup_span, v.kernel_ms, v.eager_ms, v.message, "
              "v.verdict AS verdict_json FROM verdicts v WHERE " MKB_IN_EXPERIMENT(
                  "v") " ORDER BY v.trial_id, v.try_number, v.role, v.idx"},
    {"skills",
     "SELECT k.trial_id, k.try_number, " MKB_CURRENT(
         "k") " AS current, k.role, k.sha256, "
              "k.bytes, k.origin, k.source_attempt_id, k.source_dsl, k.source_model, k.empty, "
              "k.truncated, k.contains_code, k.text FROM skills k WHERE " MKB_IN_EXPERIMENT(
                  "k") " ORDER BY k.trial_id, k.try_number, k.role"},
    {"trajectories", "SELECT e.trial_id, e.try_number, " MKB_CURRENT(
                         "e") " AS current, e.idx AS \"index\", "
                              "e.t_seconds, e.kind, e.tool, e.text, e.json, e.input_tokens, "
                              "e.output_tokens, e.seconds "
                              "FROM trajectory_events e WHERE " MKB_IN_EXPERIMENT(
                                  "e") " ORDER BY e.trial_id, e.try_number, e.idx"},
    {"usage",
     "SELECT u.trial_id, u.try_number, " MKB_CURRENT(
         "u") " AS current, u.live, "
              "u.input_tokens, u.cached_input_tokens, u.cache_write_tokens, u.output_tokens, "
              "u.reasoning_tokens, u.requests, u.cost_usd, u.agent_seconds, u.gpu_queue_seconds, "
              "u.llm_seconds, u.tool_seconds FROM usage u WHERE " MKB_IN_EXPERIMENT(
                  "u") " ORDER BY u.trial_id, u.try_number"},
};

#undef MKB_CURRENT
#undef MKB_IN_EXPERIMENT

// Columns of the views that SQLite holds as 0 / 1 and tables show as booleans.
bool IsBooleanColumn(const std::string& column) {
  static const char* const kBooleans[] = {"passed",          "counted",
                                          "current",         "live",
                                          "empty",           "truncated",
                                          "contains_code",   "correct",
                                          "skill_out_empty", "skill_out_contains_code"};
  for (const char* name : kBooleans) {
    if (column == name) return true;
  }
  return false;
}

// The message type stored in a BLOB column of a view, by the column's JSON name.
const google::protobuf::Descriptor* JsonColumnType(const std::string& column) {
  if (column == "spec_json") return v1::ExperimentSpec::descriptor();
  if (column == "attempt_json") return v1::Attempt::descriptor();
  if (column == "verdict_json") return v1::Verdict::descriptor();
  return nullptr;
}

}  // namespace

std::vector<std::string> StoreTableNames() {
  std::vector<std::string> names;
  for (const TableView& view : kViews) names.push_back(view.name);
  return names;
}

struct ResultStore::State {
  mutable absl::Mutex mutex;
  SqliteDatabase db ABSL_GUARDED_BY(mutex);
  std::string host = HostName();
  int64_t pid = getpid();
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
  MKB_ASSIGN_OR_RETURN(FileIdentity identity, ReadIdentity(db));
  MKB_RETURN_IF_ERROR(CheckStoreFile(identity, path, /*empty_ok=*/!options.read_only));
  if (options.read_only) {
    if (identity.version < kSchemaVersion) {
      // An older store is read through a migrated copy in memory; the file is left as it is.
      MKB_ASSIGN_OR_RETURN(SqliteDatabase copy, db.CopyToMemory());
      MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(copy));
      MKB_RETURN_IF_ERROR(Migrate(copy, identity.version));
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
  MKB_ASSIGN_OR_RETURN(identity, ReadIdentity(db));
  MKB_RETURN_IF_ERROR(CheckStoreFile(identity, path, /*empty_ok=*/true));
  if (identity.application_id == 0) {
    MKB_RETURN_IF_ERROR(db.Exec(kSchema));
    MKB_RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA application_id = ", kApplicationId, ";")));
    MKB_RETURN_IF_ERROR(Migrate(db, 1));
  } else if (identity.version < kSchemaVersion) {
    MKB_RETURN_IF_ERROR(Migrate(db, identity.version));
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
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement upsert,
      db.Prepare("INSERT INTO experiments VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT(name) DO "
                 "UPDATE SET model = ?2, spec = ?3, updated_unix = ?4"));
  const std::string bytes = filled.SerializeAsString();
  MKB_RETURN_IF_ERROR(upsert.BindAll(filled.name(), filled.model(), Blob{bytes}, NowUnix()));
  MKB_RETURN_IF_ERROR(upsert.Run());
  return transaction.Commit();
}

absl::StatusOr<v1::ExperimentSpec> ResultStore::GetExperiment(const std::string& name) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       state_->db.Prepare("SELECT spec FROM experiments WHERE name = ?"));
  MKB_RETURN_IF_ERROR(select.BindAll(name));
  MKB_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) {
    return absl::NotFoundError(absl::StrCat(path(), ": no experiment '", name, "'"));
  }
  return ParseMessage<v1::ExperimentSpec>(select.ColumnText(0), absl::StrCat("experiment ", name));
}

absl::StatusOr<std::vector<v1::ExperimentSpec>> ResultStore::ListExperiments() const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       state_->db.Prepare("SELECT name, spec FROM experiments ORDER BY name"));
  std::vector<v1::ExperimentSpec> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    MKB_ASSIGN_OR_RETURN(
        out.emplace_back(),
        ParseMessage<v1::ExperimentSpec>(select.ColumnText(1),
                                         absl::StrCat("experiment ", select.ColumnText(0))));
  }
  return out;
}

absl::Status ResultStore::AcquireRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  SqliteDatabase& db = state_->db;
  MKB_ASSIGN_OR_RETURN(SqliteTransaction transaction, SqliteTransaction::Begin(db));
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      db.Prepare("SELECT host, pid, renewed_unix FROM run_leases WHERE experiment = ?"));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  MKB_ASSIGN_OR_RETURN(bool held, select.Step());
  const double now = NowUnix();
  if (held) {
    const std::string host = select.ColumnText(0);
    const int64_t pid = select.ColumnInt(1);
    const double renewed = select.ColumnDouble(2);
    const bool mine = host == state_->host && pid == state_->pid;
    const bool live =
        host == state_->host ? ProcessExists(pid) : now - renewed < kForeignLeaseSeconds;
    if (!mine && live) {
      return absl::FailedPreconditionError(
          absl::StrCat(path(), ": experiment '", experiment, "' is being run by process ", pid,
                       " on ", host, "; wait for it to end (or stop it) before running it again"));
    }
  }
  select = SqliteStatement();
  MKB_ASSIGN_OR_RETURN(SqliteStatement upsert,
                       db.Prepare("INSERT OR REPLACE INTO run_leases VALUES (?, ?, ?, ?, ?)"));
  MKB_RETURN_IF_ERROR(upsert.BindAll(experiment, state_->host, state_->pid, now, now));
  MKB_RETURN_IF_ERROR(upsert.Run());
  return transaction.Commit();
}

absl::Status ResultStore::RenewRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement update,
                       state_->db.Prepare("UPDATE run_leases SET renewed_unix = ? "
                                          "WHERE experiment = ? AND host = ? AND pid = ?"));
  MKB_RETURN_IF_ERROR(update.BindAll(NowUnix(), experiment, state_->host, state_->pid));
  return update.Run();
}

absl::Status ResultStore::ReleaseRunLease(const std::string& experiment) {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement remove,
                       state_->db.Prepare("DELETE FROM run_leases "
                                          "WHERE experiment = ? AND host = ? AND pid = ?"));
  MKB_RETURN_IF_ERROR(remove.BindAll(experiment, state_->host, state_->pid));
  return remove.Run();
}

// ---------------------------------------------------------------------------------------------
// Trials

absl::StatusOr<TrialRecord> ResultStore::GetTrial(const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       state_->db.Prepare(absl::StrCat("SELECT ", kTrialColumns,
                                                       " FROM trials WHERE trial_id = ?")));
  MKB_RETURN_IF_ERROR(select.BindAll(trial_id));
  MKB_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return absl::NotFoundError(absl::StrCat(path(), ": no trial '", trial_id, "'"));
  return ReadTrialRow(select);
}

absl::StatusOr<std::vector<TrialRecord>> ResultStore::ListTrials(
    const std::string& experiment) const {
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement select,
                       state_->db.Prepare(absl::StrCat("SELECT ", kTrialColumns,
                                                       " FROM trials WHERE experiment = ? "
                                                       "ORDER BY trial_id")));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  std::vector<TrialRecord> out;
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    MKB_ASSIGN_OR_RETURN(out.emplace_back(), ReadTrialRow(select));
  }
  return out;
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
      SqliteStatement select,
      state_->db.Prepare(absl::StrCat(
          "SELECT ", kTrialColumns,
          " FROM trials WHERE model = ? AND arm = ? AND problem_slug = ? AND replicate = ? "
          "AND state IN ('finished', 'skipped') ORDER BY updated_unix DESC LIMIT 1")));
  MKB_RETURN_IF_ERROR(select.BindAll(model, arm, problem_slug, replicate));
  MKB_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return std::optional<TrialRecord>();
  MKB_ASSIGN_OR_RETURN(TrialRecord record, ReadTrialRow(select));
  return std::optional<TrialRecord>(std::move(record));
}

namespace {

// The current state and try of a trial, inside a transaction.
struct CurrentTry {
  v1::AttemptState state;
  int try_number;
};

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

// Whether a trial in `state` has a current try that started (and can be archived).
bool HasStartedTry(v1::AttemptState state) {
  return state == v1::ATTEMPT_RUNNING || state == v1::ATTEMPT_FINISHED ||
         state == v1::ATTEMPT_SKIPPED || state == v1::ATTEMPT_FAILED;
}

absl::Status ArchiveCurrentTry(SqliteDatabase& db, const std::string& trial_id,
                               const std::string& reason, const std::string& error,
                               const char* next_state);

absl::Status NotInState(const std::string& path, const std::string& trial_id,
                        const CurrentTry& current, absl::string_view expected) {
  return absl::FailedPreconditionError(absl::StrCat(path, ": trial '", trial_id, "' is ",
                                                    StateText(current.state), " (try ",
                                                    current.try_number, "), expected ", expected));
}

v1::Attempt WithoutTrajectory(const v1::Attempt& attempt) {
  v1::Attempt out = attempt;
  out.clear_trajectory();
  return out;
}

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

// Sets the ended-attempt columns of the trial's row, guarded by the try.
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

// Moves a pending trial to its next try, running under `spec` (the caller's transaction).
// FailedPreconditionError (NotInState) when the trial is not pending before that try.
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

}  // namespace

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

namespace {

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

// Makes `restored` (RestorableTryIn) the current try of its RETIRED trial again.
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

}  // namespace

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
                         RestorableTryIn(db, spec.trial_id()));
    if (restorable.has_value()) {
      MKB_RETURN_IF_ERROR(RestoreTry(db, *restorable));
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
  // current: 1 for the current try's row, 0 for an archived try's that counts as interrupted.
  MKB_ASSIGN_OR_RETURN(
      SqliteStatement select,
      state_->db.Prepare(
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
    v1::Usage& sum = trial.interrupted;
    sum.set_input_tokens(sum.input_tokens() + usage.input_tokens());
    sum.set_cached_input_tokens(sum.cached_input_tokens() + usage.cached_input_tokens());
    sum.set_cache_write_tokens(sum.cache_write_tokens() + usage.cache_write_tokens());
    sum.set_output_tokens(sum.output_tokens() + usage.output_tokens());
    sum.set_reasoning_tokens(sum.reasoning_tokens() + usage.reasoning_tokens());
    sum.set_requests(sum.requests() + usage.requests());
    sum.set_cost_usd(sum.cost_usd() + usage.cost_usd());
    sum.set_agent_seconds(sum.agent_seconds() + usage.agent_seconds());
    sum.set_gpu_queue_seconds(sum.gpu_queue_seconds() + usage.gpu_queue_seconds());
    sum.set_llm_seconds(sum.llm_seconds() + usage.llm_seconds());
    sum.set_tool_seconds(sum.tool_seconds() + usage.tool_seconds());
  }
  return out;
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

absl::StatusOr<std::vector<ArchivedTry>> ResultStore::ArchivedTries(
    const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  return ReadArchivedTries(state_->db, trial_id);
}

absl::StatusOr<std::optional<ArchivedTry>> ResultStore::RestorableTry(
    const std::string& trial_id) const {
  absl::MutexLock lock(&state_->mutex);
  return RestorableTryIn(state_->db, trial_id);
}

// ---------------------------------------------------------------------------------------------
// Reading

absl::StatusOr<Table> ResultStore::ReadTable(const std::string& name,
                                             const std::string& experiment) const {
  const TableView* view = nullptr;
  for (const TableView& candidate : kViews) {
    if (name == candidate.name) view = &candidate;
  }
  if (view == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("table: no table '", name, "'; tables are ",
                                                   absl::StrJoin(StoreTableNames(), ", ")));
  }
  absl::MutexLock lock(&state_->mutex);
  MKB_ASSIGN_OR_RETURN(SqliteStatement select, state_->db.Prepare(view->sql));
  MKB_RETURN_IF_ERROR(select.BindAll(experiment));
  Table table;
  table.name = name;
  const int columns = select.ColumnCount();
  std::vector<const google::protobuf::Descriptor*> message_types(columns, nullptr);
  std::vector<bool> booleans(columns, false);
  for (int i = 0; i < columns; ++i) {
    table.columns.push_back(select.ColumnName(i));
    message_types[i] = JsonColumnType(table.columns.back());
    booleans[i] = IsBooleanColumn(table.columns.back());
  }
  while (true) {
    MKB_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    std::vector<Table::Cell>& cells = table.rows.emplace_back(columns);
    for (int i = 0; i < columns; ++i) {
      switch (select.ColumnType(i)) {
        case SQLITE_INTEGER:
          if (booleans[i]) {
            cells[i] = select.ColumnInt(i) != 0;
          } else {
            cells[i] = select.ColumnInt(i);
          }
          break;
        case SQLITE_FLOAT:
          cells[i] = select.ColumnDouble(i);
          break;
        case SQLITE_TEXT:
          cells[i] = select.ColumnText(i);
          break;
        case SQLITE_BLOB: {
          if (message_types[i] == nullptr) {
            cells[i] = select.ColumnText(i);
            break;
          }
          std::unique_ptr<google::protobuf::Message> message(
              google::protobuf::MessageFactory::generated_factory()
                  ->GetPrototype(message_types[i])
                  ->New());
          if (!message->ParseFromString(select.ColumnText(i))) {
            return absl::DataLossError(absl::StrCat(path(), ": table ", name, " column ",
                                                    table.columns[i], ": a stored ",
                                                    message_types[i]->name(), " does not parse"));
          }
          cells[i] = MessageJson(*message);
          break;
        }
        default:
          break;  // NULL
      }
    }
  }
  return table;
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
