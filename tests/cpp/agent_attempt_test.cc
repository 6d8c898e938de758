// The attempt loop and the AgentTrialExecutor, with stand-in models and a stand-in judge (the
// CPU judge end to end is in tests/python/test_agent_attempt.py).
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libmkb/agent/agent_trial_executor.h"
#include "libmkb/agent/attempt.h"
#include "libmkb/agent/model_factory.h"
#include "libmkb/agent/scripted_model.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/workspace.h"
#include "libmkb/core/utf8.h"
#include "libmkb/protocol/trial_observer.h"
#include "libmkb/suite/suite.h"

namespace fs = std::filesystem;

namespace {

const std::string kSuite = std::string(MKB_SOURCE_DIR) + "/problems";

const mkb::v1::Problem& Problem(const char* number) {
  static const auto* suite = new mkb::Suite(*mkb::Suite::Load(kSuite));
  return **suite->Find(number);
}

// A model that replays scripted replies: each a text and tool calls (name, arguments).
class ReplayModel : public mkb::ChatModel {
 public:
  using Step = std::function<absl::StatusOr<mkb::ChatResponse>(const mkb::ChatRequest&)>;
  explicit ReplayModel(std::vector<Step> steps) : steps_(std::move(steps)) {}

  static Step Call(const std::string& tool, const std::string& command = "") {
    return [tool, command](const mkb::ChatRequest&) -> absl::StatusOr<mkb::ChatResponse> {
      mkb::ChatResponse r;
      r.message.role = mkb::ChatRole::kAssistant;
      r.message.text = "step";
      r.message.tool_calls.push_back(
          {absl::StrCat("c", tool), tool,
           tool == "bash" ? nlohmann::json{{"command", command}}.dump() : "{}"});
      r.usage.input_tokens = 100;
      r.usage.cached_input_tokens = 40;
      r.usage.output_tokens = 10;
      return r;
    };
  }
  static Step Fail(absl::Status status) {
    return
        [status](const mkb::ChatRequest&) -> absl::StatusOr<mkb::ChatResponse> { return status; };
  }

  absl::StatusOr<mkb::ChatResponse> Chat(const mkb::ChatRequest& request) override {
    last_request = request;
    ++calls;
    if (next_ >= steps_.size()) return Call("finish")(request);
    return steps_[next_++](request);
  }
  const std::string& id() const override { return id_; }

  mkb::ChatRequest last_request;
  int calls = 0;

 private:
  std::vector<Step> steps_;
  size_t next_ = 0;
  std::string id_ = "openai/gpt-5";
};

// A judge stand-in: empty source is invalid; a source containing "INFRA" is a judge failure;
// "PASS <speedup>" passes with that speedup; anything else is a mismatch.
class FakeEvaluator : public mkb::KernelEvaluator {
 public:
  absl::StatusOr<mkb::v1::Verdict> Evaluate(const mkb::v1::EvaluationRequest& request) override {
    absl::MutexLock lock(&mutex);
    requests.push_back(request);
    const std::string& source = request.kernel_source();
    mkb::v1::Verdict v;
    if (absl::StrContains(source, "INFRA_STATUS")) return absl::InternalError("host died");
    if (source.find_first_not_of(" \n") == std::string::npos) {
      v.set_status(mkb::v1::INVALID_SUBMISSION);
      v.set_message("invalid submission: kernel.py is empty (not counted)");
    } else if (absl::StrContains(source, "INFRA")) {
      v.set_status(mkb::v1::INFRA_ERROR);
      v.set_message("the judge's worker could not start");
    } else if (const size_t at = source.find("PASS "); at != std::string::npos) {
      v.set_status(mkb::v1::PASSED);
      v.set_passed(true);
      v.set_speedup_vs_eager(std::stod(source.substr(at + 5)));
      v.set_message("passed");
    } else if (absl::StrContains(source, "weight.float()") ||
               absl::StrContains(source, "block_mapping[:, 0]]") ||
               absl::StrContains(source, "math.log(2.0)")) {
      v.set_status(mkb::v1::PASSED);  // the scripted model's honest kernels
      v.set_passed(true);
      v.set_speedup_vs_eager(1.0);
      v.set_message("passed");
    } else {
      v.set_status(mkb::v1::MISMATCH);
      v.set_message("out differs");
    }
    return v;
  }
  absl::Mutex mutex;
  std::vector<mkb::v1::EvaluationRequest> requests;
};

class Scratch {
 public:
  Scratch() {
    root_ = fs::path(MKB_BINARY_DIR) / absl::StrCat("agent_attempt_test_", ::getpid(), "_", n_++);
    fs::create_directories(root_);
  }
  ~Scratch() { fs::remove_all(root_); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }

