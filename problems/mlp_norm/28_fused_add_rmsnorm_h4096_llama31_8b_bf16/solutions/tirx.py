"""Fused residual add + RMSNorm (Llama-3.1-8B, hidden 4096, bf16) in TVM TIRx.

One CTA per token row. Each thread owns `iters` 128-bit chunks of the row (8 bf16): it loads
hidden_states and residual with vector loads, forms the sum in float32 and keeps it in registers.
The sum of squares is reduced across the CTA (warp shuffles, then one shared-memory step), and the
same registers are scaled by rsqrt(mean + eps) and the weight and written as `out` -- the norm is
taken over the unrounded float32 sum, as the published definition does.

Traffic is the minimum: read both inputs once, write out once (~357 MB for the full workload,
~0.08 ms at HBM speed), where eager PyTorch runs a chain of elementwise and reduction kernels with
float32 intermediates.
"""

import torch
import tvm
from tvm.script import tirx as T

EPS = 1e-5


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build(hidden: int):
    vec = 8 if hidden % 8 == 0 else 2  # bf16 lanes per vector access (16 B when 8)
    nvec = hidden // vec
    threads = 32
    while threads < 512 and threads * 2 <= nvec:
        threads *= 2
    iters = (nvec + threads - 1) // threads
    warps = threads // 32
    inv_hidden = 1.0 / hidden

    @T.prim_func
    def fused_add_rmsnorm(x_h: T.handle, r_h: T.handle, w_h: T.handle, o_h: T.handle):
        n = T.int32()
        X = T.match_buffer(x_h, (n, hidden), "bfloat16")
        R = T.match_buffer(r_h, (n, hidden), "bfloat16")
        W = T.match_buffer(w_h, (hidden,), "bfloat16")
        Y = T.match_buffer(o_h, (n, hidden), "bfloat16")
        T.device_entry()
        row = T.cta_id([n])
        tid = T.thread_id([threads])
        scratch = T.alloc_shared((warps,), "float32")
        s = T.alloc_local((iters * vec,), "float32")  # the float32 sums this thread owns
        a = T.alloc_local((vec,), "bfloat16")
        b = T.alloc_local((vec,), "bfloat16")
        acc = T.float32(0)
        for it in T.unroll(iters):
            col = T.meta_var((it * threads + tid) * vec)
            if col < hidden:
                for v in T.vectorized(vec):
                    a[v] = X[row, col + v]
                for v in T.vectorized(vec):
                    b[v] = R[row, col + v]
                for v in T.unroll(vec):
                    s[it * vec + v] = T.float32(a[v]) + T.float32(b[v])
                    acc = acc + s[it * vec + v] * s[it * vec + v]
        total = T.cuda.cta_sum(acc, warps, scratch.ptr_to([0]))
        inv_rms = T.rsqrt(total * T.float32(inv_hidden) + T.float32(EPS))
        for it in T.unroll(iters):
            col = T.meta_var((it * threads + tid) * vec)
            if col < hidden:
                for v in T.vectorized(vec):
                    b[v] = W[col + v]
                for v in T.unroll(vec):
                    a[v] = T.bfloat16(s[it * vec + v] * inv_rms * T.float32(b[v]))
                for v in T.vectorized(vec):
                    Y[row, col + v] = a[v]

    return fused_add_rmsnorm


_KERNELS = {}


def _kernel(hidden: int, device):
    key = (hidden, str(device))
    fn = _KERNELS.get(key)
    if fn is None:
        mod = tvm.IRModule({"main": _build(hidden)})
        fn = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
        _KERNELS[key] = fn
    return fn


def solve(hidden_states, residual, weight):
    out = torch.empty_like(hidden_states)
    _kernel(hidden_states.shape[1], hidden_states.device)(hidden_states, residual, weight, out)
    return out
