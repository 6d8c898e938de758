"""The inverted-bottleneck MLP of a ConvNeXt V2 block (stage 1 of ConvNeXt V2-Base: 128
channels at 56x56): after the depthwise 7x7 convolution and LayerNorm (channels last), pwconv1
expands 128 -> 512, exact GELU, Global Response Normalization (GRN) rescales every channel by its
spatial L2 norm relative to the mean over channels, and pwconv2 projects back to 128. Posed as
SOL-ExecBench's recipe poses it: GRN's gamma and beta as [1, 1, 1, hidden_dim] tensors and its
eps as a trailing Python float."""

import torch
import torch.nn.functional as F

GRN_EPS = 1e-6  # the eps every draw passes (ConvNeXt V2's GRN and the published recipe)

WORKLOADS = {
    "full": {"batch": 64, "height": 56, "width": 56, "dim": 128, "hidden_dim": 512},
    "small": {"batch": 2, "height": 5, "width": 6, "dim": 16, "hidden_dim": 64},
}


def reference(x, w1, b1, grn_gamma, grn_beta, w2, b2, eps):
    # x: [batch, height, width, dim] (channels last); w1: [hidden_dim, dim], b1: [hidden_dim];
    # grn_gamma, grn_beta: [1, 1, 1, hidden_dim]; w2: [dim, hidden_dim], b2: [dim]; eps: float.
    compute = torch.promote_types(x.dtype, torch.float32)
    h = F.linear(x.to(compute), w1.to(compute), b1.to(compute))  # pwconv1
    h = F.gelu(h)  # exact erf GELU
    # GRN: per sample and channel, the L2 norm over all spatial positions ...
    gx = torch.linalg.vector_norm(h, ord=2, dim=(1, 2), keepdim=True)  # [batch, 1, 1, hidden]
    # ... divided by its mean over channels ...
    nx = gx / (gx.mean(dim=-1, keepdim=True) + eps)
    # ... rescales the features, with a learned affine and a residual.
    h = grn_gamma.to(compute) * (h * nx) + grn_beta.to(compute) + h
    out = F.linear(h, w2.to(compute), b2.to(compute))  # pwconv2
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, hh, ww, c, e = p["batch"], p["height"], p["width"], p["dim"], p["hidden_dim"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal activations and biases, weights N(0, 1/fan_in),
    # GRN's gamma N(0, 1/hidden_dim) and beta N(0, 1).
    x = randn(b, hh, ww, c)
    w1 = randn(e, c) / c**0.5
    b1 = randn(e)
    grn_gamma = randn(1, 1, 1, e) / e**0.5
    grn_beta = randn(1, 1, 1, e)
    w2 = randn(c, e) / e**0.5
    b2 = randn(c)
    return [x, w1, b1, grn_gamma, grn_beta, w2, b2, GRN_EPS]
