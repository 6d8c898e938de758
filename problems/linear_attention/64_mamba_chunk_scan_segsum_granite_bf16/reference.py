"""The chunked SSD scan of a Mamba2 layer of IBM Granite 4.0-H (granite-4.0-h-small: SSM heads
of dimension 64, state size 256, one B/C group, chunks of 256 tokens), as the model's PyTorch
path computes it (transformers' Mamba2 torch_forward, the chunked scan with segment sums), on
SOL-ExecBench's workload: 8 sequences of 1,024 tokens, 16 heads, resuming from a given state.

With a_t the per-step log-decay of a head (dt * A, given), x_t the (dt-scaled) input, B_t and
C_t the shared input and output projections and D the skip:

    h_t = exp(a_t) h_{t-1} + x_t^T B_t   ([P, N] per head, h_0 = initial_states)
    y_t = C_t . h_t + D x_t

evaluated chunk by chunk: intra-chunk causal products weighted by exp(segment sums of a), the
chunk states, a recurrence over chunks that starts from initial_states, and each chunk's share
of the carried state. Returns (y [B, T, H, P], final state [B, H, P, N]), both rounded to the
input dtype."""

import torch
import torch.nn.functional as F

CHUNK_SIZE = 256

WORKLOADS = {
    "full": {"batch": 8, "seq_len": 1024, "heads": 16, "head_dim": 64, "state": 256, "groups": 1},
    # Three chunks, the last one padded.
    "small": {"batch": 2, "seq_len": 600, "heads": 3, "head_dim": 8, "state": 16, "groups": 1},
}


def _segment_sum(x):
    """[..., L] -> [..., L, L]: out[i, j] = x[j+1] + ... + x[i] for j <= i, -inf above, summed
    along the masked rows (not as a difference of cumulative sums)."""
    length = x.shape[-1]
    x = x[..., None].expand(*x.shape, length)
    x = x.masked_fill(~torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), -1), 0)
    out = torch.cumsum(x, dim=-2)
    lower = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device))
    return out.masked_fill(~lower, -torch.inf)


def _chunks(x, pad, chunk):
    """[B, T, ...] -> [B, T / chunk, chunk, ...], zero-padded at the end of time."""
    x = F.pad(x, (0, 0) * (x.dim() - 2) + (0, pad))
    return x.reshape(x.shape[0], -1, chunk, *x.shape[2:])


@torch.no_grad()
def reference(hidden_states, A, B, C, D, initial_states):
    # hidden_states: [batch, T, H, P]; A: [batch, H, T] (log-decay per step); B, C: [batch, T,
    # G, N]; D: [H]; initial_states: [batch, H, P, N].
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    batch, steps, heads, head_dim = hidden_states.shape
    chunk = CHUNK_SIZE
    pad = (chunk - steps % chunk) % chunk
    x, a, b, c, d, h0 = (t.to(compute) for t in (hidden_states, A, B, C, D, initial_states))
    b = b.repeat_interleave(heads // b.shape[2], dim=2)
    c = c.repeat_interleave(heads // c.shape[2], dim=2)

    skip = d[:, None] * F.pad(x, (0, 0, 0, 0, 0, pad))  # D x, on the padded time axis
    x = _chunks(x, pad, chunk)  # [batch, n, L, H, P]
    a = _chunks(a.transpose(1, 2), pad, chunk).permute(0, 3, 1, 2)  # [batch, H, n, L]
    b, c = _chunks(b, pad, chunk), _chunks(c, pad, chunk)  # [batch, n, L, H, N]
    a_cumsum = torch.cumsum(a, dim=-1)

    # Intra-chunk (diagonal blocks).
    decay = torch.exp(_segment_sum(a))  # [batch, H, n, L, L]
    scores = torch.einsum("bclhn,bcshn->bclsh", c, b) * decay.permute(0, 2, 3, 4, 1)
    y_diag = torch.einsum("bclsh,bcshp->bclhp", scores, x)

    # Chunk states, then the recurrence over chunks from the given initial state.
    to_end = torch.exp(a_cumsum[..., -1:] - a_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", b, to_end, x)
    states = torch.cat([h0[:, None], states], dim=1)
    chunk_decay = torch.exp(_segment_sum(F.pad(a_cumsum[..., -1], (1, 0)))).transpose(1, 3)
    new_states = torch.einsum("bczh,bchpn->bzhpn", chunk_decay, states)
    states, final_state = new_states[:, :-1], new_states[:, -1]

    # The carried state's share of each position.
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", c, states, torch.exp(a_cumsum))
    y = (y_diag + y_off).reshape(batch, -1, heads, head_dim) + skip
    return y[:, :steps].to(hidden_states.dtype), final_state.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t, h = p["batch"], p["seq_len"], p["heads"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    return [
        torch.randn(b, t, h, p["head_dim"], **bf16),
        # Per-step log-decay: exp(A) in (0.98, 0.9995), so state survives across chunks.
        torch.empty(b, h, t, **bf16).uniform_(-0.02, -0.0005),
        torch.randn(b, t, p["groups"], p["state"], **bf16),
        torch.randn(b, t, p["groups"], p["state"], **bf16),
        torch.randn(h, **bf16),
        torch.randn(b, h, p["head_dim"], p["state"], **bf16),
    ]
