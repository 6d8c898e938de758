"""A complete Mamba2 mixer layer of Nemotron-H-56B (hidden 8192; 256 SSM heads of 64; state
size 256 in 8 groups; causal conv of width 4; chunk 128), as the model's PyTorch path computes
it for a prefill without cache (transformers' NemotronH Mamba2 mixer, torch_forward), on
SOL-ExecBench's workload of 8 sequences of 512 tokens:

    in_proj -> split (gate z, conv input xBC, dt) -> depthwise causal conv + SiLU on xBC
    -> split (x, B, C) -> dt = clamp(softplus(dt + dt_bias)), A = -exp(A_log)
    -> SSD chunked scan: y_t = sum_{s <= t} C_t . B_s exp(sum_{s < r <= t} dt_r A) dt_s x_s + D x_t
    -> gated RMSNorm per group of 2048 channels: rmsnorm(y * silu(z)) * norm_weight
    -> out_proj

The scan is the chunked (SSD) form: within a chunk of 128 tokens a causal product weighted by
exp(segment sums of dt A), between chunks a recurrence over the chunk states. Everything is
computed in the compute dtype from the upcast inputs; the layer output is rounded to the input
dtype once."""

import math

import torch
import torch.nn.functional as F

CHUNK_SIZE = 128
N_GROUPS = 8  # B and C groups (heads / 8 heads share one)
TIME_STEP_LIMIT = (0.0, 1000000.0)  # passed as two Python floats
LAYER_NORM_EPSILON = 1e-05  # passed as a Python float

WORKLOADS = {
    "full": {"batch": 8, "seq_len": 512, "hidden": 8192, "heads": 256, "head_dim": 64,
             "state": 256, "conv_kernel": 4},
    # Two chunks, the second one padded; 8 groups of 2 heads.
    "small": {"batch": 2, "seq_len": 160, "hidden": 64, "heads": 16, "head_dim": 4,
              "state": 8, "conv_kernel": 4},
}


def dims(p):
    """(intermediate, conv_dim, projection) widths of a workload's layer."""
    intermediate = p["heads"] * p["head_dim"]
    conv_dim = intermediate + 2 * N_GROUPS * p["state"]
    return intermediate, conv_dim, intermediate + conv_dim + p["heads"]


def _segment_sum(x):
    """[..., L] -> [..., L, L]: out[i, j] = x[j+1] + ... + x[i] for j <= i, -inf above, summed
    along the masked rows (not as a difference of cumulative sums)."""
    length = x.shape[-1]
    x = x[..., None].expand(*x.shape, length)
    x = x.masked_fill(~torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), -1), 0)
    out = torch.cumsum(x, dim=-2)
    lower = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device))
    return out.masked_fill(~lower, -torch.inf)


def ssd_scan(x, dt_a, b, c, chunk):
    """The chunked SSD scan without initial state. x: [B, T, H, P] (already times dt);
    dt_a: [B, T, H] (dt * A, the per-step log-decay); b, c: [B, T, H, N]. Returns y [B, T, H, P]."""
    batch, steps, heads, head_dim = x.shape
    pad = (chunk - steps % chunk) % chunk
    x, b, c = (F.pad(t, (0, 0, 0, 0, 0, pad)) for t in (x, b, c))
    dt_a = F.pad(dt_a, (0, 0, 0, pad))
    n = (steps + pad) // chunk
    x, b, c = (t.reshape(batch, n, chunk, heads, -1) for t in (x, b, c))
    a = dt_a.reshape(batch, n, chunk, heads).permute(0, 3, 1, 2)  # [B, H, n, L]
    a_cumsum = torch.cumsum(a, dim=-1)

    # Intra-chunk (diagonal blocks): y_l = sum_{s <= l} (C_l . B_s) exp(segsum(a)_{l,s}) x_s.
    decay = torch.exp(_segment_sum(a))  # [B, H, n, L, L]
    scores = torch.einsum("bclhn,bcshn->bhcls", c, b) * decay
    y_diag = torch.einsum("bhcls,bcshp->bclhp", scores, x)

    # Each chunk's final state, then the recurrence over chunks (from a zero state).
    to_end = torch.exp(a_cumsum[..., -1:] - a_cumsum)  # [B, H, n, L]
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", b, to_end, x)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    chunk_decay = torch.exp(_segment_sum(F.pad(a_cumsum[..., -1], (1, 0))))  # [B, H, n+1, n+1]
    states = torch.einsum("bhzc,bchpn->bzhpn", chunk_decay, states)[:, :-1]

    # The carried state's contribution to each position.
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", c, states, torch.exp(a_cumsum))
    return (y_diag + y_off).reshape(batch, n * chunk, heads, head_dim)[:, :steps]


