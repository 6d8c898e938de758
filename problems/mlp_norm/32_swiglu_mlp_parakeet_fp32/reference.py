"""A SwiGLU feed-forward network at the sizes of the FastConformer encoder of NVIDIA's Parakeet
speech recognisers (d_model 1024, feed-forward width 4096), posed as SOL-ExecBench's recipe
poses it: one fused gate/up projection without bias (its first half is the gate, its second the
up projection), SiLU(gate) * up, and a bias-free down projection."""

import torch
import torch.nn.functional as F

WORKLOADS = {
    # 64 utterance chunks x 128 encoder frames x d_model 1024 (the published recipe's axes).
    "full": {"batch": 64, "seq_len": 128, "hidden": 1024, "intermediate": 4096, "2*intermediate": 8192},
    "small": {"batch": 2, "seq_len": 10, "hidden": 32, "intermediate": 128, "2*intermediate": 256},
}


def reference(x, w_gate_up, w_down):
    # x: [batch, seq_len, hidden]; w_gate_up: [2 * intermediate, hidden] (rows [0, intermediate)
    # the gate, the rest the up projection); w_down: [hidden, intermediate].
    compute = torch.promote_types(x.dtype, torch.float32)
    gate, up = F.linear(x.to(compute), w_gate_up.to(compute)).chunk(2, dim=-1)
    h = F.silu(gate) * up
    out = F.linear(h, w_down.to(compute))
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, i = p["batch"], p["seq_len"], p["hidden"], p["intermediate"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal activations, weights N(0, 1/fan_in).
    x = randn(b, s, d)
    w_gate_up = randn(2 * i, d) / d**0.5
    w_down = randn(d, i) / i**0.5
    return [x, w_gate_up, w_down]
