// The results store (libmkb/store): schema and WAL, the trial lifecycle and its guards,
// archiving, live reports, table views, export, the statistics' input, the run lease and the
// integrity check.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/core/file.h"
#include "libmkb/model/defaults.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/store/export.h"
#include "libmkb/store/result_store.h"
#include "libmkb/store/stats_input.h"
#include "libmkb/store/table.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = mkb::v1;

class ScratchDir {
 public:
  ScratchDir() {
    path_ = fs::temp_directory_path() / absl::StrCat("mkb_store_test_", getpid(), "_", counter_++);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// Runs SQL on the store's file through a separate connection (another process would).
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

mkb::StoreOptions NoCreate() {
  mkb::StoreOptions options;
  options.create = false;
  return options;
}

v1::ExperimentSpec Experiment(const std::string& name = "exp") {
  v1::ExperimentSpec spec;
  spec.set_name(name);
  spec.set_model("fake/model");
  return spec;
}

v1::TrialSpec Trial(const std::string& arm, const std::string& problem = "p", int replicate = 0,
                    const std::string& experiment = "exp") {
  v1::TrialSpec spec;
  spec.set_experiment(experiment);
  spec.set_trial_id(absl::StrCat(experiment, "/", problem, "/", arm, "/r", replicate));
  spec.set_problem_slug(problem);
  spec.set_problem_number(7);
  spec.set_family(v1::MLP_NORM);
  spec.set_arm(arm);
  spec.set_dsl(absl::StrContains(arm, "tirx") ? v1::TIRX : v1::CUTEDSL);
  spec.set_model("fake/model");
  spec.set_replicate(replicate);
  spec.set_task_fingerprint("fp");
  return spec;
}

v1::Attempt Ended(const v1::TrialSpec& spec, bool passed = true, double speedup = 1.5) {
  v1::Attempt attempt;
  attempt.set_id(spec.trial_id());
  attempt.set_try_number(spec.try_number());
  attempt.set_state(v1::ATTEMPT_FINISHED);
  attempt.set_stop_reason(v1::STOP_FINISHED_BY_AGENT);
  for (int i = 0; i < 2; ++i) {
    v1::Submission* s = attempt.add_submissions();
    s->set_index(i);
    s->set_counted(i == 1);
    s->set_kernel_sha256(absl::StrCat("sha", i));
    s->set_kernel_source(i == 0 ? "" : "def solve(x):\n    return x, \"quoted\"\n");
    s->mutable_verdict()->set_status(i == 1 && passed ? v1::PASSED : v1::MISMATCH);
    s->mutable_verdict()->set_passed(i == 1 && passed);
  }
  attempt.mutable_final()->set_status(passed ? v1::PASSED : v1::MISMATCH);
  attempt.mutable_final()->set_passed(passed);
  if (passed) attempt.mutable_final()->set_speedup_vs_eager(speedup);
  attempt.set_best_submission(passed ? 1 : -1);
  attempt.mutable_skill_out()->set_text("Fuse the residual add into the norm, line 1,\nline 2.");
  attempt.mutable_skill_out()->set_sha256("abc");
  attempt.mutable_usage()->set_input_tokens(1200);
  attempt.mutable_usage()->set_output_tokens(300);
  attempt.mutable_usage()->set_cost_usd(0.02);
  for (int i = 0; i < 3; ++i) {
    v1::TrajectoryEvent* e = attempt.add_trajectory();
    e->set_index(i);
    e->set_kind(i == 0 ? "system" : "assistant");
    e->set_text(absl::StrCat("step ", i));
  }
  return attempt;
}

// Starts try `number` of `spec` and returns the spec as started.
v1::TrialSpec Start(mkb::ResultStore& store, v1::TrialSpec spec, int number) {
  spec.set_try_number(number);
  REQUIRE(store.StartTry(spec).ok());
  return spec;
}

int64_t CountRows(const mkb::ResultStore& store, const std::string& table) {
  return static_cast<int64_t>(store.ReadTable(table)->rows.size());
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("a store is created with its schema in WAL mode and reopened") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  CHECK(absl::IsNotFound(mkb::ResultStore::Open(path, NoCreate()).status()));
  {
    auto store = mkb::ResultStore::Open(path);
    REQUIRE(store.ok());
    REQUIRE(store->PutExperiment(Experiment()).ok());
    CHECK(fs::exists(path + "-wal"));
  }
  auto again = mkb::ResultStore::Open(path, NoCreate());
  REQUIRE(again.ok());
  const v1::ExperimentSpec spec = *again->GetExperiment("exp");
  CHECK(spec.replicates() == mkb::kDefaultReplicates);  // stored with defaults
  CHECK(spec.arms_size() == 4);
  CHECK(absl::IsNotFound(again->GetExperiment("other").status()));
  CHECK(again->ListExperiments()->size() == 1);
  CHECK(again->CheckIntegrity().ok());
}

TEST_CASE("a file that is not a store is refused, naming it") {
  ScratchDir dir;
  const std::string path = dir / "other.db";
  RawSql(path, "CREATE TABLE notes(x)");
  auto store = mkb::ResultStore::Open(path);
  REQUIRE(absl::IsFailedPrecondition(store.status()));
  CHECK(absl::StrContains(store.status().message(), path));
  CHECK(absl::StrContains(store.status().message(), "not a MetaKernelBench results store"));
}

mkb::StoreOptions ReadOnly() {
  mkb::StoreOptions options;
  options.read_only = true;
  return options;
}

TEST_CASE("a file that is not a store is refused before anything is written to it") {
  ScratchDir dir;
  const std::string foreign = dir / "foreign.db";
  RawSql(foreign, "CREATE TABLE notes(x); INSERT INTO notes VALUES (1)");
  const std::string empty = dir / "empty.db";
  { std::ofstream touch(empty); }
  const std::string text = dir / "notes.txt";
  { std::ofstream(text) << "not a database at all, just some text that is long enough\n"; }
  const std::string foreign_bytes = *mkb::ReadFile(foreign);
  // Read-only: each is refused, and no file is changed or created beside it.
  for (const auto& [path, words] :
       {std::pair<std::string, std::string>{foreign, "an SQLite database of something else"},
        {empty, "an empty file"},
        {text, "not an SQLite database"}}) {
    const std::string before = *mkb::ReadFile(path);
    auto store = mkb::ResultStore::Open(path, ReadOnly());
    REQUIRE(absl::IsFailedPrecondition(store.status()));
    CHECK(absl::StrContains(store.status().message(), path));
    CHECK(absl::StrContains(store.status().message(), words));
    CHECK(*mkb::ReadFile(path) == before);
    CHECK_FALSE(fs::exists(path + "-wal"));
  }
  // Writing opens refuse a foreign database without switching it to WAL.
  CHECK(absl::IsFailedPrecondition(mkb::ResultStore::Open(foreign).status()));
  CHECK(*mkb::ReadFile(foreign) == foreign_bytes);
  // A missing file is not created by a read-only open.
  CHECK(absl::IsNotFound(mkb::ResultStore::Open(dir / "missing.db", ReadOnly()).status()));
  CHECK_FALSE(fs::exists(dir / "missing.db"));
}

TEST_CASE("a store opened read-only reads, and refuses writes") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  {
    mkb::ResultStore store = *mkb::ResultStore::Open(path);
    REQUIRE(store.PutExperiment(Experiment()).ok());
  }
  mkb::ResultStore reader = *mkb::ResultStore::Open(path, ReadOnly());
  CHECK(reader.ListExperiments()->size() == 1);
  CHECK(reader.ReadTable("trials").ok());
  CHECK_FALSE(reader.PutExperiment(Experiment("other")).ok());
}

// A store of schema version 1, as that version wrote it: blocked trials left pending.
void DowngradeToVersion1(const std::string& path) {
  RawSql(path,
         "UPDATE trials SET state = 'pending', error = '' WHERE state = 'blocked'; "
         "PRAGMA user_version = 1;");
}

TEST_CASE("a store of schema version 1 is migrated: trials that could not start are blocked") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  const v1::TrialSpec source = Trial("solo_cutedsl");
  const v1::TrialSpec skill = Trial("cutedsl2tirx_skill");
  const v1::TrialSpec waiting = Trial("cutedsl2tirx_skill", "q");  // its source is pending
  {
    mkb::ResultStore store = *mkb::ResultStore::Open(path);
    REQUIRE(store.PutExperiment(Experiment()).ok());
    REQUIRE(store.PlanTrials({source, skill, Trial("solo_cutedsl", "q"), waiting}).ok());
    Start(store, source, 1);
    REQUIRE(store.FailTry(source.trial_id(), 1, "provider down").ok());
  }
  DowngradeToVersion1(path);
  const std::string version1 = *mkb::ReadFile(path);

