// The transfer protocol (libmkb/protocol) end to end on a fake executor: the plan and its
// order, dependencies, the concurrency limit, retries with archiving, stale detection,
// resume, skipped skills, other models' skills, live reports, the run lease and cancelling.
#include "libmkb/protocol/protocol.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libmkb/model/defaults.h"
#include "libmkb/protocol/plan.h"
#include "libmkb/protocol/skill_handoff.h"
#include "libmkb/protocol/thread_pool_scheduler.h"
#include "libmkb/protocol/trial_observer.h"
#include "libmkb/stats/cell_replicates.h"
#include "libmkb/stats/report.h"
#include "libmkb/store/result_store.h"
#include "libmkb/store/stats_input.h"
#include "libmkb/suite/suite.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = mkb::v1;

const std::string kSuiteRoot = std::string(MKB_SOURCE_DIR) + "/problems";

const mkb::Suite& TheSuite() {
  static const mkb::Suite* suite = new mkb::Suite(*mkb::Suite::Load(kSuiteRoot));
  return *suite;
}

// A scratch folder removed at destruction.
class ScratchDir {
 public:
  ScratchDir() {
    path_ =
        fs::temp_directory_path() / absl::StrCat("mkb_protocol_test_", getpid(), "_", counter_++);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

v1::ExperimentSpec Spec(const std::string& name = "exp", int replicates = 1) {
  v1::ExperimentSpec spec;
  spec.set_name(name);
  spec.set_model("fake/model");
  spec.add_problems("02");
  spec.add_problems("25");
  spec.add_problems("28");
  spec.set_replicates(replicates);
  spec.set_concurrency(2);
  spec.set_workload("small");
  spec.set_device(v1::CPU);
  return spec;
}

mkb::ProtocolOptions FastOptions() {
  mkb::ProtocolOptions options;
  options.retry_delay = absl::ZeroDuration();
  return options;
}

// A fake executor: deterministic attempts (passed, a speedup from the trial id, a skill that
// names the trial), optional per-trial behaviour, and a log of calls with start / end order.
class FakeExecutor : public mkb::TrialExecutor {
 public:
  using Behaviour = std::function<absl::StatusOr<v1::Attempt>(const v1::TrialSpec&, int call)>;

  struct Call {
    v1::TrialSpec spec;
    int start_seq;
    int end_seq;
  };

  absl::StatusOr<v1::Attempt> Run(const v1::TrialSpec& spec) override {
    int call_index;
    int calls_of_trial;
    {
      absl::MutexLock lock(&mutex_);
      call_index = static_cast<int>(calls_.size());
      calls_.push_back(Call{spec, seq_++, -1});
      calls_of_trial = ++calls_by_trial_[spec.trial_id()];
      ++running_;
      max_running_ = std::max(max_running_, running_);
    }
    if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(spec)));
    absl::StatusOr<v1::Attempt> result =
        behaviour ? behaviour(spec, calls_of_trial) : DefaultAttempt(spec);
    absl::MutexLock lock(&mutex_);
    --running_;
    calls_[call_index].end_seq = seq_++;
    return result;
  }

  static v1::Attempt DefaultAttempt(const v1::TrialSpec& spec, const std::string& skill = "") {
    if (mkb::TrialObserver* observer = mkb::CurrentTrialObserver()) {
      v1::TrajectoryEvent event;
      event.set_kind("note");
      event.set_text("started");
      observer->OnTrajectoryEvent(event);
    }
    v1::Attempt attempt;
    attempt.set_state(v1::ATTEMPT_FINISHED);
    v1::Submission* submission = attempt.add_submissions();
    submission->set_index(0);
    submission->set_counted(true);
    submission->set_kernel_source("def solve(*inputs): ...\n");
    submission->mutable_verdict()->set_status(v1::PASSED);
    submission->mutable_verdict()->set_passed(true);
    attempt.mutable_final()->set_status(v1::PASSED);
    attempt.mutable_final()->set_passed(true);
    attempt.mutable_final()->set_speedup_vs_eager(1.0 + (spec.trial_id().size() % 7) / 4.0);
    attempt.set_best_submission(0);
    attempt.mutable_skill_out()->set_text(
        skill.empty() ? absl::StrCat("what ", spec.arm(), " learned on ", spec.problem_slug())
                      : skill);
    attempt.mutable_usage()->set_input_tokens(1000);
    attempt.mutable_usage()->set_output_tokens(100);
    attempt.mutable_usage()->set_cost_usd(0.01);
    v1::TrajectoryEvent* event = attempt.add_trajectory();
    event->set_index(0);
    event->set_kind("assistant");
    event->set_text(absl::StrCat("working on ", spec.trial_id()));
    return attempt;
  }

  std::vector<Call> calls() {
    absl::MutexLock lock(&mutex_);
    return calls_;
  }
  int calls_of(const std::string& trial_id) {
    absl::MutexLock lock(&mutex_);
    return calls_by_trial_[trial_id];
  }
  int max_running() {
    absl::MutexLock lock(&mutex_);
    return max_running_;
  }

