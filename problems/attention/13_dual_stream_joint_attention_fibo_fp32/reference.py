"""The attention half of a dual-stream (joint) transformer block of Bria's FIBO text-to-image
diffusion transformer, in float32: AdaLN-Zero modulation of the image tokens from the timestep
embedding, their query, key and value projections, keys and values projected from the text
encoder's states, 3D rotary embeddings on the image queries and keys, joint attention of the
image queries over the text and image tokens, the output projection, and the gated residual.

Per batch element (every step in float32; float64 for the anchor):
    (shift, scale, gate, _, _, _) = chunk6(silu(t_emb) @ W_ada^T + b_ada)
    x_mod = layer_norm(x, eps 1e-6, no affine) * (1 + scale) + shift
    q, k, v = x_mod @ W_{q,k,v}^T + b_{q,k,v}              image tokens, 24 heads of 128
    k_txt, v_txt = enc @ W_{k,v,ctx}^T + b_{k,v,ctx}       text tokens (joint block only)
    q, k = rope3d(q), rope3d(k)                            image tokens only
    o = softmax(q [k_txt; k]^T / sqrt(128)) [v_txt; v]     bidirectional; heads concatenated
    out = x + gate * (o @ W_out^T + b_out)
rope3d rotates, in each head, dimensions 0-41 by the token's frame index, 42-83 by its row and
84-125 by its column (pairs (2i, 2i+1) of each slice by the angle table[position, i]; 126-127
unrotated). The tables are inputs: cos_axisA / sin_axisA [positions, 21], 10000^(-2i/42) per
position; the token's index on each axis is an input too. IS_JOINT_BLOCK = 0 would attend over
the image tokens alone; the published problem passes 1.

Sizes are the published problem's: 4 images of 4 x 16 x 16 = 1,024 latent tokens, width 3072 (24
heads of 128), 256 text tokens of width 4096. Values are drawn afresh."""

import math

import torch

HEAD_DIM = 128
ROPE_DIM_PER_AXIS = HEAD_DIM // 3  # 42 dimensions per axis, 126 rotated in all
ROPE_AXIS_POSITIONS = (16, 56, 56)  # rows of the three angle tables
ROPE_THETA = 10000.0
LAYER_NORM_EPS = 1e-6
IS_JOINT_BLOCK = 1  # passed as a Python int

WORKLOADS = {
    "full": {"batch": 4, "grid": (4, 16, 16), "text_len": 256, "hidden": 3072, "joint_dim": 4096},
    # Same structure for CPU tests: 3 heads of 128.
    "small": {"batch": 1, "grid": (1, 4, 4), "text_len": 8, "hidden": 384, "joint_dim": 512},
}


def _rope3d(y, positions, tables):
    # y: [batch, tokens, heads, 128]; positions: three [tokens] int64; tables: three (cos, sin)
    # [rows, 21]. Rotates the pairs (2i, 2i + 1) of each axis's 42-dimensional slice.
    out = y.clone()
    for axis, (pos, (cos, sin)) in enumerate(zip(positions, tables)):
        lo = axis * ROPE_DIM_PER_AXIS
        part = y[..., lo : lo + ROPE_DIM_PER_AXIS]
        even, odd = part[..., 0::2], part[..., 1::2]
        c, s = cos[pos][None, :, None, :], sin[pos][None, :, None, :]  # [1, tokens, 1, 21]
        rotated = torch.stack([even * c - odd * s, even * s + odd * c], dim=-1)
        out[..., lo : lo + ROPE_DIM_PER_AXIS] = rotated.flatten(-2)
    return out


