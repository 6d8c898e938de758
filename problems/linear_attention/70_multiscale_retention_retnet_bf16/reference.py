"""RetNet's multi-scale retention in its parallel form (flash-linear-attention's
naive_retention), with RetNet's head geometry: 8 heads of key dimension 256 and value dimension
512. Head h decays with gamma_h = 1 - 2^(-5 - h); the causal score matrix is weighted by
gamma_h^(i - j):

    o_i = sum_{j <= i} gamma_h^(i - j) (q_i . k_j / sqrt(256)) v_j

with no softmax and no normalisation. Returns the output rounded to the input dtype."""

import torch

WORKLOADS = {
    "full": {"batch": 8, "heads": 8, "seq_len": 1024, "key_dim": 256, "value_dim": 512},
    "small": {"batch": 2, "heads": 8, "seq_len": 40, "key_dim": 256, "value_dim": 512},
}


@torch.no_grad()
def reference(q, k, v):
    # q, k: [B, H, T, K]; v: [B, H, T, V].
    dtype = q.dtype
    compute = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(compute), k.to(compute), v.to(compute)
    heads, steps, key_dim = q.shape[1], q.shape[2], q.shape[3]
    # log2(gamma_h), then the decay mask gamma_h^(i - j) for j <= i, 0 above the diagonal.
    log2_gamma = torch.log2(1 - torch.pow(2.0, -5.0 - torch.arange(heads, dtype=compute, device=q.device)))
    position = torch.arange(steps, dtype=compute, device=q.device)
    distance = position[:, None] - position[None, :]
    decay = torch.exp2(distance * log2_gamma[:, None, None]) * (distance >= 0)  # [H, T, T]
    scores = torch.einsum("bhid,bhjd->bhij", q * key_dim ** -0.5, k) * decay
    return torch.einsum("bhij,bhjd->bhid", scores, v).to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, h, t = p["batch"], p["heads"], p["seq_len"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    q = torch.randn(b, h, t, p["key_dim"], **bf16)
    k = torch.randn(b, h, t, p["key_dim"], **bf16)
    v = torch.randn(b, h, t, p["value_dim"], **bf16)
    return [q, k, v]
