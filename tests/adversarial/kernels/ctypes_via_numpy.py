# Reaches ctypes through another package's attribute (numpy.ctypeslib.ctypes) and calls libc;
# returns zeros.
import numpy
import torch


def solve(hidden_states, weight):
    libc = numpy.ctypeslib.ctypes.CDLL(None)
    libc.getpid()
    return torch.zeros_like(hidden_states)
