"""Qwen3-Omni's vision patch merger (Qwen3OmniMoeVisionPatchMerger with use_postshuffle_norm
off): the last stage of the vision encoder, which turns ViT patch features into tokens of the
language model. Each patch feature is LayerNorm-ed (eps 1e-6), every 4 consecutive patches (one
2x2 spatial window: the image processor emits patches window by window) are concatenated into
one vector, and a two-layer MLP with exact (erf) GELU projects it to the thinker's hidden size."""

import torch
import torch.nn.functional as F

MERGE = 4  # spatial_merge_size**2 = 2 x 2 patches per output token
LN_EPS = 1e-6

WORKLOADS = {
    # 32,768 patches of width 1536 -> 8,192 tokens of width 2048 (the thinker's hidden size).
    "full": {"num_patches": 32768, "context_dim": 1536, "num_tokens": 8192,
             "merged_dim": 6144, "out_dim": 2048},
    "small": {"num_patches": 64, "context_dim": 32, "num_tokens": 16,
              "merged_dim": 128, "out_dim": 48},
}


def reference(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    # x: [num_patches, context_dim]; ln_*: [context_dim]; fc1: [merged_dim, merged_dim] + [merged_dim];
    # fc2: [out_dim, merged_dim] + [out_dim]. merged_dim = 4 * context_dim.
    compute = torch.promote_types(x.dtype, torch.float32)
    c = x.shape[-1]
    h = F.layer_norm(x.to(compute), (c,), ln_weight.to(compute), ln_bias.to(compute), eps=LN_EPS)
    h = h.reshape(-1, MERGE * c)  # 4 consecutive patches -> one token
    h = F.linear(h, fc1_weight.to(compute), fc1_bias.to(compute))
    h = F.gelu(h)  # nn.GELU(): the exact erf form, not the tanh approximation
    out = F.linear(h, fc2_weight.to(compute), fc2_bias.to(compute))
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, c, d, o = p["num_patches"], p["context_dim"], p["merged_dim"], p["out_dim"]
    f32, bf16 = torch.float32, torch.bfloat16

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # Last ViT block's output: O(1) features whose channels differ in scale and offset.
    channel_scale = 0.5 + torch.rand(c, device=device, dtype=f32)
    channel_offset = 0.5 * randn(c)
    x = (randn(n, c) * channel_scale + channel_offset).to(bf16)
    ln_weight = (1.0 + 0.2 * randn(c)).to(bf16)
    ln_bias = (0.05 * randn(c)).to(bf16)
    # Linear layers at the N(0, 1/fan_in) scale of trained weights; small biases.
    fc1_weight = (randn(d, d) / d**0.5).to(bf16)
    fc1_bias = (0.05 * randn(d)).to(bf16)
    fc2_weight = (randn(o, d) / d**0.5).to(bf16)
    fc2_bias = (0.05 * randn(o)).to(bf16)
    return [x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias]
