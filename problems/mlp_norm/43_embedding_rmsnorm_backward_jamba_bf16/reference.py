"""Backward pass of Jamba's token embedding followed by layer 0's input RMSNorm (vocabulary
65,536, hidden 4096), posed as SOL-ExecBench's recipe poses it: from the gradient of the norm's
output and what the forward pass saved (the float32 embedding rows the norm received and their
per-row rstd), produce the dense embedding-table gradient — every token's input gradient
scatter-added into the row of its id — and the norm weight's gradient.

Per token, with g = grad_output, n = hidden_states_fp32 * rstd:
    grad_h           = rstd * (g * w - n * mean(g * w * n))           (mean over hidden)
    grad_embedding   = zeros[vocab, hidden], grad_h added into row id of each token
    grad_norm_weight = sum over tokens of g * n
Computed in promote_types(dtype, float32) and rounded to grad_output's dtype once. Every id
receives its gradient (the published reference does not skip a padding index)."""

import torch

VOCAB = 65536  # Jamba's vocab_size: a constant of the problem (no input has it in its shape)
HIDDEN = 4096

WORKLOADS = {
    # 64 sequences x 256 tokens, vocabulary 65,536 x hidden 4096 (the published recipe's axes).
    "full": {"batch": 64, "seq_len": 256, "vocab_size": VOCAB, "hidden": HIDDEN},
    "small": {"batch": 4, "seq_len": 24, "vocab_size": VOCAB, "hidden": 128},
}


def reference(grad_output, input_ids, hidden_states_fp32, rstd, norm_weight):
    # grad_output: [batch, seq_len, hidden]; input_ids: [batch, seq_len] int64;
    # hidden_states_fp32: [batch, seq_len, hidden] float32; rstd: [batch, seq_len, 1] float32;
    # norm_weight: [hidden]. Returns (grad_embedding [vocab, hidden], grad_norm_weight [hidden]).
    compute = torch.promote_types(grad_output.dtype, torch.float32)
    hidden = grad_output.shape[-1]
    g = grad_output.to(compute).reshape(-1, hidden)
    r = rstd.to(compute).reshape(-1, 1)
    n = hidden_states_fp32.to(compute).reshape(-1, hidden) * r
    grad_norm_weight = (g * n).sum(dim=0)
    gn = g * norm_weight.to(compute)  # g may be the input itself (float64 anchor): never in place
    dot = (gn * n).mean(dim=-1, keepdim=True)
    grad_h = gn.sub_(n.mul_(dot)).mul_(r)
    del n
    grad_embedding = torch.zeros(VOCAB, hidden, dtype=compute, device=grad_output.device)
    grad_embedding.index_add_(0, input_ids.reshape(-1), grad_h)
    return grad_embedding.to(grad_output.dtype), grad_norm_weight.to(grad_output.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, v, h = p["batch"], p["seq_len"], p["vocab_size"], p["hidden"]

    # As the recipe draws them: a unit-normal output gradient (bf16), token ids uniform over the
    # vocabulary, the norm's float32 input rows unit normal, their rstd from a per-row variance
    # near 1 drawn independently, and the gain near its trained regime.
    grad_output = torch.randn(b, s, h, device=device, dtype=torch.bfloat16)
    input_ids = torch.randint(0, v, (b, s), device=device, dtype=torch.int64)
    hidden_states_fp32 = torch.randn(b, s, h, device=device, dtype=torch.float32)
    variance = torch.rand(b, s, 1, device=device, dtype=torch.float32) * 0.5 + 0.75
    rstd = torch.rsqrt(variance + 1e-6)
    norm_weight = torch.randn(h, device=device, dtype=torch.bfloat16) * 0.1 + 1.0
    return [grad_output, input_ids, hidden_states_fp32, rstd, norm_weight]