  // Read-only: migrated in a copy in memory; the file keeps its bytes and its version.
  {
    mkb::ResultStore reader = *mkb::ResultStore::Open(path, ReadOnly());
    const mkb::TrialRecord blocked = *reader.GetTrial(skill.trial_id());
    CHECK(blocked.state == v1::ATTEMPT_BLOCKED);
    CHECK(absl::StrContains(blocked.error, "its source exp/p/solo_cutedsl/r0 failed"));
    CHECK(reader.GetTrial(waiting.trial_id())->state == v1::ATTEMPT_PENDING);
  }
  CHECK(*mkb::ReadFile(path) == version1);

  // A writing open migrates the file itself, once.
  {
    mkb::ResultStore store = *mkb::ResultStore::Open(path);
    CHECK(store.GetTrial(skill.trial_id())->state == v1::ATTEMPT_BLOCKED);
    CHECK(store.GetTrial(waiting.trial_id())->state == v1::ATTEMPT_PENDING);
    CHECK(store.CheckIntegrity().ok());
  }
  RawSql(path, "PRAGMA user_version = 99");
  auto newer = mkb::ResultStore::Open(path);
  REQUIRE(absl::IsFailedPrecondition(newer.status()));
  CHECK(absl::StrContains(newer.status().message(), "schema version 99"));
}

