"""The linear_attention references compute the recurrences their problems state. Several
evaluate them in a chunked or parallel form (as the published formulations do); each is checked
here, in float64 on its small workload, against a plain token-by-token loop written from the
problem's description, and the loops' own conventions (head mapping, state layout, what is
returned) are pinned where a slip would still give finite outputs."""

import math

import metakernelbench as mkb
import pytest
import torch
import torch.nn.functional as F

SUITE = mkb.load_suite()


def _wide(inputs):
    return [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in inputs]


def _close(a, b, tol=1e-9):
    scale = max(b.abs().max().item(), 1.0)
    assert (a - b).abs().max().item() <= tol * scale


def _draw(number, seed=5):
    problem = SUITE.find(number)
    return problem, _wide(problem.make_inputs("small", seed=seed))


def _gated_delta_loop(q, k, v, g, beta, s):
    """S = exp(g) S + k^T (beta (v - exp(g) k @ S)); o = q @ S, one (batch, head) per row of
    the leading dimension. q, k, v: [N, T, D]; g, beta: [N, T]; s: [N, K, V]."""
    out = torch.zeros_like(v)
    for t in range(q.shape[1]):
        s = s * g[:, t, None, None].exp()
        u = torch.einsum("nk,nkv->nv", k[:, t], s)
        s = s + k[:, t, :, None] * (beta[:, t, None] * (v[:, t] - u))[:, None, :]
        out[:, t] = torch.einsum("nk,nkv->nv", q[:, t], s)
    return out, s


def test_62_chunked_form_is_the_gated_delta_recurrence():
    problem, (q, k, v, g, beta, scale) = _draw(62)
    out = problem.reference(q, k, v, g, beta, scale)
    group = v.shape[1] // q.shape[1]
    norm = lambda x: x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)  # noqa: E731
    qe = (norm(q) * scale).repeat_interleave(group, dim=1).flatten(0, 1)
    ke = norm(k).repeat_interleave(group, dim=1).flatten(0, 1)
    s0 = torch.zeros(qe.shape[0], q.shape[-1], v.shape[-1], dtype=torch.float64)
    expected, _ = _gated_delta_loop(qe, ke, v.flatten(0, 1), g.flatten(0, 1), beta.flatten(0, 1), s0)
    assert q.shape[2] % 64 != 0  # the small workload pads its last chunk
    _close(out, expected.reshape(out.shape))


def _ssd_loop(x, a, b, c, h):
    """h_t = exp(a_t) h + x_t^T B_t; y_t = h @ C_t. x: [B, T, H, P]; a: [B, T, H]; b, c:
    [B, T, H, N]; h: [B, H, P, N]."""
    y = torch.zeros_like(x)
    for t in range(x.shape[1]):
        h = h * a[:, t, :, None, None].exp() + x[:, t, :, :, None] * b[:, t, :, None, :]
        y[:, t] = torch.einsum("bhpn,bhn->bhp", h, c[:, t])
    return y, h


def test_63_ssd_scan_is_the_selective_recurrence():
    problem = SUITE.find(63)
    torch.manual_seed(0)
    x = torch.randn(2, 300, 4, 3, dtype=torch.float64)
    a = -torch.rand(2, 300, 4, dtype=torch.float64) * 0.3
    b, c = torch.randn(2, 2, 300, 4, 5, dtype=torch.float64)
    y = problem.module.ssd_scan(x, a, b, c, 128)
    expected, _ = _ssd_loop(x, a, b, c, torch.zeros(2, 4, 3, 5, dtype=torch.float64))
    _close(y, expected)


