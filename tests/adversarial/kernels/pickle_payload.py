# Unpickles a payload through torch.load whose reduction would run os.system; returns zeros.
import io
import os

import torch


class _Payload:
    def __reduce__(self):
        return (os.system, ("id",))


def solve(hidden_states, weight):
    buffer = io.BytesIO()
    torch.save(_Payload(), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=False)
    return torch.zeros_like(hidden_states)
