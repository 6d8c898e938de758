// TASK.md: what an attempt is asked to do (SPEC §4) -- the problem's description, its
// reference source with make_inputs, the kernel contract of SPEC §2, how the judge decides,
// the budget, the target, the tools and the rules for SKILL.md.
#ifndef LIBMKB_AGENT_TASK_H_
#define LIBMKB_AGENT_TASK_H_

#include <string>
#include <vector>

#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/problem.pb.h"

namespace mkb {

struct TaskSettings {
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
  v1::Budget budget;              // defaults filled in by RenderTask
  std::string workload = "full";  // the workload the judge evaluates
  // The device the judge runs kernels on, in words ("NVIDIA H200 (sm_90a)"). Never assumed:
  // the caller says what its judge runs on.
  std::string target;
  bool cpu_judge = false;                 // judged on the CPU: no GPU, DSL requirement waived
  std::vector<v1::PackagePin> toolchain;  // empty: DefaultToolchain(dsl)
  bool text_protocol = false;             // the model acts through the text protocol
  std::vector<std::string> guides;        // workspace-relative paths of the DSL's guides
};

// "CuTe DSL" / "TVM TIRx".
std::string DslDisplayName(v1::Dsl dsl);

// The system prompt of an attempt: who the agent is, what it does, its tools (and the text
// protocol when settings.text_protocol).
std::string SystemPrompt(const TaskSettings& settings);

// The first user message: TASK.md in full, and where to start.
std::string FirstUserMessage(const std::string& task_markdown);

// TASK.md. `received_skill` is appended under kReceivedSkillHeader when not empty.
std::string RenderTask(const v1::Problem& problem, const TaskSettings& settings,
                       const std::string& received_skill = "");

}  // namespace mkb

#endif  // LIBMKB_AGENT_TASK_H_
