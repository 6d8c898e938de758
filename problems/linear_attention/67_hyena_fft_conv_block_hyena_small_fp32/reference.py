"""A complete pre-norm Hyena block of HyenaDNA-small (d_model 256, MLP 1024, Hyena order 2,
implicit filter MLP of width 64 on a 5-dimensional positional embedding, short depthwise filter
of width 3), as the safari / HyenaDNA modules compute it, on SOL-ExecBench's workload of 32
sequences of 256 tokens, in float32:

    h   = x + out_proj(hyena(layer_norm1(x)))
    out = h + fc2(gelu_tanh(fc1(layer_norm2(h))))

hyena(u): in_proj to 3 x 256 channels, a causal depthwise conv of width 3 over time, split into
(x0, x1, v); the implicit long filter k[c, t] = mlp(z_t)[c] * (exp(-t |delta_c|) + shift) with
z_t = (t, cos(2 pi f t'), -sin(2 pi f t')) the positional embedding, the MLP
Linear(5, 64) -> sin(freq *) -> Linear(64, 64) -> sin -> Linear(64, 64) -> sin -> Linear(64, 256)
(one shared freq), delta the modulation rates; then v = v * x1, v = causal_conv(v, k) + v * bias
(the long convolution as an FFT of size 2T), and the output v * x0.

Computed in the compute dtype; the block output is returned in the input dtype."""

import math

import torch
import torch.nn.functional as F

D_MODEL = 256
D_INNER = 1024
ORDER = 2
SHORT_FILTER_ORDER = 3
FILTER_ORDER = 64
EMB_DIM = 5
INNER_WIDTH = D_MODEL * (ORDER + 1)
LAYER_NORM_EPS = 1e-05  # passed as a Python float
EXP_MOD_SHIFT = 0.0  # passed as a Python float (the modules' default shift)
# ExponentialModulation's rates: linspace(log(target) / slow, log(target) / fast, d_model).
MOD_TARGET, MOD_FAST_DECAY_PCT, MOD_SLOW_DECAY_PCT = 1e-2, 0.3, 1.5

WORKLOADS = {
    "full": {"batch": 32, "seq_len": 256},
    "small": {"batch": 2, "seq_len": 24},
}


def _positional_embedding(steps, dtype, device):
    """z [1, T, EMB_DIM] and t [1, T, 1] of the Hyena filter: t = linspace(0, 1, T), then the
    real and imaginary parts of exp(-i f w) for bands f = linspace(1e-4, bands - 1, bands) and
    w = 2 pi (0..T-1) / T."""
    t = torch.linspace(0, 1, steps, dtype=dtype, device=device)[None, :, None]
    bands = (EMB_DIM - 1) // 2
    w = 2 * math.pi * torch.linspace(0, steps - 1, steps, dtype=dtype, device=device)[None, :, None] / steps
    f = torch.linspace(1e-4, bands - 1, bands, dtype=dtype, device=device)[None, None]
    return torch.cat([t, torch.cos(f * w), -torch.sin(f * w)], dim=-1), t


def _fft_causal_conv(u, k, skip):
    """y[c, t] = sum_{s <= t} k[c, s] u[c, t - s] + skip[c] u[c, t], as an FFT of size 2T."""
    steps = u.shape[-1]
    n = 2 * steps
    k_f = torch.fft.rfft(k, n=n) / n
    u_f = torch.fft.rfft(u, n=n)
    y = torch.fft.irfft(u_f * k_f, n=n, norm="forward")[..., :steps]
    return y + u * skip[:, None]