  Behaviour behaviour;
  std::function<int(const v1::TrialSpec&)> delay_ms;

 private:
  absl::Mutex mutex_;
  std::vector<Call> calls_;
  std::map<std::string, int> calls_by_trial_;
  int seq_ = 0;
  int running_ = 0;
  int max_running_ = 0;
};

mkb::ResultStore OpenStore(const std::string& path) { return *mkb::ResultStore::Open(path); }

std::map<std::string, mkb::TrialRecord> TrialsById(const mkb::ResultStore& store,
                                                   const std::string& experiment = "exp") {
  std::map<std::string, mkb::TrialRecord> out;
  std::vector<mkb::TrialRecord> trials = *store.ListTrials(experiment);
  for (mkb::TrialRecord& r : trials) {
    const std::string id = r.trial_id;
    out[id] = std::move(r);
  }
  return out;
}

// A copy of the shipped problem 28 in a scratch suite, whose reference a test may edit.
std::string CopyProblem28(const ScratchDir& dir) {
  const std::string root = dir / "suite";
  const std::string folder = "mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16";
  fs::create_directories(root + "/" + folder);
  fs::copy(kSuiteRoot + "/" + folder, root + "/" + folder, fs::copy_options::recursive);
  return root;
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("the plan: problems x arms x replicates, solos first, each skill arm on its source") {
  const mkb::ExperimentPlan plan = *mkb::BuildPlan(Spec("exp", 2), TheSuite());
  REQUIRE(plan.trials.size() == 3 * 4 * 2);
  REQUIRE(plan.spec.problems_size() == 3);
  std::set<std::string> ids;
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    const mkb::PlannedTrial& t = plan.trials[i];
    ids.insert(t.spec.trial_id());
    const bool solo = t.skill_kind == v1::SkillSource::NONE;
    CHECK(solo == (i < 12));  // every solo before any conditioned trial
    CHECK(t.spec.trial_id() ==
          mkb::TrialId("exp", t.spec.problem_slug(), t.spec.arm(), t.spec.replicate()));
    CHECK(t.spec.task_fingerprint().size() == 64);
    CHECK(t.spec.family() != v1::FAMILY_UNSPECIFIED);
    if (t.spec.arm() == "cutedsl2tirx_skill") {
      CHECK(t.spec.dsl() == v1::TIRX);
      CHECK(t.source_trial_id ==
            mkb::TrialId("exp", t.spec.problem_slug(), "solo_cutedsl", t.spec.replicate()));
    }
  }
  CHECK(ids.size() == plan.trials.size());
  CHECK(plan.trials.front().spec.trial_id() ==
        "exp/gqa_paged_decode_h5_kv1_d128_ps1_bf16/solo_cutedsl/r0");
}

TEST_CASE("problem selection: slugs, numbers and globs; an entry matching nothing is named") {
  auto problems = mkb::SelectProblems(TheSuite(), {"28", "*kv_cache_block*", "02"});
  REQUIRE(problems.ok());
  REQUIRE(problems->size() == 3);
  CHECK((*problems)[0].number() == 2);  // number order, whatever the entries' order
  auto none = mkb::SelectProblems(TheSuite(), {"28", "no_such_*"});
  REQUIRE(absl::IsNotFound(none.status()));
  CHECK(absl::StrContains(none.status().message(), "problems[1]: 'no_such_*'"));
  v1::ExperimentSpec spec = Spec();
  spec.set_workload("medium");
  CHECK(absl::IsInvalidArgument(mkb::BuildPlan(spec, TheSuite()).status()));
}

TEST_CASE("a task fingerprint changes with the problem, budget, workload, model and salt") {
  const mkb::ExperimentPlan plan = *mkb::BuildPlan(Spec(), TheSuite());
  const v1::Problem& problem = plan.problems[0];
  const v1::ArmSpec& arm = plan.spec.arms(0);
  const std::string base = mkb::TaskFingerprint(problem, plan.spec, arm, "");
  CHECK(base == mkb::TaskFingerprint(problem, plan.spec, arm, ""));
  v1::ExperimentSpec other = plan.spec;
  other.mutable_budget()->set_agent_seconds(100);
  CHECK(base != mkb::TaskFingerprint(problem, other, arm, ""));
  other = plan.spec;
  other.set_concurrency(9);  // how a run is scheduled is not part of the task
  CHECK(base == mkb::TaskFingerprint(problem, other, arm, ""));
  other.set_workload("full");
  CHECK(base != mkb::TaskFingerprint(problem, other, arm, ""));
  CHECK(base != mkb::TaskFingerprint(problem, plan.spec, arm, "agent-2"));
  v1::Problem changed = problem;
  changed.set_fingerprint("0");
  CHECK(base != mkb::TaskFingerprint(changed, plan.spec, arm, ""));
}

