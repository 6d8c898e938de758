# Honest kernel that prints multi-byte UTF-8 text to stdout at import: the supervisor's tail
# buffer keeps the last N bytes, cutting a character in two; the verdict's stdout_tail is then
# not UTF-8.
import torch

print("xx" + "\u00e9" * 200000)


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(hidden_states.dtype)