 private:
  static inline int n_ = 0;
  fs::path root_;
};

mkb::AttemptConfig Config(const Scratch& scratch, const std::string& name = "ws") {
  mkb::AttemptConfig config;
  config.attempt_id = "exp/28/solo_cutedsl/r0#1";
  config.arm = "solo_cutedsl";
  config.dsl = mkb::v1::CUTEDSL;
  config.device = mkb::v1::CPU;
  config.workspace_dir = scratch.path(name);
  config.sandbox.require_isolation = false;  // runs where bubblewrap cannot; tested on its own
  return config;
}

std::string Write(const std::string& text) {
  return absl::StrCat("cat > kernel.py <<'EOF'\n", text, "\nEOF");
}

struct RecordingObserver : mkb::TrialObserver {
  void OnTrajectoryEvent(const mkb::v1::TrajectoryEvent& e) override {
    absl::MutexLock lock(&mutex);
    events.push_back(e);
  }
  void OnSubmission(const mkb::v1::Submission& s) override {
    absl::MutexLock lock(&mutex);
    submissions.push_back(s);
  }
  void OnUsage(const mkb::v1::Usage& u) override {
    absl::MutexLock lock(&mutex);
    last_usage = u;
  }
  absl::Mutex mutex;
  std::vector<mkb::v1::TrajectoryEvent> events;
  std::vector<mkb::v1::Submission> submissions;
  mkb::v1::Usage last_usage;
};

}  // namespace

TEST_CASE("an attempt counts only submissions that reach evaluation") {
  Scratch scratch;
  ReplayModel model({
      ReplayModel::Call("bash", "printf '' > kernel.py"),
      ReplayModel::Call("submit"),  // empty: not counted
      ReplayModel::Call("bash", Write("# INFRA")),
      ReplayModel::Call("submit"),  // judge infrastructure: not counted
      ReplayModel::Call("bash", Write("wrong")),
      ReplayModel::Call("submit"),  // mismatch: counted
      ReplayModel::Call("bash", Write("# PASS 2.5")),
      ReplayModel::Call("submit"),  // passed: counted
      ReplayModel::Call("bash", "echo '- the gain matters' > SKILL.md"),
      ReplayModel::Call("finish"),
  });
  FakeEvaluator judge;
  RecordingObserver observer;
  mkb::AttemptConfig config = Config(scratch);
  config.observer = &observer;
  auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
  REQUIRE(attempt.ok());
  CHECK(attempt->state() == mkb::v1::ATTEMPT_FINISHED);
  CHECK(attempt->stop_reason() == mkb::v1::STOP_FINISHED_BY_AGENT);
  REQUIRE(attempt->submissions_size() == 4);
  CHECK_FALSE(attempt->submissions(0).counted());
  CHECK_FALSE(attempt->submissions(1).counted());
  CHECK(attempt->submissions(2).counted());
  CHECK(attempt->submissions(3).counted());
  CHECK(attempt->best_submission() == 3);
  CHECK(attempt->final().status() == mkb::v1::PASSED);
  // Three submissions and the final regrade: the empty kernel fails the judge's submission
  // checks before the judge is called.
  CHECK(judge.requests.size() == 4);
  CHECK(attempt->submissions(0).verdict().message() ==
        "invalid submission: kernel.py is empty (not counted)");
  CHECK(judge.requests.back().workload() == "small");
  CHECK(judge.requests.back().config().max_kernel_bytes() == 300000);
  // The report the model read after the last submission.
  const std::string& report =
      model.last_request.messages[model.last_request.messages.size() - 3].text;
  CHECK(report.find("Counted submissions: 2 of 10 used, 8 left") != std::string::npos);
  CHECK(attempt->skill_out().text() == "- the gain matters\n");
  CHECK(attempt->skill_out().source_dsl() == mkb::v1::CUTEDSL);
  CHECK(attempt->skill_out().origin() == "attempt");
  CHECK(attempt->usage().input_tokens() == 1000);
  CHECK(attempt->usage().cached_input_tokens() == 400);
  CHECK(attempt->usage().requests() == 10);
  CHECK(attempt->usage().cost_usd() > 0);
  CHECK_FALSE(attempt->task_fingerprint().empty());
  // Trajectory: every step, in order, and the same events reached the observer live.
  REQUIRE(attempt->trajectory_size() > 20);
  for (int i = 0; i < attempt->trajectory_size(); ++i) CHECK(attempt->trajectory(i).index() == i);
  CHECK(observer.events.size() == static_cast<size_t>(attempt->trajectory_size()));
  CHECK(observer.submissions.size() == 4);
  CHECK(observer.last_usage.input_tokens() == 1000);
  // The workspace as SPEC §4 lays it out.
  CHECK(fs::exists(config.workspace_dir + "/TASK.md"));
  CHECK(attempt->workspace_dir() == fs::canonical(config.workspace_dir).string());
}

