// scripted/demo: a built-in stand-in for a language model, for offline demos and tests. It is
// not an LLM: it follows a fixed script, speaks the tool protocol (native tool calls, or the
// text protocol when it is given no tools), and writes kernels it carries with it.
//
// For problems 02, 25 and 28 its kernels are eager PyTorch, so they pass only on the CPU judge,
// where the requirement to launch a DSL kernel is waived. Its script there:
//   solo:  look around; write a slightly wrong kernel (28: forgets the RMSNorm gain; 25: copies
//          from the neighbouring block; 02: natural-log LSE); submit; write the honest kernel;
//          submit; write SKILL.md (observations, no code); finish.
//   given a skill that names the pitfall (it looks for the words it would itself write): skip
//          the wrong kernel, write the honest one, submit, write SKILL.md, finish. A skill that
//          does not name it (a placebo) changes nothing.
// For every other problem it submits the placeholder kernel.py once, leaves SKILL.md empty (so
// a conditioned arm built on it is skipped) and finishes.
//
// scripted/demo-dsl: the same script with DSL kernels, for the GPU judge (`mkb demo --device
// cuda`). For a problem with a shipped solution (<suite>/<family>/<NN>_<slug>/solutions/
// <dsl>.py) its wrong kernel is that solution with one deliberate bug (DslBugs() in
// scripted_model.cc says which, per problem: a dropped RMSNorm gain, a dropped dequantisation
// scale, unscaled logits, swapped copy direction, the last row never stored, the delta rule's
// write strength never applied), its right kernel
// the solution itself, and its SKILL.md names the bug's cause in DSL-neutral words; given such
// a skill it skips the wrong kernel. Problems without a solution are handled as above.
#ifndef LIBMKB_AGENT_SCRIPTED_MODEL_H_
#define LIBMKB_AGENT_SCRIPTED_MODEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "mkb/v1/common.pb.h"

namespace mkb {

inline constexpr char kScriptedModelId[] = "scripted/demo";
inline constexpr char kScriptedDslModelId[] = "scripted/demo-dsl";

class ScriptedModel : public ChatModel {
 public:
  // `native_tools` false: it acts through the text protocol (and expects no tools).
  explicit ScriptedModel(bool native_tools = true) : native_tools_(native_tools) {}
  // scripted/demo-dsl, writing the shipped solutions of the suite at `suite_root`.
  static std::unique_ptr<ScriptedModel> WithDslKernels(std::string suite_root,
                                                       bool native_tools = true);

  // Derives its next step from the conversation so far: the problem and any received skill
  // from the first user message (TASK.md), its progress from its earlier replies. Usage is
  // zero: it reads and writes no tokens.
  absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) override;
  const std::string& id() const override { return id_; }
  bool native_tools() const override { return native_tools_; }
  bool is_llm() const override { return false; }

 private:
  std::string id_ = kScriptedModelId;
  bool native_tools_;
  std::string suite_root_;  // scripted/demo-dsl: where the shipped solutions are
};

// The kernels scripted/demo-dsl writes for `problem` in `dsl`, from the shipped solution at
// `solution_path`: the wrong one (the solution with the problem's deliberate bug) and the right
// one (the solution). NotFoundError when there is no solution; wrong is "" when the problem has
// no bug defined or the bug no longer applies to the solution (the script then submits only
// the right kernel).
struct ScriptedDslKernels {
  std::string wrong;
  std::string right;
  std::string bug;  // what the wrong kernel gets wrong, in words
};
absl::StatusOr<ScriptedDslKernels> ScriptedDslKernelsFor(int problem_number, v1::Dsl dsl,
                                                         const std::string& solution_path);

}  // namespace mkb

#endif  // LIBMKB_AGENT_SCRIPTED_MODEL_H_
