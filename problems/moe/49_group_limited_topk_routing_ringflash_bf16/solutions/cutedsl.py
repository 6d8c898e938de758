"""Group-limited top-8 routing (Ring-flash-2.0: 256 experts in 8 groups, best 4 groups) in CuTe DSL.

The router GEMM is the reference's own float32 GEMM (F.linear on the operands widened to float32,
cuBLAS): measured on the H200, a bf16 tensor-core GEMM with float32 accumulation put the weights
1.5-2x over the correctness allowance (3x the reference's own float32 error; the MMA's accumulation
is not IEEE-rounded), though far inside the 1e-4 decision margins make_inputs guarantees.
Everything after the logits is one CuTe kernel, a warp per token:

- lane l holds experts 8l .. 8l + 7 (two 128-bit loads of logits, one of the bf16 bias), computes
  the sigmoid scores (accurate exp) and the biased scores;
- a group is 4 adjacent lanes: each lane's top two, merged over the group with two butterfly
  shuffles, give every lane its group's score; eight broadcasts give every lane all eight;
- a lane's group is kept when fewer than 4 groups score higher;
- eight rounds of a warp-wide arg-max (value, expert, unbiased score) over the kept experts pick
  the experts in descending order; the owner lane drops each winner;
- lane 0 writes the 8 indices (int64) and the weights s / (sum s + 1e-20) * routed_scaling_factor
  (the call's argument, which reaches the kernel as a one-element float32 tensor built once per
  value).

The eager reference runs a float32 GEMM on float32 copies of the inputs and about twenty
elementwise, top-k and scatter kernels over [tokens, 256] tensors.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float32, Int32, Int64
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

NUM_EXPERTS = 256
PER_LANE = NUM_EXPERTS // 32  # experts held by one lane
LANES_PER_GROUP = 4  # 32 experts per group
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8
WARPS = 8  # tokens per CTA
NEG = -3.0e38


@cute.kernel
def _route_kernel(
    mLogits: cute.Tensor, mBias: cute.Tensor, mIdx: cute.Tensor, mW: cute.Tensor, mFactor: cute.Tensor
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    warp = tidx // 32
    lane = tidx % 32
    token = bidx * WARPS + warp
    num_tokens = mLogits.shape[0]
    live = token < num_tokens
    row = cutlass.select_(live, token, Int32(0))  # a dead warp reads row 0 and writes nothing

    logits = cute.make_rmem_tensor(cute.make_layout((PER_LANE,)), Float32)
    bias = cute.make_rmem_tensor(cute.make_layout((PER_LANE,)), BFloat16)
    cute.autovec_copy(cute.local_tile(mLogits[row, None], (PER_LANE,), (lane,)), logits)
    cute.autovec_copy(cute.local_tile(mBias, (PER_LANE,), (lane,)), bias)

    score = cute.make_rmem_tensor(cute.make_layout((PER_LANE,)), Float32)
    biased = cute.make_rmem_tensor(cute.make_layout((PER_LANE,)), Float32)
    bias_f = cute.make_rmem_tensor(cute.make_layout((PER_LANE,)), Float32)
    bias_f.store(bias.load().to(Float32))
    for i in cutlass.range_constexpr(PER_LANE):
        s = Float32(1.0) / (Float32(1.0) + cute.math.exp(-logits[i], fastmath=False))
        score[i] = s
        biased[i] = s + bias_f[i]

    # The lane's two best biased scores, then its group's (4 lanes) by two butterfly merges.
    best = Float32(NEG)
    second = Float32(NEG)
    for i in cutlass.range_constexpr(PER_LANE):
        v = biased[i]
        second = cutlass.select_(v > best, best, cute.arch.fmax(second, v))
        best = cute.arch.fmax(best, v)
    for j in cutlass.range_constexpr(2):  # partners at lane ^ 1 and lane ^ 2: the group's 4 lanes
        other_best = cute.arch.shuffle_sync_bfly(best, offset=1 << j)
        other_second = cute.arch.shuffle_sync_bfly(second, offset=1 << j)
        second = cute.arch.fmax(
            cute.arch.fmax(second, other_second), cutlass.select_(best > other_best, other_best, best)
        )
        best = cute.arch.fmax(best, other_best)
    group_score = best + second

    # Keep the lane's group when fewer than TOPK_GROUPS groups score higher (ties cannot occur
    # within the margins; a lower group id wins one anyway).
    group = lane // LANES_PER_GROUP
    higher = Int32(0)
    for g in cutlass.range_constexpr(NUM_GROUPS):
        other = cute.arch.shuffle_sync(group_score, offset=g * LANES_PER_GROUP)
        beats = (other > group_score) | ((other == group_score) & (Int32(g) < group))
        higher = higher + cutlass.select_(beats, Int32(1), Int32(0))
    kept = higher < TOPK_GROUPS
    for i in cutlass.range_constexpr(PER_LANE):
        biased[i] = cutlass.select_(kept, biased[i], Float32(NEG))

    # Eight rounds of a warp arg-max over (biased score, expert, unbiased score).
    chosen = cute.make_rmem_tensor(cute.make_layout((TOP_K,)), Int32)
    chosen_score = cute.make_rmem_tensor(cute.make_layout((TOP_K,)), Float32)
    total = Float32(0.0)
    for k in cutlass.range_constexpr(TOP_K):
        value = Float32(NEG)
        expert = Int32(0)
        s_best = Float32(0.0)
        for i in cutlass.range_constexpr(PER_LANE):
            better = biased[i] > value
            value = cutlass.select_(better, biased[i], value)
            expert = cutlass.select_(better, lane * PER_LANE + i, expert)
            s_best = cutlass.select_(better, score[i], s_best)
        for offset in cutlass.range_constexpr(5):
            o_value = cute.arch.shuffle_sync_bfly(value, offset=1 << offset)
            o_expert = cute.arch.shuffle_sync_bfly(expert, offset=1 << offset)
            o_score = cute.arch.shuffle_sync_bfly(s_best, offset=1 << offset)
            take = (o_value > value) | ((o_value == value) & (o_expert < expert))
            value = cutlass.select_(take, o_value, value)
            expert = cutlass.select_(take, o_expert, expert)
            s_best = cutlass.select_(take, o_score, s_best)
        chosen[k] = expert
        chosen_score[k] = s_best
        total = total + s_best
        for i in cutlass.range_constexpr(PER_LANE):  # the owner drops the winner
            biased[i] = cutlass.select_(expert == lane * PER_LANE + i, Float32(NEG), biased[i])

    if live & (lane == 0):
        denominator = total + Float32(1e-20)
        factor = mFactor[0]
        for k in cutlass.range_constexpr(TOP_K):
            mIdx[token, k] = Int64(chosen[k])
            mW[token, k] = chosen_score[k] / denominator * factor  # the reference's order


@cute.jit
def _route(
    mLogits: cute.Tensor,
    mBias: cute.Tensor,
    mIdx: cute.Tensor,
    mW: cute.Tensor,
    mFactor: cute.Tensor,
    stream: cuda.CUstream,
):
    _route_kernel(mLogits, mBias, mIdx, mW, mFactor).launch(
        grid=(cute.ceil_div(mLogits.shape[0], WARPS), 1, 1), block=(WARPS * 32, 1, 1), stream=stream
    )


_compiled = {}


def _compile(num_tokens):
    logits = make_fake_compact_tensor(
        Float32, (num_tokens, NUM_EXPERTS), stride_order=(1, 0), assumed_align=16
    )
    bias = make_fake_compact_tensor(BFloat16, (NUM_EXPERTS,), assumed_align=16)
    idx = make_fake_compact_tensor(Int64, (num_tokens, TOP_K), stride_order=(1, 0))
    weights = make_fake_compact_tensor(Float32, (num_tokens, TOP_K), stride_order=(1, 0))
    factor = make_fake_compact_tensor(Float32, (1,))
    return cute.compile(
        _route,
        logits,
        bias,
        idx,
        weights,
        factor,
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


_factors = {}


def _factor_tensor(value, device):
    key = (float(value), str(device))
    t = _factors.get(key)
    if t is None:
        t = _factors[key] = torch.tensor([float(value)], dtype=torch.float32, device=device)
    return t


def _logits(hidden_states, weight):
    """hidden_states @ weight^T in float32, as the reference computes it."""
    return torch.nn.functional.linear(hidden_states.float(), weight.float())


def solve(hidden_states, weight, expert_bias, routed_scaling_factor):
    num_tokens = hidden_states.shape[0]
    fn = _compiled.get(num_tokens)
    if fn is None:
        fn = _compiled[num_tokens] = _compile(num_tokens)
    logits = _logits(hidden_states, weight)
    topk_indices = torch.empty(num_tokens, TOP_K, dtype=torch.int64, device=hidden_states.device)
    topk_weights = torch.empty(num_tokens, TOP_K, dtype=torch.float32, device=hidden_states.device)
    fn(
        logits,
        expert_bias,
        topk_indices,
        topk_weights,
        _factor_tensor(routed_scaling_factor, hidden_states.device),
    )
    return topk_indices, topk_weights