TEST_CASE("a narrower plan retires the trials it no longer holds; a wider one restores them") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  REQUIRE(mkb::RunExperiment(Spec("exp", 2), TheSuite(), store, executor, FastOptions()).ok());
  CHECK(mkb::CellReplicatesFromStore(store, "exp")->size() == 3 * 2 * 2);

  v1::ExperimentSpec narrower = Spec("exp", 1);
  narrower.clear_problems();
  narrower.add_problems("02");
  narrower.add_problems("25");
  auto plan = mkb::PlanExperiment(narrower, TheSuite(), &store);
  REQUIRE(plan.ok());
  CHECK(plan->outside_plan.size() == 4 * 4);  // problem 28, and replicate 1 of 02 and 25
  CHECK(plan->Count(mkb::PlanAction::kReuse) == 8);
  auto summary = mkb::RunExperiment(narrower, TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->retired == plan->outside_plan);
  // The statistics see the plan: 2 problems x 2 directions x 1 replicate.
  auto cells = mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.ok());
  CHECK(cells->size() == 2 * 2);
  for (const v1::CellReplicate& cell : *cells) CHECK(cell.replicate() == 0);
  CHECK(store.CheckIntegrity().ok());

  // Planned again, the retired trials come back as they were, without running again.
  const size_t calls = executor.calls().size();
  auto again = mkb::RunExperiment(Spec("exp", 2), TheSuite(), store, executor, FastOptions());
  REQUIRE(again.ok());
  CHECK(again->progress.reused == 24);
  CHECK(executor.calls().size() == calls);
  CHECK(mkb::CellReplicatesFromStore(store, "exp")->size() == 3 * 2 * 2);
}

TEST_CASE("a run end to end: every trial stored, skills handed over, statistics computable") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->complete());
  CHECK(summary->progress.planned == 12);
  CHECK(summary->progress.finished == 12);
  CHECK(summary->progress.passed == 12);
  CHECK(summary->progress.submissions == 12);
  CHECK(summary->progress.input_tokens == 12000);
  CHECK(executor.calls().size() == 12);

  auto trials = TrialsById(store);
  REQUIRE(trials.size() == 12);
  for (const auto& [id, trial] : trials) {
    CHECK(trial.state == v1::ATTEMPT_FINISHED);
    CHECK(trial.try_number == 1);
    REQUIRE(trial.attempt.has_value());
    CHECK(trial.attempt->id() == id);
    CHECK(trial.attempt->trajectory_size() == 0);  // kept in its own table
    CHECK(store.Trajectory(id)->size() == 1);
  }
  // The skill arm received its own source's SKILL.md, with its digest.
  const std::string problem = "fused_add_rmsnorm_h4096_llama31_8b_bf16";
  const auto& skill = trials.at(mkb::TrialId("exp", problem, "cutedsl2tirx_skill", 0));
  const auto& source = trials.at(mkb::TrialId("exp", problem, "solo_cutedsl", 0));
  CHECK(skill.attempt->skill_in().text() == source.attempt->skill_out().text());
  CHECK(skill.attempt->skill_in().source_attempt_id() == source.trial_id);
  CHECK(skill.attempt->skill_in().source_dsl() == v1::CUTEDSL);
  CHECK(skill.skill_digest == mkb::SkillFromAttempt(*source.attempt).sha256());
  CHECK(source.skill_digest.empty());

  auto cells = mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.ok());
  REQUIRE(cells->size() == 6);  // 3 problems x 2 directions
  REQUIRE(mkb::stats::ValidateCellReplicates(*cells).ok());
  v1::StatsConfig config;
  config.set_bootstrap_resamples(50);
  auto report = mkb::stats::ComputeStatsReport(*cells, config, {});
  REQUIRE(report.ok());
  CHECK(report->n_resolved() == 6);
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("ordering: a skill arm waits only for its own source, never for other solos") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  // Problem 28's solos are slow; the other problems' skill arms must not wait for them.
  executor.delay_ms = [](const v1::TrialSpec& spec) {
    return absl::StrContains(spec.problem_slug(), "rmsnorm") && spec.skill_in().text().empty() ? 300
                                                                                               : 5;
  };
  v1::ExperimentSpec spec = Spec();
  spec.set_concurrency(3);
  REQUIRE(mkb::RunExperiment(spec, TheSuite(), store, executor, FastOptions()).ok());
  const auto calls = executor.calls();
  std::map<std::string, FakeExecutor::Call> by_id;
  for (const auto& call : calls) by_id[call.spec.trial_id()] = call;
  bool started_before_a_slow_solo_ended = false;
  for (const auto& call : calls) {
    if (call.spec.arm() != "cutedsl2tirx_skill" && call.spec.arm() != "tirx2cutedsl_skill")
      continue;
    const std::string source_arm =
        call.spec.arm() == "cutedsl2tirx_skill" ? "solo_cutedsl" : "solo_tirx";
    const auto& source = by_id.at(mkb::TrialId("exp", call.spec.problem_slug(), source_arm, 0));
    CHECK(call.start_seq > source.end_seq);  // after its own source ended
    const auto& slow =
        by_id.at(mkb::TrialId("exp", "fused_add_rmsnorm_h4096_llama31_8b_bf16", "solo_tirx", 0));
    started_before_a_slow_solo_ended |= call.start_seq < slow.end_seq;
  }
  CHECK(started_before_a_slow_solo_ended);
  CHECK(executor.max_running() <= 3);
}

