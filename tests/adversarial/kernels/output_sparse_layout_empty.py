# Broken output: a sparse COO tensor made by a plain factory with the layout named at run time
# (torch.zeros(..., layout=torch.sparse_coo): no constructor, conversion or accessor the worker
# refuses), returned as the output. The verdict names what is wrong; the judge never fails on it.
import torch


def solve(x, residual, weight):
    layout = getattr(torch, "sparse" + "_coo")
    return torch.zeros(x.shape, dtype=x.dtype, layout=layout)
