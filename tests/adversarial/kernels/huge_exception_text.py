# Red team round 9: an exception whose message is 200 MB, so the reply is over the channel's limit
# (the worker died of SIGSEGV: its send raised without the GIL).
import torch


def solve(x, residual, weight):
    raise ValueError("A" * (200 << 20))