TEST_CASE("after the last counted submission come a few grace turns") {
  Scratch scratch;
  std::vector<ReplayModel::Step> steps = {ReplayModel::Call("bash", Write("wrong"))};
  for (int i = 0; i < 8; ++i) steps.push_back(ReplayModel::Call("submit"));
  ReplayModel model(steps);
  FakeEvaluator judge;
  mkb::AttemptConfig config = Config(scratch);
  config.budget.set_max_submissions(2);
  config.grace_turns = 2;
  auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
  REQUIRE(attempt.ok());
  CHECK(attempt->stop_reason() == mkb::v1::STOP_SUBMISSION_BUDGET);
  CHECK(attempt->submissions_size() == 2);
  CHECK(model.calls == 5);            // bash, submit, submit, then two grace turns
  CHECK(judge.requests.size() == 3);  // two submissions and the final regrade
  CHECK(attempt->best_submission() == -1);
}

TEST_CASE("the time budget ends the attempt; GPU queueing does not count") {
  Scratch scratch;
  SECTION("time") {
    ReplayModel model({ReplayModel::Call("bash", "sleep 3"), ReplayModel::Call("bash", "true")});
    FakeEvaluator judge;
    mkb::AttemptConfig config = Config(scratch);
    config.budget.set_agent_seconds(1);
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
    REQUIRE(attempt.ok());
    CHECK(attempt->stop_reason() == mkb::v1::STOP_TIME_BUDGET);
    CHECK(model.calls == 1);
    // The command's limit was the time left, not the 120 s per-command limit.
    CHECK(attempt->usage().tool_seconds() < 2.5);
    CHECK(attempt->final().status() == mkb::v1::MISMATCH);  // the placeholder, regraded
  }
  SECTION("queueing") {
    ReplayModel model({ReplayModel::Call("bash", Write("# PASS 1.5")), ReplayModel::Call("submit"),
                       ReplayModel::Call("finish")});
    FakeEvaluator judge;
    mkb::EvaluationSlots slots(1);
    mkb::AttemptConfig config = Config(scratch);
    config.slots = &slots;
    std::optional<mkb::EvaluationSlots::Lease> held(slots.Acquire(nullptr));
    std::thread releaser([&held] {
      absl::SleepFor(absl::Seconds(1.5));
      held.reset();
    });
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
    releaser.join();
    REQUIRE(attempt.ok());
    CHECK(attempt->usage().gpu_queue_seconds() >= 1.0);
    const double wall = attempt->finished_unix() - attempt->started_unix();
    CHECK(attempt->usage().agent_seconds() < wall - 1.0);
  }
  SECTION("waiting inside the judge for a free GPU is queueing too") {
    // A judge whose GPUs were busy: it waited 1.2 s before evaluating, and says so.
    class QueuedJudge : public FakeEvaluator {
     public:
      absl::StatusOr<mkb::v1::Verdict> Evaluate(const mkb::v1::EvaluationRequest& r) override {
        absl::SleepFor(absl::Seconds(1.2));
        absl::StatusOr<mkb::v1::Verdict> v = FakeEvaluator::Evaluate(r);
        if (v.ok()) v->mutable_phase_times()->set_queue_s(1.2);
        return v;
      }
    };
    ReplayModel model({ReplayModel::Call("bash", Write("# PASS 1.5")), ReplayModel::Call("submit"),
                       ReplayModel::Call("finish")});
    QueuedJudge judge;
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
    REQUIRE(attempt.ok());
    CHECK(attempt->usage().gpu_queue_seconds() >= 1.2);
    const double wall = attempt->finished_unix() - attempt->started_unix();
    CHECK(attempt->usage().agent_seconds() < wall - 1.0);
  }
}

