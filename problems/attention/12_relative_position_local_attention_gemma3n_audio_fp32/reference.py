"""The self-attention of Gemma 3n's audio encoder (a Conformer; Gemma3nAudioAttention), in
float32: chunked local causal attention in which each query sees itself and the 12 tokens before
it, with a learned per-dimension query scale, Transformer-XL-style relative position logits from
a sinusoidal embedding of the distance, logit soft-capping, and a padding mask.

For query time i and key time j = i - d with 0 <= d <= 12 (keys outside the sequence or padded
take no part), per head n (8 heads of 64):
    q = (x @ Wq^T) * (64^-0.5 / softplus(0)) * softplus(per_dim_scale);
    k = x @ Wk^T;  v = x @ Wv^T
    r_d = (sin(d * inv_timescales), cos(d * inv_timescales)) @ Wpos^T   (a [512] row, split in heads)
    logit = q_i . k_j + q_i . r_d;  logit = cap * tanh(logit / cap)
    out_i = softmax over the visible j of the logits, times v_j.
Gemma computes this in blocks of 12 queries against 24-key windows; a key time before the first
token or a padded token (mask true) takes no part (its logit is the dtype's lowest value, so an
all-masked query would average its window; the draws never produce one).

Sizes are the published problem's: 64 utterances of 1,721 frames, width 512 (8 heads of 64); each
utterance's last 0 to 12 frames are padding. Values are drawn afresh."""

import math

import torch

NUM_HEADS = 8
HEAD_DIM = 64
CHUNK_SIZE = 12  # queries per block
MAX_BACKWARD = 12  # keys before the query a query sees (context_left - 1)
MAX_FORWARD = 0  # keys after it (context_right)
NUM_TIMESCALES = 256  # hidden // 2
MIN_TIMESCALE = 1.0
MAX_TIMESCALE = 1.0e4
ATTENTION_LOGITS_SOFT_CAP = 50.0  # passed as a Python float

WORKLOADS = {
    "full": {"batch": 64, "seq_len": 1721},
    "small": {"batch": 2, "seq_len": 50},
}


def _key_windows(y, blocks, pad_value=0.0):
    """y: [batch, time, ...] -> [batch, blocks, 24, ...]: block u's keys are the times
    u * 12 - 12 .. u * 12 + 11 (a time outside 0 .. time - 1 reads pad_value)."""
    window = CHUNK_SIZE + MAX_BACKWARD + MAX_FORWARD
    right = blocks * CHUNK_SIZE + MAX_FORWARD - y.shape[1]
    pad = [0, 0] * (y.dim() - 2) + [MAX_BACKWARD, right]
    padded = torch.nn.functional.pad(y, pad, value=pad_value)
    windows = padded.unfold(1, window, CHUNK_SIZE)  # [batch, blocks, ..., 24]
    return windows.movedim(-1, 2)