@torch.no_grad()
def reference(hidden_states, in_proj_weight, conv1d_weight, conv1d_bias, dt_bias, A_log, D,
              norm_weight, out_proj_weight, time_step_min, time_step_max, eps):
    # hidden_states: [B, T, hidden]; in_proj_weight: [projection, hidden]; conv1d_weight:
    # [conv_dim, 1, width]; conv1d_bias: [conv_dim]; dt_bias, A_log, D: [heads];
    # norm_weight: [intermediate]; out_proj_weight: [hidden, intermediate]; three floats.
    dtype = hidden_states.dtype
    compute = torch.promote_types(dtype, torch.float32)
    batch, steps, _ = hidden_states.shape
    heads = A_log.shape[0]
    conv_dim, width = conv1d_weight.shape[0], conv1d_weight.shape[-1]
    intermediate = norm_weight.shape[0]
    group_state = (conv_dim - intermediate) // 2  # groups x state
    groups = N_GROUPS
    head_dim = intermediate // heads

    x = hidden_states.to(compute)
    projected = x @ in_proj_weight.to(compute).t()
    gate, xbc, dt = projected.split([intermediate, conv_dim, heads], dim=-1)

    # Depthwise causal convolution over time (left padding width - 1), then SiLU.
    xbc = F.conv1d(xbc.transpose(1, 2), conv1d_weight.to(compute), conv1d_bias.to(compute),
                   padding=width - 1, groups=conv_dim)[..., :steps].transpose(1, 2)
    xbc = F.silu(xbc)
    xs, b, c = xbc.split([intermediate, group_state, group_state], dim=-1)

    a = -torch.exp(A_log.to(compute))
    dt = F.softplus(dt + dt_bias.to(compute)).clamp(time_step_min, time_step_max)
    xs = xs.reshape(batch, steps, heads, head_dim)
    b = b.reshape(batch, steps, groups, -1).repeat_interleave(heads // groups, dim=2)
    c = c.reshape(batch, steps, groups, -1).repeat_interleave(heads // groups, dim=2)
    y = ssd_scan(xs * dt[..., None], dt * a, b, c, CHUNK_SIZE) + D.to(compute)[:, None] * xs
    y = y.reshape(batch, steps, intermediate)

    # Gated RMSNorm, normalised per group of intermediate / groups channels.
    y = y * F.silu(gate)
    grouped = y.reshape(batch, steps, groups, -1)
    grouped = grouped * torch.rsqrt(grouped.pow(2).mean(-1, keepdim=True) + eps)
    y = grouped.reshape(batch, steps, intermediate) * norm_weight.to(compute)
    return (y @ out_proj_weight.to(compute).t()).to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    intermediate, conv_dim, projection = dims(p)
    hidden, heads, width = p["hidden"], p["heads"], p["conv_kernel"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    return [
        torch.randn(p["batch"], p["seq_len"], hidden, **bf16),
        torch.randn(projection, hidden, **bf16) / math.sqrt(hidden),
        torch.randn(conv_dim, 1, width, **bf16) / math.sqrt(width),
        torch.randn(conv_dim, **bf16),
        torch.randn(heads, **bf16),  # dt_bias
        torch.empty(heads, **bf16).uniform_(-5.0, -1.0),  # A_log: decay rates exp(A_log) in [0.007, 0.37]
        torch.randn(heads, **bf16),  # D
        (1 + 0.1 * torch.randn(intermediate, device=device, dtype=torch.float32)).to(torch.bfloat16),
        torch.randn(hidden, intermediate, **bf16) / math.sqrt(intermediate),
        TIME_STEP_LIMIT[0],
        TIME_STEP_LIMIT[1],
        LAYER_NORM_EPSILON,
    ]