TEST_CASE("a conditioned attempt reads the skill under the fixed header; an empty one is skipped") {
  Scratch scratch;
  FakeEvaluator judge;
  SECTION("received") {
    ReplayModel model({ReplayModel::Call("finish")});
    mkb::AttemptConfig config = Config(scratch);
    config.skill_in = mkb::MakeSkill("- the gain is easy to drop", 16384);
    config.skill_in.set_origin("attempt");
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
    REQUIRE(attempt.ok());
    const std::string& first = model.last_request.messages[1].text;
    const size_t header = first.find(mkb::kReceivedSkillHeader);
    REQUIRE(header != std::string::npos);
    CHECK(first.find("the gain is easy to drop", header) != std::string::npos);
    CHECK(attempt->skill_digest() == config.skill_in.sha256());
    CHECK(attempt->skill_in().text() == config.skill_in.text());
    CHECK(attempt->skill_out().flags().empty());
  }
  SECTION("empty") {
    ReplayModel model({});
    mkb::AttemptConfig config = Config(scratch);
    config.skill_in.set_origin("attempt");
    config.skill_in.mutable_flags()->set_empty(true);
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, config);
    REQUIRE(attempt.ok());
    CHECK(attempt->state() == mkb::v1::ATTEMPT_SKIPPED);
    CHECK(model.calls == 0);
    CHECK(judge.requests.empty());
  }
}

TEST_CASE("model and judge failures: transient ones are errors, a full context ends the attempt") {
  Scratch scratch;
  FakeEvaluator judge;
  SECTION("API outage") {
    ReplayModel model({ReplayModel::Fail(absl::UnavailableError("503 after 8 attempts"))});
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
    CHECK(absl::IsUnavailable(attempt.status()));
  }
  SECTION("spend cap") {
    ReplayModel model({ReplayModel::Fail(absl::ResourceExhaustedError("spend cap: ..."))});
    CHECK(absl::IsResourceExhausted(
        mkb::RunAttempt(Problem("28"), model, judge, Config(scratch)).status()));
  }
  SECTION("context window") {
    ReplayModel model({ReplayModel::Call("bash", Write("# PASS 1.1")),
                       ReplayModel::Fail(absl::OutOfRangeError("context window exceeded"))});
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
    REQUIRE(attempt.ok());
    CHECK(attempt->stop_reason() == mkb::v1::STOP_MODEL_ERROR);
    CHECK(attempt->final().status() == mkb::v1::PASSED);
  }
  SECTION("judge down") {
    std::vector<ReplayModel::Step> steps = {ReplayModel::Call("bash", Write("# INFRA_STATUS"))};
    for (int i = 0; i < 5; ++i) steps.push_back(ReplayModel::Call("submit"));
    ReplayModel model(steps);
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
    REQUIRE_FALSE(attempt.ok());
    CHECK(absl::IsUnavailable(attempt.status()));
    CHECK(attempt.status().message().find("3 times in a row") != std::string::npos);
  }
  SECTION("an idle model") {
    ReplayModel model({[](const mkb::ChatRequest&) -> absl::StatusOr<mkb::ChatResponse> {
                         mkb::ChatResponse r;
                         r.message.text = "I am thinking";
                         return r;
                       },
                       [](const mkb::ChatRequest&) -> absl::StatusOr<mkb::ChatResponse> {
                         mkb::ChatResponse r;
                         r.message.text = "still thinking";
                         return r;
                       },
                       [](const mkb::ChatRequest&) -> absl::StatusOr<mkb::ChatResponse> {
                         mkb::ChatResponse r;
                         return r;
                       }});
    auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
    REQUIRE(attempt.ok());
    CHECK(attempt->stop_reason() == mkb::v1::STOP_MODEL_ERROR);
  }
}

