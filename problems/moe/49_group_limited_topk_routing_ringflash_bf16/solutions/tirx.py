"""Group-limited top-8 routing (Ring-flash-2.0: 256 experts in 8 groups, best 4 groups) in TVM TIRx.

The router GEMM is the reference's own float32 GEMM (F.linear on the operands widened to float32,
cuBLAS): measured on the H200, a bf16 tensor-core GEMM with float32 accumulation put the weights
1.5-2x over the correctness allowance (3x the reference's own float32 error; the MMA's accumulation
is not IEEE-rounded), though far inside the 1e-4 decision margins make_inputs guarantees.
Everything after the logits is one TIRx kernel, a warp per token:

- lane l holds experts 8l .. 8l + 7 (two 128-bit loads of logits, one of the bf16 bias) and
  computes the sigmoid scores as 1 / (1 + 2^(-x log2 e)) (exp2 on a pre-scaled value: NVRTC's fast
  math keeps it within a few ulp) and the biased scores;
- a group is 4 adjacent lanes: each lane's top two, merged over the group with two xor shuffles,
  give every lane its group's score; eight broadcasts give every lane all eight;
- a lane's group is kept when fewer than 4 groups score higher;
- eight rounds of a warp-wide arg-max (value, expert, unbiased score) over the kept experts pick
  the experts in descending order; the owner lane drops each winner;
- lane 0 writes the 8 indices (int64) and the weights s / (sum s + 1e-20) * routed_scaling_factor
  (the call's argument, built into the kernel: one compile per value).

The eager reference runs a float32 GEMM on float32 copies of the inputs and about twenty
elementwise, top-k and scatter kernels over [tokens, 256] tensors.
"""

import math

import torch
import tvm
from tvm.script import tirx as T

NUM_EXPERTS = 256
PER_LANE = NUM_EXPERTS // 32
LANES_PER_GROUP = 4
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8
WARPS = 8  # tokens per CTA
NEG = -3.0e38
LOG2E = math.log2(math.e)
FULL = 0xFFFFFFFF


