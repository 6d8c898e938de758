# Attack: hoard the GPU's memory at import, so that the judge's own work (its inputs, float64
# anchors and copies for the next draw) runs out of device memory. Without the defence the
# judge's host died on the out-of-memory error: an infrastructure error, retried as transient and
# never counted against the kernel. solve itself is an honest eager RMSNorm.
import torch

_free, _total = torch.cuda.mem_get_info()
_HOARD = torch.empty(max(_free - (64 << 20), 1), dtype=torch.uint8, device="cuda")


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
