"""Multi-token (speculative) verification through Qwen3-Next-80B-A3B's Gated DeltaNet layers at
tensor parallelism 2, as FlashInfer's GDN MTP kernel computes it (FlashInfer-Trace definition
gdn_mtp_qk8_v16_d128_k_last): each of 32 sequences brings 4 draft tokens; its recurrent state
is read from a pool of 49 float32 states (k-last, [V, K] per value head) at
initial_state_indices[b], and the 4 tokens run through the gated delta rule one after the other:

    g    = exp(-exp(A_log) * softplus(a + dt_bias)),  beta = sigmoid(b)
    S    = g * S;  u = k @ S
    S    = S - k^T u + k^T (beta * v + (1 - beta) * u)
    o    = scale * q @ S                       rounded to the input dtype per (token, head)

The published reference returns the pool unchanged (a copy of initial_state) beside the
outputs: verification does not commit the drafted states. The loop over sequences, tokens and
heads is the published formulation (the eager baseline)."""

import torch
import torch.nn.functional as F

NUM_Q_HEADS = 8
NUM_K_HEADS = 8
NUM_V_HEADS = 16
HEAD_SIZE = 128
SCALE = 0.08838834764831843  # 1 / sqrt(128), passed as a Python float

# The captured layer's gate parameters (FlashInfer-Trace record
# 4c266399-6168-447d-b374-cfb1234e296c), the same on every draw.
A_LOG = (-1.046875, -0.5234375, -1.828125, -1.15625, -0.0244140625, 0.28515625, -1.9921875, -2.0,
         0.11962890625, 0.3671875, -1.59375, -1.34375, 0.333984375, -1.640625, -0.5234375, -0.2890625)
DT_BIAS = (-5.25, -5.75, -2.015625, -3.3125, -6.25, -6.65625, -0.88671875, -0.6328125, -4.8125,
           -5.28125, -1.7578125, -3.484375, 2.3125, -6.40625, -6.34375, -6.75)

# Scales the capture measured: the tensors are redrawn on every draw with these.
Q_STD, K_STD, V_STD, STATE_STD = 0.63, 0.26, 0.13, 0.0215
A_MEAN, A_STD = 0.82, 2.24
B_MEAN, B_STD = 0.45, 2.02

WORKLOADS = {
    "full": {"batch": 32, "draft": 4, "pool": 49},
    "small": {"batch": 3, "draft": 2, "pool": 5},
}


@torch.no_grad()
def reference(q, k, v, initial_state, initial_state_indices, A_log, a, dt_bias, b, scale):
    # q, k: [B, T, 8, 128]; v: [B, T, 16, 128]; initial_state: [pool, 16, 128 (V), 128 (K)]
    # float32; initial_state_indices: [B] int32; A_log, dt_bias: [16] float32; a, b: [B, T, 16].
    compute = torch.promote_types(q.dtype, torch.float32)
    batch, draft, heads = v.shape[0], v.shape[1], v.shape[2]
    x = a.to(compute) + dt_bias.to(compute)
    g = torch.exp(-torch.exp(A_log.to(compute)) * F.softplus(x))  # [B, T, 16]
    beta = torch.sigmoid(b.to(compute))
    q_heads = q.repeat_interleave(heads // q.shape[2], dim=2)  # value head h reads head h // 2
    k_heads = k.repeat_interleave(heads // k.shape[2], dim=2)
    output = torch.zeros(v.shape, dtype=q.dtype, device=q.device)
    for i in range(batch):
        slot = int(initial_state_indices[i].item())
        s = initial_state[slot].to(compute, copy=True).transpose(-1, -2)  # [16, K, V], a private copy
        for t in range(draft):
            queries, keys = q_heads[i, t].to(compute), k_heads[i, t].to(compute)
            values = v[i, t].to(compute)
            for h in range(heads):
                key, update = keys[h], beta[i, t, h]
                decayed = g[i, t, h] * s[h]
                predicted = key @ decayed
                target = update * values[h] + (1 - update) * predicted
                s[h] = decayed - torch.outer(key, predicted) + torch.outer(key, target)
                output[i, t, h] = (scale * (queries[h] @ s[h])).to(q.dtype)
    return output, initial_state.clone()


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    batch, draft, pool = p["batch"], p["draft"], p["pool"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    f32 = dict(device=device, dtype=torch.float32)
    # q, k and v are drawn in bf16 and scaled in bf16; the gate projections are drawn in float32
    # and rounded to bf16. Each sequence reads a distinct pool slot, drawn afresh.
    q = Q_STD * torch.randn(batch, draft, NUM_Q_HEADS, HEAD_SIZE, **bf16)
    k = K_STD * torch.randn(batch, draft, NUM_K_HEADS, HEAD_SIZE, **bf16)
    v = V_STD * torch.randn(batch, draft, NUM_V_HEADS, HEAD_SIZE, **bf16)
    initial_state = STATE_STD * torch.randn(pool, NUM_V_HEADS, HEAD_SIZE, HEAD_SIZE, **f32)
    initial_state_indices = torch.randperm(pool, device=device)[:batch].to(torch.int32)
    A_log = torch.tensor(A_LOG, **f32)
    a = (A_MEAN + A_STD * torch.randn(batch, draft, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    dt_bias = torch.tensor(DT_BIAS, **f32)
    b = (B_MEAN + B_STD * torch.randn(batch, draft, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    return [q, k, v, initial_state, initial_state_indices, A_log, a, dt_bias, b, SCALE]
