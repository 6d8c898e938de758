"""The output head of FLUX.1 Kontext's transformer (diffusers FluxTransformer2DModel: norm_out =
AdaLayerNormContinuous, then proj_out).

    emb          = Linear(3072 -> 6144)(silu(temb))          per image of the batch
    scale, shift = emb[:, :3072], emb[:, 3072:]               (diffusers' order: scale first)
    y            = LayerNorm(x, no affine, eps 1e-6) * (1 + scale) + shift
    out          = Linear(3072 -> 64)(y)                      patch 1 x 1 x 64 latent channels

The image tokens of Kontext are the 4,096 tokens of the generated 1024x1024 image followed by the
4,096 tokens of the reference (context) image."""

import torch
import torch.nn.functional as F

DIM = 3072
OUT_CHANNELS = 64
EPS = 1e-6

WORKLOADS = {
    "full": {"batch": 1, "seq_len": 8192, "dim": DIM, "out_channels": OUT_CHANNELS},
    "small": {"batch": 2, "seq_len": 24, "dim": 256, "out_channels": 16},
}


def reference(hidden_states, temb, norm_weight, norm_bias, proj_weight, proj_bias):
    # hidden_states: [batch, seq_len, dim]; temb: [batch, dim];
    # norm_weight: [2 * dim, dim], norm_bias: [2 * dim] (AdaLayerNormContinuous.linear);
    # proj_weight: [out_channels, dim], proj_bias: [out_channels] (proj_out).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    dim = hidden_states.shape[-1]
    emb = F.linear(F.silu(temb.to(compute)), norm_weight.to(compute), norm_bias.to(compute))
    scale, shift = emb[:, :dim], emb[:, dim:]
    x = hidden_states.to(compute)
    mean = x.mean(dim=-1, keepdim=True)
    xc = x - mean
    var = xc.square().mean(dim=-1, keepdim=True)
    y = xc.mul_(torch.rsqrt(var + EPS))
    y.mul_(1.0 + scale[:, None, :]).add_(shift[:, None, :])
    out = F.linear(y, proj_weight.to(compute), proj_bias.to(compute))
    return out.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, c = p["batch"], p["seq_len"], p["dim"], p["out_channels"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # Residual stream after the last single-stream block: channel-dependent offsets and
    # scales, a few "massive activation" channels 30-100x larger than the rest, and a
    # token-dependent overall scale.
    channel_scale = torch.exp(0.5 * randn(d))
    massive = torch.randperm(d, device=device)[: max(2, d // 512)]
    channel_scale[massive] *= 30.0 + 70.0 * torch.rand(massive.numel(), device=device, dtype=f32)
    channel_mean = 0.5 * randn(d) * channel_scale
    token_scale = torch.exp(0.3 * randn(b, s, 1))
    x = (randn(b, s, d) * channel_scale + channel_mean) * token_scale
    # temb: timestep + guidance + pooled-text embedding, O(1) per image.
    temb = 1.5 * randn(b, d)
    # norm_out.linear and proj_out at trained scales: scale/shift of O(0.3-1), output O(1).
    norm_weight = randn(2 * d, d) * (0.5 / d**0.5)
    norm_bias = 0.1 * randn(2 * d)
    proj_weight = randn(c, d) / d**0.5
    proj_bias = 0.02 * randn(c)
    return [x, temb, norm_weight, norm_bias, proj_weight, proj_bias]
