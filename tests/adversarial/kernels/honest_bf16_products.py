# Honest RMSNorm (problem 36) that keeps bf16 for the products: the mean of squares in float32,
# then x * scale * weight rounded in bf16 (two roundings, within the allowance).
import torch


def solve(hidden_states, weight):
    scale = torch.rsqrt(hidden_states.float().pow(2).mean(-1, keepdim=True) + 1e-6)
    return hidden_states * scale.to(torch.bfloat16) * weight
