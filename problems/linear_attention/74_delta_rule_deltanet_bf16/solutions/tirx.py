"""DeltaNet delta-rule recurrence (16 heads of 128, from a float32 state) in TVM TIRx.

One CTA per (sequence, head) keeps the 128 x 128 float32 state in registers for the whole
sequence: 512 threads, thread t owns value column j = t // 4 and key rows 32p .. 32p + 31 of it
(p = t % 4). Per token, with q and k L2-normalised (q also scaled by 128^-0.5):

    u_j = k . S[:, j],  w_j = q . S[:, j]      (32 products per thread, then a 4-lane
                                               butterfly over the column's threads)
    d_j = beta (v_j - u_j),  S[:, j] += d_j k,  o_j = q . S_new[:, j] = w_j + d_j (q . k)

Tokens come in blocks of TB: the CTA loads the block's q, k and v (16 threads per token, one
128-bit load each), normalises q and k (16-lane butterflies; the norms in float64, as NVRTC's
fast math approximates float32 sqrt and division), and stages them in shared memory as float32
rows padded to 144 (part p of a row starts at 36 p, so the 4 parts a warp reads with 128-bit
loads sit in distinct banks), with v, beta and q . k; then every thread runs the block's tokens
in order. A partial last block loads zeros past the end and runs only its tokens. o_j is
written by the p = 0 thread of each column; the state is written once at the end.
"""

import torch
import tvm
from tvm.script import tirx as T

