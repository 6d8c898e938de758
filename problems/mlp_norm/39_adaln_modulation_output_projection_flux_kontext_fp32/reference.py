"""The output head of FLUX.1 Kontext's transformer (diffusers FluxTransformer2DModel: norm_out =
AdaLayerNormContinuous, then proj_out).

    emb          = Linear(3072 -> 6144)(silu(temb))          per image of the batch
    scale, shift = emb[:, :3072], emb[:, 3072:]               (diffusers' order: scale first)
    y            = LayerNorm(x, no affine, eps 1e-6) * (1 + scale) + shift
    out          = Linear(3072 -> 64)(y)                      patch 1 x 1 x 64 latent channels

Posed as SOL-ExecBench's recipe poses it: a batch of 32 sequences of 256 image tokens, the
LayerNorm eps as a trailing Python float, and unit-normal draws."""

import torch
import torch.nn.functional as F

DIM = 3072
OUT_CHANNELS = 64
EPS = 1e-6  # norm_out's LayerNorm eps: the eps every draw passes

WORKLOADS = {
    # 32 sequences x 256 image tokens (the published recipe's axes).
    "full": {"batch": 32, "seq_len": 256, "dim": DIM, "out_channels": OUT_CHANNELS},
    "small": {"batch": 2, "seq_len": 24, "dim": 256, "out_channels": 16},
}


def reference(hidden_states, temb, norm_weight, norm_bias, proj_weight, proj_bias, eps):
    # hidden_states: [batch, seq_len, dim]; temb: [batch, dim];
    # norm_weight: [2 * dim, dim], norm_bias: [2 * dim] (AdaLayerNormContinuous.linear);
    # proj_weight: [out_channels, dim], proj_bias: [out_channels] (proj_out); eps: float.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    dim = hidden_states.shape[-1]
    emb = F.linear(F.silu(temb.to(compute)), norm_weight.to(compute), norm_bias.to(compute))
    scale, shift = emb[:, :dim], emb[:, dim:]
    x = hidden_states.to(compute)
    mean = x.mean(dim=-1, keepdim=True)
    xc = x - mean
    var = xc.square().mean(dim=-1, keepdim=True)
    y = xc.mul_(torch.rsqrt(var + eps))
    y.mul_(1.0 + scale[:, None, :]).add_(shift[:, None, :])
    out = F.linear(y, proj_weight.to(compute), proj_bias.to(compute))
    return out.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, c = p["batch"], p["seq_len"], p["dim"], p["out_channels"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal hidden states, embedding and biases, weights
    # N(0, 1/fan_in).
    x = randn(b, s, d)
    temb = randn(b, d)
    norm_weight = randn(2 * d, d) / d**0.5
    norm_bias = randn(2 * d)
    proj_weight = randn(c, d) / d**0.5
    proj_bias = randn(c)
    return [x, temb, norm_weight, norm_bias, proj_weight, proj_bias, EPS]
