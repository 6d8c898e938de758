#include "libmkb/agent/scripted_model.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/tools.h"

namespace mkb {
namespace {

constexpr char kDemoHeader[] =
    "# Written by the scripted demo model (scripted/demo), not by an LLM. Eager PyTorch: valid\n"
    "# only on the CPU judge, where the requirement to launch a DSL kernel is waived.\n";

// One problem the script knows: a slightly wrong kernel, the honest one, the skill it leaves,
// and the words in a received skill that make it skip the wrong kernel.
struct Script {
  int number;
  const char* wrong_kernel;
  const char* honest_kernel;
  const char* skill;
  const char* pitfall_words;  // all must appear in a received skill (case-insensitive)
};

const Script kScripts[] = {
    {28,
     R"(import torch


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv).to(hidden_states.dtype)
)",
     R"(import torch


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(hidden_states.dtype)
)",
     R"(# Fused residual add + RMSNorm (problem 28)

- Observed: a first version that normalised the float32 sum but left out the RMSNorm gain
  failed the first correctness draw (error far above the allowance). The gain scales every
  element after the normalisation and is easy to drop when the two steps are fused.
- Observed: forming the sum in float32, normalising from the unrounded float32 sum, applying
  the gain, and rounding the output to bf16 only at the end passed all five draws.
- Why: the reference takes the norm of the float32 sum; a norm of the sum rounded to bf16
  first differs at the bf16 level.
- Worth moving into the kernel: the add, the sum of squares and both scalings in one pass per
  row; the row reduction is the only step that needs threads to cooperate.
- Holds for: bf16 inputs, eps 1e-5, contiguous rows of 4096 (seen on the small CPU workload).
- Test next: one row per thread block with a block-wide reduction, against several rows per
  block when there are many tokens.
)",
     "gain"},
    {25,
     R"(def solve(src_k, src_v, dst_k, dst_v, block_mapping):
    src = (block_mapping[:, 0] + 1) % src_k.shape[0]
    dst_k[block_mapping[:, 1]] = src_k[src]
    dst_v[block_mapping[:, 1]] = src_v[src]
    return dst_k, dst_v
)",
     R"(def solve(src_k, src_v, dst_k, dst_v, block_mapping):
    dst_k[block_mapping[:, 1]] = src_k[block_mapping[:, 0]]
    dst_v[block_mapping[:, 1]] = src_v[block_mapping[:, 0]]
    return dst_k, dst_v
)",
     R"(# KV-cache block copy with a remap (problem 25)

- Observed: a first version that read each source block one block too far (the neighbouring
  source block) failed the exact byte comparison on the first draw; only the destination
  blocks differed.
- Observed: copying source block `src` over destination block `dst` for every pair, in the
  key and the value caches alike, in place, and returning both destination caches passed
  every draw with an exact match.
- Why it is safe to copy all pairs at once: destinations are distinct and never a source, so
  no copy reads a block another copy writes.
- Worth moving into the kernel: the whole gather-scatter; it is pure data movement, one
  block per thread block, wide loads of the uint8 bytes.
- Holds for: the stated invariants (distinct destinations, none of them a source).
- Test next: the number of bytes each thread moves per load, and whether key and value go
  in one launch.
)",
     "neighbouring source block"},
    {2,
     R"(import math

import torch


def solve(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:2], dtype=torch.float32, device=q.device)
    scale = sm_scale
    for b in range(q.shape[0]):
        pages = kv_indices[kv_indptr[b] : kv_indptr[b + 1]].long()
        k = k_cache[pages, 0, 0].float()
        v = v_cache[pages, 0, 0].float()
        logits = q[b].float() @ k.T * scale
        lse[b] = torch.logsumexp(logits, -1)
        out[b] = (torch.softmax(logits, -1) @ v).to(q.dtype)
    return out, lse
)",
     R"(import math

import torch


def solve(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:2], dtype=torch.float32, device=q.device)
    scale = sm_scale
    for b in range(q.shape[0]):
        pages = kv_indices[kv_indptr[b] : kv_indptr[b + 1]].long()
        k = k_cache[pages, 0, 0].float()
        v = v_cache[pages, 0, 0].float()
        logits = q[b].float() @ k.T * scale
        lse[b] = torch.logsumexp(logits, -1) / math.log(2.0)
        out[b] = (torch.softmax(logits, -1) @ v).to(q.dtype)
    return out, lse
)",
     R"(# GQA paged decode with a base-2 LSE (problem 02)

- Observed: a first version that returned the natural-log LSE failed on `lse` on the first
  draw (error about 30% of its magnitude, far over the allowance) while `out` matched.
