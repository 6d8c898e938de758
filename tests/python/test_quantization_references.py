"""The quantization references (problems 52-61) against independent statements of what they
compute: the NVFP4 and FP8 codecs every problem carries (each reference file is self-contained,
so each copy is checked), the input conditioning that keeps NVFP4 rounding decisions clear of
ties, 55's merge against the published per-row loop, and the tolerance: kernels computing the
same thing in another legitimate order (FP8 partial sums per K slab, NVFP4 products with the
global scales applied last, quantisation arithmetic reordered, e4m3 roundings landing on the
other neighbour) pass the judge's rule on the small workload."""

import math

import metakernelbench as mkb
import pytest
import torch
import torch.nn.functional as F
from metakernelbench import _core
from metakernelbench.judge import values

SUITE = {problem.number: problem for problem in mkb.load_suite()}
NVFP4 = [55, 57, 58, 59, 60, 61]
FP8 = [52, 53, 54, 56]
SELF_QUANTISED = {55: [2], 57: [0], 58: [0, 1], 59: [0], 61: [0]}  # inputs kept clear of ties

# e2m1 rounding as the published reference writes it: value ranges per code (ties to even).
E2M1_RANGES = [  # (low, low inclusive, high, high inclusive, code)
    (0.0, True, 0.25, True, 0),
    (0.25, False, 0.75, False, 1),
    (0.75, True, 1.25, True, 2),
    (1.25, False, 1.75, False, 3),
    (1.75, True, 2.5, True, 4),
    (2.5, False, 3.5, False, 5),
    (3.5, True, 5.0, True, 6),
    (5.0, False, math.inf, False, 7),
]
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _code(v: float) -> int:
    if v == 0:
        return 0
    m = abs(v)
    for lo, lo_in, hi, hi_in, code in E2M1_RANGES:
        if (m > lo or (lo_in and m == lo)) and (m < hi or (hi_in and m == hi)):
            return code | (8 if v < 0 else 0)
    raise AssertionError(v)


def _module(n):
    return SUITE[n].module


def _outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def _factor(problem, outs, expected, anchor) -> float:
    """The largest factor over the judge's allowance among the outputs (<= 1 passes)."""
    worst = 0.0
    for o, e, a in zip(outs, expected, anchor, strict=True):
        assert o.shape == e.shape and o.dtype == e.dtype
        leaf = values.comparison_leaf("", o.contiguous(), e.contiguous(), a.contiguous(), False)
        worst = max(worst, _core.compare_tensor(*leaf[1:])["factor_over"])
    return worst


def _judge(problem, kernel, seeds=(1, 2, 3)):
    factors = []
    for seed in seeds:
        inputs = problem.make_inputs("small", seed=seed)
        expected = _outputs(problem.reference(*[values.clone(x) for x in inputs]))
        anchor = _outputs(problem.reference(*values.upcast(inputs)))
        factors.append(_factor(problem, _outputs(kernel(*inputs)), expected, anchor))
    return max(factors)


# ---------------------------------------------------------------- the NVFP4 codec


def _probe_values():
    """Every e2m1 value, every rounding bound and its float32 neighbours, both signs."""
    bounds = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    vals = set(E2M1)
    for b in bounds:
        t = torch.tensor(b, dtype=torch.float32)
        vals |= {
            b,
            torch.nextafter(t, torch.tensor(0.0)).item(),
            torch.nextafter(t, torch.tensor(9.0)).item(),
        }
    vals |= {0.1, 0.6, 2.2, 4.5, 5.5}
    out = sorted(vals) + [-v for v in sorted(vals) if v != 0]
    return out + [0.0] * (-len(out) % 15)


