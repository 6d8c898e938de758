# Lets a torch helper run generated code for it: torch.fx traces a function and execs the code
# it generates. A library frame running code made at run time is refused whoever it is.
import torch
import torch.fx


def _norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def solve(hidden_states, weight):
    traced = torch.fx.symbolic_trace(_norm)
    return traced(hidden_states.float(), weight.float()).to(hidden_states.dtype)