HEAD = 128  # key and value dims
PARTS = 4  # threads per value column
ROWS = HEAD // PARTS  # key rows per thread: 32
THREADS = HEAD * PARTS  # 512
TB = 32  # tokens per block staged in shared memory
PART_STRIDE = ROWS + 4  # 36 floats per part in a staged row
PADDED = PARTS * PART_STRIDE  # 144
VEC = 8  # bf16 per 128-bit load
LANES_PER_TOKEN = HEAD // VEC  # 16
NORM_EPS = 1e-12  # F.normalize


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build(batch: int, heads: int, steps: int):
    blocks = (steps + TB - 1) // TB
    qscale = HEAD ** -0.5

    @T.prim_func
    def delta_rule(q_h: T.handle, k_h: T.handle, v_h: T.handle, beta_h: T.handle,
                   s0_h: T.handle, o_h: T.handle, s_h: T.handle):
        Q = T.match_buffer(q_h, (batch, heads, steps, HEAD), "bfloat16")
        K = T.match_buffer(k_h, (batch, heads, steps, HEAD), "bfloat16")
        V = T.match_buffer(v_h, (batch, heads, steps, HEAD), "bfloat16")
        BETA = T.match_buffer(beta_h, (batch, heads, steps), "bfloat16")
        S0 = T.match_buffer(s0_h, (batch, heads, HEAD, HEAD), "float32")
        OUT = T.match_buffer(o_h, (batch, heads, steps, HEAD), "bfloat16")
        S = T.match_buffer(s_h, (batch, heads, HEAD, HEAD), "float32")
        T.device_entry()
        bh = T.cta_id([batch * heads])
        tid = T.thread_id([THREADS])
        sq = T.alloc_shared((TB, PADDED), "float32")
        sk = T.alloc_shared((TB, PADDED), "float32")
        sv = T.alloc_shared((TB, HEAD), "bfloat16")
        sbeta = T.alloc_shared((TB,), "float32")
        sqk = T.alloc_shared((TB,), "float32")
        st = T.alloc_local((ROWS,), "float32")
        kr = T.alloc_local((ROWS,), "float32")
        qr = T.alloc_local((4,), "float32")
        qb = T.alloc_local((VEC,), "bfloat16")
        kb = T.alloc_local((VEC,), "bfloat16")
        vb = T.alloc_local((VEC,), "bfloat16")
        qn = T.alloc_local((VEC,), "float32")
        kn = T.alloc_local((VEC,), "float32")
        b = T.meta_var(bh // heads)
        h = T.meta_var(bh % heads)
        j = T.meta_var(tid // PARTS)
        p = T.meta_var(tid % PARTS)
        tok = T.meta_var(tid // LANES_PER_TOKEN)
        chunk = T.meta_var(tid % LANES_PER_TOKEN)
        slot = T.meta_var(chunk * VEC // ROWS * PART_STRIDE + chunk * VEC % ROWS)
        for r in T.unroll(ROWS):
            st[r] = S0[b, h, p * ROWS + r, j]
        for blk in range(blocks):
            T.cuda.cta_sync()  # the previous block is consumed
            t = T.meta_var(blk * TB + tok)
            for e in T.vectorized(VEC):
                qb[e] = T.if_then_else(t < steps, Q[b, h, t, chunk * VEC + e], T.bfloat16(0))
            for e in T.vectorized(VEC):
                kb[e] = T.if_then_else(t < steps, K[b, h, t, chunk * VEC + e], T.bfloat16(0))
            for e in T.vectorized(VEC):
                vb[e] = T.if_then_else(t < steps, V[b, h, t, chunk * VEC + e], T.bfloat16(0))
            pqq = T.float32(0)
            pkk = T.float32(0)
            pqk = T.float32(0)
            for e in T.unroll(VEC):
                pqq = pqq + T.float32(qb[e]) * T.float32(qb[e])
                pkk = pkk + T.float32(kb[e]) * T.float32(kb[e])
                pqk = pqk + T.float32(qb[e]) * T.float32(kb[e])
            ssq = T.cuda.warp_sum(pqq, width=LANES_PER_TOKEN)
            ssk = T.cuda.warp_sum(pkk, width=LANES_PER_TOKEN)
            sqk_raw = T.cuda.warp_sum(pqk, width=LANES_PER_TOKEN)
            inv_q = T.float32(T.float64(qscale) / T.max(T.sqrt(T.float64(ssq)), T.float64(NORM_EPS)))
            inv_k = T.float32(T.float64(1) / T.max(T.sqrt(T.float64(ssk)), T.float64(NORM_EPS)))
            for e in T.unroll(VEC):
                qn[e] = T.float32(qb[e]) * inv_q
                kn[e] = T.float32(kb[e]) * inv_k
            for e in T.vectorized(4):
                sq[tok, slot + e] = qn[e]
            for e in T.vectorized(4):
                sq[tok, slot + 4 + e] = qn[4 + e]
            for e in T.vectorized(4):
                sk[tok, slot + e] = kn[e]
            for e in T.vectorized(4):
                sk[tok, slot + 4 + e] = kn[4 + e]
            for e in T.vectorized(VEC):
                sv[tok, chunk * VEC + e] = vb[e]
            if chunk == 0:
                sqk[tok] = sqk_raw * inv_q * inv_k
            if tid < TB:
                sbeta[tid] = T.if_then_else(blk * TB + tid < steps,
                                            T.float32(BETA[b, h, blk * TB + tid]), T.float32(0))
            T.cuda.cta_sync()
            for tt in range(T.min(TB, steps - blk * TB)):
                # k is kept for the update (32 registers); q only enters w, 4 values at a time.
                pu = T.float32(0)
                pw = T.float32(0)
                for c in T.unroll(ROWS // 4):
                    for e in T.vectorized(4):
                        kr[c * 4 + e] = sk[tt, p * PART_STRIDE + c * 4 + e]
                    for e in T.vectorized(4):
                        qr[e] = sq[tt, p * PART_STRIDE + c * 4 + e]
                    for e in T.unroll(4):
                        pu = pu + st[c * 4 + e] * kr[c * 4 + e]
                        pw = pw + st[c * 4 + e] * qr[e]
                u = T.cuda.warp_sum(pu, width=PARTS)
                w = T.cuda.warp_sum(pw, width=PARTS)
                d = sbeta[tt] * (T.float32(sv[tt, j]) - u)
                for r in T.unroll(ROWS):
                    st[r] = st[r] + kr[r] * d
                if p == 0:
                    OUT[b, h, blk * TB + tt, j] = T.bfloat16(w + d * sqk[tt])
        for r in T.unroll(ROWS):
            S[b, h, p * ROWS + r, j] = st[r]

    return delta_rule


_CACHE = {}


def _kernel(batch, heads, steps, device):
    key = (batch, heads, steps, str(device))
    fn = _CACHE.get(key)
    if fn is None:
        mod = tvm.IRModule({"main": _build(batch, heads, steps)})
        fn = _CACHE[key] = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
    return fn


def solve(q, k, v, beta, initial_state):
    batch, heads, steps, dim = q.shape
    if dim != HEAD or v.shape[-1] != HEAD:
        raise ValueError("expects key and value dims 128")
    out = torch.empty_like(v)
    final_state = torch.empty_like(initial_state)
    _kernel(batch, heads, steps, q.device)(q, k, v, beta, initial_state, out, final_state)
    return out, final_state