TEST_CASE("blocked trials: recorded with why, and startable once their source resolves") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec skill = Trial("cutedsl2tirx_skill");
  REQUIRE(store.PlanTrials({skill}).ok());
  REQUIRE(store.BlockTrial(skill.trial_id(), "its source failed").ok());
  REQUIRE(store.BlockTrial(skill.trial_id(), "its source is still failing").ok());
  const mkb::TrialRecord blocked = *store.GetTrial(skill.trial_id());
  CHECK(blocked.state == v1::ATTEMPT_BLOCKED);
  CHECK(blocked.error == "its source is still failing");
  CHECK_FALSE(blocked.resolved());
  CHECK(absl::IsFailedPrecondition(store.ArchiveTry(skill.trial_id(), 0, "failed", "")));
  REQUIRE(store.FinishTry(Ended(Start(store, skill, 1))).ok());
  CHECK(absl::IsFailedPrecondition(store.BlockTrial(skill.trial_id(), "late")));
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("trials outside the plan are retired, and get their try back when planned again") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec kept = Trial("solo_tirx", "p");
  const v1::TrialSpec finished = Trial("solo_tirx", "q");
  const v1::TrialSpec failed = Trial("solo_cutedsl", "q");
  const v1::TrialSpec never = Trial("solo_tirx", "r");
  REQUIRE(store.PlanTrials({kept, finished, failed, never}).ok());
  REQUIRE(store.FinishTry(Ended(Start(store, kept, 1))).ok());
  REQUIRE(store.FinishTry(Ended(Start(store, finished, 1))).ok());
  Start(store, failed, 1);
  REQUIRE(store.FailTry(failed.trial_id(), 1, "boom").ok());

  auto retired = store.RetireTrialsOutside("exp", {kept.trial_id()});
  REQUIRE(retired.ok());
  CHECK(*retired ==
        std::vector<std::string>{failed.trial_id(), finished.trial_id(), never.trial_id()});
  CHECK(store.RetireTrialsOutside("exp", {kept.trial_id()})->empty());  // already retired
  for (const v1::TrialSpec& spec : {finished, failed, never}) {
    CHECK(store.GetTrial(spec.trial_id())->state == v1::ATTEMPT_RETIRED);
  }
  auto archived = *store.ArchivedTries(finished.trial_id());
  REQUIRE(archived.size() == 1);
  CHECK(archived[0].reason == mkb::kArchiveOutsidePlan);
  CHECK(store.ListPlannedTrials("exp")->size() == 1);
  CHECK(store.ListTrials("exp")->size() == 4);
  CHECK(store.CheckIntegrity().ok());
  CHECK(store.RestorableTry(finished.trial_id())->has_value());
  CHECK_FALSE(store.RestorableTry(failed.trial_id())->has_value());  // failed: it reruns

  // Planned again: the finished try comes back as it was; the others are pending again.
  REQUIRE(store.PlanTrials({kept, finished, failed, never}).ok());
  const mkb::TrialRecord back = *store.GetTrial(finished.trial_id());
  CHECK(back.state == v1::ATTEMPT_FINISHED);
  CHECK(back.try_number == 1);
  REQUIRE(back.attempt.has_value());
  CHECK(back.attempt->final().speedup_vs_eager() == 1.5);
  CHECK(store.ArchivedTries(finished.trial_id())->empty());
  CHECK(store.GetTrial(failed.trial_id())->state == v1::ATTEMPT_PENDING);
  CHECK(store.GetTrial(never.trial_id())->state == v1::ATTEMPT_PENDING);
  CHECK(store.ListPlannedTrials("exp")->size() == 4);
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("usage of a trial's tries: the current one, and those ended without a result") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec spec = Trial("solo_tirx");
  const v1::TrialSpec stale = Trial("solo_cutedsl");
  REQUIRE(store.PlanTrials({spec, stale}).ok());
  v1::Usage live;
  live.set_input_tokens(500);
  live.set_cost_usd(0.25);
  for (int attempt = 1; attempt <= 2; ++attempt) {  // killed, then retried after a 529
    Start(store, spec, attempt);
    REQUIRE(store.RecordLiveUsage(spec.trial_id(), attempt, live).ok());
    REQUIRE(store
                .ArchiveTry(spec.trial_id(), attempt,
                            attempt == 1 ? mkb::kArchiveInterrupted : mkb::kArchiveTransient, "")
                .ok());
  }
  REQUIRE(store.FinishTry(Ended(Start(store, spec, 3))).ok());
  REQUIRE(store.FinishTry(Ended(Start(store, stale, 1))).ok());
  REQUIRE(store.ArchiveTry(stale.trial_id(), 1, mkb::kArchiveStale, "changed").ok());

  auto usage = store.UsageOfTrials("exp");
  REQUIRE(usage.ok());
  const mkb::TrialUsage& u = usage->at(spec.trial_id());
  REQUIRE(u.current.has_value());
  CHECK(u.current->input_tokens() == 1200);
  CHECK(u.interrupted_tries == 2);
  CHECK(u.interrupted.input_tokens() == 1000);
  CHECK(u.interrupted.cost_usd() == 0.5);
  CHECK(usage->count(stale.trial_id()) == 0);  // a stale try is another result, not this one's

  auto cells = mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.ok());
  REQUIRE(cells->size() == 2);  // cutedsl2tirx (its base: solo_tirx) and tirx2cutedsl
  const v1::ArmResult& base = (*cells)[0].base();
  CHECK(base.state() == v1::ATTEMPT_FINISHED);
  CHECK(base.usage().input_tokens() == 1200);
  CHECK(base.interrupted_tries() == 2);
  CHECK(base.interrupted_usage().cost_usd() == 0.5);
  CHECK((*cells)[0].source().state() == v1::ATTEMPT_PENDING);
}

