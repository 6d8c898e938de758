# Smuggles code into the source dataclasses generates (a field name is pasted into it): the
# generator may exec, but what the injected code does is still refused.
import dataclasses

import torch

_Injected = type("_Injected", (), {"__annotations__": {"x=__import__('os').system('id')": int}})


def solve(hidden_states, weight):
    dataclasses.dataclass(_Injected)
    return torch.zeros_like(hidden_states)
