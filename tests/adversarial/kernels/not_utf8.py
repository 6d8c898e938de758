# A kernel file that is not UTF-8: ÿþ
import torch


def solve(hidden_states, weight):
    return hidden_states
