#include "libmkb/agent/scripted_model.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "libmkb/agent/skill.h"
#include "libmkb/agent/task.h"
#include "libmkb/agent/tools.h"
#include "libmkb/core/file.h"
#include "libmkb/model/names.h"

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

// scripted/demo-dsl: one deliberate bug per problem with shipped solutions, the same mistake in
// both DSLs (so that a skill written in one names the pitfall of the other), applied to the
// solution text by replacing `find` (which must occur exactly once) with `replace`. Several
// (find, replace) pairs are alternatives, for versions of a solution; the first that applies
// is used. tests/cpp/agent_attempt_test.cc checks that each applies to the shipped solutions.
struct DslBugEdit {
  const char* find;
  const char* replace;
};
struct DslBug {
  int number;
  const char* bug;  // what the wrong kernel gets wrong
  std::vector<DslBugEdit> cutedsl;
  std::vector<DslBugEdit> tirx;
  const char* skill;
  const char* pitfall_words;  // all must appear in a received skill (case-insensitive)
};

const std::vector<DslBug>& DslBugs() {
  static const std::vector<DslBug> bugs = {
      {28,
       "the RMSNorm gain (weight) is never applied",
       {{"s * inv_rms * rW.load().to(Float32)", "s * inv_rms"}},
       {{"s[it * vec + v] * inv_rms * T.float32(b[v])", "s[it * vec + v] * inv_rms"}},
       R"(# Fused residual add + RMSNorm (problem 28)

- Observed: a first kernel that normalised the float32 sum but never applied the RMSNorm gain
  failed the first correctness draw on `out` (error far over the allowance). The gain scales
  every element after the normalisation and is easy to drop when the two steps are fused.
- Observed: one thread block per row, the row kept in registers between the sum of squares and
  the scaling, the gain applied in float32 and `out` rounded to bf16 once, passed every draw.
- Why: the norm is taken over the unrounded float32 sum of the two inputs.
- Holds for: bf16 rows of 4096 with 128-bit vector loads; the weight stays in cache.
- Test next: several rows per block when there are few tokens.
)",
       "gain"},
      {36,
       "the last row of the batch is never stored",
       {{"        if tXcX[(0, 0), m, 0][0] < num_rows:\n            cute.copy(atom, rO",
         "        if tXcX[(0, 0), m, 0][0] < num_rows - 1:\n            cute.copy(atom, rO"}},
       {{"            if row < n:\n                for v in T.vectorized(vec):\n"
         "                    Y[row, col + v]",
         "            if row < n - 1:\n                for v in T.vectorized(vec):\n"
         "                    Y[row, col + v]"}},
       R"(# RMSNorm, hidden 128 (problem 36)

- Observed: a first kernel whose store guard was off by one never wrote the last row: that
  row came back as the judge's poison (NaN) and the first draw failed on it while every other
  row matched.
- Observed: guarding the stores with row < number of rows (the same guard as the loads) passed
  every draw, including draws whose row count is not a multiple of the rows per block.
- Worth keeping: many rows per thread block (a row is only 256 bytes), one warp-level
  reduction per row, the weight loaded once per thread.
- Holds for: hidden 128, bf16, any number of rows.
- Test next: rows per thread against the occupancy of the partial last block.
)",
       "last row"},
      {25,
       "the copy runs the wrong way (destination into source)",
       {{"    src = Int32(mMap[pair, 0])\n    dst = Int32(mMap[pair, 1])",
         "    src = Int32(mMap[pair, 1])\n    dst = Int32(mMap[pair, 0])"}},
       {{"        src = T.meta_var(T.int32(M[p, 0]))\n        dst = T.meta_var(T.int32(M[p, 1]))",
         "        src = T.meta_var(T.int32(M[p, 1]))\n        dst = T.meta_var(T.int32(M[p, 0]))"}},
       R"(# KV-cache block copy with a remap (problem 25)

- Observed: a first kernel that read the mapping's columns the wrong way round (copying each
  destination block over its source) failed the exact byte comparison on the first draw: the
  destination blocks were unchanged.
- Observed: column 0 of each pair is the source and column 1 the destination; copying source
  over destination for every pair, layer and key/value half passed every draw.