TEST_CASE("the trial lifecycle: planned once, started once, ended once") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec planned = Trial("solo_tirx");
  REQUIRE(store.PlanTrials({planned}).ok());
  REQUIRE(store.PlanTrials({planned}).ok());  // idempotent: no duplicate
  CHECK(store.ListTrials("exp")->size() == 1);
  mkb::TrialRecord record = *store.GetTrial(planned.trial_id());
  CHECK(record.state == v1::ATTEMPT_PENDING);
  CHECK(record.try_number == 0);
  CHECK(record.spec.family() == v1::MLP_NORM);

  const v1::TrialSpec started = Start(store, planned, 1);
  CHECK(absl::IsFailedPrecondition(store.StartTry(started)));  // already running
  v1::Attempt wrong_try = Ended(started);
  wrong_try.set_try_number(2);
  CHECK(absl::IsFailedPrecondition(store.FinishTry(wrong_try)));

  REQUIRE(store.FinishTry(Ended(started)).ok());
  CHECK(absl::IsFailedPrecondition(store.FinishTry(Ended(started))));  // not twice
  record = *store.GetTrial(planned.trial_id());
  CHECK(record.state == v1::ATTEMPT_FINISHED);
  CHECK(record.resolved());
  REQUIRE(record.attempt.has_value());
  CHECK(record.attempt->trajectory_size() == 0);
  CHECK(record.attempt->submissions_size() == 2);
  CHECK(store.Trajectory(planned.trial_id())->size() == 3);
  CHECK(CountRows(store, "submissions") == 2);
  CHECK(CountRows(store, "verdicts") == 3);  // two submissions and the final regrade
  CHECK(CountRows(store, "skills") == 1);
  CHECK(CountRows(store, "usage") == 1);
  CHECK(CountRows(store, "trajectories") == 3);
  CHECK(absl::IsNotFound(store.GetTrial("exp/nope").status()));
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("archiving keeps a try's rows under its number and makes the trial pending") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec planned = Trial("solo_cutedsl");
  REQUIRE(store.PlanTrials({planned}).ok());
  const v1::TrialSpec first = Start(store, planned, 1);
  v1::Submission live;
  live.set_index(0);
  live.set_counted(true);
  REQUIRE(store.RecordLiveSubmission(planned.trial_id(), 1, live).ok());
  REQUIRE(store.ArchiveTry(planned.trial_id(), 1, mkb::kArchiveTransient, "HTTP 500").ok());
  CHECK(absl::IsFailedPrecondition(
      store.ArchiveTry(planned.trial_id(), 1, mkb::kArchiveTransient, "again")));
  mkb::TrialRecord record = *store.GetTrial(planned.trial_id());
  CHECK(record.state == v1::ATTEMPT_PENDING);
  CHECK(record.try_number == 1);
  CHECK(absl::IsFailedPrecondition(store.StartTry(first)));  // try 1 is spent

  const v1::TrialSpec second = Start(store, planned, 2);
  REQUIRE(store.FinishTry(Ended(second)).ok());
  auto archived = *store.ArchivedTries(planned.trial_id());
  REQUIRE(archived.size() == 1);
  CHECK(archived[0].try_number == 1);
  CHECK(archived[0].reason == "transient");
  CHECK(archived[0].state == v1::ATTEMPT_RUNNING);
  CHECK(archived[0].error == "HTTP 500");
  const mkb::Table submissions = *store.ReadTable("submissions");
  REQUIRE(submissions.rows.size() == 3);  // the archived try's live one and the attempt's two
  const int current = submissions.ColumnIndex("current");
  CHECK_FALSE(std::get<bool>(submissions.rows[0][current]));
  CHECK(std::get<bool>(submissions.rows[1][current]));
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("live reports: stored for the running try only") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec planned = Trial("solo_tirx");
  REQUIRE(store.PlanTrials({planned}).ok());
  v1::TrajectoryEvent event;
  event.set_index(0);
  event.set_text("before start");
  REQUIRE(store.RecordLiveTrajectoryEvent(planned.trial_id(), 1, event).ok());
  CHECK(CountRows(store, "trajectories") == 0);  // not running: ignored
  const v1::TrialSpec started = Start(store, planned, 1);
  event.set_text("running");
  REQUIRE(store.RecordLiveTrajectoryEvent(planned.trial_id(), 1, event).ok());
  v1::Usage usage;
  usage.set_input_tokens(10);
  REQUIRE(store.RecordLiveUsage(planned.trial_id(), 1, usage).ok());
  CHECK(store.Trajectory(planned.trial_id())->at(0).text() == "running");
  v1::Attempt attempt = Ended(started);
  attempt.clear_trajectory();  // an executor that only reported live
  REQUIRE(store.FinishTry(attempt).ok());
  CHECK(store.Trajectory(planned.trial_id())->size() == 1);  // the live events stay
  const mkb::Table usage_table = *store.ReadTable("usage");
  REQUIRE(usage_table.rows.size() == 1);
  CHECK_FALSE(std::get<bool>(usage_table.rows[0][usage_table.ColumnIndex("live")]));
  CHECK(std::get<int64_t>(usage_table.rows[0][usage_table.ColumnIndex("input_tokens")]) == 1200);
}

