"""RWKV-4's WKV recurrence with its running-maximum stabilisation, as transformers'
rwkv_linear_attention_cpu computes it, with RWKV-4 1.5B's attention width 2048, on
SOL-ExecBench's workload of 64 sequences of 1,721 tokens, resuming from a carried state.

Per channel, with w = -exp(time_decay) and u = time_first, the WKV output is

    wkv_t = (sum_{s<t} e^{w (t-1-s) + k_s} v_s + e^{u + k_t} v_t)
            / (sum_{s<t} e^{w (t-1-s) + k_s} + e^{u + k_t})

plus the carried state's terms; it is kept as a numerator, a denominator and the exponent they
are scaled by (num, den, max), so that no exponential overflows:

    m = max(max, k + u);  e1 = exp(max - m);  e2 = exp(k + u - m)
    out = (e1 num + e2 v) / (e1 den + e2)
    m' = max(max + w, k);  e1 = exp(max + w - m');  e2 = exp(k - m')
    num = e1 num + e2 v;  den = e1 den + e2;  max = m'

The carried state comes as (num, max, den): the published draws put a standard-normal tensor
in the second slot and a uniform one bounded by 2.0 in the third; we read them as the exponent
max (any real) and the denominator den (positive, uniform in (0.5, 2)), so that every
denominator e1 den + e2 stays positive and the output is well conditioned. The loop over time is
the published formulation (the eager baseline). Returns the output and the three final state
tensors in the order (num, max, den), all in the compute dtype (float32)."""

import torch

WORKLOADS = {
    "full": {"batch": 64, "seq_len": 1721, "channels": 2048},
    "small": {"batch": 3, "seq_len": 37, "channels": 64},
}
TIME_FIRST_STD = 0.5
DEN_STATE_RANGE = (0.5, 2.0)


@torch.no_grad()
def reference(time_decay, key, time_first, value, num_state, max_state, den_state):
    # time_decay, time_first: [C]; key, value: [B, T, C]; num_state, max_state, den_state: [B, C].
    compute = torch.promote_types(key.dtype, torch.float32)
    steps = key.shape[1]
    num = num_state.clone().to(compute)
    den = den_state.clone().to(compute)
    top = max_state.clone().to(compute)
    w = -torch.exp(time_decay.to(compute))
    u = time_first
    out = torch.zeros_like(key, dtype=compute)
    for t in range(steps):
        k = key[:, t].to(compute)
        v = value[:, t].to(compute)
        m = torch.maximum(top, k + u)
        e1 = torch.exp(top - m)
        e2 = torch.exp(k + u - m)
        out[:, t] = (e1 * num + e2 * v) / (e1 * den + e2)
        m = torch.maximum(top + w, k)
        e1 = torch.exp(top + w - m)
        e2 = torch.exp(k - m)
        num = e1 * num + e2 * v
        den = e1 * den + e2
        top = m
    return out, num, top, den


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t, c = p["batch"], p["seq_len"], p["channels"]
    f32 = dict(device=device, dtype=torch.float32)
    return [
        # time_decay: w = -exp(time_decay) in (-0.37, -0.0025), memories of 3 to 400 tokens.
        torch.empty(c, **f32).uniform_(-6.0, -1.0),
        torch.randn(b, t, c, **f32),
        torch.randn(c, **f32) * TIME_FIRST_STD,
        torch.randn(b, t, c, **f32),
        torch.randn(b, c, **f32),  # num_state
        torch.randn(b, c, **f32),  # max_state
        torch.empty(b, c, **f32).uniform_(*DEN_STATE_RANGE),  # den_state
    ]