- Why copying all pairs at once is safe: destinations are distinct and never a source.
- Worth keeping: one block per thread block, wide (16-byte) loads and stores of the raw bytes.
- Test next: the bytes each thread moves, and whether both halves go in one launch.
)",
       "wrong way round"},
      {23,
       "the FP8 codes are never multiplied by the dequantisation scale",
       {{"codes.load().to(Float32) * mScale[0]", "codes.load().to(Float32)"}},
       {{"T.float32(codes[v]) * scale", "T.float32(codes[v])"}},
       R"(# MLA cache gather + FP8 dequantisation (problem 23)

- Observed: a first kernel that widened the FP8 codes but never multiplied them by the
  dequantisation scale failed the first draw on every element (off by the scale factor).
- Observed: widening each code to float32 and multiplying by the per-tensor scale in float32,
  as the reference does, passed every draw.
- Worth keeping: one gathered row per group of threads, 16-byte loads of the codes.
- Holds for: a per-tensor float32 scale passed at call time (not a constant).
- Test next: rows per thread block for short sequences.
)",
       "dequantisation scale"},
      {24,
       "the FP8 codes are never multiplied by their group's dequantisation scale",
       {{"codes.load().to(Float32) * scale", "codes.load().to(Float32)"}},
       {{"T.float32(codes[v]) * scale", "T.float32(codes[v])"}},
       R"(# Context-parallel cache gather, FP8 to bf16 (problem 24)

- Observed: a first kernel that converted the FP8 codes without multiplying by their tile's
  dequantisation scale failed the first draw on the latent part, while the RoPE part (copied
  as bf16) matched.
- Observed: multiplying each code by the float32 scale of its 128-value tile before rounding
  to bf16 passed every draw.
- Worth keeping: one entry per group of threads; the scales read once per tile.
- Holds for: 4 tiles of 128 codes per entry, float32 scales stored in the entry.
- Test next: the split of threads between the latent and the RoPE parts.
)",
       "dequantisation scale"},
      {2,
       "the logits are never scaled by the softmax scale",
       {{"threads_in_group=LANES) * scale_log2", "threads_in_group=LANES)"},
        {"threads_in_group=LANES) * SM_SCALE_LOG2", "threads_in_group=LANES)"}},
       {{"T.float32(qb[v]) * T.float32(qscale)", "T.float32(qb[v])"}},
       R"(# GQA paged decode (problem 02)

- Observed: a first kernel that used the raw dot products as logits, without the softmax scale,
  failed the first draw on both `out` and `lse` (the attention was far too peaked).
- Observed: scaling the logits by the softmax scale times log2(e) and working in base 2
  throughout (the running max, the sum and the returned LSE) passed every draw.
- Worth keeping: the 5 query heads that share one KV head read each K and V row once;
  sequences split across thread blocks, merged by their LSE.
- Holds for: page size 1, one KV head, head dim 128.
- Test next: the number of splits against the sequence lengths drawn.
)",
       "softmax scale"},
      {3,
       "the logits are never scaled by the softmax scale",
       {{"threads_in_group=LANES) * scale_log2", "threads_in_group=LANES)"}},
       {{"T.float32(qb[v]) * T.float32(qscale)", "T.float32(qb[v])"}},
       R"(# GQA paged decode, 64-token pages (problem 03)

- Observed: a first kernel that used the raw dot products as logits, without the softmax scale
  (the call's sm_scale), failed the first draw on both `out` and `lse`.
- Observed: scaling the logits by the softmax scale times log2(e) and working in base 2
  throughout (the running max, the sum and the returned LSE) passed every draw.
- Worth keeping: the 4 query heads that share one KV head read each page's K and V once; the
  last page's length comes from kv_last_page_len.
- Holds for: 32 query heads over 8 KV heads, head dim 128, pages of 64 tokens.
- Test next: the number of splits per sequence against the sequence lengths drawn.
)",
       "softmax scale"},
      {9,
       "the logits are never scaled by the softmax scale",
       {{"threads_in_group=LANES) * scale_log2", "threads_in_group=LANES)"}},
       {{"T.float32(qb[v]) * T.float32(qscale)", "T.float32(qb[v])"}},
       R"(# GQA ragged causal prefill, head 256 (problem 09)

- Observed: a first kernel that used the raw dot products as logits, without the softmax scale
  (the call's sm_scale), failed the first draw on both `out` and `lse`.
- Observed: scaling the logits by the softmax scale times log2(e), in base 2 throughout (the
  running max, the sum and the returned LSE), with the causal limit per query row, passed
  every draw.
- Worth keeping: the 8 query heads that share the one KV head read each K and V row once.
- Holds for: ragged batches given by qo_indptr / kv_indptr, head dim 256.
- Test next: query rows per thread block for long sequences.
)",
       "softmax scale"},
      {72,
       "the delta rule's write strength beta is never applied",
       {{"d = beta * (mV[b, 0, h, j].to(Float32) - g * sk)",
         "d = (mV[b, 0, h, j].to(Float32) - g * sk)"}},
       {{"d = beta * (T.float32(V[b, 0, h, j]) - g * sk)",
         "d = (T.float32(V[b, 0, h, j]) - g * sk)"}},
       R"(# Gated DeltaNet decode step (problem 72)

- Observed: a first kernel that wrote the full correction v - g (S . k) into the state, without
  the write strength beta = sigmoid(b), failed the first draw on the output and the new state.
- Observed: d = beta (v - g (S . k)) and S' = g S + d k, the decay, removal and addition as one
  rank-one update per state row, passed every draw.
- Why: beta scales only the correction; the decay g scales the whole old state.
- Worth keeping: the gates in float64 once per thread; each state row read and written once.
- Test next: rows loaded per warp before reducing.
)",
       "write strength beta"},
      {74,
       "the delta rule's write strength beta is never applied",
       {{"d = sBeta[tt] * (sV[tt, j].to(Float32) - u)", "d = (sV[tt, j].to(Float32) - u)"}},
       {{"d = sbeta[tt] * (T.float32(sv[tt, j]) - u)", "d = (T.float32(sv[tt, j]) - u)"}},
       R"(# DeltaNet delta-rule recurrence (problem 74)

- Observed: a first kernel that added the full correction v - S k to the state for every token,
  without the token's write strength beta, failed the first draw on the output and the final
  state.
- Observed: d = beta (v - S k), S += d k per token, with q and k L2-normalised (q also scaled by
  head_dim^-0.5), passed every draw.
- Worth keeping: the 128 x 128 float32 state in registers for the whole sequence; the tokens
  staged in shared memory in blocks.
- Test next: the token block size against the shared memory per CTA.
)",
       "write strength beta"},
      {44,
       "the SiLU is never applied: the kernel multiplies the gate by the up projection",
       {{"out[i] = (x / (Float32(1.0) + cute.math.exp(-x, fastmath=False)) * up[i]).to(BFloat16)",
         "out[i] = (x * up[i]).to(BFloat16)"}},
       {{"out[v] = T.bfloat16(gate[v] * sig * up[v])", "out[v] = T.bfloat16(gate[v] * up[v])"}},
       R"(# DeepSeek-V3 MoE with FP8 block-scaled weights (problem 44)

- Observed: a first kernel whose SwiGLU step multiplied the gate half by the up half without
  the SiLU of the gate failed the first draw on the output (every routed token off).
- Observed: act = silu(gate) * up, with the first GEMM's output laid out [up | gate] (gate is
  the second half), in float32 and rounded to bf16 once, passed every draw.
