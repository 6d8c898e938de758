#include "libmkb/agent/attempt.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "libmkb/agent/chat_json.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/submission_check.h"
#include "libmkb/agent/task.h"
#include "libmkb/agent/text_protocol.h"
#include "libmkb/agent/tools.h"
#include "libmkb/agent/workspace.h"
#include "libmkb/core/sha256.h"
#include "libmkb/core/utf8.h"
#include "libmkb/judge/measurement_plan.h"
#include "libmkb/judge/report.h"
#include "libmkb/model/defaults.h"
#include "libmkb/model/names.h"

namespace mkb {
namespace {

bool Counts(v1::VerdictStatus status) {
  return status != v1::INVALID_SUBMISSION && status != v1::INFRA_ERROR &&
         status != v1::VERDICT_STATUS_UNSPECIFIED;
}

bool Passed(const v1::Verdict& v) { return v.status() == v1::PASSED || v.status() == v1::CORRECT; }

v1::Verdict UnreadableKernel(const std::string& why) {
  v1::Verdict verdict;
  verdict.set_status(v1::INVALID_SUBMISSION);
  verdict.set_message(absl::StrCat("invalid submission: ", why, " (not counted)"));
  return verdict;
}

std::string DefaultTarget(v1::DeviceKind device) {
  return device == v1::CPU ? "the CPU (offline demo judge; no GPU)" : "the judge's GPU";
}

// The state of one running attempt.
class AttemptLoop {
 public:
  AttemptLoop(const v1::Problem& problem, ChatModel& model, KernelEvaluator& evaluator,
              const AttemptConfig& config)
      : problem_(problem),
        model_(model),
        evaluator_(evaluator),
        config_(config),
        budget_(WithDefaults(config.budget)),
        prices_(config.prices != nullptr ? *config.prices : builtin_prices_) {}

  absl::StatusOr<v1::Attempt> Run();

 private:
  double AgentSeconds() const {
    return absl::ToDoubleSeconds(absl::Now() - start_) - attempt_.usage().gpu_queue_seconds();
  }
  double SecondsLeft() const { return budget_.agent_seconds() - AgentSeconds(); }

  void Event(const std::string& kind, const std::string& tool, const std::string& text,
             const std::string& json = "", int64_t input_tokens = 0, int64_t output_tokens = 0,
             double seconds = 0);
  void ReportUsage();
  absl::Status Prepare();
  absl::StatusOr<std::string> Execute(const ToolCall& call, bool* finished);
  std::string Bash(const ToolCall& call);
  absl::StatusOr<std::string> Submit();
  absl::StatusOr<v1::Verdict> Evaluate(const std::string& source, bool count_queue);
  absl::Status Finish();
  v1::EvaluationRequest Request(const std::string& source) const;

  const v1::Problem& problem_;
  ChatModel& model_;
  KernelEvaluator& evaluator_;
  const AttemptConfig& config_;
  const v1::Budget budget_;
  const PriceTable builtin_prices_ = PriceTable::BuiltIn();
  const PriceTable& prices_;

