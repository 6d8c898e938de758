# GPU: a device-side fault: an out-of-range gather trips torch's device assert and leaves the
# worker's CUDA context unusable, as an illegal address in a hand-written kernel would.
import torch


def solve(x, residual, weight):
    flat = x.view(-1)
    index = torch.full((1024,), 1 << 40, dtype=torch.int64, device=x.device)
    flat.gather(0, index)
    return torch.zeros_like(x)
