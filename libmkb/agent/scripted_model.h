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
#ifndef LIBMKB_AGENT_SCRIPTED_MODEL_H_
#define LIBMKB_AGENT_SCRIPTED_MODEL_H_

#include <string>

#include "libmkb/agent/chat.h"

namespace mkb {

inline constexpr char kScriptedModelId[] = "scripted/demo";

class ScriptedModel : public ChatModel {
 public:
  // `native_tools` false: it acts through the text protocol (and expects no tools).
  explicit ScriptedModel(bool native_tools = true) : native_tools_(native_tools) {}

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
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_SCRIPTED_MODEL_H_