def test_63_layer_matches_a_sequential_mamba2_mixer():
    problem, inputs = _draw(63)
    (hidden, w_in, conv_w, conv_b, dt_bias, a_log, d, norm_w, w_out, t_min, t_max, eps) = inputs
    groups, steps = problem.module.N_GROUPS, hidden.shape[1]
    heads, intermediate = a_log.shape[0], norm_w.shape[0]
    conv_dim = conv_w.shape[0]
    state = (conv_dim - intermediate) // (2 * groups)
    z, xbc, dt = (hidden @ w_in.t()).split([intermediate, conv_dim, heads], dim=-1)
    padded = F.pad(xbc, (0, 0, conv_w.shape[-1] - 1, 0))
    xbc = F.silu(sum(padded[:, j:j + steps] * conv_w[:, 0, j] for j in range(conv_w.shape[-1])) + conv_b)
    xs, b, c = xbc.split([intermediate, groups * state, groups * state], dim=-1)
    dt = F.softplus(dt + dt_bias).clamp(t_min, t_max)
    xs = xs.reshape(*xs.shape[:2], heads, -1)
    b = b.reshape(*b.shape[:2], groups, state).repeat_interleave(heads // groups, dim=2)
    c = c.reshape(*c.shape[:2], groups, state).repeat_interleave(heads // groups, dim=2)
    h0 = torch.zeros(hidden.shape[0], heads, xs.shape[-1], state, dtype=torch.float64)
    y, _ = _ssd_loop(xs * dt[..., None], dt * -a_log.exp(), b, c, h0)
    y = ((y + d[:, None] * xs).flatten(2) * F.silu(z)).reshape(*z.shape[:2], groups, -1)
    y = (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)).flatten(2) * norm_w
    _close(problem.reference(*inputs), y @ w_out.t())


def test_64_chunk_scan_resumes_from_the_initial_state():
    problem, (x, a, b, c, d, h0) = _draw(64)
    y, final = problem.reference(x, a, b, c, d, h0)
    heads = x.shape[2]
    expected, h = _ssd_loop(x, a.transpose(1, 2), b.repeat_interleave(heads, dim=2),
                            c.repeat_interleave(heads, dim=2), h0)
    assert x.shape[1] % 256 != 0  # the small workload pads its last chunk
    _close(y, expected + d[:, None] * x)
    _close(final, h)
    # The initial state matters: from zero the outputs differ.
    y0, _ = problem.reference(x, a, b, c, d, torch.zeros_like(h0))
    assert (y0 - y).abs().max() > 1e-3


def test_65_diagonal_block_is_the_intra_chunk_sum():
    problem, (x, a, b, c) = _draw(65)
    y = problem.reference(x, a, b, c)
    heads, groups, length = x.shape[3], b.shape[3], x.shape[2]
    expected = torch.zeros_like(x)
    for h in range(heads):
        g = h // (heads // groups)
        cum = a[:, h].cumsum(-1)  # [batch, chunks, L]
        for pos in range(length):
            weight = torch.exp(cum[..., pos, None] - cum[..., :pos + 1])  # exp(a[s+1] + ... + a[pos])
            dots = torch.einsum("bcn,bcsn->bcs", c[:, :, pos, g], b[:, :, :pos + 1, g])
            expected[:, :, pos, h] = torch.einsum("bcs,bcsp->bcp", dots * weight, x[:, :, :pos + 1, h])
    _close(y, expected)


def test_66_stabilised_wkv_is_the_plain_weighted_average():
    problem, (time_decay, key, time_first, value, num, top, den) = _draw(66)
    out, num_f, top_f, den_f = problem.reference(time_decay, key, time_first, value, num, top, den)
    w = -time_decay.exp()
    real_num, real_den = num * top.exp(), den * top.exp()  # the state without its exponent
    expected = torch.zeros_like(key)
    for t in range(key.shape[1]):
        bonus = (time_first + key[:, t]).exp()
        expected[:, t] = (real_num + bonus * value[:, t]) / (real_den + bonus)
        real_num = w.exp() * real_num + key[:, t].exp() * value[:, t]
        real_den = w.exp() * real_den + key[:, t].exp()
    _close(out, expected)
    _close(num_f * top_f.exp(), real_num)
    _close(den_f * top_f.exp(), real_den)
    assert (den_f > 0).all()


def test_67_fft_convolution_is_the_causal_convolution():
    problem = SUITE.find(67)
    torch.manual_seed(0)
    u = torch.randn(2, 3, 37, dtype=torch.float64)
    k = torch.randn(3, 37, dtype=torch.float64)
    skip = torch.randn(3, dtype=torch.float64)
    expected = torch.zeros_like(u)
    for t in range(37):
        expected[..., t] = (k[:, :t + 1].flip(-1) * u[..., :t + 1]).sum(-1) + skip * u[..., t]
    _close(problem.module._fft_causal_conv(u, k, skip), expected)


def test_67_positional_embedding_is_time_and_two_bands():
    problem = SUITE.find(67)
    z, t = problem.module._positional_embedding(8, torch.float64, "cpu")
    assert z.shape == (1, 8, 5) and t.shape == (1, 8, 1)
    j = torch.arange(8, dtype=torch.float64)
    _close(z[0, :, 0], j / 7)
    _close(z[0, :, 2], torch.cos(2 * math.pi * j / 8))  # band f = 1
    _close(z[0, :, 4], -torch.sin(2 * math.pi * j / 8))


def test_70_parallel_retention_is_the_decayed_recurrence():
    problem, (q, k, v) = _draw(70)
    out = problem.reference(q, k, v)
    heads = q.shape[1]
    gamma = 1 - 2.0 ** (-5.0 - torch.arange(heads, dtype=torch.float64))
    s = torch.zeros(q.shape[0], heads, q.shape[-1], v.shape[-1], dtype=torch.float64)
    expected = torch.zeros_like(v)
    for t in range(q.shape[2]):
        s = gamma[None, :, None, None] * s + k[:, :, t, :, None] * v[:, :, t, None, :]
        expected[:, :, t] = torch.einsum("bhk,bhkv->bhv", q[:, :, t] / math.sqrt(q.shape[-1]), s)
    _close(out, expected)


@pytest.mark.parametrize("number", [71, 72, 73])
def test_gdn_value_heads_read_query_key_head_h_over_2(number):
    # Changing query/key head 0 may only change value heads 0 and 1.
    problem, inputs = _draw(number)
    before = problem.reference(*inputs)[0]
    head_axis = {71: 1, 72: 2, 73: 2}[number]
    for index in (0, 1):  # q, then k
        changed = list(inputs)
        changed[index] = inputs[index].clone()
        changed[index].select(head_axis, 0).mul_(-0.5)
        after = problem.reference(*changed)[0]
        moved = (after - before).abs().amax(dim=tuple(i for i in range(after.dim()) if i != head_axis))
        assert (moved[:2] > 0).all() and (moved[2:] == 0).all()


def test_72_state_is_k_last():
    # With beta = 0 the state only decays: new_state = g * state, in the input's layout; and
    # the output reads S = state^T with q (a transposed state would give another output).
    problem, inputs = _draw(72)
    q, k, v, state, a_log, a, dt_bias, b, scale = inputs
    b = torch.full_like(b, -1e4)  # beta = sigmoid(b) = 0
    out, new_state = problem.reference(q, k, v, state, a_log, a, dt_bias, b, scale)
    g = torch.exp(-a_log.exp() * F.softplus(a[:, 0] + dt_bias))  # [B, 16]
    _close(new_state, g[..., None, None] * state)
    qh = q[:, 0].repeat_interleave(2, dim=1)
    _close(out[:, 0], scale * torch.einsum("bhk,bhvk->bhv", qh, new_state))


def test_73_returns_the_pool_unchanged_and_reads_the_indexed_slot():
    problem, inputs = _draw(73)
    output, final_state = problem.reference(*inputs)
    initial_state, indices = inputs[3], inputs[4]
    assert torch.equal(final_state, initial_state)
    assert final_state.data_ptr() != initial_state.data_ptr()
    # Another slot order gives other outputs.
    swapped = list(inputs)
    swapped[4] = indices.flip(0)
    assert not torch.equal(problem.reference(*swapped)[0], output)


def test_74_final_state_continues_the_recurrence():
    # Running the first half, then the second from the first half's final state, equals the
    # whole sequence.
    problem, (q, k, v, beta, s0) = _draw(74)
    half = q.shape[2] // 2
    o, s = problem.reference(q, k, v, beta, s0)
    o1, s1 = problem.reference(q[:, :, :half], k[:, :, :half], v[:, :, :half], beta[:, :, :half], s0)
    o2, s2 = problem.reference(q[:, :, half:], k[:, :, half:], v[:, :, half:], beta[:, :, half:], s1)
    _close(torch.cat([o1, o2], dim=2), o)
    _close(s2, s)