def _build(factor: float):
    @T.prim_func
    def route(l_h: T.handle, b_h: T.handle, i_h: T.handle, w_h: T.handle):
        n = T.int32()
        L = T.match_buffer(l_h, (n, NUM_EXPERTS), "float32")
        B = T.match_buffer(b_h, (NUM_EXPERTS,), "bfloat16")
        IDX = T.match_buffer(i_h, (n, TOP_K), "int64")
        W = T.match_buffer(w_h, (n, TOP_K), "float32")
        T.device_entry()
        cta = T.cta_id([T.ceildiv(n, WARPS)])
        tid = T.thread_id([WARPS * 32])
        logits = T.alloc_local((PER_LANE,), "float32")
        bias = T.alloc_local((PER_LANE,), "bfloat16")
        score = T.alloc_local((PER_LANE,), "float32")
        biased = T.alloc_local((PER_LANE,), "float32")
        chosen = T.alloc_local((TOP_K,), "int32")
        chosen_score = T.alloc_local((TOP_K,), "float32")
        lane = T.meta_var(tid % 32)
        token = T.meta_var(cta * WARPS + tid // 32)
        row = T.meta_var(T.if_then_else(token < n, token, 0))  # a dead warp reads row 0
        for h in T.unroll(2):
            for v in T.vectorized(4):
                logits[h * 4 + v] = L[row, lane * PER_LANE + h * 4 + v]
        for v in T.vectorized(PER_LANE):
            bias[v] = B[lane * PER_LANE + v]
        for i in T.unroll(PER_LANE):
            score[i] = T.float32(1) / (T.float32(1) + T.exp2(logits[i] * T.float32(-LOG2E)))
            biased[i] = score[i] + T.float32(bias[i])

        # The lane's two best biased scores, then its group's by two xor merges.
        best = T.float32(NEG)
        second = T.float32(NEG)
        for i in T.unroll(PER_LANE):
            second = T.if_then_else(biased[i] > best, best, T.max(second, biased[i]))
            best = T.max(best, biased[i])
        for j in T.unroll(2):
            other_best = T.cuda.__shfl_xor_sync(T.uint32(FULL), best, 1 << j, 32)
            other_second = T.cuda.__shfl_xor_sync(T.uint32(FULL), second, 1 << j, 32)
            second = T.max(T.max(second, other_second), T.if_then_else(best > other_best, other_best, best))
            best = T.max(best, other_best)
        group_score = best + second

        # Keep the lane's group when fewer than 4 groups score higher (a lower id wins a tie).
        group = T.meta_var(lane // LANES_PER_GROUP)
        higher = T.int32(0)
        for g in T.unroll(NUM_GROUPS):
            other = T.cuda.__shfl_sync(T.uint32(FULL), group_score, g * LANES_PER_GROUP, 32)
            higher = higher + T.if_then_else(
                (other > group_score) or ((other == group_score) and (g < group)), 1, 0
            )
        for i in T.unroll(PER_LANE):
            biased[i] = T.if_then_else(higher < TOPK_GROUPS, biased[i], T.float32(NEG))

        # Eight rounds of a warp arg-max over (biased score, expert, unbiased score).
        total = T.float32(0)
        for k in T.unroll(TOP_K):
            value = T.float32(NEG)
            expert = T.int32(0)
            s_best = T.float32(0)
            for i in T.unroll(PER_LANE):
                take_i = T.if_then_else(biased[i] > value, 1, 0)  # decided once, then applied
                s_best = T.if_then_else(take_i == 1, score[i], s_best)
                expert = T.if_then_else(take_i == 1, lane * PER_LANE + i, expert)
                value = T.if_then_else(take_i == 1, biased[i], value)
            for j in T.unroll(5):
                o_value = T.cuda.__shfl_xor_sync(T.uint32(FULL), value, 1 << j, 32)
                o_expert = T.cuda.__shfl_xor_sync(T.uint32(FULL), expert, 1 << j, 32)
                o_score = T.cuda.__shfl_xor_sync(T.uint32(FULL), s_best, 1 << j, 32)
                take = T.if_then_else((o_value > value) or ((o_value == value) and (o_expert < expert)), 1, 0)
                value = T.if_then_else(take == 1, o_value, value)
                expert = T.if_then_else(take == 1, o_expert, expert)
                s_best = T.if_then_else(take == 1, o_score, s_best)
            chosen[k] = expert
            chosen_score[k] = s_best
            total = total + s_best
            for i in T.unroll(PER_LANE):  # the owner drops the winner
                biased[i] = T.if_then_else(expert == lane * PER_LANE + i, T.float32(NEG), biased[i])

        if token < n and lane == 0:
            for k in T.unroll(TOP_K):
                IDX[token, k] = T.int64(chosen[k])
                W[token, k] = chosen_score[k] / (total + T.float32(1e-20)) * T.float32(factor)

    return route


_KERNELS = {}


def _kernel(factor, device):
    key = (float(factor), str(device))
    if key not in _KERNELS:
        major, minor = torch.cuda.get_device_capability(device)
        arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
        target = tvm.target.Target({"kind": "cuda", "arch": arch})
        executable = tvm.compile(
            tvm.IRModule({"main": _build(float(factor))}), target=target, tir_pipeline="tirx"
        )
        _KERNELS[key] = executable["main"]
    return _KERNELS[key]


def _logits(hidden_states, weight):
    """hidden_states @ weight^T in float32, as the reference computes it."""
    return torch.nn.functional.linear(hidden_states.float(), weight.float())


def solve(hidden_states, weight, expert_bias, routed_scaling_factor):
    num_tokens = hidden_states.shape[0]
    fn = _kernel(routed_scaling_factor, hidden_states.device)
    logits = _logits(hidden_states, weight)
    topk_indices = torch.empty(num_tokens, TOP_K, dtype=torch.int64, device=hidden_states.device)
    topk_weights = torch.empty(num_tokens, TOP_K, dtype=torch.float32, device=hidden_states.device)
    fn(logits, expert_bias, topk_indices, topk_weights)
    return topk_indices, topk_weights
