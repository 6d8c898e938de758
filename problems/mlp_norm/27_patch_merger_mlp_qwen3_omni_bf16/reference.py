"""Qwen3-Omni's vision patch merger (Qwen3OmniMoeVisionPatchMerger with use_postshuffle_norm
off), posed as SOL-ExecBench's recipe poses it: every ViT patch feature is LayerNorm-ed, the
patches of each image grid (t, h, w), stored in raster order, are merged 2 x 2: token (t, i, j)
concatenates the patches at rows 2i, 2i+1 and columns 2j, 2j+1 in that order, and a two-layer
MLP with exact (erf) GELU projects the merged vector. The grid geometry is an input
(grid_thw), the LayerNorm eps a trailing Python float.

Values are rounded to the input dtype where the published reference rounds them: the
LayerNorm runs in promote_types(dtype, float32) and its output is rounded; the MLP's GEMMs run
on input-dtype operands with float32 accumulation and GELU's output is rounded (the published
bf16 MLP)."""

import math

import torch
import torch.nn.functional as F

MERGE_SIZE = 2  # spatial_merge_size: 2 x 2 patches per output token
LN_EPS = 1e-6  # the merger's LayerNorm eps: the eps every draw passes

WORKLOADS = {
    # 32,768 patches of width 1536 in 8 grids of 1 x 64 x 64 -> 8,192 tokens of width 3584.
    "full": {"num_patches": 32768, "num_grids": 8, "context_dim": 1536, "merged_dim": 6144,
             "out_dim": 3584, "num_tokens": 8192},
    # 96 patches in 2 grids of 1 x 6 x 8 (unequal height and width) -> 24 tokens.
    "small": {"num_patches": 96, "num_grids": 2, "context_dim": 16, "merged_dim": 64,
              "out_dim": 24, "num_tokens": 24},
}


def grid_geometry(num_patches: int, num_grids: int) -> list[tuple[int, int, int]]:
    """The (t, h, w) of every grid, as the published problem lays the patches out: the grids
    share the patches equally (the last takes the remainder), each as close to square as
    multiples of the merge size allow, with as many frames as fit."""
    per_grid, remaining, grids = num_patches // num_grids, num_patches, []
    for index in range(num_grids):
        n = remaining if index == num_grids - 1 else per_grid
        h = math.isqrt(n) // MERGE_SIZE * MERGE_SIZE
        w = n // h // MERGE_SIZE * MERGE_SIZE
        t = n // (h * w)
        grids.append((t, h, w))
        remaining -= t * h * w
    if remaining:
        raise ValueError(f"{num_patches} patches in {num_grids} grids leave {remaining} unmerged")
    return grids


def reference(hidden, grid_thw, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias,
              eps):
    # hidden: [num_patches, context_dim]; grid_thw: [num_grids, 3] int64 (t, h, w per grid;
    # their t * h * w sum to num_patches); ln_*: [context_dim]; fc1: [merged_dim, merged_dim]
    # + [merged_dim]; fc2: [out_dim, merged_dim] + [out_dim]; eps: float.
    dtype = hidden.dtype
    compute = torch.promote_types(dtype, torch.float32)
    c = hidden.shape[-1]
    normed = F.layer_norm(hidden.to(compute), (c,), ln_weight.to(compute), ln_bias.to(compute),
                          eps=eps).to(dtype)
    merged, offset = [], 0
    for t, h, w in grid_thw.tolist():
        grid = normed[offset:offset + t * h * w].view(t, h // MERGE_SIZE, MERGE_SIZE,
                                                      w // MERGE_SIZE, MERGE_SIZE, c)
        merged.append(grid.permute(0, 1, 3, 2, 4, 5).reshape(-1, MERGE_SIZE * MERGE_SIZE * c))
        offset += t * h * w
    merged = torch.cat(merged)
    del normed
    a = F.linear(merged, fc1_weight, fc1_bias)  # GEMMs on dtype operands: float32 accumulation
    a = F.gelu(a.to(compute)).to(dtype)  # nn.GELU(): the exact erf form, not the tanh approximation
    return F.linear(a, fc2_weight, fc2_bias)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, c, d, o = p["num_patches"], p["context_dim"], p["merged_dim"], p["out_dim"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.bfloat16)

    grid_thw = torch.tensor(grid_geometry(n, p["num_grids"]), dtype=torch.int64, device=device)
    # The recipe's distributions, in bf16: unit-normal patch features with a per-patch offset,
    # the LayerNorm affine near its trained regime, weights N(0, 1/fan_in), unit-normal biases.
    hidden = randn(n, c) + randn(n, 1) * 0.5
    ln_weight = randn(c) * 0.1 + 1.0
    ln_bias = randn(c) * 0.1
    fc1_weight = randn(d, d) / d**0.5
    fc1_bias = randn(d)
    fc2_weight = randn(o, d) / d**0.5
    fc2_bias = randn(o)
    return [hidden, grid_thw, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias,
            LN_EPS]
