# Walks up from its own frame into the harness's (which holds the request, the transport and
# the timing functions) and returns zeros: frame introspection must be refused at run time.
import sys

import torch


def solve(hidden_states, weight):
    frame = sys._getframe(1)
    while frame is not None:
        frame.f_locals.get("request")
        frame = frame.f_back
    return torch.zeros_like(hidden_states)
