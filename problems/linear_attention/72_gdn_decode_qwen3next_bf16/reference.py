"""One decode step of Qwen3-Next-80B-A3B's Gated DeltaNet layers at tensor parallelism 2, as
FlashInfer's GDN decode kernel computes it (FlashInfer-Trace definition
gdn_decode_qk8_v16_d128_k_last): 8 query/key heads and 16 value heads of dimension 128, one new
token per sequence, a float32 recurrent state per (sequence, value head) stored "k-last"
([V, K]).

Per sequence b and value head h (query/key head h // 2):
    g    = exp(-exp(A_log[h]) * softplus(a[b, h] + dt_bias[h]))     decay gate
    beta = sigmoid(b[b, h])                                          update gate
    S    = g * state[b, h]^T                                         [K, V]
    u    = k @ S                                                     what the state predicts for k
    S    = S - k^T u + k^T (beta * v + (1 - beta) * u)               delta-rule correction
    out  = scale * q @ S
The loop over (sequence, head) is the published formulation (the eager baseline); the output is
rounded to the input dtype, the new state stays in the compute dtype."""

import torch
import torch.nn.functional as F

NUM_Q_HEADS = 8
NUM_K_HEADS = 8
NUM_V_HEADS = 16
HEAD_SIZE = 128
SCALE = 0.08838834764831843  # 1 / sqrt(128), passed as a Python float

# The captured layer's parameters (FlashInfer-Trace workload record
# 35b0abd8-5892-44f2-a152-52cba6b59493), the same on every draw.
A_LOG = (-0.169921875, 2.34375, 1.3359375, 2.1875, -0.9375, -1.09375, 1.765625, -0.443359375,
         0.91015625, -0.8125, 2.328125, 0.205078125, 1.375, 2.796875, -0.88671875, -1.3046875)
DT_BIAS = (-2.078125, -5.625, -4.3125, -3.421875, -3.796875, -3.296875, -4.375, -6.25,
           -3.703125, -0.2890625, -5.21875, -6.1875, -3.046875, -5.0625, -4.875, -5.34375)

# Scales the capture measured: the tensors are redrawn on every draw with these.
Q_STD, K_STD, V_STD, STATE_STD = 0.18, 0.13, 0.073, 0.009
A_MEAN, A_STD = 1.33, 1.56  # gate projection a
B_MEAN, B_STD = 0.4, 1.38  # gate projection b

WORKLOADS = {
    "full": {"batch": 64},
    "small": {"batch": 3},
}


def gates(A_log, a, dt_bias, b, compute):
    """(g, beta) of Qwen3-Next's Gated DeltaNet, in the compute dtype: the decay
    exp(-exp(A_log) * softplus(a + dt_bias)) and the update gate sigmoid(b)."""
    x = a.to(compute) + dt_bias.to(compute)
    g = torch.exp(-torch.exp(A_log.to(compute)) * F.softplus(x))
    return g, torch.sigmoid(b.to(compute))


@torch.no_grad()
def reference(q, k, v, state, A_log, a, dt_bias, b, scale):
    # q, k: [B, 1, 8, 128]; v: [B, 1, 16, 128]; state: [B, 16, 128 (V), 128 (K)] float32;
    # A_log, dt_bias: [16] float32; a, b: [B, 1, 16]; scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    batch, heads = v.shape[0], v.shape[2]
    g, beta = gates(A_log, a, dt_bias, b, compute)
    group = heads // q.shape[2]  # value heads per query/key head
    q_heads = q[:, 0].to(compute).repeat_interleave(group, dim=1)  # [B, 16, 128]
    k_heads = k[:, 0].to(compute).repeat_interleave(group, dim=1)
    values = v[:, 0].to(compute)
    out = torch.zeros(batch, heads, values.shape[-1], dtype=compute, device=q.device)
    new_state = torch.zeros(state.shape, dtype=compute, device=q.device)
    for i in range(batch):
        for h in range(heads):
            key, gate, update = k_heads[i, h], g[i, 0, h], beta[i, 0, h]
            decayed = gate * state[i, h].to(compute).transpose(0, 1)  # [K, V]
            predicted = key @ decayed
            target = update * values[i, h] + (1 - update) * predicted
            s = decayed - torch.outer(key, predicted) + torch.outer(key, target)
            out[i, h] = scale * (q_heads[i, h] @ s)
            new_state[i, h] = s.transpose(0, 1)
    return out.unsqueeze(1).to(q.dtype), new_state


def make_inputs(workload: str = "full", device: str = "cpu"):
    batch = WORKLOADS[workload]["batch"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    f32 = dict(device=device, dtype=torch.float32)
    # q, k and v are drawn in bf16 and scaled in bf16; the gate projections are drawn in float32
    # and rounded to bf16; the state is float32.
    q = Q_STD * torch.randn(batch, 1, NUM_Q_HEADS, HEAD_SIZE, **bf16)
    k = K_STD * torch.randn(batch, 1, NUM_K_HEADS, HEAD_SIZE, **bf16)
    v = V_STD * torch.randn(batch, 1, NUM_V_HEADS, HEAD_SIZE, **bf16)
    state = STATE_STD * torch.randn(batch, NUM_V_HEADS, HEAD_SIZE, HEAD_SIZE, **f32)
    A_log = torch.tensor(A_LOG, **f32)
    a = (A_MEAN + A_STD * torch.randn(batch, 1, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    dt_bias = torch.tensor(DT_BIAS, **f32)
    b = (B_MEAN + B_STD * torch.randn(batch, 1, NUM_V_HEADS, **f32)).to(torch.bfloat16)
    return [q, k, v, state, A_log, a, dt_bias, b, SCALE]