@pytest.mark.parametrize("n", NVFP4)
def test_nvfp4_codes_round_to_nearest_even_and_pack_low_nibble_first(n):
    m = _module(n)
    probes = _probe_values()
    # Blocks of 16: 15 probes and a 6.0, so that max|x| = 6 (encode = 448), every block scale is
    # 6 / 6 * 448 = 448 (exact in e4m3) and the values are quantised as they are.
    rows = [probes[i : i + 15] + [6.0] for i in range(0, len(probes), 15)]
    x = torch.tensor(rows, dtype=torch.float32).reshape(1, 1, -1)
    codes, scales, decode = m.nvfp4_quantize(x)
    assert codes.dtype == torch.float4_e2m1fn_x2 and codes.shape == (1, 1, x.shape[-1] // 2)
    assert torch.all(scales.float() == 448.0) and decode.item() == pytest.approx(1 / 448)
    byte = codes.view(torch.uint8).flatten().tolist()
    got = [c for b in byte for c in (b & 15, b >> 4)]
    assert got == [_code(v) for v in x.flatten().tolist()]
    # Decoding gives each code's value times the block's scale times the global decode scale.
    back = m.nvfp4_dequantize(codes, scales, decode, torch.float64).flatten()
    table = E2M1 + [-v for v in E2M1]
    want = torch.tensor([table[c] for c in got], dtype=torch.float64) * (448 * decode.double().item())
    assert torch.equal(back, want)


@pytest.mark.parametrize("n", NVFP4)
def test_nvfp4_scales_follow_the_recipe(n):
    m = _module(n)
    x = torch.randn(2, 3, 64, dtype=torch.float64)
    codes, scales, decode = m.nvfp4_quantize(x)
    amax = x.abs().max()
    encode = 448 * 6 / amax
    assert decode.item() == pytest.approx((1 / encode).item(), rel=1e-15)
    block = (x.reshape(2, 3, 4, 16).abs().amax(-1) / 6 * encode).to(torch.float8_e4m3fn)
    assert torch.equal(scales.view(torch.uint8), block.view(torch.uint8))
    err = (m.nvfp4_dequantize(codes, scales, decode, torch.float64) - x).abs()
    # At most half the e2m1 step (2 at the top) of the block's scale, plus the e4m3 rounding.
    assert torch.all(err <= (scales.double() * decode.double()).repeat_interleave(16, -1) * 1.0 + 1e-12)
    zero = m.nvfp4_quantize(torch.zeros(1, 1, 32))
    assert torch.all(zero[0].view(torch.uint8) == 0) and zero[2].item() == 1.0  # encode 1 for zeros


@pytest.mark.parametrize("n", sorted(SELF_QUANTISED))
def test_make_inputs_keeps_self_quantised_inputs_clear_of_ties(n):
    m, problem = _module(n), SUITE[n]
    for seed in (1, 2):
        inputs = problem.make_inputs("small", seed=seed)
        for i in SELF_QUANTISED[n]:
            assert not m.nvfp4_ties(inputs[i]).any(), problem.message.inputs[i].name


def test_tie_clearing_redraws_exactly_the_values_near_ties():
    m = _module(59)
    # A bf16 draw has ties (bf16 values land on e2m1 bounds after scaling): conditioning is needed.
    torch.manual_seed(0)
    x = torch.randn(64, 256).to(torch.bfloat16)
    ties = m.nvfp4_ties(x)
    assert ties.any()
    cleared = m.clear_of_ties(x, lambda k: torch.randn(k).to(torch.bfloat16))
    assert not m.nvfp4_ties(cleared).any()
    kept = ~ties & (cleared == x)
    assert kept.sum() >= (~ties).sum() * 0.95  # values clear of ties stay (unless the max moved)
    # An exact tie: a value whose scaled magnitude is 0.75 in a block whose scale is 448.
    block = torch.tensor([[6.0, 0.75] + [1.0] * 14], dtype=torch.float32)
    assert m.nvfp4_ties(block)[0, 1] and not m.nvfp4_ties(block)[0, 2]
    meta = torch.empty(4, 16, device="meta")
    assert m.clear_of_ties(meta, lambda k: None) is meta


# ---------------------------------------------------------------- the FP8 codec


@pytest.mark.parametrize("n", FP8)
def test_fp8_block_quantisation_follows_the_recipe(n):
    m = _module(n)
    x = torch.randn(256, 384, dtype=torch.float32)
    x[:128, :128] = 0  # an all-zero weight block
    for rows in (1, 128):
        codes, scales = m.fp8_quantize(x, rows)
        blocks = x.reshape(256 // rows, rows, 3, 128)
        want = torch.clamp(blocks.abs().amax(dim=(1, 3)) / 448, min=1e-12)
        assert codes.dtype == torch.float8_e4m3fn and torch.equal(scales, want)
        want_codes = (blocks / want[:, None, :, None]).to(torch.float8_e4m3fn).reshape(256, 384)
        assert torch.equal(codes.view(torch.uint8), want_codes.view(torch.uint8))
        back = m.fp8_dequantize(codes, scales, rows, torch.float64)
        assert torch.equal(
            back, codes.double() * scales.double().repeat_interleave(rows, 0).repeat_interleave(128, 1)
        )


# ---------------------------------------------------------------- 55's merge


def test_55_merges_vision_tokens_as_the_published_row_loop_does():
    problem, m = SUITE[55], _module(55)
    inputs = problem.make_inputs("small", seed=4)
    ids, table, feats, codes, scales, glob, bias, mask = inputs
    out = problem.reference(*inputs)
    compute = torch.float32
    decode = torch.tensor(glob, dtype=torch.float32)
    vision = m.nvfp4_bmm(
        m.nvfp4_quantize(feats.float()),
        (codes.expand(feats.shape[0], -1, -1), scales.expand(feats.shape[0], -1, -1), decode),
        compute,
    ).to(table.dtype)
    vision = (vision.float() + bias.float()).to(table.dtype)
    want = F.embedding(ids, table)
    for b in range(ids.shape[0]):
        positions = mask[b].nonzero(as_tuple=True)[0]
        count = min(positions.numel(), vision.shape[1])
        want[b, positions[:count]] = vision[b, :count]
    assert torch.equal(out, want)
    assert int(mask.sum(dim=1).min()) == int(mask.sum(dim=1).max()) == feats.shape[1]


# ---------------------------------------------------------------- the tolerance admits other orders


def _fp8_slab_gemm(a_codes, a_scale, b_codes, b_scale):
    """DeepGEMM's scheme in float32: per 128-wide K slab, the codes' products summed, scaled by
    the two block scales and accumulated."""
    m, k = a_codes.shape
    n = b_codes.shape[0]
    acc = torch.zeros(m, n, dtype=torch.float32)
    for s in range(k // 128):
        part = a_codes[:, s * 128 : (s + 1) * 128].float() @ b_codes[:, s * 128 : (s + 1) * 128].float().T
        acc += part * a_scale[:, s : s + 1].float() * b_scale[:, s].float().repeat_interleave(128)[None, :n]
    return acc


def _fp8_quantize_by_reciprocal(x, rows, flip_near_ties=0.0):
    """The recipe's block quantisation computed as x * (1 / scale); with flip_near_ties, that
    share of the values nearest an e4m3 rounding midpoint land on the other neighbour."""
    r, c = x.shape
    blocks = x.float().reshape(r // rows, rows, c // 128, 128)
    scale = torch.clamp(blocks.abs().amax(dim=(1, 3)) * (1 / 448), min=1e-12)
    scaled = (blocks * (1 / scale)[:, None, :, None]).clamp(-448, 448).reshape(r, c)
    codes = scaled.to(torch.float8_e4m3fn)
    if flip_near_ties:
        # The other neighbour of each value: the next e4m3 magnitude away from the rounded one,
        # towards the exact value (e4m3fn is sign-magnitude: magnitudes order as their bits).
        exact, near = scaled.double().abs(), codes.double().abs()
        bits = codes.view(torch.uint8).int()
        mag = bits & 0x7F
        other = torch.where(exact > near, mag + 1, torch.where(exact < near, mag - 1, mag))
        other = torch.where(other >= 0x7F, mag, other)  # never onto the NaN pattern
        other_bits = ((bits & 0x80) | other).to(torch.uint8)
        other_value = other_bits.view(torch.float8_e4m3fn).double().abs()
        gap = ((exact - near).abs() / (other_value - near).abs().clamp(min=1e-30)).flatten()
        gap[(other == mag).flatten()] = 0
        chosen = gap.topk(int(gap.numel() * flip_near_ties)).indices  # the nearest to a midpoint
        flat = codes.view(torch.uint8).flatten().clone()
        flat[chosen] = other_bits.flatten()[chosen]
        codes = flat.view(r, c).view(torch.float8_e4m3fn)
    return codes, scale


# (share of e4m3 roundings flipped, bound on the factor over the allowance): with none flipped the
# other order keeps well inside the allowance; with 0.1% of the roundings nearest a midpoint flipped
# (far more than float32 reordering flips) it still passes.
FLIP_CASES = [(0.0, 0.5), (0.001, 1.0)]


def _fp8_linear_kernel(x, w, bias, flip):
    qa, sa = _fp8_quantize_by_reciprocal(x, 1, flip)
    qw, sw = _fp8_quantize_by_reciprocal(w, 128, flip)
    y = _fp8_slab_gemm(qa, sa, qw, sw)
    return y if bias is None else y + bias.float()


@pytest.mark.parametrize(("flip", "bound"), FLIP_CASES)
def test_52_passes_with_slab_gemm_reciprocal_quantisation_and_flipped_roundings(flip, bound):
    problem = SUITE[52]
    factor = _judge(problem, lambda x, w, b: _fp8_linear_kernel(x, w, b, flip).to(x.dtype))
    assert factor <= bound, factor


def test_53_passes_with_the_slab_gemm():
    problem = SUITE[53]

    def kernel(x, sx, wg, sg, wu, su):
        gate, up = _fp8_slab_gemm(x, sx, wg, sg), _fp8_slab_gemm(x, sx, wu, su)
        return (F.silu(gate) * up).to(torch.bfloat16)

    assert _judge(problem, kernel) <= 0.5


@pytest.mark.parametrize(("flip", "bound"), FLIP_CASES)
def test_54_passes_with_slab_gemm_reciprocal_quantisation_and_flipped_roundings(flip, bound):
    problem, m = SUITE[54], _module(54)

    def kernel(x, wq, wk, wv, bq, bk, bv, nq, nk, eps):
        b, s, h = x.shape
        flat = x.reshape(-1, h)
        outs = []
        for w, bias, norm in ((wq, bq, nq), (wk, bk, nk), (wv, bv, None)):
            y = _fp8_linear_kernel(flat, w, bias, flip).to(x.dtype).view(b, s, -1, 128)
            if norm is not None:
                y = m._rms_norm(y, norm, eps, torch.float32)
            outs.append(y.transpose(1, 2))
        return tuple(outs)

    factor = _judge(problem, kernel)
    assert factor <= bound, factor


@pytest.mark.parametrize(("flip", "bound"), FLIP_CASES)
def test_56_passes_with_slab_gemm_reciprocal_quantisation_and_flipped_roundings(flip, bound):
    problem = SUITE[56]

    def kernel(x, wa, ln, wb, eps):
        b, s, h = x.shape
        c = _fp8_linear_kernel(x.reshape(-1, h), wa, None, flip).to(x.dtype)
        r = ln.shape[0]
        latent = c[:, :r].float()
        n = (latent * torch.rsqrt(latent.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
        normed = (ln.float() * n.float()).to(x.dtype)
        kv = _fp8_linear_kernel(normed, wb, None, flip).to(x.dtype)
        return kv.view(b, s, -1, 256), c[:, r : r + 64].reshape(b, s, 1, 64)

    factor = _judge(problem, kernel)
    assert factor <= bound, factor


def _split_bf16_products(a, b):
    """a @ b^T as 53's reference solutions compute it on bfloat16 tensor cores: each float32
    operand split into hi = bf16(v) and lo = bf16(v - hi), the products hi hi + hi lo + lo hi
    accumulated in float32 (lo lo, below 2^-16 of the output's scale, is dropped)."""
    ah = a.to(torch.bfloat16)
    al = (a - ah.float()).to(torch.bfloat16)
    bh = b.to(torch.bfloat16)
    bl = (b - bh.float()).to(torch.bfloat16)
    return ah.float() @ bh.float().T + ah.float() @ bl.float().T + al.float() @ bh.float().T


def test_53_passes_with_split_bfloat16_products():
    problem, m = SUITE[53], _module(53)

    def kernel(x, sx, wg, sg, wu, su):
        a = m.fp8_dequantize(x, sx, 1, torch.float32)
        gate = _split_bf16_products(a, m.fp8_dequantize(wg, sg, 128, torch.float32))
        up = _split_bf16_products(a, m.fp8_dequantize(wu, su, 128, torch.float32))
        return (F.silu(gate) * up).to(torch.bfloat16)

    factor = _judge(problem, kernel)
    assert factor <= 0.5, factor


def _nvfp4_parts(codes, scales):
    """e2m1 value times e4m3 scale: at most 6 significant bits, exact in bfloat16."""
    byte = codes.view(torch.uint8).long()
    table = torch.tensor(E2M1 + [-v for v in E2M1])
    vals = torch.stack((table[byte & 15], table[byte >> 4]), -1).flatten(-2)
    parts = (vals.unflatten(-1, (-1, 16)) * scales.float()[..., None]).flatten(-2)
    assert torch.equal(parts.to(torch.bfloat16).float(), parts)
    return parts


def _nvfp4_global_last(a, b):
    """a = (codes, scales, decode) [batch, M, K], b [batch, N, K]: the products of the exactly
    representable parts in float32, the two global decode scales applied at the end."""
    pa, pb = _nvfp4_parts(a[0], a[1]), _nvfp4_parts(b[0], b[1])
    return torch.bmm(pa, pb.transpose(1, 2)) * (a[2].float() * b[2].float())


def _nvfp4_quantize_reordered(m, x):
    """The recipe's quantisation with its scale arithmetic in another order: values times encode,
    then divided by the block scale."""
    amax = x.abs().amax()
    encode = 2688.0 / amax
    blocks = x.unflatten(-1, (-1, 16))
    scale = (blocks.abs().amax(-1) * encode / 6.0).clamp(max=448).to(torch.float8_e4m3fn)
    scaled = (blocks * encode / scale.float()[..., None]).flatten(-2).clamp(-6, 6)
    codes = torch.tensor([_code(v) for v in scaled.flatten().tolist()], dtype=torch.uint8).view(scaled.shape)
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.float4_e2m1fn_x2)
    return packed, scale, 1.0 / encode


def test_60_passes_with_global_scales_applied_last():
    problem = SUITE[60]
    assert _judge(problem, lambda xa, sa, ga, w, sw, gw: _nvfp4_global_last((xa, sa, ga), (w, sw, gw))) <= 0.5


def test_59_passes_with_reordered_quantisation_and_global_scales_last():
    problem, m = SUITE[59], _module(59)

    def kernel(x, w, sw, gw):
        a = _nvfp4_quantize_reordered(m, x.float().unsqueeze(0))
        return _nvfp4_global_last(a, (w.unsqueeze(0), sw.unsqueeze(0), torch.tensor(gw))).squeeze(0)

    assert _judge(problem, kernel) <= 0.5


def test_61_passes_with_reordered_quantisation_and_global_scales_last():
    problem, m = SUITE[61], _module(61)

    def kernel(x, gc, gs, gg, uc, us, ug, dc, ds, dg):
        b, s, h = x.shape
        a = _nvfp4_quantize_reordered(m, x.float().reshape(1, b * s, h))
        gate = _nvfp4_global_last(a, (gc, gs, torch.tensor(gg))).to(x.dtype)
        up = _nvfp4_global_last(a, (uc, us, torch.tensor(ug))).to(x.dtype)
        hidden = (F.silu(gate.float()).to(x.dtype).float() * up.float()).to(x.dtype)
        hq = _nvfp4_quantize_reordered(m, hidden.float())
        return _nvfp4_global_last(hq, (dc, ds, torch.tensor(dg))).to(x.dtype).view(b, s, h)

    assert _judge(problem, kernel) <= 0.5
