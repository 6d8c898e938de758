# Imports a module that does not exist (under torch: a module outside the allowed roots is refused
# statically before any import, case import_outside_allow_list).
import torch
import torch.definitely_not_a_real_module  # noqa: F401


def solve(x, residual, weight):
    return torch.zeros_like(x)
