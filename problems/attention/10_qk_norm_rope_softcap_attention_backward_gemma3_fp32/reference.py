"""Backward pass of a Gemma-3-style attention layer (query-key RMS norm, rotary embeddings, logit
soft-capping, causal grouped-query attention), in float32, as a training step runs it: from the
layer input, its weights and the gradient of the loss with respect to the layer output, produce
the gradients with respect to the input and to every weight.

The forward pass (every step in float32; float64 for the anchor):
    q = x @ Wq^T, k = x @ Wk^T, v = x @ Wv^T, split into heads of 128 (24 query, 8 KV heads);
    q = rms(q) * (1 + wq_norm), k = rms(k) * (1 + wk_norm) per head, rms(y) = y / sqrt(mean(y^2)
        + eps) (Gemma's RMSNorm: the gain is 1 + weight);
    q, k = q * cos + rotate_half(q) * sin (likewise k), rotate_half(y) = cat(-y[64:], y[:64]);
    s = q . k * scaling; s = softcap * tanh(s / softcap); causal mask; p = softmax(s);
    o = p @ v (query head h reads KV head h // 3), heads concatenated; y = o @ Wo^T.
The backward pass is its exact gradient for the loss sum(y * grad_output): computed here with
autograd over that forward pass.

Sizes are the published problem's (64 sequences of 256 tokens, hidden 3072); the constants follow
Gemma 3: scaling = query_pre_attn_scalar^-0.5 with query_pre_attn_scalar 256, attention logits
soft-capped at 50, RoPE base 1,000,000 over positions 0..255, RMSNorm eps 1e-6."""

import math

import torch

HEAD_DIM = 128
SCALING = 256**-0.5  # query_pre_attn_scalar ** -0.5, passed as a Python float
ATTN_LOGIT_SOFTCAPPING = 50.0
RMS_NORM_EPS = 1e-6
ROPE_THETA = 1_000_000.0

WORKLOADS = {
    "full": {"batch": 64, "seq_len": 256, "hidden": 3072, "num_heads": 24, "num_kv_heads": 8},
    # Same structure for CPU tests: 3 query heads on 1 KV head of 128.
    "small": {"batch": 2, "seq_len": 16, "hidden": 384, "num_heads": 3, "num_kv_heads": 1},
}


def _rms_norm(y, weight, eps):
    return y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight)


def _rotate(y, cos, sin):
    # y: [batch, heads, seq, 128]; cos, sin: [batch, seq, 128].
    half = y.shape[-1] // 2
    rotated = torch.cat([-y[..., half:], y[..., :half]], dim=-1)
    return y * cos[:, None] + rotated * sin[:, None]


def forward(hidden_states, cos, sin, q_weight, k_weight, v_weight, o_weight, q_norm_weight,
            k_norm_weight, scaling, softcap, eps):
    """The layer's forward pass, all in the dtype of its inputs."""
    batch, seq, _ = hidden_states.shape
    heads, kv_heads = q_weight.shape[0] // HEAD_DIM, k_weight.shape[0] // HEAD_DIM
    q = (hidden_states @ q_weight.T).view(batch, seq, heads, HEAD_DIM).transpose(1, 2)
    k = (hidden_states @ k_weight.T).view(batch, seq, kv_heads, HEAD_DIM).transpose(1, 2)
    v = (hidden_states @ v_weight.T).view(batch, seq, kv_heads, HEAD_DIM).transpose(1, 2)
    q = _rotate(_rms_norm(q, q_norm_weight, eps), cos, sin)
    k = _rotate(_rms_norm(k, k_norm_weight, eps), cos, sin)
    group = heads // kv_heads
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = (q @ k.transpose(-1, -2)) * scaling
    scores = torch.tanh(scores / softcap) * softcap
    future = torch.ones(seq, seq, dtype=torch.bool, device=scores.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    o = torch.softmax(scores, dim=-1) @ v  # [batch, heads, seq, 128]
    return o.transpose(1, 2).reshape(batch, seq, heads * HEAD_DIM) @ o_weight.T


def reference(grad_output, hidden_states, cos, sin, q_weight, k_weight, v_weight, o_weight,
              q_norm_weight, k_norm_weight, scaling, attn_logit_softcapping, rms_norm_eps):
    # grad_output, hidden_states: [batch, seq, hidden]; cos, sin: [batch, seq, 128]; q_weight,
    # o_weight: [hidden, hidden]; k_weight, v_weight: [8 x 128, hidden]; q_norm_weight,
    # k_norm_weight: [128]; the last three are Python floats.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    leaves = [t.detach().to(compute).requires_grad_() for t in
              (hidden_states, q_weight, k_weight, v_weight, o_weight, q_norm_weight, k_norm_weight)]
    x, wq, wk, wv, wo, qn, kn = leaves
    with torch.enable_grad():
        y = forward(x, cos.to(compute), sin.to(compute), wq, wk, wv, wo, qn, kn, scaling,
                    attn_logit_softcapping, rms_norm_eps)
        grads = torch.autograd.grad(y, leaves, grad_outputs=grad_output.to(compute))
    # (grad_hidden_states, grad_q_weight, grad_k_weight, grad_v_weight, grad_o_weight,
    #  grad_q_norm_weight, grad_k_norm_weight)
    return tuple(g.to(hidden_states.dtype) for g in grads)


def rotary_tables(batch, seq_len, device):
    """cos and sin [batch, seq_len, 128] of the positions 0 .. seq_len - 1 (rotate-half layout)."""
    half = HEAD_DIM // 2
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(half, dtype=torch.float32, device=device) / half))
    angles = torch.arange(seq_len, dtype=torch.float32, device=device)[:, None] * inv_freq
    emb = torch.cat([angles, angles], dim=-1)
    return (emb.cos().expand(batch, seq_len, HEAD_DIM).contiguous(),
            emb.sin().expand(batch, seq_len, HEAD_DIM).contiguous())


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    batch, seq, hidden = p["batch"], p["seq_len"], p["hidden"]
    q_out, kv_out = p["num_heads"] * HEAD_DIM, p["num_kv_heads"] * HEAD_DIM
    grad_output = torch.randn(batch, seq, hidden, device=device)
    hidden_states = torch.randn(batch, seq, hidden, device=device)
    cos, sin = rotary_tables(batch, seq, device)
    q_weight = torch.randn(q_out, hidden, device=device) / math.sqrt(hidden)
    k_weight = torch.randn(kv_out, hidden, device=device) / math.sqrt(hidden)
    v_weight = torch.randn(kv_out, hidden, device=device) / math.sqrt(hidden)
    o_weight = torch.randn(hidden, q_out, device=device) / math.sqrt(q_out)
    q_norm_weight = 0.1 * torch.randn(HEAD_DIM, device=device)
    k_norm_weight = 0.1 * torch.randn(HEAD_DIM, device=device)
    return [grad_output, hidden_states, cos, sin, q_weight, k_weight, v_weight, o_weight,
            q_norm_weight, k_norm_weight, SCALING, ATTN_LOGIT_SOFTCAPPING, RMS_NORM_EPS]