TEST_CASE("the concurrency limit bounds the trials in flight, and solos start first") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  executor.delay_ms = [](const v1::TrialSpec&) { return 10; };
  v1::ExperimentSpec spec = Spec("exp", 2);
  spec.set_concurrency(1);
  REQUIRE(mkb::RunExperiment(spec, TheSuite(), store, executor, FastOptions()).ok());
  const auto calls = executor.calls();
  REQUIRE(calls.size() == 24);
  CHECK(executor.max_running() == 1);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].spec.skill_in().text().empty() == (i < 12));
  }
}

TEST_CASE("transient failures are archived and retried up to max_tries; then the trial fails") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  const std::string flaky =
      mkb::TrialId("exp", "batched_kv_cache_block_copy_remap_uint8", "solo_tirx", 0);
  const std::string dead =
      mkb::TrialId("exp", "gqa_paged_decode_h5_kv1_d128_ps1_bf16", "solo_cutedsl", 0);
  executor.behaviour = [&](const v1::TrialSpec& spec, int call) -> absl::StatusOr<v1::Attempt> {
    if (spec.trial_id() == flaky && call <= 2) return absl::UnavailableError("HTTP 529 overloaded");
    if (spec.trial_id() == dead) return absl::UnavailableError("GPU node lost");
    return FakeExecutor::DefaultAttempt(spec);
  };
  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(executor.calls_of(flaky) == 3);
  CHECK(executor.calls_of(dead) == mkb::kDefaultMaxTries);  // 1 + 3 retries
  CHECK(summary->progress.retries == 2 + 3);
  CHECK(summary->progress.failed == 1);
  CHECK(summary->progress.blocked == 1);  // the dead solo's skill arm
  CHECK_FALSE(summary->complete());

  const mkb::TrialRecord flaky_record = *store.GetTrial(flaky);
  CHECK(flaky_record.state == v1::ATTEMPT_FINISHED);
  CHECK(flaky_record.try_number == 3);
  auto archived = *store.ArchivedTries(flaky);
  REQUIRE(archived.size() == 2);
  CHECK(archived[0].try_number == 1);
  CHECK(archived[0].reason == mkb::kArchiveTransient);
  CHECK(absl::StrContains(archived[0].error, "HTTP 529"));
  CHECK(archived[1].try_number == 2);

  const mkb::TrialRecord dead_record = *store.GetTrial(dead);
  CHECK(dead_record.state == v1::ATTEMPT_FAILED);
  CHECK(dead_record.try_number == 4);
  CHECK(absl::StrContains(dead_record.error, "GPU node lost"));
  CHECK(store.ArchivedTries(dead)->size() == 3);
  const mkb::TrialRecord blocked = *store.GetTrial(
      mkb::TrialId("exp", "gqa_paged_decode_h5_kv1_d128_ps1_bf16", "cutedsl2tirx_skill", 0));
  CHECK(blocked.state == v1::ATTEMPT_BLOCKED);  // never started: told apart from failed
  CHECK(absl::StrContains(blocked.error, "failed"));
  CHECK(blocked.try_number == 0);
  CHECK(store.CheckIntegrity().ok());
}

TEST_CASE("a permanent error fails the trial at once; a kernel that fails is not an error") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  executor.behaviour = [](const v1::TrialSpec& spec, int) -> absl::StatusOr<v1::Attempt> {
    if (spec.arm() == "solo_tirx" && absl::StrContains(spec.problem_slug(), "gqa")) {
      return absl::PermissionDeniedError("401: invalid API key");
    }
    v1::Attempt attempt = FakeExecutor::DefaultAttempt(spec);
    if (spec.arm() == "solo_cutedsl") {
      attempt.mutable_final()->set_status(v1::MISMATCH);
      attempt.mutable_final()->set_passed(false);
      attempt.mutable_final()->clear_speedup_vs_eager();
    }
    return attempt;
  };
  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->progress.failed == 1);
  CHECK(summary->progress.retries == 0);
  REQUIRE(summary->failed.size() == 1);
  CHECK(absl::StrContains(summary->failed[0], "invalid API key"));
  CHECK(summary->progress.finished == 10);  // 12 - the failed one - its blocked skill arm
  CHECK(summary->progress.passed == 10 - 3);
  const auto trials = TrialsById(store);
  const auto& mismatch =
      trials.at(mkb::TrialId("exp", "fused_add_rmsnorm_h4096_llama31_8b_bf16", "solo_cutedsl", 0));
  CHECK(mismatch.state == v1::ATTEMPT_FINISHED);  // resolved, failed kernel
  CHECK_FALSE(mismatch.attempt->final().passed());
}

