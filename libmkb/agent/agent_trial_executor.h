// AgentTrialExecutor: runs a protocol trial (libmkb/protocol/trial_executor.h) as one attempt
// of a model (libmkb/agent/attempt.h), in a fresh workspace under workspace_root, judged by
// mkb::Judge (or the evaluator given), with live reports to the protocol's TrialObserver.
//
// Errors, as the protocol expects: UnavailableError for transient failures (model API outage
// after the client's retries, judge infrastructure); other codes are permanent (a missing API
// key, a rejected request, a spend cap, an unknown problem). A kernel that fails is an Attempt.
#ifndef LIBMKB_AGENT_AGENT_TRIAL_EXECUTOR_H_
#define LIBMKB_AGENT_AGENT_TRIAL_EXECUTOR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/agent/evaluation_slots.h"
#include "libmkb/agent/kernel_evaluator.h"
#include "libmkb/agent/model_factory.h"
#include "libmkb/agent/price_table.h"
#include "libmkb/agent/shell_sandbox.h"
#include "libmkb/agent/shell_view.h"
#include "libmkb/judge/judge.h"
#include "libmkb/protocol/trial_executor.h"
#include "libmkb/suite/suite.h"
#include "mkb/v1/judge.pb.h"

namespace mkb {

struct AgentTrialExecutorOptions {
  std::string suite_root;      // the problem suite
  std::string workspace_root;  // workspaces go to <root>/<trial id>/try<N>
  // Models by id; empty: MakeChatModel with model_options.
  ChatModelFactory model_factory;
  ModelOptions model_options;
  // Where kernels are evaluated; nullptr: an mkb::Judge with `judge`.
  std::shared_ptr<KernelEvaluator> evaluator;
  JudgeOptions judge;
  v1::JudgeConfig judge_config;
  // The judge's device for trials whose spec leaves it unspecified; unspecified here too: CUDA
  // when /dev/nvidiactl exists, else CPU.
  v1::DeviceKind device = v1::DEVICE_KIND_UNSPECIFIED;
  std::string target;  // the device in words for TASK.md ("NVIDIA H200 (sm_90a)")
  // Evaluations at once, over all trials (waiting for one is GPU queueing); 0: one per GPU of
  // the judge (JudgeOptions::devices), or 1 with another evaluator.
  int evaluation_slots = 0;
  // The DSLs' guides (<root>/cutedsl.md, <root>/tirx/ ...); "": <suite_root>/../docs/dsl when
  // it exists.
  std::string guides_root;
  // Per DSL ("cutedsl", "tirx"): site directories holding that DSL (its site folder first),
  // put on the judge worker's sys.path and shown to the shell (shell_view.h), so that a
  // workspace sees only its own DSL.
  std::map<std::string, std::vector<std::string>> dsl_site_dirs;
  // The results store (an SQLite file): hidden from the shell, with its -wal, -shm and
  // -journal files, wherever a mount of its view would hold it ("": none known).
  std::string store_path;
  // The shell's template. workspace is per trial; each trial's view (shell_view.h: the
  // judge's Python, the variant's DSL, the problem) is added, with workspace_root and the
  // store hidden.
  ShellSandboxOptions sandbox;
  PriceTable prices = PriceTable::BuiltIn();
  int grace_turns = 3;
};

class AgentTrialExecutor : public TrialExecutor {
 public:
  // Loads the suite and asks the judge's Python where it lives (ProbePython).
  // InvalidArgumentError / NotFoundError / FailedPreconditionError naming the option at fault.
  static absl::StatusOr<std::unique_ptr<AgentTrialExecutor>> Create(
      AgentTrialExecutorOptions options);

  // Thread-safe: trials may run concurrently (they share the evaluation slots).
  absl::StatusOr<v1::Attempt> Run(const v1::TrialSpec& spec) override;

  const AgentTrialExecutorOptions& options() const { return options_; }
  const Suite& suite() const { return suite_; }

 private:
  AgentTrialExecutor(AgentTrialExecutorOptions options, Suite suite, PythonLayout python);

  AgentTrialExecutorOptions options_;
  Suite suite_;
  PythonLayout python_;  // the judge's Python, as the shell sees it
  EvaluationSlots slots_;
};

// A trial id as a relative folder path: '/' kept as separators, other characters outside
// [A-Za-z0-9._-] replaced by '_', no empty, '.' or '..' parts.
std::string TrialFolder(const std::string& trial_id);

}  // namespace mkb

#endif  // LIBMKB_AGENT_AGENT_TRIAL_EXECUTOR_H_