@torch.no_grad()
def reference(hidden_states, norm1_weight, norm1_bias, norm2_weight, norm2_bias,
              in_proj_weight, in_proj_bias, short_filter_weight, short_filter_bias,
              filter_fc1_weight, filter_fc1_bias, sin_freq, filter_fc2_weight, filter_fc2_bias,
              filter_fc3_weight, filter_fc3_bias, filter_out_weight, filter_bias, exp_mod_deltas,
              out_proj_weight, out_proj_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias,
              eps, exp_mod_shift):
    dtype = hidden_states.dtype
    compute = torch.promote_types(dtype, torch.float32)
    _, steps, d_model = hidden_states.shape
    c = lambda t: t.to(compute)  # noqa: E731

    x = c(hidden_states)
    u = F.layer_norm(x, (d_model,), c(norm1_weight), c(norm1_bias), eps)
    u = F.linear(u, c(in_proj_weight), c(in_proj_bias)).transpose(1, 2)  # [B, 3 d, T]
    u = F.conv1d(u, c(short_filter_weight), c(short_filter_bias), padding=SHORT_FILTER_ORDER - 1,
                 groups=u.shape[1])[..., :steps]
    x0, x1, v = u.split(d_model, dim=1)

    # The implicit long filter, one tap per (channel, position).
    z, t = _positional_embedding(steps, compute, x.device)
    freq = c(sin_freq)
    h = torch.sin(freq * F.linear(z, c(filter_fc1_weight), c(filter_fc1_bias)))
    h = torch.sin(freq * F.linear(h, c(filter_fc2_weight), c(filter_fc2_bias)))
    h = torch.sin(freq * F.linear(h, c(filter_fc3_weight), c(filter_fc3_bias)))
    k = F.linear(h, c(filter_out_weight))  # [1, T, d]
    k = k * (torch.exp(-t * c(exp_mod_deltas).abs()) + exp_mod_shift)
    k = k[0].transpose(0, 1)  # [d, T]

    v = _fft_causal_conv(v * x1, k, c(filter_bias))
    y = F.linear((v * x0).transpose(1, 2), c(out_proj_weight), c(out_proj_bias))
    h = x + y
    m = F.layer_norm(h, (d_model,), c(norm2_weight), c(norm2_bias), eps)
    m = F.linear(F.gelu(F.linear(m, c(fc1_weight), c(fc1_bias)), approximate="tanh"),
                 c(fc2_weight), c(fc2_bias))
    return (h + m).to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    f32 = dict(device=device, dtype=torch.float32)

    def weight(*shape):  # N(0, 1 / fan_in), the scale of a trained layer's weights
        return torch.randn(*shape, **f32) / math.sqrt(math.prod(shape[1:]))

    def bias(n):
        return 0.02 * torch.randn(n, **f32)

    min_decay = math.log(MOD_TARGET) / MOD_SLOW_DECAY_PCT
    max_decay = math.log(MOD_TARGET) / MOD_FAST_DECAY_PCT
    return [
        torch.randn(p["batch"], p["seq_len"], D_MODEL, **f32),
        1 + 0.1 * torch.randn(D_MODEL, **f32),
        0.1 * torch.randn(D_MODEL, **f32),
        1 + 0.1 * torch.randn(D_MODEL, **f32),
        0.1 * torch.randn(D_MODEL, **f32),
        weight(INNER_WIDTH, D_MODEL),
        bias(INNER_WIDTH),
        weight(INNER_WIDTH, 1, SHORT_FILTER_ORDER),
        bias(INNER_WIDTH),
        weight(FILTER_ORDER, EMB_DIM),
        bias(FILTER_ORDER),
        1 + 0.1 * torch.randn(1, FILTER_ORDER, **f32),  # the sine activation's frequency
        weight(FILTER_ORDER, FILTER_ORDER),
        bias(FILTER_ORDER),
        weight(FILTER_ORDER, FILTER_ORDER),
        bias(FILTER_ORDER),
        weight(D_MODEL, FILTER_ORDER),
        torch.randn(D_MODEL, **f32),  # the long filter's skip (the module's bias, N(0, 1))
        torch.linspace(min_decay, max_decay, D_MODEL, **f32)[None, None, :],
        weight(D_MODEL, D_MODEL),
        bias(D_MODEL),
        weight(D_INNER, D_MODEL),
        bias(D_INNER),
        weight(D_MODEL, D_INNER),
        bias(D_MODEL),
        LAYER_NORM_EPS,
        EXP_MOD_SHIFT,
    ]