TEST_CASE("resume: a second run reuses resolved trials and reruns failed ones") {
  ScratchDir dir;
  const std::string path = dir / "results.db";
  const std::string failing =
      mkb::TrialId("exp", "batched_kv_cache_block_copy_remap_uint8", "solo_cutedsl", 0);
  {
    mkb::ResultStore store = OpenStore(path);
    FakeExecutor executor;
    executor.behaviour = [&](const v1::TrialSpec& spec, int) -> absl::StatusOr<v1::Attempt> {
      if (spec.trial_id() == failing) return absl::InternalError("sandbox crashed");
      return FakeExecutor::DefaultAttempt(spec);
    };
    auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
    REQUIRE(summary.ok());
    CHECK(summary->progress.finished == 10);
  }
  mkb::ResultStore store = OpenStore(path);
  const auto before = TrialsById(store);
  FakeExecutor executor;
  auto plan = mkb::PlanExperiment(Spec(), TheSuite(), &store);
  REQUIRE(plan.ok());
  CHECK(plan->Count(mkb::PlanAction::kReuse) == 10);
  CHECK(plan->Count(mkb::PlanAction::kRerunFailed) == 1);
  CHECK(plan->Count(mkb::PlanAction::kRun) == 1);  // the skill arm that was blocked

  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->complete());
  CHECK(summary->progress.reused == 10);
  CHECK(summary->progress.finished == 2);
  REQUIRE(executor.calls().size() == 2);
  CHECK(executor.calls()[0].spec.trial_id() == failing);
  CHECK(executor.calls()[0].spec.try_number() == 2);
  auto archived = *store.ArchivedTries(failing);
  REQUIRE(archived.size() == 1);
  CHECK(archived[0].reason == mkb::kArchiveFailed);
  CHECK(absl::StrContains(archived[0].error, "sandbox crashed"));
  // Reused trials are untouched.
  for (const auto& [id, trial] : TrialsById(store)) {
    if (before.at(id).state != v1::ATTEMPT_FINISHED) continue;
    CHECK(trial.try_number == before.at(id).try_number);
    CHECK(trial.attempt->SerializeAsString() == before.at(id).attempt->SerializeAsString());
  }
  // A third run has nothing to do.
  FakeExecutor idle;
  auto third = mkb::RunExperiment(Spec(), TheSuite(), store, idle, FastOptions());
  REQUIRE(third.ok());
  CHECK(third->progress.reused == 12);
  CHECK(idle.calls().empty());
}

TEST_CASE("resume: a try left running by a dead run is archived as interrupted and rerun") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  const mkb::ExperimentPlan plan = *mkb::BuildPlan(Spec(), TheSuite());
  REQUIRE(store.PutExperiment(plan.spec).ok());
  std::vector<v1::TrialSpec> specs;
  for (const auto& t : plan.trials) specs.push_back(t.spec);
  REQUIRE(store.PlanTrials(specs).ok());
  v1::TrialSpec started = plan.trials[0].spec;
  started.set_try_number(1);
  REQUIRE(store.StartTry(started).ok());  // ... and the process died here

  auto status = mkb::PlanExperiment(Spec(), TheSuite(), &store);
  REQUIRE(status.ok());
  CHECK(status->entries[0].action == mkb::PlanAction::kRerunInterrupted);

  FakeExecutor executor;
  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->complete());
  const mkb::TrialRecord record = *store.GetTrial(started.trial_id());
  CHECK(record.state == v1::ATTEMPT_FINISHED);
  CHECK(record.try_number == 2);
  auto archived = *store.ArchivedTries(started.trial_id());
  REQUIRE(archived.size() == 1);
  CHECK(archived[0].reason == mkb::kArchiveInterrupted);
  CHECK(archived[0].state == v1::ATTEMPT_RUNNING);
}

TEST_CASE("stale: a changed task is refused, nothing run, unless rerun_stale") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor first;
  REQUIRE(mkb::RunExperiment(Spec(), TheSuite(), store, first, FastOptions()).ok());

  v1::ExperimentSpec changed = Spec();
  changed.mutable_budget()->set_max_submissions(5);
  FakeExecutor executor;
  auto refused = mkb::RunExperiment(changed, TheSuite(), store, executor, FastOptions());
  REQUIRE(absl::IsFailedPrecondition(refused.status()));
  CHECK(absl::StrContains(refused.status().message(), "12 resolved trials are stale"));
  CHECK(absl::StrContains(refused.status().message(), "task fingerprint changed"));
  CHECK(absl::StrContains(refused.status().message(), "--rerun-stale"));
  CHECK(executor.calls().empty());
  for (const auto& [id, trial] : TrialsById(store)) CHECK(trial.try_number == 1);

  mkb::ProtocolOptions options = FastOptions();
  options.rerun_stale = true;
  auto plan = mkb::PlanExperiment(changed, TheSuite(), &store, options);
  CHECK(plan->Count(mkb::PlanAction::kRerunStale) == 12);
  auto summary = mkb::RunExperiment(changed, TheSuite(), store, executor, options);
  REQUIRE(summary.ok());
  CHECK(summary->progress.finished == 12);
  for (const auto& [id, trial] : TrialsById(store)) {
    CHECK(trial.try_number == 2);
    CHECK(trial.spec.budget().max_submissions() == 5);
    auto archived = *store.ArchivedTries(id);
    REQUIRE(archived.size() == 1);
    CHECK(archived[0].reason == mkb::kArchiveStale);
  }
}

