"""Input fusion of the multi-token-prediction (MTP) layer of Ling-mini-2.0 (BailingMoeV2), as
run over a training / prefill batch. The MTP layer predicts token t+2 at position t from the
main model's last hidden state at t and the embedding of the next token t+1:

    e_t  = embed_weight[input_ids[b, t + 1]]   for t < seq_len - 1;  e_t = 0 at the last position
    out  = eh_proj( concat( enorm(e_t), hnorm(h_t) ) )

with enorm / hnorm RMSNorms (eps 1e-6) and eh_proj a bias-free Linear(2 * hidden -> hidden).
The shifted position without a next token gets a zero embedding, so enorm gives 0 there.
Computed in float32 from the bf16 values and rounded once."""

import torch

HIDDEN = 2048
VOCAB = 157184
EPS = 1e-6  # rms_norm_eps of Ling-mini-2.0

WORKLOADS = {
    # 4 sequences x 2,048 tokens = 8,192 tokens; vocabulary 157,184; hidden 2048.
    "full": {"batch": 4, "seq_len": 2048, "hidden": HIDDEN, "2*hidden": 2 * HIDDEN, "vocab_size": VOCAB},
    "small": {"batch": 3, "seq_len": 16, "hidden": 128, "2*hidden": 256, "vocab_size": 1000},
}


def _rms_norm(t, weight):
    return t * torch.rsqrt(t.square().mean(dim=-1, keepdim=True) + EPS) * weight


def reference(input_ids, hidden_states, embed_weight, enorm_weight, hnorm_weight, eh_proj_weight):
    # input_ids: [batch, seq_len] int64; hidden_states: [batch, seq_len, hidden];
    # embed_weight: [vocab_size, hidden]; enorm_weight, hnorm_weight: [hidden];
    # eh_proj_weight: [hidden, 2 * hidden] (PyTorch Linear layout; input columns [0, hidden)
    # take the normalised embedding, [hidden, 2 * hidden) the normalised hidden state).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    batch, seq_len, hidden = hidden_states.shape
    emb = torch.zeros(batch, seq_len, hidden, dtype=compute, device=hidden_states.device)
    emb[:, :-1] = embed_weight[input_ids[:, 1:]].to(compute)  # gather rows, then widen
    e = _rms_norm(emb, enorm_weight.to(compute))
    del emb
    h = _rms_norm(hidden_states.to(compute), hnorm_weight.to(compute))
    w = eh_proj_weight.to(compute)
    out = e @ w[:, :hidden].t()
    del e
    out += h @ w[:, hidden:].t()
    return out.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, v = p["batch"], p["seq_len"], p["hidden"], p["vocab_size"]
    bf16, f32 = torch.bfloat16, torch.float32
    # Token ids: most drawn over the whole vocabulary (so rows near the end of the table are
    # used), a third from a small set of frequent tokens (repeated rows).
    frequent = torch.randint(0, v, (64,), device=device)
    ids = torch.randint(0, v, (b, s), device=device)
    pick = torch.rand(b, s, device=device) < 0.3
    ids = torch.where(pick, frequent[torch.randint(0, 64, (b, s), device=device)], ids)
    # Main-model last hidden state (before its final norm): large, token-dependent magnitude
    # and a few channels much larger than the rest.
    channel_scale = torch.exp(0.4 * torch.randn(h, device=device, dtype=f32))
    channel_scale[torch.randperm(h, device=device)[: max(2, h // 256)]] *= 20.0
    token_scale = 4.0 * torch.exp(0.4 * torch.randn(b, s, 1, device=device, dtype=f32))
    hidden_states = torch.randn(b, s, h, device=device, dtype=bf16)
    hidden_states.mul_((token_scale * channel_scale).to(bf16))
    # Embedding table (drawn directly in bf16: 157k x 2048) at a trained-embedding scale.
    embed_weight = torch.randn(v, h, device=device, dtype=bf16).mul_(0.02)
    # Norm gains around 1; eh_proj at the N(0, 1/fan_in) scale.
    enorm_weight = (1.0 + 0.25 * torch.randn(h, device=device, dtype=f32)).to(bf16)
    hnorm_weight = (1.0 + 0.25 * torch.randn(h, device=device, dtype=f32)).to(bf16)
    eh_proj_weight = (torch.randn(h, 2 * h, device=device, dtype=f32) / (2 * h) ** 0.5).to(bf16)
    return [ids, hidden_states, embed_weight, enorm_weight, hnorm_weight, eh_proj_weight]
