"""Prefill of Qwen3-Next-80B-A3B's Gated DeltaNet layers at tensor parallelism 2 over a ragged
batch, as FlashInfer's GDN prefill kernel computes it (FlashInfer-Trace definition
gdn_prefill_qk8_v16_d128_k_last): 8 query/key heads and 16 value heads of dimension 128; the
sequences are packed back to back (cu_seqlens), each starts from its own float32 state (k-last,
[V, K] per value head) and the recurrence runs token by token:

    g_t    = exp(-exp(A_log) * softplus(a_t + dt_bias)),  beta_t = sigmoid(b_t)
    S      = g_t * S;  u = k_t @ S
    S      = S - k_t^T u + k_t^T (beta_t * v_t + (1 - beta_t) * u)
    o_t    = scale * q_t @ S

Returns every token's output (rounded to the input dtype) and each sequence's final state (in
the compute dtype, k-last). The loop over sequences and tokens, the heads batched, is the
published formulation (the eager baseline)."""

import torch
import torch.nn.functional as F

NUM_Q_HEADS = 8
NUM_K_HEADS = 8
NUM_V_HEADS = 16
HEAD_SIZE = 128
SCALE = 0.08838834764831843  # 1 / sqrt(128), passed as a Python float

# The captured workload (FlashInfer-Trace record 1a9da4c9-224e-4bfa-b221-fe1939ca5527): four
# packed sequences of 19, 31, 890 and 19 tokens and the layer's gate parameters, the same on
# every draw.
CU_SEQLENS = (0, 19, 50, 940, 959)
A_LOG = (1.3984375, 1.203125, 2.203125, 0.1474609375, 1.46875, -0.6171875, 1.8125, -1.359375,
         0.50390625, 1.03125, 2.953125, 1.2890625, 1.3203125, 2.109375, 3.34375, 1.78125)
DT_BIAS = (-2.34375, -3.421875, -4.03125, -1.65625, -3.25, 2.046875, -5.625, -2.65625, -2.375,
           -2.984375, -2.328125, -4.09375, -4.25, -3.71875, -4.96875, -3.578125)

# Scales the capture measured; q and k are unit vectors per head (L2-normalised), as the
# capture's are.
V_STD = 0.041
STATE_STD = HEAD_SIZE ** -0.5
A_MEAN, A_STD = -0.12, 1.26
B_MEAN, B_STD = 1.47, 2.01

WORKLOADS = {
    "full": {"cu_seqlens": CU_SEQLENS},
    # The same structure on the CPU: a long sequence between short ones, one of a single token.
    "small": {"cu_seqlens": (0, 3, 4, 13, 16)},
}


@torch.no_grad()
def reference(q, k, v, state, A_log, a, dt_bias, b, cu_seqlens, scale):
    # q, k: [T, 8, 128]; v: [T, 16, 128]; state: [N, 16, 128 (V), 128 (K)] float32;
    # A_log, dt_bias: [16] float32; a, b: [T, 16]; cu_seqlens: [N + 1] int64; scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    tokens, heads = v.shape[0], v.shape[1]
    x = a.to(compute) + dt_bias.to(compute)
    g = torch.exp(-torch.exp(A_log.to(compute)) * F.softplus(x))  # [T, 16]
    beta = torch.sigmoid(b.to(compute))
    q_heads = q.repeat_interleave(heads // q.shape[1], dim=1)  # value head h reads head h // 2
    k_heads = k.repeat_interleave(heads // k.shape[1], dim=1)
    output = torch.zeros(tokens, heads, v.shape[-1], dtype=q.dtype, device=q.device)
    bounds = cu_seqlens.tolist()
    new_state = torch.zeros((len(bounds) - 1,) + tuple(state.shape[1:]), dtype=compute, device=q.device)
    for n in range(len(bounds) - 1):
        s = state[n].to(compute).transpose(-1, -2)  # [16, K, V]
        for t in range(bounds[n], bounds[n + 1]):
            key = k_heads[t].to(compute).unsqueeze(1)  # [16, 1, K]
            gate = g[t][:, None, None]
            update = beta[t][:, None, None]
            decayed = gate * s
            predicted = key @ decayed  # [16, 1, V]
            target = update * v[t].to(compute).unsqueeze(1) + (1 - update) * predicted
            s = decayed - key.transpose(-1, -2) @ predicted + key.transpose(-1, -2) @ target
            output[t] = (scale * (q_heads[t].to(compute).unsqueeze(1) @ s)).squeeze(1).to(q.dtype)
        new_state[n] = s.transpose(-1, -2)
    return output, new_state


def make_inputs(workload: str = "full", device: str = "cpu"):
    cu = WORKLOADS[workload]["cu_seqlens"]
    tokens, seqs = cu[-1], len(cu) - 1
    f32 = dict(device=device, dtype=torch.float32)
    q = F.normalize(torch.randn(tokens, NUM_Q_HEADS, HEAD_SIZE, **f32), p=2, dim=-1).to(torch.bfloat16)
    k = F.normalize(torch.randn(tokens, NUM_K_HEADS, HEAD_SIZE, **f32), p=2, dim=-1).to(torch.bfloat16)
    v = V_STD * torch.randn(tokens, NUM_V_HEADS, HEAD_SIZE, device=device, dtype=torch.bfloat16)
    state = STATE_STD * torch.randn(seqs, NUM_V_HEADS, HEAD_SIZE, HEAD_SIZE, **f32)
    A_log = torch.tensor(A_LOG, **f32)
    a = (A_MEAN + A_STD * torch.randn(tokens, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    dt_bias = torch.tensor(DT_BIAS, **f32)
    b = (B_MEAN + B_STD * torch.randn(tokens, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    cu_seqlens = torch.tensor(cu, device=device, dtype=torch.int64)
    return [q, k, v, state, A_log, a, dt_bias, b, cu_seqlens, SCALE]
