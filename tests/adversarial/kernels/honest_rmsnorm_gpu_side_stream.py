# Honest GPU: the same side-stream work as side_stream_race.py, joined before returning.
import torch


def solve(hidden_states, residual, weight):
    out = torch.empty_like(hidden_states)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
        s = hidden_states.float() + residual.float()
        inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
        out.copy_((s * inv * weight.float()).to(hidden_states.dtype))
    torch.cuda.current_stream().wait_stream(side)
    return out
