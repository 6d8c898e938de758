"""DeltaNet's delta-rule linear attention as a recurrence over time (flash-linear-attention's
delta_rule_recurrence), with DeltaNet's head geometry: 16 heads of key and value dimension 128.
Queries and keys are L2-normalised per head, the query is scaled by 1/sqrt(128), and every token
corrects the state by a rank-one update towards its value, without decay:

    u = k @ S;  S = S + k^T (beta * (v - u));  o = q @ S

starting from a given float32 state. Returns every token's output (rounded to the input dtype)
and the final state (in the compute dtype). The loop over time is the published formulation
(the eager baseline)."""

import torch
import torch.nn.functional as F

WORKLOADS = {
    "full": {"batch": 8, "heads": 16, "seq_len": 1024, "key_dim": 128, "value_dim": 128},
    "small": {"batch": 2, "heads": 3, "seq_len": 24, "key_dim": 128, "value_dim": 128},
}


@torch.no_grad()
def reference(q, k, v, beta, initial_state):
    # q, k: [B, H, T, K]; v: [B, H, T, V]; beta: [B, H, T]; initial_state: [B, H, K, V] float32.
    dtype = q.dtype
    compute = torch.promote_types(q.dtype, torch.float32)
    q, k, v, beta = (x.to(compute) for x in (q, k, v, beta))
    q = F.normalize(q, p=2, dim=-1) * (q.shape[-1] ** -0.5)
    k = F.normalize(k, p=2, dim=-1)
    out = torch.zeros_like(v)
    s = torch.zeros(initial_state.shape, dtype=compute, device=q.device) + initial_state.to(compute)
    for t in range(q.shape[2]):
        key = k[:, :, t]
        error = v[:, :, t] - (s * key[..., None]).sum(-2)  # v - k @ S, per (batch, head)
        s = s + key[..., None] * (error * beta[:, :, t, None])[..., None, :]
        out[:, :, t] = torch.einsum("bhk,bhkv->bhv", q[:, :, t], s)
    return out.to(dtype), s


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, h, t = p["batch"], p["heads"], p["seq_len"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    q = torch.randn(b, h, t, p["key_dim"], **bf16)
    k = torch.randn(b, h, t, p["key_dim"], **bf16)
    v = torch.randn(b, h, t, p["value_dim"], **bf16)
    beta = torch.randn(b, h, t, **bf16).sigmoid()  # the sigmoid is taken in bf16
    initial_state = torch.randn(b, h, p["key_dim"], p["value_dim"], device=device, dtype=torch.float32)
    return [q, k, v, beta, initial_state]
