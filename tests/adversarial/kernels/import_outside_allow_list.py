# Imports a module outside the allow-list (the standard library's xml, and one that does not exist):
# refused statically, with the modules a kernel may import named.
import torch
import xml.etree.ElementTree  # noqa: F401
import definitely_not_a_real_module  # noqa: F401


def solve(x, residual, weight):
    return torch.zeros_like(x)