- Worth keeping: the weights and the activations dequantised with their block scales once per
  call; the GEMMs on bf16 tensor cores with float32 output.
- Test next: fusing the dequantisation into the GEMM's operand loads.
)",
       "silu"},
      {49,
       "the routed scaling factor is never applied to the weights",
       {{"mW[token, k] = chosen_score[k] / denominator * factor",
         "mW[token, k] = chosen_score[k] / denominator"}},
       {{"W[token, k] = chosen_score[k] / (total + T.float32(1e-20)) * T.float32(factor)",
         "W[token, k] = chosen_score[k] / (total + T.float32(1e-20))"}},
       R"(# Group-limited top-8 routing (problem 49)

- Observed: a first kernel that normalised the chosen experts' scores to sum 1 but never
  multiplied them by the call's routed scaling factor (2.5) failed the first draw on the
  weights, while the indices matched.
- Observed: weights = s / (sum s + 1e-20) * routed_scaling_factor, the unbiased sigmoid scores
  of the chosen experts, passed every draw.
- Worth keeping: a warp per token; groups scored by their top two biased scores; the top 8
  chosen by repeated warp-wide arg-max among the kept groups' experts.
- Test next: more tokens per warp for the small batches.
)",
       "scaling factor"},
      {53,
       "the FP8 block scales are never applied",
       {{"vals = codes.load().to(Float32) * scale", "vals = codes.load().to(Float32)"}},
       {{"val = T.meta_var(T.float32(codes[v]) * scale)", "val = T.meta_var(T.float32(codes[v]))"}},
       R"(# FP8 block-scaled gate/up projections + SiLU gating (problem 53)

- Observed: a first kernel that widened the e4m3 codes without multiplying them by their
  float32 block scale failed the first draw on the output (off by the scales' product).
- Observed: every code times its block's scale (a 1 x 128 scale per activation row block,
  128 x 128 per weight block) before the GEMM, then silu(gate) * up, passed every draw.
- Worth keeping: the dequantised operands split into bf16 hi and lo parts, so that bf16 tensor
  cores keep float32's accuracy (hi hi + hi lo + lo hi).
- Test next: applying the scales to the GEMM's output per K block instead.
)",
       "block scale"},
      {60,
       "the e4m3 block scales are never applied",
       {{"vals[i] = cutlass.select_((code & 8) != 0, -mag, mag) * scale",
         "vals[i] = cutlass.select_((code & 8) != 0, -mag, mag)"}},
       {{"vals[j] = T.if_then_else((code & 8) != 0, -mag, mag) * scale",
         "vals[j] = T.if_then_else((code & 8) != 0, -mag, mag)"}},
       R"(# NVFP4 dequantise + GEMM (problem 60)

- Observed: a first kernel that decoded the e2m1 nibbles but never multiplied them by their
  16-value e4m3 block scale failed the first draw on the output.
- Observed: e2m1 value times its block scale (exact in bf16), the GEMM in bf16 with float32
  output, and the two global decode scales applied last, passed every draw.
- Worth keeping: low nibble first; 16 values and one scale per 64-bit load.
- Test next: decoding inside the GEMM's operand loads.
)",
       "block scale"},
  };
  return bugs;
}