TEST_CASE("table views: trials with indexed columns; an unknown table is named") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  REQUIRE(store.PutExperiment(Experiment("other")).ok());
  const v1::TrialSpec a = Trial("solo_tirx");
  const v1::TrialSpec b = Trial("solo_tirx", "p", 0, "other");
  REQUIRE(store.PlanTrials({a, b}).ok());
  REQUIRE(store.FinishTry(Ended(Start(store, a, 1), true, 2.5)).ok());
  const mkb::Table trials = *store.ReadTable("trials", "exp");
  REQUIRE(trials.rows.size() == 1);
  auto cell = [&](const char* column) { return trials.rows[0][trials.ColumnIndex(column)]; };
  CHECK(std::get<std::string>(cell("state")) == "finished");
  CHECK(std::get<bool>(cell("passed")));
  CHECK(std::get<double>(cell("speedup")) == 2.5);
  CHECK(std::get<std::string>(cell("final_status")) == "passed");
  CHECK(std::get<int64_t>(cell("submissions")) == 2);
  CHECK(std::get<int64_t>(cell("counted_submissions")) == 1);
  CHECK(std::get<int64_t>(cell("input_tokens")) == 1200);
  CHECK(std::get<std::string>(cell("family")) == "mlp_norm");
  CHECK(store.ReadTable("trials")->rows.size() == 2);
  const mkb::Table attempts = *store.ReadTable("attempts");
  REQUIRE(attempts.rows.size() == 1);
  CHECK(absl::StrContains(std::get<std::string>(attempts.rows[0][2]), "\"best_submission\":1"));
  auto unknown = store.ReadTable("nope");
  REQUIRE(absl::IsInvalidArgument(unknown.status()));
  CHECK(absl::StrContains(unknown.status().message(), "tables are experiments, trials"));
}