TEST_CASE("stale: a problem whose reference changed makes its trials stale") {
  ScratchDir dir;
  const std::string root = CopyProblem28(dir);
  mkb::ResultStore store = OpenStore(dir / "results.db");
  v1::ExperimentSpec spec = Spec();
  spec.clear_problems();
  FakeExecutor executor;
  {
    const mkb::Suite suite = *mkb::Suite::Load(root);
    REQUIRE(mkb::RunExperiment(spec, suite, store, executor, FastOptions()).ok());
  }
  std::ofstream(root + "/mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16/reference.py",
                std::ios::app)
      << "\n# edited\n";
  const mkb::Suite suite = *mkb::Suite::Load(root);
  auto refused = mkb::RunExperiment(spec, suite, store, executor, FastOptions());
  CHECK(absl::IsFailedPrecondition(refused.status()));
  CHECK(absl::StrContains(refused.status().message(), "4 resolved trials are stale"));
  CHECK(executor.calls().size() == 4);
}

TEST_CASE("stale: a fixed-text skill that changed makes its arm stale") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  auto spec_with = [](const std::string& text) {
    v1::ExperimentSpec spec = Spec();
    spec.clear_problems();
    spec.add_problems("28");
    v1::ArmSpec* solo = spec.add_arms();
    solo->set_name("solo_tirx");
    solo->set_dsl(v1::TIRX);
    solo->mutable_skill()->set_kind(v1::SkillSource::NONE);
    v1::ArmSpec* placebo = spec.add_arms();
    placebo->set_name("tirx_placebo");
    placebo->set_dsl(v1::TIRX);
    placebo->mutable_skill()->set_kind(v1::SkillSource::FIXED_TEXT);
    placebo->mutable_skill()->set_text(text);
    placebo->mutable_skill()->set_origin("placebo");
    placebo->set_base_arm("solo_tirx");
    return spec;
  };
  FakeExecutor executor;
  REQUIRE(mkb::RunExperiment(spec_with("Tiles of 128 are fine."), TheSuite(), store, executor,
                             FastOptions())
              .ok());
  const auto trials = TrialsById(store);
  const auto& placebo =
      trials.at(mkb::TrialId("exp", "fused_add_rmsnorm_h4096_llama31_8b_bf16", "tirx_placebo", 0));
  CHECK(placebo.attempt->skill_in().origin() == "placebo");
  CHECK(placebo.attempt->skill_in().text() == "Tiles of 128 are fine.");

  auto status = mkb::PlanExperiment(spec_with("Tiles of 64 are fine."), TheSuite(), &store);
  REQUIRE(status.ok());
  CHECK(status->Count(mkb::PlanAction::kReuse) == 1);
  CHECK(status->Count(mkb::PlanAction::kStale) == 1);
  CHECK(absl::StrContains(status->entries[1].reason, "skill digest"));
  auto cells = mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.ok());
  REQUIRE(cells->size() == 1);
  CHECK((*cells)[0].direction() == "tirx_placebo");
  CHECK_FALSE((*cells)[0].has_source());
  CHECK(mkb::stats::ValidateCellReplicates(*cells).ok());
}