const DslBug* FindDslBug(int number) {
  for (const DslBug& bug : DslBugs()) {
    if (bug.number == number) return &bug;
  }
  return nullptr;
}

// "Problem 28 `slug` (mlp_norm)" and "**CuTe DSL**" from TASK.md.
struct TaskFacts {
  int number = -1;
  std::string slug;
  std::string family;
  v1::Dsl dsl = v1::DSL_UNSPECIFIED;
};

TaskFacts ReadTaskFacts(const std::string& task) {
  TaskFacts facts;
  const size_t at = task.find("\n\nProblem ");
  if (at != std::string::npos) {
    char slug[256] = {}, family[64] = {};
    int number = -1;
    if (std::sscanf(task.c_str() + at, "\n\nProblem %d `%255[^`]` (%63[^)])", &number, slug,
                    family) == 3) {
      facts.number = number;
      facts.slug = slug;
      facts.family = family;
    }
  }
  for (v1::Dsl dsl : {v1::CUTEDSL, v1::TIRX}) {
    if (absl::StrContains(task, absl::StrCat("in **", DslDisplayName(dsl), "**"))) facts.dsl = dsl;
  }
  return facts;
}

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

constexpr char kDslHeader[] =
    "# Written by the scripted demo model (scripted/demo-dsl), not by an LLM: the shipped\n"
    "# solution of this problem";

}  // namespace

absl::StatusOr<ScriptedDslKernels> ScriptedDslKernelsFor(int problem_number, v1::Dsl dsl,
                                                         const std::string& solution_path) {
  absl::StatusOr<std::string> solution = ReadFile(solution_path, 1 << 20);
  if (!solution.ok()) {
    return absl::NotFoundError(absl::StrCat("problem ", problem_number, " has no shipped ",
                                            DslName(dsl), " solution (", solution_path, ")"));
  }
  ScriptedDslKernels kernels;
  kernels.right = absl::StrCat(kDslHeader, ".\n", *solution);
  const DslBug* bug = FindDslBug(problem_number);
  if (bug == nullptr) return kernels;
  for (const DslBugEdit& edit : dsl == v1::CUTEDSL ? bug->cutedsl : bug->tirx) {
    const size_t at = solution->find(edit.find);
    if (at == std::string::npos || solution->find(edit.find, at + 1) != std::string::npos) continue;
    std::string wrong = *solution;
    wrong.replace(at, std::strlen(edit.find), edit.replace);
    kernels.bug = bug->bug;
    kernels.wrong = absl::StrCat(kDslHeader, ", with a deliberate bug: ", bug->bug, ".\n", wrong);
    break;
  }
  return kernels;
}

std::unique_ptr<ScriptedModel> ScriptedModel::WithDslKernels(std::string suite_root,
                                                             bool native_tools) {
  auto model = std::make_unique<ScriptedModel>(native_tools);
  model->id_ = kScriptedDslModelId;
  model->suite_root_ = suite_root.empty() ? "." : std::move(suite_root);
  return model;
}

