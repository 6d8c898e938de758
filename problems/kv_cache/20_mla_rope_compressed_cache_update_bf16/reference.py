"""The MLA attention prologue of a DeepSeek-style model as vLLM runs it, with the shapes of vLLM's
MLA RoPE + KV-cache concatenation pass: the low-rank projection output holds the compressed
query, the latent KV and the shared RoPE key; the compressed query goes through q_b_proj (a
GEMM) into 16 heads of 128 "nope" + 64 RoPE dims; the RoPE parts of q and of the shared key are
rotated (NeoX halves); the latent KV and the rotated key are written into the compressed paged
MLA cache at the slots of slot_mapping (-1: a padding token, not cached). Returns the query and
the updated cache.

Numerics follow the published definition: the GEMM's result and the rotation are in the input
dtype (bf16), as eager vLLM computes them."""

import torch
import torch.nn.functional as F

QK_NOPE_DIM = 128
ROPE_DIM = 64
ROPE_BASE = 10000.0

WORKLOADS = {
    # q_lora_rank 1536, kv_lora_rank 512, 16 heads; 2,048 tokens (1..128 padding) into a
    # 256-block x 16-slot cache; positions below 4,096.
    "full": {"num_tokens": 2048, "num_heads": 16, "q_lora_rank": 1536, "kv_lora_rank": 512,
             "num_blocks": 256, "block_size": 16, "max_position": 4096, "max_pads": 128},
    "small": {"num_tokens": 16, "num_heads": 2, "q_lora_rank": 64, "kv_lora_rank": 64,
              "num_blocks": 4, "block_size": 16, "max_position": 64, "max_pads": 4},
}


def _rotate_neox(x, cos, sin):
    # x: [..., 64] in its own dtype; (x1, x2) halves -> (x1 cos - x2 sin, x2 cos + x1 sin), each
    # product and sum rounded to x's dtype.
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


@torch.no_grad()
def reference(qkv_lora, q_b_weight, positions, cos_sin_cache, slot_mapping, kv_cache):
    # qkv_lora: [T, q_lora + kv_lora + 64] = q_c | kv_c | k_pe; q_b_weight: [H * 192, q_lora];
    # kv_cache: [blocks, block_size, 1, kv_lora + 64], updated in place and returned.
    num_tokens = qkv_lora.shape[0]
    q_lora_rank = q_b_weight.shape[1]
    kv_lora_rank = kv_cache.shape[-1] - ROPE_DIM
    block_size = kv_cache.shape[1]
    num_heads = q_b_weight.shape[0] // (QK_NOPE_DIM + ROPE_DIM)
    q_c, kv_c, k_pe = qkv_lora.split([q_lora_rank, kv_lora_rank, ROPE_DIM], dim=-1)
    q = F.linear(q_c, q_b_weight).view(num_tokens, num_heads, QK_NOPE_DIM + ROPE_DIM)
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)  # [T, 32] each
    q_pe = _rotate_neox(q[..., QK_NOPE_DIM:], cos[:, None], sin[:, None])
    k_pe = _rotate_neox(k_pe, cos, sin)
    q_out = torch.cat((q[..., :QK_NOPE_DIM], q_pe), dim=-1)
    cached = slot_mapping >= 0
    slots = slot_mapping[cached]
    blocks, offsets = slots // block_size, slots % block_size
    kv_cache[blocks, offsets, 0] = torch.cat((kv_c[cached], k_pe[cached]), dim=-1)
    return q_out, kv_cache


def _cos_sin_cache(max_position, device):
    # Row p = cos(p * f) | sin(p * f), f_i = base^(-2i / 64), computed in float32, stored in bf16.
    inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, ROPE_DIM, 2, device=device, dtype=torch.float32) / ROPE_DIM))
    angles = torch.outer(torch.arange(max_position, device=device, dtype=torch.float32), inv_freq)
    return torch.cat((angles.cos(), angles.sin()), dim=-1).to(torch.bfloat16)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h = p["num_tokens"], p["num_heads"]
    width = p["q_lora_rank"] + p["kv_lora_rank"] + ROPE_DIM
    qkv_lora = torch.randn(t, width, device=device).to(torch.bfloat16)
    # q_b_proj weight of the usual 0.02 init scale, drawn in bf16 and scaled in bf16.
    q_b_weight = torch.randn(h * (QK_NOPE_DIM + ROPE_DIM), p["q_lora_rank"], device=device).to(torch.bfloat16) * 0.02
    positions = torch.randint(0, p["max_position"], (t,), device=device, dtype=torch.int64)
    cos_sin_cache = _cos_sin_cache(p["max_position"], device)
    # Distinct slots scattered over the cache; the batch's last 1..max_pads tokens are padding.
    slot_mapping = torch.randperm(p["num_blocks"] * p["block_size"], device=device)[:t]
    pads = int(torch.randint(1, p["max_pads"] + 1, (1,), device=device))
    slot_mapping[t - pads :] = -1
    kv_cache = torch.randn(p["num_blocks"], p["block_size"], 1, p["kv_lora_rank"] + ROPE_DIM,
                           device=device).to(torch.bfloat16)
    return [qkv_lora, q_b_weight, positions, cos_sin_cache, slot_mapping, kv_cache]
