"""Query / key / value projections of a Gemma-3n E4B audio-encoder attention block, with a
Gemma-style RMSNorm applied to every query head and every key head, posed as SOL-ExecBench's
recipe poses it ([batch, seq_len, 1024] activations, eps as a trailing Python float):

    q = x @ Wq^T,  k = x @ Wk^T,  v = x @ Wv^T                 (bias-free, width 1024)
    viewed as [batch, seq_len, 8 heads, 128]
    q_h = q_h / sqrt(mean(q_h^2) + eps) * q_norm_weight       per token and head
    k_h = k_h / sqrt(mean(k_h^2) + eps) * k_norm_weight
    v   unchanged

Gemma-3n's RMSNorm multiplies by its weight directly (not 1 + weight). Computed in
promote_types(dtype, float32)."""

import torch

NUM_HEADS = 8
HEAD_DIM = 128
EPS = 1e-6  # rms_norm_eps: the eps every draw passes

WORKLOADS = {
    # 64 audio chunks x 128 frames x width 1024 = 8 heads x 128 (the published recipe's axes).
    "full": {"batch": 64, "seq_len": 128, "hidden": NUM_HEADS * HEAD_DIM, "num_heads": NUM_HEADS,
             "head_dim": HEAD_DIM},
    "small": {"batch": 2, "seq_len": 12, "hidden": 4 * 32, "num_heads": 4, "head_dim": 32},
}


def _rms_norm(t, weight, eps):
    return t * torch.rsqrt(t.square().mean(dim=-1, keepdim=True) + eps) * weight


def reference(x, q_weight, k_weight, v_weight, q_norm_weight, k_norm_weight, eps):
    # x: [batch, seq_len, hidden]; q/k/v_weight: [num_heads * head_dim, hidden] (PyTorch Linear
    # layout); q/k_norm_weight: [head_dim]; eps: float. Returns q, k, v, each
    # [batch, seq_len, num_heads, head_dim].
    compute = torch.promote_types(x.dtype, torch.float32)
    heads = (*x.shape[:-1], -1, q_norm_weight.shape[0])
    xc = x.to(compute)
    q = (xc @ q_weight.to(compute).t()).view(heads)
    k = (xc @ k_weight.to(compute).t()).view(heads)
    v = (xc @ v_weight.to(compute).t()).view(heads)
    q = _rms_norm(q, q_norm_weight.to(compute), eps)
    k = _rms_norm(k, k_norm_weight.to(compute), eps)
    return q.to(x.dtype), k.to(x.dtype), v.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, hd = p["batch"], p["seq_len"], p["hidden"], p["head_dim"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal input, bias-free projections N(0, 1/fan_in), the
    # norm gains near their trained regime.
    x = randn(b, s, d)
    q_weight = randn(d, d) / d**0.5
    k_weight = randn(d, d) / d**0.5
    v_weight = randn(d, d) / d**0.5
    q_norm_weight = randn(hd) * 0.1 + 1.0
    k_norm_weight = randn(hd) * 0.1 + 1.0
    return [x, q_weight, k_weight, v_weight, q_norm_weight, k_norm_weight, EPS]
