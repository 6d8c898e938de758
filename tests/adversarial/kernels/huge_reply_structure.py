# Red team round 9: solve returns 2 million Nones, so the reply is over the channel's limit.
import torch


def solve(x, residual, weight):
    return [None] * 2000000
