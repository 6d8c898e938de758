# Honest RMSNorm (problem 36) that is unusual but legal: it keeps a float32 work buffer across
# calls (cached by shape) and works in place on its own buffers.
import torch

_BUFFERS = {}


def solve(hidden_states, weight):
    key = (tuple(hidden_states.shape), hidden_states.device)
    work = _BUFFERS.get(key)
    if work is None:
        work = _BUFFERS[key] = torch.empty(
            hidden_states.shape, dtype=torch.float32, device=hidden_states.device
        )
    work.copy_(hidden_states)
    scale = work.pow(2).mean(-1, keepdim=True).add_(1e-6).rsqrt_()
    work.mul_(scale).mul_(weight.float())
    return work.to(hidden_states.dtype)