@torch.no_grad()
def reference(hidden_states, timestep_embedding, encoder_hidden_states, adaln_linear_weight,
              adaln_linear_bias, to_q_weight, to_q_bias, to_k_weight, to_k_bias, to_v_weight,
              to_v_bias, to_k_context_weight, to_k_context_bias, to_v_context_weight,
              to_v_context_bias, to_out_weight, to_out_bias, pos_idx_axis0, pos_idx_axis1,
              pos_idx_axis2, cos_axis0, sin_axis0, cos_axis1, sin_axis1, cos_axis2, sin_axis2,
              is_joint_block):
    # hidden_states: [batch, tokens, hidden]; timestep_embedding: [batch, hidden];
    # encoder_hidden_states: [batch, text, joint]; weights [out, in] and biases [out];
    # pos_idx_axis*: [tokens] int64; cos/sin_axis*: [rows, 21]; is_joint_block: int.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)

    def linear(y, weight, bias):
        return y @ weight.to(compute).T + bias.to(compute)

    x = hidden_states.to(compute)
    batch, tokens, hidden = x.shape
    heads = hidden // HEAD_DIM
    modulation = linear(torch.nn.functional.silu(timestep_embedding.to(compute)),
                        adaln_linear_weight, adaln_linear_bias)
    shift, scale, gate = modulation.chunk(6, dim=-1)[:3]  # the MLP's three are not used here
    x_mod = torch.nn.functional.layer_norm(x, (hidden,), eps=LAYER_NORM_EPS)
    x_mod = x_mod * (1 + scale[:, None]) + shift[:, None]

    def split(y):
        return y.view(batch, -1, heads, HEAD_DIM)

    q = split(linear(x_mod, to_q_weight, to_q_bias))
    k = split(linear(x_mod, to_k_weight, to_k_bias))
    v = split(linear(x_mod, to_v_weight, to_v_bias))
    positions = (pos_idx_axis0, pos_idx_axis1, pos_idx_axis2)
    tables = [(c.to(compute), s.to(compute)) for c, s in
              ((cos_axis0, sin_axis0), (cos_axis1, sin_axis1), (cos_axis2, sin_axis2))]
    q, k = _rope3d(q, positions, tables), _rope3d(k, positions, tables)
    if is_joint_block:
        enc = encoder_hidden_states.to(compute)
        k = torch.cat([split(linear(enc, to_k_context_weight, to_k_context_bias)), k], dim=1)
        v = torch.cat([split(linear(enc, to_v_context_weight, to_v_context_bias)), v], dim=1)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [batch, heads, n, 128]
    probs = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(HEAD_DIM), dim=-1)
    attn = (probs @ v).transpose(1, 2).reshape(batch, tokens, hidden)
    out = x + gate[:, None] * linear(attn, to_out_weight, to_out_bias)
    return out.to(hidden_states.dtype)


def rope_tables(device):
    """(cos, sin) [rows, 21] of each axis: row p holds p * 10000^(-2i / 42)."""
    freq = torch.arange(0, ROPE_DIM_PER_AXIS, 2, dtype=torch.float32, device=device)
    inv_freq = 1.0 / (ROPE_THETA ** (freq / ROPE_DIM_PER_AXIS))
    tables = []
    for rows in ROPE_AXIS_POSITIONS:
        angles = torch.outer(torch.arange(rows, dtype=torch.float32, device=device), inv_freq)
        tables += [angles.cos(), angles.sin()]
    return tables


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    batch, (frames, rows, cols) = p["batch"], p["grid"]
    tokens, hidden, joint = frames * rows * cols, p["hidden"], p["joint_dim"]

    def weight(out_features, in_features):
        return torch.randn(out_features, in_features, device=device) / math.sqrt(in_features)

    def bias(n):
        return 0.1 * torch.randn(n, device=device)

    hidden_states = torch.randn(batch, tokens, hidden, device=device)
    timestep_embedding = torch.randn(batch, hidden, device=device)
    encoder_hidden_states = torch.randn(batch, p["text_len"], joint, device=device)
    params = [weight(6 * hidden, hidden), bias(6 * hidden)]
    for in_features in (hidden, hidden, hidden, joint, joint, hidden):  # q, k, v, k/v ctx, out
        params += [weight(hidden, in_features), bias(hidden)]
    # Image tokens in raster order over the frames x rows x columns latent grid.
    index = torch.arange(tokens, device=device)
    positions = [index // (rows * cols), (index // cols) % rows, index % cols]
    return [hidden_states, timestep_embedding, encoder_hidden_states, *params, *positions,
            *rope_tables(device), IS_JOINT_BLOCK]
