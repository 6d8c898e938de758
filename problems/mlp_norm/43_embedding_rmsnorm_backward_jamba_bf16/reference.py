"""Backward pass of Jamba's token embedding followed by the first layer's input RMSNorm
(vocabulary 65,536, hidden 4096, eps 1e-6), as a training step computes it.

Forward: e = embed_weight[input_ids] is the residual stream entering layer 0 and
y = norm_weight * e / sqrt(mean(e^2) + eps) is the input of its mixer. Backward, per token:
    n       = e * rstd,                    rstd = 1 / sqrt(mean(e^2) + eps)
    g       = grad_out * norm_weight
    grad_e  = rstd * (g - n * mean(g * n)) + grad_residual
then grad_embed[v] = sum of grad_e over the tokens with id v (a dense [vocab, hidden] gradient,
zero for ids that do not occur) and grad_norm_weight = sum over tokens of grad_out * n.
Computed in float32 and rounded to bf16 once."""

import math

import torch

VOCAB = 65536
HIDDEN = 4096
EPS = 1e-6  # rms_norm_eps of Jamba

WORKLOADS = {
    "full": {"num_tokens": 16384, "vocab_size": VOCAB, "hidden": HIDDEN},
    "small": {"num_tokens": 96, "vocab_size": 512, "hidden": 128},
}


def reference(input_ids, embed_weight, norm_weight, grad_out, grad_residual):
    # input_ids: [num_tokens] int64; embed_weight: [vocab_size, hidden]; norm_weight: [hidden];
    # grad_out (dL/dy), grad_residual (dL/de along the residual stream): [num_tokens, hidden].
    compute = torch.promote_types(embed_weight.dtype, torch.float32)
    e = embed_weight[input_ids].to(compute)  # gather the rows, then widen
    rstd = torch.rsqrt(e.square().mean(dim=-1, keepdim=True) + EPS)
    n = e.mul_(rstd)  # e is a fresh gathered copy: normalise in place
    dy = grad_out.to(compute)
    grad_norm_weight = (dy * n).sum(dim=0)
    g = dy * norm_weight.to(compute)
    dot = (g * n).mean(dim=-1, keepdim=True)
    grad_e = g.sub_(n.mul_(dot)).mul_(rstd).add_(grad_residual.to(compute))
    del g, n, dy
    grad_embed = torch.zeros(embed_weight.shape, dtype=compute, device=embed_weight.device)
    grad_embed.index_put_((input_ids,), grad_e, accumulate=True)
    return grad_embed.to(embed_weight.dtype), grad_norm_weight.to(norm_weight.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, v, h = p["num_tokens"], p["vocab_size"], p["hidden"]
    bf16, f32 = torch.bfloat16, torch.float32
    # Token ids with a Zipf-like (log-uniform rank) frequency: a handful of ids occur hundreds
    # of times (the gradient rows that collect many contributions), most occur once or not at
    # all. Ranks map to ids through a random permutation of 1 .. vocab-1; id 0 is Jamba's
    # padding index and does not occur.
    u = torch.rand(t, device=device, dtype=torch.float64)
    rank = torch.exp(u * math.log(v - 1)).long() - 1
    id_of_rank = torch.randperm(v - 1, device=device) + 1
    input_ids = id_of_rank[rank.clamp_(0, v - 2)]
    # Embedding table at a trained scale (drawn directly in bf16), norm gain around 1.
    embed_weight = torch.randn(v, h, device=device, dtype=bf16).mul_(0.02)
    norm_weight = (1.0 + 0.25 * torch.randn(h, device=device, dtype=f32)).to(bf16)
    # Upstream gradients, varying per token: through the layer-0 mixer (grad_out) and along the
    # residual stream (grad_residual). The norm's backward scales grad_out by 1 / rms(e) ~ 50, so
    # grad_residual is drawn ~50x larger to make both paths count.
    token_scale = torch.exp(0.5 * torch.randn(t, 1, device=device, dtype=f32))
    grad_out = (1e-2 * token_scale * torch.randn(t, h, device=device, dtype=f32)).to(bf16)
    grad_residual = (0.4 * token_scale * torch.randn(t, h, device=device, dtype=f32)).to(bf16)
    return [input_ids, embed_weight, norm_weight, grad_out, grad_residual]
