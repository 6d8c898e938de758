// One attempt (SPEC §4): a model works in a fresh workspace with the bash / submit / finish
// tools until it finishes or its budget runs out; then the kernel.py it left is regraded with
// fresh seeds, and its SKILL.md becomes its skill.
//
// Budget: agent wall-clock (model calls, commands and evaluations; waiting for a free
// evaluation slot is GPU queueing and is excluded), counted submissions (those that never reach
// evaluation -- empty, unparseable, oversized, not UTF-8, a judge failure -- are not counted),
// kernel size, and optionally turns. The judge's own submission checks run before the judge is
// called: a kernel.py they refuse is an invalid submission without an evaluation. After the last
// counted submission the agent gets `grace_turns` more turns to update SKILL.md and finish.
#ifndef LIBMKB_AGENT_ATTEMPT_H_
#define LIBMKB_AGENT_ATTEMPT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/evaluation_slots.h"
#include "libmkb/agent/kernel_evaluator.h"
#include "libmkb/agent/price_table.h"
#include "libmkb/agent/shell_sandbox.h"
#include "libmkb/agent/shell_view.h"
#include "libmkb/protocol/trial_observer.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/judge.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

struct AttemptConfig {
  // Identity, copied into the Attempt.
  std::string attempt_id;
  std::string experiment;
  std::string arm;
  int replicate = 0;
  int try_number = 1;

  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  v1::Budget budget;  // zero fields: the defaults (libmkb/model/defaults.h)
  // A conditioned attempt's input (skill.h: IsConditioned); leave unset for a solo. A
  // conditioned attempt whose skill is blank is SKIPPED without running.
  v1::Skill skill_in;

  std::string workspace_dir;  // created; must not exist or be empty
  std::string guides_root;    // the DSLs' guides (<root>/<dsl>.md, <root>/<dsl>/); "" = none

  // The judge. `device` must be CPU or CUDA: TASK.md and the workload follow from it.
  v1::DeviceKind device = v1::DEVICE_KIND_UNSPECIFIED;
  std::string workload;                   // "": full on CUDA, small on the CPU
  v1::JudgeConfig judge;                  // for submissions and the final regrade
  std::string target;                     // the device in words, for TASK.md; "" : generic
  std::vector<v1::PackagePin> toolchain;  // for TASK.md; empty: the default pins
  std::string task_fingerprint;           // "" : SHA-256 of TASK.md (without a received skill)

  // The shell. workspace, cpus and memory_bytes are set from the budget, and `shell_view`
  // (the judge's Python, the variant's DSL, this problem: shell_view.h) is added to it.
  ShellSandboxOptions sandbox;
  ShellView shell_view;

  EvaluationSlots* slots = nullptr;    // shared evaluation slots; nullptr: no queueing
  const PriceTable* prices = nullptr;  // nullptr: PriceTable::BuiltIn()
  TrialObserver* observer = nullptr;   // live reports; nullptr: none
  int grace_turns = 3;
  // Judge failures in a row (infrastructure errors, not counted) after which the attempt is
  // abandoned as UnavailableError.
  int max_consecutive_judge_failures = 3;
  int final_regrade_tries = 2;
  // Model replies in a row without an action after which the attempt ends (STOP_MODEL_ERROR).
  int max_idle_replies = 3;
};

// Runs one attempt to its end and returns it, trajectory included. Errors:
//  - UnavailableError: the model's API or the judge failed transiently (after their retries);
//    the attempt is lost and may be retried.
//  - the model's permanent errors (Unauthenticated, PermissionDenied, ResourceExhausted for a
//    spend cap, InvalidArgument, NotFound), as ChatModel returned them;
//  - InvalidArgument / AlreadyExists / FailedPrecondition for a bad config, an occupied
//    workspace, or a shell sandbox that cannot start.
// A model whose conversation outgrows its context window ends the attempt (STOP_MODEL_ERROR);
// the attempt is then graded as any other.
absl::StatusOr<v1::Attempt> RunAttempt(const v1::Problem& problem, ChatModel& model,
                                       KernelEvaluator& evaluator, const AttemptConfig& config);

// Index of the best counted submission: the passed one with the highest speedup_vs_eager
// (passed ones without a speedup rank below those with one); -1 when none passed.
int BestSubmission(const v1::Attempt& attempt);

}  // namespace mkb

#endif  // LIBMKB_AGENT_ATTEMPT_H_
