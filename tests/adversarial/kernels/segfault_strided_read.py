# Crashes the worker with a real segmentation fault: a strided view far past its buffer.
import numpy as np


def solve(x, residual, weight):
    view = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(1 << 40,), strides=(1 << 20,))
    return float(view.sum())
