"""The chunked gated delta rule of Qwen3-Next's Gated DeltaNet layers, as the model's PyTorch
path computes it (transformers' torch_chunk_gated_delta_rule), on SOL-ExecBench's workload:
16 sequences of 256 tokens, 4 query/key heads shared by 16 value heads (value head h reads
query/key head h // 4), head dimension 128, chunks of 64 tokens, a zero initial state.

Queries and keys are L2-normalised (x * rsqrt(sum x^2 + 1e-6), in the input dtype, as the model
does before the kernel) and the query is scaled. Per value head the recurrence it computes is

    S_t = exp(g_t) S_{t-1} + k_t^T (beta_t (v_t - exp(g_t) k_t @ S_{t-1})),   o_t = q_t @ S_t

evaluated chunk by chunk: inside a chunk of 64 tokens the delta rule becomes a unit lower
triangular system (solved by forward substitution), the chunk's outputs are an intra-chunk
causal product plus the carried state's contribution, and the state passes from chunk to chunk.
Returns o [B, HV, T, V], rounded to the input dtype."""

import torch
import torch.nn.functional as F

CHUNK_SIZE = 64
SCALE = 0.08838834764831845  # 128 ** -0.5, passed as a Python float
L2NORM_EPS = 1e-6

WORKLOADS = {
    "full": {"batch": 16, "k_heads": 4, "v_heads": 16, "seq_len": 256, "k_dim": 128, "v_dim": 128},
    # Not a multiple of the chunk: exercises the padded last chunk.
    "small": {"batch": 2, "k_heads": 2, "v_heads": 8, "seq_len": 80, "k_dim": 128, "v_dim": 128},
}


def _l2norm(x):
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + L2NORM_EPS)


@torch.no_grad()
def reference(q, k, v, g, beta, scale):
    # q, k: [B, HK, T, K]; v: [B, HV, T, V]; g (log-decay), beta: [B, HV, T]; scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    dtype = q.dtype
    steps, value_heads = q.shape[2], v.shape[1]
    group = value_heads // q.shape[1]
    c = CHUNK_SIZE
    q = _l2norm(q).repeat_interleave(group, dim=1)
    k = _l2norm(k).repeat_interleave(group, dim=1)
    q, k, v, g, beta = (x.to(compute) for x in (q, k, v, g, beta))
    q = q * scale

    pad = (c - steps % c) % c
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        g, beta = F.pad(g, (0, pad)), F.pad(beta, (0, pad))
    batch, heads, padded, key_dim = k.shape
    chunks = padded // c

    v_beta = (v * beta[..., None]).reshape(batch, heads, chunks, c, -1)
    k_beta = (k * beta[..., None]).reshape(batch, heads, chunks, c, -1)
    q, k, v = (x.reshape(batch, heads, chunks, c, -1) for x in (q, k, v))
    g = g.reshape(batch, heads, chunks, c).cumsum(dim=-1)  # log-decay from the chunk's start

    # decay[i, j] = exp(g_i - g_j) for j <= i (0 above the diagonal).
    decay = (g[..., :, None] - g[..., None, :]).tril().exp().tril()
    on_or_above = torch.triu(torch.ones(c, c, dtype=torch.bool, device=q.device))
    # A = (I + strictly_lower(beta_i k_i . k_j decay_ij))^-1 by forward substitution.
    a = -((k_beta @ k.transpose(-1, -2)) * decay).masked_fill(on_or_above, 0)
    for i in range(1, c):
        row = a[..., i, :i].clone()
        a[..., i, :i] = row + (row[..., None] * a[..., :i, :i].clone()).sum(-2)
    a = a + torch.eye(c, dtype=a.dtype, device=a.device)
    u = a @ v_beta  # the chunk's corrected values, before the carried state's share
    w = a @ (k_beta * g.exp()[..., None])  # how the carried state enters them

    s = torch.zeros(batch, heads, key_dim, v.shape[-1], dtype=compute, device=q.device)
    out = torch.zeros_like(v)
    above = torch.triu(torch.ones(c, c, dtype=torch.bool, device=q.device), diagonal=1)
    for n in range(chunks):
        q_n, k_n, g_n = q[:, :, n], k[:, :, n], g[:, :, n]
        causal = (q_n @ k_n.transpose(-1, -2) * decay[:, :, n]).masked_fill(above, 0)
        v_new = u[:, :, n] - w[:, :, n] @ s
        out[:, :, n] = (q_n * g_n.exp()[..., None]) @ s + causal @ v_new
        last = g_n[..., -1]
        to_end = (last[..., None] - g_n).exp()[..., None]  # decay from each token to the chunk's end
        s = s * last.exp()[..., None, None] + (k_n * to_end).transpose(-1, -2) @ v_new

    out = out.reshape(batch, heads, padded, -1)[:, :, :steps]
    return out.to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t = p["batch"], p["seq_len"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    q = torch.randn(b, p["k_heads"], t, p["k_dim"], **bf16)
    k = torch.randn(b, p["k_heads"], t, p["k_dim"], **bf16)
    v = torch.randn(b, p["v_heads"], t, p["v_dim"], **bf16)
    # Per-token log-decay in (-0.05, 0): about exp(-1.6) over a chunk, so the state carried
    # between chunks matters.
    g = torch.empty(b, p["v_heads"], t, **bf16).uniform_(-0.05, 0.0)
    beta = torch.randn(b, p["v_heads"], t, **bf16).sigmoid()  # the sigmoid is taken in bf16
    return [q, k, v, g, beta, SCALE]
