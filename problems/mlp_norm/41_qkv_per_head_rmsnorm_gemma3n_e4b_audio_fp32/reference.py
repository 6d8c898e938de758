"""Query / key / value projections of a Gemma-3n E4B audio-encoder attention block, with a
Gemma-style RMSNorm applied to every query head and every key head:

    q = x @ Wq^T,  k = x @ Wk^T,  v = x @ Wv^T                 (bias-free, width 1024)
    split into 8 heads of 128
    q_h = q_h / sqrt(mean(q_h^2) + 1e-6) * q_norm_weight      per token and head
    k_h = k_h / sqrt(mean(k_h^2) + 1e-6) * k_norm_weight
    v   unchanged

Gemma-3n's RMSNorm multiplies by its weight directly (not 1 + weight). Float32 throughout."""

import torch

NUM_HEADS = 8
HEAD_DIM = 128
EPS = 1e-6  # rms_norm_eps

WORKLOADS = {
    "full": {
        "num_tokens": 8192,
        "hidden": NUM_HEADS * HEAD_DIM,
        "num_heads": NUM_HEADS,
        "head_dim": HEAD_DIM,
    },
    "small": {"num_tokens": 24, "hidden": 4 * 32, "num_heads": 4, "head_dim": 32},
}


def _rms_norm(t, weight):
    return t * torch.rsqrt(t.square().mean(dim=-1, keepdim=True) + EPS) * weight


def reference(x, q_weight, k_weight, v_weight, q_norm_weight, k_norm_weight):
    # x: [num_tokens, hidden]; q/k/v_weight: [num_heads * head_dim, hidden] (PyTorch Linear
    # layout); q/k_norm_weight: [head_dim].
    compute = torch.promote_types(x.dtype, torch.float32)
    num_tokens, head_dim = x.shape[0], q_norm_weight.shape[0]
    xc = x.to(compute)
    q = (xc @ q_weight.to(compute).t()).view(num_tokens, -1, head_dim)
    k = (xc @ k_weight.to(compute).t()).view(num_tokens, -1, head_dim)
    v = (xc @ v_weight.to(compute).t()).view(num_tokens, -1, head_dim)
    q = _rms_norm(q, q_norm_weight.to(compute))
    k = _rms_norm(k, k_norm_weight.to(compute))
    return q.to(x.dtype), k.to(x.dtype), v.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, d, hd = p["num_tokens"], p["hidden"], p["head_dim"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # Input: the pre-attention RMSNorm output of a conformer block: per-token RMS ~ the learned
    # gain, which differs from channel to channel.
    x = randn(t, d) * torch.exp(0.3 * randn(d))
    # Bias-free projections at the N(0, 1/fan_in) scale; learned norm gains around 1.
    q_weight = randn(d, d) / d**0.5
    k_weight = randn(d, d) / d**0.5
    v_weight = randn(d, d) / d**0.5
    q_norm_weight = 1.0 + 0.25 * randn(hd)
    k_norm_weight = 1.0 + 0.25 * randn(hd)
    return [x, q_weight, k_weight, v_weight, q_norm_weight, k_norm_weight]