  v1::Attempt attempt_;
  absl::Time start_;
  std::optional<Workspace> workspace_;
  std::optional<ShellSandbox> sandbox_;
  std::string workload_;
  TokenUsage tokens_;
  std::vector<ChatMessage> messages_;
  int counted_ = 0;
  int judge_failures_in_a_row_ = 0;
  int grace_left_ = -1;  // turns left after the last submission; -1 before it
};

void AttemptLoop::Event(const std::string& kind, const std::string& tool, const std::string& text,
                        const std::string& json, int64_t input_tokens, int64_t output_tokens,
                        double seconds) {
  v1::TrajectoryEvent* e = attempt_.add_trajectory();
  e->set_index(attempt_.trajectory_size() - 1);
  e->set_t_seconds(absl::ToDoubleSeconds(absl::Now() - start_));
  e->set_kind(kind);
  e->set_tool(tool);
  e->set_text(text);
  e->set_json(json);
  e->set_input_tokens(input_tokens);
  e->set_output_tokens(output_tokens);
  e->set_seconds(seconds);
  if (config_.observer != nullptr) config_.observer->OnTrajectoryEvent(*e);
}

void AttemptLoop::ReportUsage() {
  v1::Usage* u = attempt_.mutable_usage();
  u->set_input_tokens(tokens_.input_tokens);
  u->set_cached_input_tokens(tokens_.cached_input_tokens);
  u->set_cache_write_tokens(tokens_.cache_write_tokens);
  u->set_output_tokens(tokens_.output_tokens);
  u->set_reasoning_tokens(tokens_.reasoning_tokens);
  u->set_cost_usd(prices_.Cost(model_.id(), tokens_));
  u->set_agent_seconds(AgentSeconds());
  if (config_.observer != nullptr) config_.observer->OnUsage(*u);
}

v1::EvaluationRequest AttemptLoop::Request(const std::string& source) const {
  v1::EvaluationRequest request;
  request.set_problem_dir(problem_.directory());
  request.set_kernel_source(source);
  request.set_dsl(config_.dsl);
  request.set_device(config_.device);
  request.set_workload(workload_);
  *request.mutable_config() = config_.judge;
  request.mutable_config()->set_max_kernel_bytes(budget_.max_kernel_bytes());
  request.set_kernel_name(kKernelFileName);
  return request;
}

absl::StatusOr<v1::Verdict> AttemptLoop::Evaluate(const std::string& source, bool count_queue) {
  const v1::EvaluationRequest request = Request(source);
  if (std::optional<v1::Verdict> refused = RefuseBeforeJudging(problem_, request)) {
    return *std::move(refused);
  }
  absl::Duration waited;
  std::optional<EvaluationSlots::Lease> lease;
  if (config_.slots != nullptr) lease.emplace(config_.slots->Acquire(&waited));
  absl::StatusOr<v1::Verdict> verdict = evaluator_.Evaluate(request);
  if (count_queue) {
    // Waiting for a slot here and, inside the judge, for a free GPU (phase_times.queue_s).
    v1::Usage* u = attempt_.mutable_usage();
    double queued = absl::ToDoubleSeconds(waited);
    if (verdict.ok()) queued += verdict->phase_times().queue_s();
    u->set_gpu_queue_seconds(u->gpu_queue_seconds() + queued);
  }
  return verdict;
}

absl::Status AttemptLoop::Prepare() {
  if (config_.dsl != v1::CUTEDSL && config_.dsl != v1::TIRX) {
    return absl::InvalidArgumentError("dsl: required (cutedsl or tirx)");
  }
  if (config_.device != v1::CPU && config_.device != v1::CUDA) {
    return absl::InvalidArgumentError("device: must be cpu or cuda (the judge's device)");
  }
  if (problem_.directory().empty()) {
    return absl::InvalidArgumentError("problem: not loaded from a folder (directory is empty)");
  }
  workload_ = !config_.workload.empty() ? config_.workload
                                        : DefaultWorkload(/*gpu=*/config_.device == v1::CUDA);
  absl::StatusOr<Workspace> workspace = Workspace::Create(config_.workspace_dir);
  if (!workspace.ok()) return workspace.status();
  workspace_.emplace(*std::move(workspace));
  absl::StatusOr<std::vector<std::string>> guides =
      workspace_->CopyGuides(config_.dsl, config_.guides_root);
  if (!guides.ok()) return guides.status();

  TaskSettings settings;
  settings.dsl = config_.dsl;
  settings.budget = budget_;
  settings.workload = workload_;
  settings.cpu_judge = config_.device == v1::CPU;
  settings.target = config_.target.empty() ? DefaultTarget(config_.device) : config_.target;
  settings.toolchain = config_.toolchain;
  settings.text_protocol = !model_.native_tools();
  settings.guides = *guides;
  const std::string plain_task = RenderTask(problem_, settings);
  const bool conditioned = IsConditioned(config_.skill_in);
  const std::string task =
      conditioned ? RenderTask(problem_, settings, config_.skill_in.text()) : plain_task;
  if (auto s = workspace_->Write(kTaskFileName, task); !s.ok()) return s;
  attempt_.set_task_fingerprint(
      !config_.task_fingerprint.empty()
          ? config_.task_fingerprint
          : Sha256Hex(absl::StrCat(plain_task, "\n", problem_.fingerprint())));

  const auto make_shell = [&](bool isolated) {
    ShellSandboxOptions sandbox = config_.sandbox;
    AddShellView(config_.shell_view, problem_, config_.dsl, config_.target, isolated, &sandbox);
    sandbox.workspace = workspace_->dir();
    sandbox.cpus = budget_.sandbox_cpus();
    sandbox.memory_bytes = budget_.sandbox_memory_bytes();
    return ShellSandbox::Create(std::move(sandbox));
  };
  absl::StatusOr<ShellSandbox> shell = make_shell(/*isolated=*/true);
  // The unisolated fallback mounts nothing: its variables name the host's paths.
  if (shell.ok() && !shell->isolated()) shell = make_shell(/*isolated=*/false);
  if (!shell.ok()) return shell.status();
  sandbox_.emplace(*std::move(shell));
  attempt_.set_sandbox(sandbox_->description());
  attempt_.set_workspace_dir(workspace_->dir());

  messages_.push_back(TextMessage(ChatRole::kSystem, SystemPrompt(settings)));
  messages_.push_back(TextMessage(ChatRole::kUser, FirstUserMessage(task)));
  if (!model_.is_llm()) {
    Event("note", "",
          absl::StrCat("the model ", model_.id(), " is a scripted stand-in, not a language model"));
  }
  Event("note", "", absl::StrCat("shell sandbox: ", sandbox_->description()));
  Event("system", "", messages_[0].text);
  Event("user", "", messages_[1].text);
  return absl::OkStatus();
}

std::string AttemptLoop::Bash(const ToolCall& call) {
  absl::StatusOr<std::string> command = BashCommand(call);
  if (!command.ok()) return std::string(command.status().message());
  const double limit = std::max(1.0, std::min(budget_.command_timeout_s(), SecondsLeft()));
  absl::StatusOr<ShellResult> result = sandbox_->Run(*command, absl::Seconds(limit));
  if (!result.ok()) {
    return absl::StrCat("[the sandbox could not run the command: ", result.status().message(), "]");
  }
  return result->Observation();
}

absl::StatusOr<std::string> AttemptLoop::Submit() {
  const int max = budget_.max_submissions();
  if (counted_ >= max) {
    return absl::StrCat("No submissions left (", max, " of ", max,
                        " used). Update SKILL.md if you have not, then call finish.");
  }
  const double at = AgentSeconds();
  absl::StatusOr<std::string> source =
      workspace_->Read(kKernelFileName, static_cast<size_t>(budget_.max_kernel_bytes()));
  absl::StatusOr<v1::Verdict> verdict =
      source.ok()
          ? Evaluate(*source, /*count_queue=*/true)
          : absl::StatusOr<v1::Verdict>(UnreadableKernel(std::string(source.status().message())));
  std::string judge_failure;
  if (!verdict.ok()) {
    judge_failure = std::string(verdict.status().message());
  } else if (verdict->status() == v1::INFRA_ERROR) {
    judge_failure = verdict->message();
  }
  if (!judge_failure.empty()) {
    ++judge_failures_in_a_row_;
    Event("note", kSubmitTool, absl::StrCat("judge failure: ", judge_failure));
    if (judge_failures_in_a_row_ >= config_.max_consecutive_judge_failures) {
      return absl::UnavailableError(absl::StrCat("the judge failed ", judge_failures_in_a_row_,
                                                 " times in a row; last: ", judge_failure));
    }
  } else {
    judge_failures_in_a_row_ = 0;
  }
  v1::Submission* submission = attempt_.add_submissions();
  submission->set_index(attempt_.submissions_size() - 1);
  submission->set_at_agent_seconds(at);
  if (source.ok()) {
    submission->set_kernel_sha256(Sha256Hex(*source));
    submission->set_kernel_bytes(static_cast<int64_t>(source->size()));
    // A proto string must be UTF-8 (the store and Python could not read it back otherwise):
    // the hash and size are of the bytes as submitted, the text keeps U+FFFD for bad bytes.
    submission->set_kernel_source(ToValidUtf8(*source));
  }
  if (verdict.ok()) {
    *submission->mutable_verdict() = *verdict;
  } else {
    submission->mutable_verdict()->set_status(v1::INFRA_ERROR);
    submission->mutable_verdict()->set_message(absl::StrCat("the judge failed: ", judge_failure));
  }
  const bool counted = Counts(submission->verdict().status());
  submission->set_counted(counted);
  if (counted) ++counted_;
  if (config_.observer != nullptr) config_.observer->OnSubmission(*submission);

  ReportOptions report_options;
  report_options.show_environment = false;
  std::string out = verdict.ok() ? RenderReport(*verdict, report_options)
                                 : absl::StrCat("The judge failed: ", judge_failure, "\n");
  absl::StrAppendFormat(&out,
                        "\nSubmission %d %s. Counted submissions: %d of %d used, %d left. "
                        "Time left: %.1f minutes.\n",
                        submission->index() + 1,
                        counted ? "was counted" : "was NOT counted (it never reached evaluation)",
                        counted_, max, max - counted_, std::max(0.0, SecondsLeft()) / 60);
  if (counted_ >= max && grace_left_ < 0) {
    grace_left_ = config_.grace_turns;
    absl::StrAppend(&out, "That was your last submission. You have ", grace_left_,
                    " more turns: update SKILL.md, then call finish.\n");
  }
  return out;
}

absl::StatusOr<std::string> AttemptLoop::Execute(const ToolCall& call, bool* finished) {
  if (call.name == kBashTool) return Bash(call);
  if (call.name == kSubmitTool) return Submit();
  if (call.name == kFinishTool) {
    *finished = true;
    return std::string("The attempt is finished.");
  }
  return absl::StrCat("There is no tool '", call.name, "'. The tools are bash, submit, finish.");
}

absl::Status AttemptLoop::Finish() {
  // The final score: a fresh regrade of the kernel.py left at the end (SPEC §4). Not agent time.
  absl::StatusOr<std::string> source =
      workspace_->Read(kKernelFileName, static_cast<size_t>(budget_.max_kernel_bytes()));
  if (!source.ok()) {
    *attempt_.mutable_final() = UnreadableKernel(std::string(source.status().message()));
  } else {
    std::string last_failure;
    for (int tries = 0; tries < std::max(1, config_.final_regrade_tries); ++tries) {
      absl::StatusOr<v1::Verdict> verdict = Evaluate(*source, /*count_queue=*/false);
      if (verdict.ok() && verdict->status() != v1::INFRA_ERROR) {
        *attempt_.mutable_final() = *std::move(verdict);
        last_failure.clear();
        break;
      }
      last_failure = verdict.ok() ? verdict->message() : std::string(verdict.status().message());
    }
    if (!last_failure.empty()) {
      return absl::UnavailableError(absl::StrCat("the final regrade failed: ", last_failure));
    }
  }
  Event("note", "",
        absl::StrCat("final regrade: ", VerdictStatusName(attempt_.final().status()), " -- ",
                     attempt_.final().message()));
  attempt_.set_best_submission(BestSubmission(attempt_));

  absl::StatusOr<std::string> skill_text = workspace_->Read(kSkillFileName, 1 << 20);
  v1::Skill skill = MakeSkill(skill_text.ok() ? *skill_text : "", budget_.max_skill_bytes());
  skill.set_source_attempt_id(attempt_.id());
  skill.set_source_dsl(config_.dsl);
  skill.set_source_model(model_.id());
  skill.set_origin("attempt");
  *attempt_.mutable_skill_out() = std::move(skill);
  return absl::OkStatus();
}

absl::StatusOr<v1::Attempt> AttemptLoop::Run() {
  start_ = absl::Now();
  attempt_.set_id(config_.attempt_id);
  attempt_.set_experiment(config_.experiment);
  attempt_.set_problem_slug(problem_.slug());
  attempt_.set_problem_number(problem_.number());
  attempt_.set_family(problem_.family());
  attempt_.set_arm(config_.arm);
  attempt_.set_dsl(config_.dsl);
  attempt_.set_model(model_.id());
  attempt_.set_replicate(config_.replicate);
  attempt_.set_try_number(config_.try_number);
  *attempt_.mutable_budget() = budget_;
  attempt_.set_best_submission(-1);
  attempt_.set_started_unix(absl::ToDoubleSeconds(start_ - absl::UnixEpoch()));
  if (IsConditioned(config_.skill_in)) {
    *attempt_.mutable_skill_in() = config_.skill_in;
    attempt_.set_skill_digest(config_.skill_in.sha256().empty() ? Sha256Hex(config_.skill_in.text())
                                                                : config_.skill_in.sha256());
    if (IsBlankSkill(config_.skill_in)) {
      attempt_.set_state(v1::ATTEMPT_SKIPPED);
      attempt_.set_finished_unix(attempt_.started_unix());
      Event("note", "", "the skill received is empty: the conditioned attempt is skipped");
      return attempt_;
    }
  }
  if (auto s = Prepare(); !s.ok()) return s;
  attempt_.set_state(v1::ATTEMPT_RUNNING);

  const std::vector<ToolDefinition> tools = AttemptTools();
  const bool native = model_.native_tools();
  int turns = 0;
  int idle = 0;
  int text_calls = 0;
  v1::StopReason stop = v1::STOP_REASON_UNSPECIFIED;
  while (stop == v1::STOP_REASON_UNSPECIFIED) {
    if (SecondsLeft() <= 0) {
      stop = v1::STOP_TIME_BUDGET;
      break;
    }
    if (budget_.max_turns() > 0 && turns >= budget_.max_turns()) {
      stop = v1::STOP_TURN_LIMIT;
      break;
    }
    if (grace_left_ == 0) {
      stop = v1::STOP_SUBMISSION_BUDGET;
      break;
    }
    ChatRequest request;
    request.messages = messages_;
    if (native) request.tools = tools;
    absl::StatusOr<ChatResponse> response = model_.Chat(request);
    v1::Usage* usage = attempt_.mutable_usage();
    usage->set_requests(usage->requests() + 1);
    if (!response.ok()) {
      Event("note", "", absl::StrCat("model error: ", response.status().ToString()));
      if (absl::IsOutOfRange(response.status())) {
        stop = v1::STOP_MODEL_ERROR;
        attempt_.set_error(std::string(response.status().message()));
        break;
      }
      return response.status();
    }
    usage->set_llm_seconds(usage->llm_seconds() + response->seconds);
    tokens_ += response->usage;
    ++turns;
    if (grace_left_ > 0) --grace_left_;
    messages_.push_back(response->message);
    Event("assistant", "", response->message.text, ChatMessageToJson(response->message),
          response->usage.input_tokens, response->usage.output_tokens, response->seconds);
    ReportUsage();

    std::vector<ToolCall> calls;
    if (native) {
      calls = response->message.tool_calls;
    } else if (std::optional<ToolCall> action =
                   ParseTextAction(response->message.text, ++text_calls)) {
      calls.push_back(*std::move(action));
    }
    if (calls.empty()) {
      if (++idle >= config_.max_idle_replies) {
        stop = v1::STOP_MODEL_ERROR;
        attempt_.set_error(
            absl::StrCat("the model replied ", idle, " times in a row without an action"));
        break;
      }
      const std::string nudge =
          native ? "Use the tools: bash to work in the workspace, submit to evaluate kernel.py, "
                   "finish to end the attempt."
                 : TextProtocolReminder();
      messages_.push_back(TextMessage(ChatRole::kUser, nudge));
      Event("user", "", nudge);
      continue;
    }
    idle = 0;
    for (const ToolCall& call : calls) {
      Event("tool_call", call.name, call.arguments_json, call.arguments_json);
      bool finished = false;
      const absl::Time tool_start = absl::Now();
      absl::StatusOr<std::string> result = Execute(call, &finished);
      if (!result.ok()) return result.status();
      const double seconds = absl::ToDoubleSeconds(absl::Now() - tool_start);
      usage->set_tool_seconds(usage->tool_seconds() + seconds);
      std::string json;
      if (call.name == kSubmitTool && attempt_.submissions_size() > 0 &&
          absl::StrContains(*result, "Counted submissions")) {
        const v1::Submission& s = attempt_.submissions(attempt_.submissions_size() - 1);
        json = absl::StrFormat(R"({"submission":%d,"status":"%s","counted":%s,"counted_used":%d})",
                               s.index(), VerdictStatusName(s.verdict().status()),
                               s.counted() ? "true" : "false", counted_);
      }
      Event("tool_result", call.name, *result, json, 0, 0, seconds);
      if (native) {
        ChatMessage m = TextMessage(ChatRole::kTool, *result);
        m.tool_call_id = call.id;
        m.tool_name = call.name;
        messages_.push_back(std::move(m));
      } else {
        messages_.push_back(
            TextMessage(ChatRole::kUser, FormatTextObservation(call.name, *result)));
      }
      if (finished) {
        stop = v1::STOP_FINISHED_BY_AGENT;
        break;
      }
      if (SecondsLeft() <= 0) break;  // the loop's check ends the attempt
    }
  }
  attempt_.set_stop_reason(stop);
  ReportUsage();
  Event("note", "", absl::StrCat("the attempt ended: ", v1::StopReason_Name(stop)));
  if (auto s = Finish(); !s.ok()) return s;
  attempt_.set_state(v1::ATTEMPT_FINISHED);
  attempt_.set_finished_unix(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  return attempt_;
}

}  // namespace

int BestSubmission(const v1::Attempt& attempt) {
  int best = -1;
  for (const v1::Submission& s : attempt.submissions()) {
    if (!s.counted() || !Passed(s.verdict())) continue;
    if (best < 0) {
      best = s.index();
      continue;
    }
    const v1::Verdict& b = attempt.submissions(best).verdict();
    const bool better =
        s.verdict().has_speedup_vs_eager() &&
        (!b.has_speedup_vs_eager() || s.verdict().speedup_vs_eager() > b.speedup_vs_eager());
    if (better) best = s.index();
  }
  return best;
}

absl::StatusOr<v1::Attempt> RunAttempt(const v1::Problem& problem, ChatModel& model,
                                       KernelEvaluator& evaluator, const AttemptConfig& config) {
  AttemptLoop loop(problem, model, evaluator, config);
  return loop.Run();
}

}  // namespace mkb