TEST_CASE("export: one file per table, JSON Lines with nested messages, CSV quoted") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec a = Trial("solo_tirx");
  REQUIRE(store.PlanTrials({a}).ok());
  REQUIRE(store.FinishTry(Ended(Start(store, a, 1))).ok());

  mkb::ExportOptions options;
  options.directory = dir / "jsonl";
  auto files = mkb::ExportStore(store, options);
  REQUIRE(files.ok());
  CHECK(files->size() == mkb::ExportTableNames().size());
  std::istringstream attempts(*mkb::ReadFile(options.directory + "/attempts.jsonl"));
  std::string line;
  REQUIRE(std::getline(attempts, line));
  const auto row = nlohmann::json::parse(line);
  CHECK(row["trial_id"] == a.trial_id());
  CHECK(row["attempt"]["final"]["status"] == "PASSED");  // nested, not a string
  CHECK(row["attempt"]["submissions"].size() == 2);

  options.directory = dir / "csv";
  options.format = mkb::ExportFormat::kCsv;
  options.tables = {"submissions", "cells"};
  files = mkb::ExportStore(store, options);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 2);
  const std::string csv = *mkb::ReadFile(options.directory + "/submissions.csv");
  CHECK(absl::StartsWith(csv, "trial_id,try_number,current,index,counted"));
  CHECK(absl::StrContains(csv, "\"def solve(x):\n    return x, \"\"quoted\"\"\n\""));
  CHECK(absl::IsInvalidArgument(mkb::ParseExportFormat("xlsx").status()));
  options.tables = {"nope"};
  CHECK(absl::IsInvalidArgument(mkb::ExportStore(store, options).status()));
}