@torch.no_grad()
def reference(hidden_states, mask, q_proj_weight, k_proj_weight, v_proj_weight, pos_proj_weight,
              per_dim_scale, inv_timescales, attention_logits_soft_cap):
    # hidden_states: [batch, time, 512]; mask: [batch, time] bool, true for padding; the four
    # weights: [512, 512] ([out, in]); per_dim_scale: [64]; inv_timescales: [256];
    # attention_logits_soft_cap: float.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    batch, time, _ = hidden_states.shape
    x = hidden_states.to(compute)
    q = (x @ q_proj_weight.to(compute).T).view(batch, time, NUM_HEADS, HEAD_DIM)
    k = (x @ k_proj_weight.to(compute).T).view(batch, time, NUM_HEADS, HEAD_DIM)
    v = (x @ v_proj_weight.to(compute).T).view(batch, time, NUM_HEADS, HEAD_DIM)
    softplus = torch.nn.functional.softplus
    q_scale = HEAD_DIM**-0.5 / math.log(2.0)  # softplus(0) = ln 2
    q = q * q_scale * softplus(per_dim_scale.to(compute))

    blocks = -(-time // CHUNK_SIZE)
    pad = blocks * CHUNK_SIZE - time
    q_blocks = torch.nn.functional.pad(q, [0, 0, 0, 0, 0, pad]).view(
        batch, blocks, CHUNK_SIZE, NUM_HEADS, HEAD_DIM)
    k_windows = _key_windows(k, blocks)  # [batch, blocks, 24, heads, 64]
    v_windows = _key_windows(v, blocks)
    valid = _key_windows(~mask, blocks, pad_value=False)  # [batch, blocks, 24]

    # Relative position embedding of the distances d = 12 .. 0 (key index c of a window holds
    # the distance 12 + w - c from query w of the block).
    distances = torch.arange(MAX_BACKWARD, -MAX_FORWARD - 1, -1, device=x.device).to(compute)
    angles = distances[:, None] * inv_timescales.to(compute)[None, :]
    timing = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)  # [13, 512]
    rel = (timing @ pos_proj_weight.to(compute).T).view(-1, NUM_HEADS, HEAD_DIM)  # [13, heads, 64]

    content = torch.einsum("buwnh,bucnh->bnuwc", q_blocks, k_windows)
    position = torch.einsum("buwnh,fnh->bnuwf", q_blocks, rel)  # f indexes distance 12 - f
    w = torch.arange(CHUNK_SIZE, device=x.device)[:, None]
    c = torch.arange(k_windows.shape[2], device=x.device)[None, :]
    offset = c - w  # 0 .. 12 where the key is visible to the query
    in_reach = (offset >= 0) & (offset <= MAX_BACKWARD + MAX_FORWARD)  # [12, 24]
    gathered = position.gather(-1, offset.clamp(0, MAX_BACKWARD + MAX_FORWARD).expand(
        *position.shape[:-1], -1))
    logits = content + gathered
    cap = attention_logits_soft_cap
    logits = torch.tanh(logits / cap) * cap
    visible = in_reach[None, None, None] & valid[:, None, :, None, :]  # [batch, 1, blocks, 12, 24]
    logits = torch.where(visible, logits, torch.finfo(compute).min)
    probs = torch.softmax(logits, dim=-1)
    context = torch.einsum("bnuwc,bucnh->buwnh", probs, v_windows)
    return context.reshape(batch, blocks * CHUNK_SIZE, NUM_HEADS, HEAD_DIM)[:, :time].to(
        hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    batch, time, hidden = p["batch"], p["seq_len"], NUM_HEADS * HEAD_DIM
    hidden_states = torch.randn(batch, time, hidden, device=device)
    # Each utterance's last 0 .. 12 frames are padding.
    valid_lens = torch.randint(time - MAX_BACKWARD, time + 1, (batch,), device=device)
    mask = torch.arange(time, device=device)[None, :] >= valid_lens[:, None]
    q_proj_weight = torch.randn(hidden, hidden, device=device) / math.sqrt(hidden)
    k_proj_weight = torch.randn(hidden, hidden, device=device) / math.sqrt(hidden)
    v_proj_weight = torch.randn(hidden, hidden, device=device) / math.sqrt(hidden)
    pos_proj_weight = torch.randn(hidden, hidden, device=device) / math.sqrt(hidden)
    per_dim_scale = 0.1 * torch.randn(HEAD_DIM, device=device)
    increment = math.log(MAX_TIMESCALE / MIN_TIMESCALE) / max(NUM_TIMESCALES - 1, 1)
    inv_timescales = MIN_TIMESCALE * torch.exp(
        torch.arange(NUM_TIMESCALES, dtype=torch.float32, device=device) * -increment)
    return [hidden_states, mask, q_proj_weight, k_proj_weight, v_proj_weight, pos_proj_weight,
            per_dim_scale, inv_timescales, ATTENTION_LOGITS_SOFT_CAP]
