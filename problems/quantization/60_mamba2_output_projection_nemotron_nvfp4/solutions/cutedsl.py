"""NVFP4 dequantise + GEMM (Nemotron-H Mamba2 out_proj, pre-quantised operands) in CuTe DSL.

One DSL kernel decodes both operands, cuBLAS multiplies them. The decode kernel gives each
thread one 16-value block: it loads the block's 8 code bytes (one 64-bit load) and its e4m3
scale, decodes every nibble (low nibble first) to its e2m1 value, multiplies by the scale in
float32 and stores the 16 products as bfloat16 (two 128-bit stores). The global decode scales
stay out: an e2m1 value times an e4m3 scale has at most 6 significant bits, so these products
are exact in bfloat16. The GEMM then runs on bfloat16 tensor cores (`torch.bmm(..., out_dtype=
torch.float32)`: float32 accumulation and output) without rounding its operands, and the
product of the two global decode scales multiplies the result (one float32 rounding). The
process's matmul settings are left as they are. The eager reference dequantises with several
elementwise passes and multiplies in float32 without tensor cores.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float8E4M3FN, Float32, Int32, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

SF_VEC = 16  # values per e4m3 scale
THREADS = 256
STORE = 8  # bfloat16 per 128-bit store


@cute.kernel
def _decode_kernel(mCodes: cute.Tensor, mScale: cute.Tensor, mOut: cute.Tensor):
    tx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    rows, blocks = mScale.shape
    idx = bx * THREADS + tx
    if idx < rows * blocks:
        row = idx // blocks
        blk = idx % blocks
        load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Uint8, num_bits_per_copy=64)
        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
        src = cute.local_tile(mCodes[row, None], (SF_VEC // 2,), (blk,))
        codes = cute.make_fragment_like(src)
        cute.copy(load, src, codes)
        scale = mScale[row, blk].to(Float32)
        for q in cutlass.range_constexpr(SF_VEC // STORE):
            dst = cute.local_tile(mOut[row, None], (STORE,), (blk * (SF_VEC // STORE) + q,))
            vals = cute.make_rmem_tensor(cute.make_layout((STORE,)), Float32)
            for i in cutlass.range_constexpr(STORE):
                j = q * STORE + i  # the value's position in the block: byte j // 2, low nibble first
                code = (codes[j // 2].to(Int32) >> (4 * (j % 2))) & 15
                e = (code >> 1) & 3
                man = code & 1
                # e2m1: 0.5 * man for e = 0, else (2 + man) * 2^(e - 2).
                mag = cutlass.select_(
                    e == 0,
                    Float32(0.5) * man.to(Float32),
                    (man + 2).to(Float32) * (Int32(1) << e).to(Float32) * Float32(0.25),
                )
                vals[i] = cutlass.select_((code & 8) != 0, -mag, mag) * scale
            out = cute.make_fragment_like(dst)
            out.store(vals.load().to(BFloat16))  # exact: at most 6 significant bits
            cute.copy(store, out, dst)


@cute.jit
def _decode(mCodes: cute.Tensor, mScale: cute.Tensor, mOut: cute.Tensor, stream: cuda.CUstream):
    # The scales arrive as bytes (a uint8 view of the float8_e4m3fn tensor): read them as e4m3.
    scale = cute.make_tensor(cute.recast_ptr(mScale.iterator, dtype=Float8E4M3FN), mScale.layout)
    rows, blocks = mScale.shape
    _decode_kernel(mCodes, scale, mOut).launch(
        grid=(cute.ceil_div(rows * blocks, THREADS), 1, 1), block=(THREADS, 1, 1), stream=stream
    )


def _fake(dtype, shape, align):
    return make_fake_compact_tensor(dtype, shape, stride_order=(1, 0), assumed_align=align)


_compiled = {}


def _decoder(rows, cols):
    key = (rows, cols)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = cute.compile(
            _decode,
            _fake(Uint8, (rows, cols // 2), 8),
            _fake(Uint8, (rows, cols // SF_VEC), 1),
            _fake(BFloat16, (rows, cols), 16),
            make_fake_stream(use_tvm_ffi_env_stream=True),
            options="--enable-tvm-ffi",
        )
    return fn


def _decoded(codes, scale):
    """codes [..., K / 2] packed e2m1, scale [..., K / 16] e4m3 -> e2m1 * scale [rows, K] bfloat16."""
    cols = codes.shape[-1] * 2
    if cols % SF_VEC:
        raise ValueError(f"K = {cols}: expected a multiple of {SF_VEC}")
    flat = codes.view(torch.uint8).reshape(-1, cols // 2)
    rows = flat.shape[0]
    out = torch.empty(rows, cols, dtype=torch.bfloat16, device=codes.device)
    _decoder(rows, cols)(flat, scale.view(torch.uint8).reshape(rows, -1), out)
    return out


def _bmm_float32(a, b):
    """a @ b of bfloat16 operands in float32: on a GPU, bfloat16 tensor cores with float32
    accumulation and output; torch has no such CPU kernel (`mkb check` runs the host code on the
    CPU), where the exact operands are widened to float32 instead."""
    if a.is_cuda:
        return torch.bmm(a, b, out_dtype=torch.float32)
    return torch.bmm(a.float(), b.float())


def solve(
    hidden_states,
    hidden_states_scale,
    global_decode_scale_input,
    weight,
    weight_scale,
    global_decode_scale_weight,
):
    batch, tokens, _ = hidden_states.shape
    a = _decoded(hidden_states, hidden_states_scale).view(batch, tokens, -1)
    w = _decoded(weight, weight_scale).view(batch, weight.shape[1], -1)
    out = _bmm_float32(a, w.transpose(1, 2))
    return out.mul_(global_decode_scale_input * global_decode_scale_weight)