TEST_CASE("the scripted model shows transfer: with its own skill it skips the wrong kernel") {
  Scratch scratch;
  FakeEvaluator judge;
  const auto [problem, native] =
      GENERATE(table<const char*, bool>({{"28", true}, {"28", false}, {"25", true}, {"02", true}}));
  {
    INFO("problem " << problem << ", native tools: " << native);
    mkb::ScriptedModel solo_model(native);
    auto solo = mkb::RunAttempt(Problem(problem), solo_model, judge,
                                Config(scratch, absl::StrCat("solo", native)));
    REQUIRE(solo.ok());
    CHECK(solo->model() == "scripted/demo");
    REQUIRE(solo->submissions_size() == 2);
    CHECK(solo->submissions(0).verdict().status() == mkb::v1::MISMATCH);
    CHECK(solo->submissions(1).verdict().status() == mkb::v1::PASSED);
    CHECK(solo->final().status() == mkb::v1::PASSED);
    CHECK_FALSE(solo->skill_out().flags().empty());
    CHECK_FALSE(solo->skill_out().flags().contains_code());
    CHECK(solo->trajectory(0).text().find("not a language model") != std::string::npos);

    mkb::ScriptedModel conditioned_model(native);
    mkb::AttemptConfig config = Config(scratch, absl::StrCat("skill", native));
    config.dsl = mkb::v1::TIRX;
    config.skill_in = solo->skill_out();
    auto conditioned = mkb::RunAttempt(Problem(problem), conditioned_model, judge, config);
    REQUIRE(conditioned.ok());
    REQUIRE(conditioned->submissions_size() == 1);
    CHECK(conditioned->submissions(0).verdict().status() == mkb::v1::PASSED);

    // A placebo skill that does not name the pitfall changes nothing.
    mkb::ScriptedModel placebo_model(native);
    config.workspace_dir = scratch.path(absl::StrCat("placebo", native));
    config.skill_in = mkb::MakeSkill("Work carefully and test often.", 16384);
    config.skill_in.set_origin("placebo");
    auto placebo = mkb::RunAttempt(Problem(problem), placebo_model, judge, config);
    REQUIRE(placebo.ok());
    CHECK(placebo->submissions_size() == 2);
  }
}