TEST_CASE("stale: when a source runs again, its skill arm is kept only if the skill is the same") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor first;
  REQUIRE(mkb::RunExperiment(Spec(), TheSuite(), store, first, FastOptions()).ok());
  const std::string problem = "fused_add_rmsnorm_h4096_llama31_8b_bf16";
  const std::string source = mkb::TrialId("exp", problem, "solo_cutedsl", 0);
  const std::string skill_arm = mkb::TrialId("exp", problem, "cutedsl2tirx_skill", 0);

  // The source's try is archived (as a failed rerun would be): it runs again next time.
  REQUIRE(store.ArchiveTry(source, 1, mkb::kArchiveFailed, "test").ok());
  auto status = mkb::PlanExperiment(Spec(), TheSuite(), &store);
  REQUIRE(status.ok());
  CHECK(status->Count(mkb::PlanAction::kCheckSkill) == 1);

  SECTION("the same skill: the skill arm is reused") {
    FakeExecutor executor;
    auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
    REQUIRE(summary.ok());
    CHECK(executor.calls().size() == 1);
    CHECK(summary->progress.reused == 11);
    CHECK(store.GetTrial(skill_arm)->try_number == 1);
  }
  SECTION("another skill: reported stale and kept, or rerun with rerun_stale") {
    FakeExecutor executor;
    executor.behaviour = [](const v1::TrialSpec& spec, int) {
      return FakeExecutor::DefaultAttempt(spec, "a different lesson");
    };
    auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
    REQUIRE(summary.ok());
    CHECK(executor.calls().size() == 1);
    REQUIRE(summary->stale_kept.size() == 1);
    CHECK(absl::StrContains(summary->stale_kept[0], skill_arm));
    auto refused = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
    CHECK(absl::IsFailedPrecondition(refused.status()));

    mkb::ProtocolOptions options = FastOptions();
    options.rerun_stale = true;
    auto rerun = mkb::RunExperiment(Spec(), TheSuite(), store, executor, options);
    REQUIRE(rerun.ok());
    const mkb::TrialRecord record = *store.GetTrial(skill_arm);
    CHECK(record.try_number == 2);
    CHECK(record.attempt->skill_in().text() == "a different lesson");
  }
}

TEST_CASE("an empty skill makes the conditioned arm skipped, without running it") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  executor.behaviour = [](const v1::TrialSpec& spec, int) {
    return FakeExecutor::DefaultAttempt(spec, spec.arm() == "solo_cutedsl" ? " \n\t" : "");
  };
  auto summary = mkb::RunExperiment(Spec(), TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->progress.skipped == 3);
  CHECK(summary->progress.finished == 9);
  CHECK(executor.calls().size() == 9);
  const auto trials = TrialsById(store);
  const auto& skipped = trials.at(
      mkb::TrialId("exp", "fused_add_rmsnorm_h4096_llama31_8b_bf16", "cutedsl2tirx_skill", 0));
  CHECK(skipped.state == v1::ATTEMPT_SKIPPED);
  CHECK(skipped.attempt->skill_in().flags().empty());
  auto cells = *mkb::CellReplicatesFromStore(store, "exp");
  int skipped_cells = 0;
  for (const auto& cell : cells) skipped_cells += cell.skill().skipped() ? 1 : 0;
  CHECK(skipped_cells == 3);
  // A second run reuses the skipped trials too.
  FakeExecutor idle;
  auto again = mkb::RunExperiment(Spec(), TheSuite(), store, idle, FastOptions());
  REQUIRE(again.ok());
  CHECK(again->progress.reused == 12);
  CHECK(idle.calls().empty());
}

TEST_CASE("another model's skill comes from the store; blocked until that model ran") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  v1::ExperimentSpec spec = Spec("student");
  spec.set_model("fake/student");
  spec.clear_problems();
  spec.add_problems("25");
  v1::ArmSpec* solo = spec.add_arms();
  solo->set_name("solo_tirx");
  solo->set_dsl(v1::TIRX);
  solo->mutable_skill()->set_kind(v1::SkillSource::NONE);
  v1::ArmSpec* borrowed = spec.add_arms();
  borrowed->set_name("teacher_skill_tirx");
  borrowed->set_dsl(v1::TIRX);
  borrowed->mutable_skill()->set_kind(v1::SkillSource::ARM);
  borrowed->mutable_skill()->set_arm("solo_cutedsl");
  borrowed->mutable_skill()->set_model("fake/teacher");
  borrowed->set_base_arm("solo_tirx");

  FakeExecutor executor;
  auto blocked = mkb::RunExperiment(spec, TheSuite(), store, executor, FastOptions());
  REQUIRE(blocked.ok());
  CHECK(blocked->progress.blocked == 1);
  REQUIRE(blocked->blocked.size() == 1);
  CHECK(absl::StrContains(blocked->blocked[0], "fake/teacher"));

  v1::ExperimentSpec teacher = Spec("teacher");
  teacher.set_model("fake/teacher");
  REQUIRE(mkb::RunExperiment(teacher, TheSuite(), store, executor, FastOptions()).ok());
  auto summary = mkb::RunExperiment(spec, TheSuite(), store, executor, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->complete());
  const auto trials = TrialsById(store, "student");
  const auto& trial = trials.at(
      mkb::TrialId("student", "batched_kv_cache_block_copy_remap_uint8", "teacher_skill_tirx", 0));
  CHECK(trial.attempt->skill_in().source_model() == "fake/teacher");
  CHECK(trial.attempt->skill_in().text() ==
        "what solo_cutedsl learned on batched_kv_cache_block_copy_remap_uint8");
  auto cells = *mkb::CellReplicatesFromStore(store, "student");
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].source().arm() == "fake/teacher:solo_cutedsl");
  CHECK(cells[0].source().resolved());
  CHECK(mkb::stats::ValidateCellReplicates(cells).ok());
}

