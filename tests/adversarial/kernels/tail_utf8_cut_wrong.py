# A wrong kernel (zeros) that turns its mismatch verdict into "the judge host answered no verdict"
# (exit 2, a judge error) by leaving a UTF-8 character cut in two at the start of the stdout tail.
import torch

print("xx" + "\u00e9" * 200000)


def solve(hidden_states, residual, weight):
    return torch.zeros_like(hidden_states)