TEST_CASE("scripted/demo-dsl's wrong kernels: each shipped solution with its problem's bug") {
  const mkb::Suite suite = *mkb::Suite::Load(kSuite);
  int with_solutions = 0;
  for (const mkb::v1::Problem& problem : suite.problems()) {
    for (mkb::v1::Dsl dsl : {mkb::v1::CUTEDSL, mkb::v1::TIRX}) {
      const std::string path = absl::StrCat(problem.directory(), "/solutions/",
                                            dsl == mkb::v1::CUTEDSL ? "cutedsl" : "tirx", ".py");
      if (!fs::exists(path)) continue;
      ++with_solutions;
      INFO(path);
      auto kernels = mkb::ScriptedDslKernelsFor(problem.number(), dsl, path);
      REQUIRE(kernels.ok());
      std::ifstream in(path);
      const std::string solution((std::istreambuf_iterator<char>(in)), {});
      // The right kernel is the solution; the wrong one differs from it by the bug alone (a
      // solution the bug no longer applies to fails here: update DslBugs()).
      CHECK(absl::EndsWith(kernels->right, solution));
      REQUIRE_FALSE(kernels->wrong.empty());
      CHECK(kernels->wrong != kernels->right);
      CHECK(absl::StrContains(kernels->wrong, absl::StrCat("deliberate bug: ", kernels->bug)));
    }
  }
  CHECK(with_solutions >= 12);
  CHECK(mkb::ScriptedDslKernelsFor(1, mkb::v1::CUTEDSL, kSuite + "/none.py").status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("scripted/demo-dsl shows transfer with DSL kernels: the skill makes it skip the bug") {
  Scratch scratch;
  // A judge stand-in that fails the deliberately wrong kernels and passes the solutions.
  class DslJudge : public mkb::KernelEvaluator {
   public:
    absl::StatusOr<mkb::v1::Verdict> Evaluate(const mkb::v1::EvaluationRequest& r) override {
      mkb::v1::Verdict v;
      const bool wrong = absl::StrContains(r.kernel_source(), "deliberate bug");
      const bool solution = absl::StrContains(r.kernel_source(), "(scripted/demo-dsl)");
      v.set_status(!wrong && solution ? mkb::v1::PASSED : mkb::v1::MISMATCH);
      v.set_passed(v.status() == mkb::v1::PASSED);
      if (v.passed()) v.set_speedup_vs_eager(2.0);
      return v;
    }
  } judge;
  mkb::ModelOptions options;
  options.scripted_suite_root = kSuite;
  const char* problem = GENERATE("28", "36", "25", "72");
  INFO("problem " << problem);
  auto solo_model = mkb::MakeChatModel("scripted/demo-dsl", options);
  REQUIRE(solo_model.ok());
  CHECK((*solo_model)->id() == "scripted/demo-dsl");
  CHECK_FALSE((*solo_model)->is_llm());
  mkb::AttemptConfig config = Config(scratch, absl::StrCat("solo", problem));
  config.dsl = mkb::v1::CUTEDSL;
  auto solo = mkb::RunAttempt(Problem(problem), **solo_model, judge, config);
  REQUIRE(solo.ok());
  REQUIRE(solo->submissions_size() == 2);
  CHECK(solo->submissions(0).verdict().status() == mkb::v1::MISMATCH);
  CHECK(absl::StrContains(solo->submissions(0).kernel_source(), "import cutlass"));
  CHECK(solo->submissions(1).verdict().status() == mkb::v1::PASSED);
  CHECK(solo->final().status() == mkb::v1::PASSED);
  CHECK_FALSE(solo->skill_out().flags().empty());
  CHECK_FALSE(solo->skill_out().flags().contains_code());

  // The other DSL, given that skill: the right TIRx kernel at once.
  auto conditioned_model = mkb::MakeChatModel("scripted/demo-dsl", options);
  config = Config(scratch, absl::StrCat("skill", problem));
  config.dsl = mkb::v1::TIRX;
  config.skill_in = solo->skill_out();
  auto conditioned = mkb::RunAttempt(Problem(problem), **conditioned_model, judge, config);
  REQUIRE(conditioned.ok());
  REQUIRE(conditioned->submissions_size() == 1);
  CHECK(absl::StrContains(conditioned->submissions(0).kernel_source(), "tvm"));
  CHECK(conditioned->submissions(0).verdict().status() == mkb::v1::PASSED);

  // A problem without shipped solutions: the placeholder once, no skill.
  auto other_model = mkb::MakeChatModel("scripted/demo-dsl", options);
  config = Config(scratch, absl::StrCat("none", problem));
  config.dsl = mkb::v1::CUTEDSL;
  auto other = mkb::RunAttempt(Problem("19"), **other_model, judge, config);
  REQUIRE(other.ok());
  CHECK(other->submissions_size() == 1);
  CHECK(other->skill_out().flags().empty());
}

TEST_CASE("the trial executor runs trials in their own workspaces, reporting live") {
  Scratch scratch;
  mkb::AgentTrialExecutorOptions options;
  options.suite_root = kSuite;
  options.workspace_root = scratch.path("workspaces");
  auto judge = std::make_shared<FakeEvaluator>();
  options.evaluator = judge;
  options.device = mkb::v1::CPU;
  options.sandbox.require_isolation = false;
  auto executor = mkb::AgentTrialExecutor::Create(options);
  REQUIRE(executor.ok());

  mkb::v1::TrialSpec spec;
  spec.set_experiment("exp");
  spec.set_trial_id("exp/batched_kv_cache_block_copy_remap_uint8/solo_tirx/r0");
  spec.set_problem_slug("batched_kv_cache_block_copy_remap_uint8");
  spec.set_arm("solo_tirx");
  spec.set_dsl(mkb::v1::TIRX);
  spec.set_model("scripted/demo");
  spec.set_try_number(1);
  spec.set_task_fingerprint("fp");
  RecordingObserver observer;
  absl::StatusOr<mkb::v1::Attempt> attempt;
  {
    mkb::ScopedTrialObserver scope(&observer);
    attempt = (*executor)->Run(spec);
  }
  REQUIRE(attempt.ok());
  CHECK(attempt->id() == "exp/batched_kv_cache_block_copy_remap_uint8/solo_tirx/r0#1");
  CHECK(attempt->task_fingerprint() == "fp");
  CHECK(attempt->final().status() == mkb::v1::PASSED);
  CHECK(absl::StrContains(attempt->workspace_dir(), "solo_tirx/r0/try1"));
  CHECK_FALSE(observer.events.empty());
  CHECK(observer.submissions.size() == 2);

  // The same try again (a process that died mid-try): a fresh folder beside the old one.
  auto again = (*executor)->Run(spec);
  REQUIRE(again.ok());
  CHECK(absl::StrContains(again->workspace_dir(), "try1-2"));

  mkb::v1::TrialSpec skipped = spec;
  skipped.set_trial_id("exp/x/cutedsl2tirx_skill/r0");
  skipped.mutable_skill_in()->set_origin("attempt");
  CHECK((*executor)->Run(skipped)->state() == mkb::v1::ATTEMPT_SKIPPED);

  mkb::v1::TrialSpec unknown = spec;
  unknown.set_problem_slug("no_such_problem");
  CHECK(absl::IsNotFound((*executor)->Run(unknown).status()));
  mkb::v1::TrialSpec bad_model = spec;
  bad_model.set_model("nobody/model");
  CHECK(absl::IsInvalidArgument((*executor)->Run(bad_model).status()));
  CHECK(mkb::TrialFolder("a/../b c/r0") == "a/_/b_c/r0");
}

TEST_CASE("a kernel.py that is not UTF-8, or is a link, is invalid; the judge never sees it") {
  Scratch scratch;
  std::ofstream(scratch.path("outside.py")) << "def solve(*x): return 'PASS 9'\n";
  ReplayModel model({
      // Not UTF-8 by the judge's own check: its message.
      ReplayModel::Call("bash", "printf 'def solve(*x):\\n    return \"\\xff\"\\n' > kernel.py"),
      ReplayModel::Call("submit"),
      // A UTF-8-encoded surrogate on line 2: neither protobuf's strings nor Python's parser take
      // it, and neither does the judge's strict UTF-8 check.
      ReplayModel::Call("bash", "printf '# PASS 3\\nx = \"\\xed\\xa0\\x80\"\\n' > kernel.py"),
      ReplayModel::Call("submit"),
      // A link to a file the shell cannot see but this process can.
      ReplayModel::Call("bash", absl::StrCat("ln -sf ", scratch.path("outside.py"), " kernel.py")),
      ReplayModel::Call("submit"),
      ReplayModel::Call("finish"),
  });
  FakeEvaluator judge;
  auto attempt = mkb::RunAttempt(Problem("28"), model, judge, Config(scratch));
  REQUIRE(attempt.ok());
  CHECK(attempt->state() == mkb::v1::ATTEMPT_FINISHED);
  CHECK(judge.requests.empty());
  REQUIRE(attempt->submissions_size() == 3);
  for (const mkb::v1::Submission& s : attempt->submissions()) {
    CHECK(s.verdict().status() == mkb::v1::INVALID_SUBMISSION);
    CHECK_FALSE(s.counted());
    CHECK_FALSE(mkb::FirstInvalidUtf8(s.kernel_source()).has_value());  // storable
  }
  CHECK(attempt->submissions(0).verdict().message() ==
        "invalid submission: kernel.py is not UTF-8 text (not counted)");
  CHECK(attempt->submissions(0).kernel_bytes() == 30);  // the bytes as submitted
  CHECK(attempt->submissions(1).verdict().message() ==
        "invalid submission: kernel.py is not UTF-8 text (not counted)");
  CHECK(absl::StrContains(attempt->submissions(2).verdict().message(),
                          "kernel.py is a symbolic link"));
  // The agent read each refusal as the submit call's result.
  int refusals_read = 0;
  for (const mkb::ChatMessage& m : model.last_request.messages) {
    if (m.role == mkb::ChatRole::kTool && absl::StrContains(m.text, "invalid submission") &&
        absl::StrContains(m.text, "was NOT counted")) {
      ++refusals_read;
    }
  }
  CHECK(refusals_read == 3);
  CHECK(attempt->final().status() == mkb::v1::INVALID_SUBMISSION);
}
