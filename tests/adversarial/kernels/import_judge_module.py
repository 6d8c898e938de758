# Imports the judge's worker module (it is already loaded in the worker's process) to reach
# the C++ binding and the harness; returns zeros.
import importlib

import torch


def solve(hidden_states, weight):
    worker = importlib.import_module("metakernelbench.judge.worker")
    getattr(worker, "Worker")
    return torch.zeros_like(hidden_states)
