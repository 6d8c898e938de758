#include "libmkb/store/detail/schema.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "libmkb/core/status_macros.h"
#include "libmkb/store/detail/migrations.h"

namespace mkb::store_detail {
namespace {

// PRAGMA application_id of a store ("MKB1").
constexpr int kApplicationId = 0x4d4b4231;

// Version 1.
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

// kMigrations[i] takes a store of version i + 1 to version i + 2 (detail/migrations.h).
using Migration = absl::Status (*)(SqliteDatabase&);
constexpr Migration kMigrations[] = {MigrateToVersion2};
constexpr int kSchemaVersion = 1 + static_cast<int>(std::size(kMigrations));

}  // namespace

int CurrentSchemaVersion() { return kSchemaVersion; }

absl::Status Migrate(SqliteDatabase& db, int64_t version) {
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    MKB_RETURN_IF_ERROR(kMigrations[v - 1](db));
  }
  return db.Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion, ";"));
}

absl::Status CreateSchema(SqliteDatabase& db) {
  MKB_RETURN_IF_ERROR(db.Exec(kSchema));
  MKB_RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA application_id = ", kApplicationId, ";")));
  return Migrate(db, 1);
}

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

}  // namespace mkb::store_detail
