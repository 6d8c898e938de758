"""The attention block of the vision encoder in Qwen-Image-Edit-2509's multimodal encoder (a
Qwen-VL vision transformer: 16 heads of 72, width 1152), over a packed batch of image patch
sequences of different lengths: a fused QKV projection with bias, 2D-style rotary embeddings on
queries and keys (rotate-half layout, the tables given per token and head), attention within each
sequence only (bidirectional), and the output projection with bias.

Rounding follows the bf16 model: the QKV projection, the rotated queries and keys, the attention
probabilities, the attention output and the projection are each rounded to bf16, every product
accumulated in float32 (float64 for the anchor).

The packing is the published problem's: 28 sequences of 85 to 680 patches (7,168 in all);
`cu_seqlens` holds each sequence's end offset. Values are drawn afresh."""

import math

import torch

NUM_HEADS = 16
HEAD_DIM = 72
ROPE_THETA = 10000.0

# Patches of each image sequence, in packing order (the published problem's fixed splits).
SEQ_SPLITS = (
    255, 85, 425, 170, 680, 85, 170, 340, 85, 510, 170, 255, 85, 340, 170, 425, 85, 255, 170, 85,
    170, 510, 340, 170, 255, 170, 85, 623,
)

WORKLOADS = {
    "full": {"splits": SEQ_SPLITS, "embed_dim": NUM_HEADS * HEAD_DIM},
    # Same structure for CPU tests: 2 heads of 72.
    "small": {"splits": (10, 35, 15), "embed_dim": 2 * HEAD_DIM},
}


def _rotate(y, cos, sin):
    # y, cos, sin: [tokens, heads, 72]; rotate_half(y) = cat(-y[36:], y[:36]).
    half = y.shape[-1] // 2
    return y * cos + torch.cat([-y[..., half:], y[..., :half]], dim=-1) * sin


@torch.no_grad()
def reference(hidden_states, cu_seqlens, cos, sin, qkv_weight, qkv_bias, proj_weight, proj_bias):
    # hidden_states: [tokens, embed]; cu_seqlens: [sequences] int64 end offsets; cos, sin:
    # [tokens, heads, 72]; qkv_weight: [3 x embed, embed]; qkv_bias: [3 x embed]; proj_weight:
    # [embed, embed]; proj_bias: [embed].
    dtype = hidden_states.dtype
    compute = torch.promote_types(dtype, torch.float32)
    tokens, embed = hidden_states.shape
    heads = embed // HEAD_DIM
    x = hidden_states.to(compute)
    qkv = (x @ qkv_weight.to(compute).T + qkv_bias.to(compute)).to(dtype)
    q, k, v = qkv.view(tokens, 3, heads, HEAD_DIM).to(compute).unbind(1)
    q = _rotate(q, cos.to(compute), sin.to(compute)).to(dtype).to(compute)
    k = _rotate(k, cos.to(compute), sin.to(compute)).to(dtype).to(compute)
    out = torch.empty(tokens, heads, HEAD_DIM, dtype=compute, device=x.device)
    start = 0
    for end in cu_seqlens.tolist():
        qs, ks, vs = (t[start:end].transpose(0, 1) for t in (q, k, v))  # [heads, n, 72]
        scores = (qs @ ks.transpose(1, 2)) / math.sqrt(HEAD_DIM)  # [heads, n, n]
        probs = torch.softmax(scores, dim=-1).to(dtype).to(compute)
        out[start:end] = (probs @ vs).transpose(0, 1).to(dtype)
        start = end
    attn = out.reshape(tokens, embed)
    return (attn @ proj_weight.to(compute).T + proj_bias.to(compute)).to(dtype)


def rotary_tables(splits, heads, device, dtype):
    """cos and sin [tokens, heads, 72]: each token's position within its own sequence, in the
    rotate-half layout, the same for every head."""
    tokens = int(sum(splits))
    lengths = torch.tensor(splits, dtype=torch.int64, device=device)
    starts = lengths.cumsum(0) - lengths
    starts = starts.repeat_interleave(lengths, output_size=tokens)
    positions = torch.arange(tokens, device=device) - starts
    half = HEAD_DIM // 2
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(half, dtype=torch.float32, device=device) / half))
    angles = positions.to(torch.float32)[:, None] * inv_freq
    emb = torch.cat([angles, angles], dim=-1)[:, None, :]
    shape = (tokens, heads, HEAD_DIM)
    return (emb.cos().to(dtype).expand(shape).contiguous(),
            emb.sin().to(dtype).expand(shape).contiguous())


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    splits, embed, bf16 = p["splits"], p["embed_dim"], torch.bfloat16
    tokens = sum(splits)
    cu_seqlens = torch.tensor(splits, dtype=torch.int64, device=device).cumsum(0)
    cos, sin = rotary_tables(splits, embed // HEAD_DIM, device, bf16)
    hidden_states = torch.randn(tokens, embed, device=device).to(bf16)
    qkv_weight = (torch.randn(3 * embed, embed, device=device) / math.sqrt(embed)).to(bf16)
    qkv_bias = (0.1 * torch.randn(3 * embed, device=device)).to(bf16)
    proj_weight = (torch.randn(embed, embed, device=device) / math.sqrt(embed)).to(bf16)
    proj_bias = (0.1 * torch.randn(embed, device=device)).to(bf16)
    return [hidden_states, cu_seqlens, cos, sin, qkv_weight, qkv_bias, proj_weight, proj_bias]