TEST_CASE("the statistics' input: one cell per skill arm, problem and replicate") {
  ScratchDir dir;
  mkb::ResultStore store = *mkb::ResultStore::Open(dir / "results.db");
  REQUIRE(store.PutExperiment(Experiment()).ok());  // the four standard arms
  std::vector<v1::TrialSpec> specs;
  for (const v1::ArmSpec& arm : mkb::StandardArms()) specs.push_back(Trial(arm.name()));
  REQUIRE(store.PlanTrials(specs).ok());
  for (const v1::TrialSpec& spec : specs) {
    if (spec.arm() == "tirx2cutedsl_skill") continue;  // left pending: unresolved
    REQUIRE(store.FinishTry(Ended(Start(store, spec, 1), spec.arm() != "solo_tirx")).ok());
  }
  auto cells = mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.ok());
  REQUIRE(cells->size() == 2);
  const v1::CellReplicate& c2t = (*cells)[0];
  CHECK(c2t.direction() == "cutedsl2tirx");
  CHECK(c2t.family() == v1::MLP_NORM);
  CHECK(c2t.source().arm() == "solo_cutedsl");
  CHECK(c2t.source().passed());
  CHECK_FALSE(c2t.base().passed());
  CHECK(c2t.skill().resolved());
  CHECK(c2t.skill().speedup() == 1.5);
  CHECK(c2t.skill().usage().input_tokens() == 1200);
  const v1::CellReplicate& t2c = (*cells)[1];
  CHECK(t2c.direction() == "tirx2cutedsl");
  CHECK_FALSE(t2c.skill().resolved());
  CHECK(mkb::stats::ValidateCellReplicates(*cells).ok());
  const mkb::Table table = mkb::CellReplicateTable(*cells);
  CHECK(table.columns.size() == 5 + 4 * 17);
  CHECK(table.rows.size() == 2);
  CHECK(std::holds_alternative<std::monostate>(table.rows[0][table.ColumnIndex("control_arm")]));
  CHECK(std::get<bool>(table.rows[0][table.ColumnIndex("skill_resolved")]));
}

TEST_CASE("the run lease: refused while its holder lives, taken over once it died") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  mkb::ResultStore store = *mkb::ResultStore::Open(path);
  REQUIRE(store.AcquireRunLease("exp").ok());
  REQUIRE(store.AcquireRunLease("exp").ok());  // its own lease
  REQUIRE(store.ReleaseRunLease("exp").ok());

  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  RawSql(path,
         absl::StrCat("INSERT INTO run_leases VALUES ('exp', '", host, "', ", child, ", 0, 0)"));
  auto refused = store.AcquireRunLease("exp");
  REQUIRE(absl::IsFailedPrecondition(refused));
  CHECK(absl::StrContains(refused.message(), absl::StrCat("process ", child)));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  CHECK(store.AcquireRunLease("exp").ok());  // the holder died: taken over
}

TEST_CASE("the integrity check finds broken invariants") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  mkb::ResultStore store = *mkb::ResultStore::Open(path);
  REQUIRE(store.PutExperiment(Experiment()).ok());
  const v1::TrialSpec a = Trial("solo_tirx");
  REQUIRE(store.PlanTrials({a}).ok());
  REQUIRE(store.CheckIntegrity().ok());
  RawSql(path, "UPDATE trials SET state = 'finished', try_number = 1");
  const absl::Status status = store.CheckIntegrity();
  REQUIRE(absl::IsDataLoss(status));
  CHECK(absl::StrContains(status.message(), "an ended trial without its attempt"));
}

}  // namespace