absl::StatusOr<ChatResponse> ScriptedModel::Chat(const ChatRequest& request) {
  std::string task;
  int replies = 0;
  for (const ChatMessage& m : request.messages) {
    if (m.role == ChatRole::kUser && task.empty()) task = m.text;
    if (m.role == ChatRole::kAssistant) ++replies;
  }
  const bool dsl_kernels = id_ == kScriptedDslModelId;
  const Script* script = dsl_kernels ? nullptr : FindScript(task);
  // scripted/demo-dsl: the shipped solution and its deliberate bug; a problem without a
  // solution is handled like one the demo script does not know.
  std::optional<ScriptedDslKernels> dsl;
  Script dsl_script{};
  if (dsl_kernels) {
    const TaskFacts facts = ReadTaskFacts(task);
    const DslBug* bug = FindDslBug(facts.number);
    if (facts.dsl != v1::DSL_UNSPECIFIED) {
      const std::string path =
          absl::StrFormat("%s/%s/%02d_%s/solutions/%s.py", suite_root_, facts.family, facts.number,
                          facts.slug, DslName(facts.dsl));
      if (absl::StatusOr<ScriptedDslKernels> k =
              ScriptedDslKernelsFor(facts.number, facts.dsl, path);
          k.ok()) {
        dsl = *std::move(k);
        dsl_script.number = facts.number;
        dsl_script.wrong_kernel = dsl->wrong.c_str();
        dsl_script.honest_kernel = dsl->right.c_str();
        dsl_script.skill = bug != nullptr && !dsl->wrong.empty() ? bug->skill : "";
        dsl_script.pitfall_words = bug != nullptr ? bug->pitfall_words : "";
        script = &dsl_script;
      }
    }
  }
  const size_t skill_at = task.find(kReceivedSkillHeader);
  const std::string received =
      skill_at == std::string::npos ? "" : task.substr(skill_at + sizeof(kReceivedSkillHeader) - 1);
  // Words are matched across line breaks: the skill is wrapped prose.
  std::string words = absl::AsciiStrToLower(received);
  absl::RemoveExtraAsciiWhitespace(&words);
  const bool informed = script != nullptr && !words.empty() && *script->pitfall_words != '\0' &&
                        absl::StrContains(words, script->pitfall_words);
  // The demo's kernels carry the eager header; the DSL kernels carry their own.
  const std::string header = dsl_kernels ? "" : kDemoHeader;
  // Without a wrong kernel (a solution the bug no longer applies to) it submits the right one.
  const bool skip_wrong = informed || (script != nullptr && *script->wrong_kernel == '\0');

  std::vector<Step> plan;
  plan.push_back({"Reading the task and looking at the workspace.", kBashTool,
                  "head -n 12 TASK.md && ls -la"});
  if (script == nullptr) {
    plan.push_back({"I have no kernel for this problem; submitting the placeholder as it is.",
                    kSubmitTool, ""});
    plan.push_back({"Finishing without a skill: nothing here was learned.", kFinishTool, ""});
  } else {
    if (!skip_wrong) {
      plan.push_back({"Writing a first kernel.", kBashTool,
                      WriteFile("kernel.py", absl::StrCat(header, script->wrong_kernel))});
      plan.push_back({"Submitting the first kernel.", kSubmitTool, ""});
      plan.push_back({"The report shows a mismatch; writing the corrected kernel.", kBashTool,
                      WriteFile("kernel.py", absl::StrCat(header, script->honest_kernel))});
    } else {
      plan.push_back(
          {informed ? "The notes from the prior attempt name the pitfall; writing the kernel "
                      "that avoids it."
                    : "Writing the kernel.",
           kBashTool, WriteFile("kernel.py", absl::StrCat(header, script->honest_kernel))});
    }
    plan.push_back({"Submitting.", kSubmitTool, ""});
    plan.push_back({"Recording what I observed in SKILL.md.", kBashTool,
                    WriteFile("SKILL.md", script->skill)});
    plan.push_back({"Finishing.", kFinishTool, ""});
  }
  const Step& step = plan[std::min<size_t>(static_cast<size_t>(replies), plan.size() - 1)];

  ChatResponse response;
  response.message.role = ChatRole::kAssistant;
  response.model = id_;
  response.stop_reason = "tool_use";
  const std::string say = absl::StrCat("[", id_, ": a script, not an LLM] ", step.say);
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