TEST_CASE("a second solo as control joins the cells of its base") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  v1::ExperimentSpec spec = Spec();
  for (v1::ArmSpec& arm : mkb::StandardArms()) *spec.add_arms() = arm;
  for (const char* dsl : {"tirx", "cutedsl"}) {
    v1::ArmSpec* control = spec.add_arms();
    control->set_name(absl::StrCat("solo_", dsl, "_control"));
    control->set_dsl(std::string(dsl) == "tirx" ? v1::TIRX : v1::CUTEDSL);
    control->mutable_skill()->set_kind(v1::SkillSource::NONE);
    control->set_base_arm(absl::StrCat("solo_", dsl));
  }
  FakeExecutor executor;
  REQUIRE(mkb::RunExperiment(spec, TheSuite(), store, executor, FastOptions()).ok());
  CHECK(executor.calls().size() == 18);
  auto cells = *mkb::CellReplicatesFromStore(store, "exp");
  REQUIRE(cells.size() == 6);
  for (const auto& cell : cells) {
    CHECK(cell.has_control());
    CHECK(cell.control().resolved());
  }
  v1::StatsConfig config;
  config.set_bootstrap_resamples(20);
  auto report = mkb::stats::ComputeStatsReport(cells, config, {});
  REQUIRE(report.ok());
  CHECK(report->n_with_control() == 6);
}

TEST_CASE("live reports are stored while the trial runs and reach the listener") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  struct Listener : mkb::ProtocolListener {
    void OnTrialEvent(const mkb::TrialEvent& event) override {
      kinds.push_back(mkb::TrialEventKindName(event.kind));
      last = event.progress;
    }
    std::vector<std::string> kinds;
    mkb::RunProgress last;
  } listener;
  FakeExecutor executor;
  std::atomic<int> seen_live{0};
  executor.behaviour = [&](const v1::TrialSpec& spec, int) -> absl::StatusOr<v1::Attempt> {
    mkb::TrialObserver* observer = mkb::CurrentTrialObserver();
    REQUIRE(observer != nullptr);
    v1::Submission submission;
    submission.set_index(0);
    submission.set_counted(true);
    submission.set_kernel_source("# live");
    observer->OnSubmission(submission);
    v1::Usage usage;
    usage.set_input_tokens(500);
    observer->OnUsage(usage);
    // Stored before the attempt ends.
    auto table = store.ReadTable("submissions", "exp");
    for (const auto& row : table->rows) {
      if (std::get<std::string>(row[0]) == spec.trial_id()) ++seen_live;
    }
    return FakeExecutor::DefaultAttempt(spec);
  };
  v1::ExperimentSpec spec = Spec();
  spec.clear_problems();
  spec.add_problems("28");
  mkb::ProtocolOptions options = FastOptions();
  options.listener = &listener;
  auto summary = mkb::RunExperiment(spec, TheSuite(), store, executor, options);
  REQUIRE(summary.ok());
  CHECK(seen_live == 4);
  CHECK(std::count(listener.kinds.begin(), listener.kinds.end(), "started") == 4);
  CHECK(std::count(listener.kinds.begin(), listener.kinds.end(), "submission") == 4);
  CHECK(std::count(listener.kinds.begin(), listener.kinds.end(), "finished") == 4);
  // Live numbers were replaced by the attempts' own at the end.
  CHECK(listener.last.submissions == 4);
  CHECK(listener.last.input_tokens == 4000);
  auto submissions = *store.ReadTable("submissions", "exp");
  CHECK(submissions.rows.size() == 4);  // the live row replaced by the attempt's
}

TEST_CASE("cancelling stops new trials; a later run resumes") {
  ScratchDir dir;
  mkb::ResultStore store = OpenStore(dir / "results.db");
  FakeExecutor executor;
  std::atomic<int> ended{0};
  executor.behaviour = [&](const v1::TrialSpec& spec, int) -> absl::StatusOr<v1::Attempt> {
    ++ended;
    return FakeExecutor::DefaultAttempt(spec);
  };
  mkb::ProtocolOptions options = FastOptions();
  options.cancelled = [&] { return ended >= 2; };
  v1::ExperimentSpec spec = Spec();
  spec.set_concurrency(1);
  auto cancelled = mkb::RunExperiment(spec, TheSuite(), store, executor, options);
  REQUIRE(absl::IsCancelled(cancelled.status()));
  CHECK(absl::StrContains(cancelled.status().message(), "run it again to resume"));
  const int ran = static_cast<int>(executor.calls().size());
  CHECK(ran >= 2);
  CHECK(ran < 12);
  FakeExecutor rest;
  auto summary = mkb::RunExperiment(spec, TheSuite(), store, rest, FastOptions());
  REQUIRE(summary.ok());
  CHECK(summary->complete());
  CHECK(summary->progress.reused == ran);
  CHECK(static_cast<int>(rest.calls().size()) == 12 - ran);
}

}  // namespace
