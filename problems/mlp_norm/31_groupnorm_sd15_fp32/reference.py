"""GroupNorm of Stable Diffusion 1.5's UNet at its lowest resolution: 1280 channels at 8x8
(the last down block and the mid block, for 512x512 images), 32 groups of 40 channels, eps
1e-5, with a per-channel affine. Every ResNet block normalises its input this way (norm1,
norm2) before the SiLU and convolution. Posed as SOL-ExecBench's recipe poses it: (x, weight,
bias, eps) with eps a Python float."""

import torch

NUM_GROUPS = 32
EPS = 1e-5  # norm_eps of SD 1.5's UNet: the eps every draw passes

WORKLOADS = {
    # 32 latents (16 prompts with classifier-free guidance) x 1280 channels x 8 x 8.
    "full": {"batch": 32, "channels": 1280, "height": 8, "width": 8},
    "small": {"batch": 3, "channels": 128, "height": 4, "width": 4},
}


def reference(x, weight, bias, eps):
    # x: [batch, channels, height, width] (NCHW); weight, bias: [channels]; eps: float.
    compute = torch.promote_types(x.dtype, torch.float32)
    n, c = x.shape[:2]
    g = x.to(compute).reshape(n, NUM_GROUPS, -1)  # a group: c / 32 channels x height x width
    mean = g.mean(dim=-1, keepdim=True)
    var = (g - mean).pow(2).mean(dim=-1, keepdim=True)  # biased variance
    y = ((g - mean) * torch.rsqrt(var + eps)).reshape(x.shape)
    y = y * weight.to(compute).view(1, c, 1, 1) + bias.to(compute).view(1, c, 1, 1)
    return y.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, c, h, w = p["batch"], p["channels"], p["height"], p["width"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal activations, the affine near its trained regime.
    x = randn(n, c, h, w)
    weight = 1.0 + 0.1 * randn(c)
    bias = 0.1 * randn(c)
    return [x, weight, bias, EPS]