- Observed: dividing the natural log-sum-exp by ln 2 (a base-2 LSE, as FlashInfer returns
  it) passed every draw.
- Observed: accumulating the logits, the softmax and the weighted sum of values in float32
  and rounding `out` to bf16 at the end stays well inside the tolerance.
- Worth moving into the kernel: the gather of each sequence's pages, the dot products of the
  5 query heads that share one KV head, the running max and sum, and the weighted values, in
  one pass over the tokens; the 5 heads can share every K and V load.
- Holds for: page size 1, one KV head, head dim 128, variable sequence lengths.
- Test next: splitting long sequences across thread blocks and merging their partial results
  by their LSE.
)",
     "base-2"},
};

const Script* FindScript(const std::string& task) {
  for (const Script& s : kScripts) {
    char marker[32];
    std::snprintf(marker, sizeof(marker), "Problem %02d `", s.number);
    if (absl::StrContains(task, marker)) return &s;
  }
  return nullptr;
}

std::string WriteFile(const char* name, const std::string& contents) {
  return absl::StrCat("cat > ", name, " <<'MKB_SCRIPTED_EOF'\n", contents, "MKB_SCRIPTED_EOF");
}

struct Step {
  std::string say;
  std::string tool;     // bash, submit, finish
  std::string command;  // bash
};

}  // namespace

absl::StatusOr<ChatResponse> ScriptedModel::Chat(const ChatRequest& request) {
  std::string task;
  int replies = 0;
  for (const ChatMessage& m : request.messages) {
    if (m.role == ChatRole::kUser && task.empty()) task = m.text;
    if (m.role == ChatRole::kAssistant) ++replies;
  }
  const Script* script = FindScript(task);
  const size_t skill_at = task.find(kReceivedSkillHeader);
  const std::string received =
      skill_at == std::string::npos ? "" : task.substr(skill_at + sizeof(kReceivedSkillHeader) - 1);
  // Words are matched across line breaks: the skill is wrapped prose.
  std::string words = absl::AsciiStrToLower(received);
  absl::RemoveExtraAsciiWhitespace(&words);
  const bool informed =
      script != nullptr && !words.empty() && absl::StrContains(words, script->pitfall_words);

  std::vector<Step> plan;
  plan.push_back({"Reading the task and looking at the workspace.", kBashTool,
                  "head -n 12 TASK.md && ls -la"});
  if (script == nullptr) {
    plan.push_back({"I have no kernel for this problem; submitting the placeholder as it is.",
                    kSubmitTool, ""});
    plan.push_back({"Finishing without a skill: nothing here was learned.", kFinishTool, ""});
  } else {
    if (!informed) {
      plan.push_back({"Writing a first kernel.", kBashTool,
                      WriteFile("kernel.py", absl::StrCat(kDemoHeader, script->wrong_kernel))});
      plan.push_back({"Submitting the first kernel.", kSubmitTool, ""});
      plan.push_back({"The report shows a mismatch; writing the corrected kernel.", kBashTool,
                      WriteFile("kernel.py", absl::StrCat(kDemoHeader, script->honest_kernel))});
    } else {
      plan.push_back(
          {"The notes from the prior attempt name the pitfall; writing the kernel "
           "that avoids it.",
           kBashTool, WriteFile("kernel.py", absl::StrCat(kDemoHeader, script->honest_kernel))});
    }
    plan.push_back({"Submitting.", kSubmitTool, ""});
    plan.push_back({"Recording what I observed in SKILL.md.", kBashTool,
                    WriteFile("SKILL.md", script->skill)});
    plan.push_back({"Finishing.", kFinishTool, ""});
  }
  const Step& step = plan[std::min<size_t>(static_cast<size_t>(replies), plan.size() - 1)];

  ChatResponse response;
  response.message.role = ChatRole::kAssistant;
  response.model = kScriptedModelId;
  response.stop_reason = "tool_use";
  const std::string say = absl::StrCat("[scripted demo model, not an LLM] ", step.say);
  if (native_tools_) {
    response.message.text = say;
    ToolCall call;
    call.id = absl::StrCat("scripted-", replies);
    call.name = step.tool;
    call.arguments_json =
        step.tool == kBashTool ? nlohmann::json{{"command", step.command}}.dump() : "{}";
    response.message.tool_calls.push_back(std::move(call));
  } else {
    response.message.text = step.tool == kBashTool
                                ? absl::StrCat(say, "\n<bash>\n", step.command, "\n</bash>")
                                : absl::StrCat(say, "\n<", step.tool, "/>");
  }
  return response;
}

}  // namespace mkb
