# Honest RMSNorm (problem 36) returning a non-contiguous tensor (a transposed view of its
# result): the contract asks for shape and dtype, not a layout.
import torch


def solve(hidden_states, weight):
    x = hidden_states.float().t().contiguous().t()  # columns-major float32 copy
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    result = torch.empty(
        out.shape[1], out.shape[0], dtype=hidden_states.dtype, device=hidden_states.device
    ).t()
    result.copy_(out)
    return result
