"""A kernel.py for problem 28 (fused add + RMSNorm, small workload) with a Python syntax error
(a missing colon, line marked below): Python's parser rejects the file before anything runs."""

import torch
import tvm
from tvm.script import tirx as T


def build(hidden: int):
    threads = hidden // 8  # one 8-wide bf16 vector per thread

    @T.prim_func
    def fused_add_rmsnorm(x_h: T.handle, r_h: T.handle, w_h: T.handle, o_h: T.handle,
                          s_h: T.handle):
        n = T.int32()
        X = T.match_buffer(x_h, (n, hidden), "bfloat16")
        R = T.match_buffer(r_h, (n, hidden), "bfloat16")
        W = T.match_buffer(w_h, (hidden,), "bfloat16")
        Y = T.match_buffer(o_h, (n, hidden), "bfloat16")
        S = T.match_buffer(s_h, (n, hidden), "bfloat16")
        T.device_entry()
        row = T.cta_id([n])
        tid = T.thread_id([threads])
        scratch = T.alloc_shared((threads // 32,), "float32")
        s = T.alloc_local((8,), "float32")
        acc = T.float32(0)
        for v in T.unroll(8)  # <- the syntax error
            s[v] = T.float32(X[row, tid * 8 + v]) + T.float32(R[row, tid * 8 + v])
            acc = acc + s[v] * s[v]
            S[row, tid * 8 + v] = T.bfloat16(s[v])
        total = T.cuda.cta_sum(acc, threads // 32, scratch.ptr_to([0]))
        inv_rms = T.rsqrt(total / T.float32(hidden) + T.float32(1e-5))
        for v in T.unroll(8):
            Y[row, tid * 8 + v] = T.bfloat16(s[v] * inv_rms * T.float32(W[tid * 8 + v]))

    return fused_add_rmsnorm


_KERNELS = {}


def solve(x, residual, weight):
    hidden = x.shape[1]
    if hidden not in _KERNELS:
        major, minor = torch.cuda.get_device_capability(x.device)
        target = tvm.target.Target({"kind": "cuda", "arch": f"sm_{major}{minor}a"})
        _KERNELS[hidden] = tvm.compile(tvm.IRModule({"main": build(hidden)}), target=target,
                                       tir_pipeline="tirx")["main"]
    out, residual_out = torch.empty_like(x), torch.empty_like(residual)
    _KERNELS[hidden](x, residual, weight, out, residual_out)
    return out, residual_out
