"""The attention family (issue 16): each reference against an independent, naive formulation of
what its description says (float64, one query and head at a time) on the small workload; 15's two
formulations (the published per-query loop and the judge's per-sequence one) against each other on
the small and the full workload; 18's input conditioning; and the SOL-ExecBench-derived problems
10-13 against the facts their recipes show (tests/data/attention_sol_execbench_signatures.json),
on the full workload's shapes (meta device)."""

import json
import math
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch
from metakernelbench.judge import values
from metakernelbench.suite_check import _formulations_disagree

SUITE = mkb.load_suite()
TABLE = json.loads(
    (Path(__file__).parents[1] / "data" / "attention_sol_execbench_signatures.json").read_text()
)


def _wide(inputs):
    return values.upcast(inputs)


def _naive_attention(q, keys, vals, scale):
    """One query row: q [d], keys [n, d], vals [n, dv] (float64) -> (out [dv], base-2 lse)."""
    logits = keys @ q * scale
    return torch.softmax(logits, 0) @ vals, torch.logsumexp(logits, 0) / math.log(2.0)


def _tokens_of_pages(cache, pages, length):
    # cache [pages, page_size, ...] -> the first `length` tokens of the listed pages, in order.
    return cache[pages.long()].flatten(0, 1)[:length]


def _naive_gqa(problem, x, extra=0):
    """01-09: every (query token, head) on its own, from the description's geometry."""
    n = problem.number
    if n in (8, 9, 16):  # ragged: q, k, v, qo_indptr, kv_indptr, sm_scale
        q, k, v, qo, kv, scale = x
        seqs = [(qo[b], qo[b + 1], k[kv[b] : kv[b + 1]], v[kv[b] : kv[b + 1]]) for b in range(len(qo) - 1)]
    else:
        if n in (1, 2, 3):  # decode: one query token per sequence
            q, kc, vc, kv, idx = x[:5]
            qo = list(range(q.shape[0] + 1))
        else:
            q, kc, vc, qo, kv, idx = x[:6]
        last = x[-2] if n in (3, 6, 7) else None
        seqs = []
        for b in range(len(kv) - 1):
            pages = idx[kv[b] : kv[b + 1]]
            length = (len(pages) - 1) * kc.shape[1] + int(last[b]) if last is not None else len(pages)
            seqs.append(
                (qo[b], qo[b + 1], _tokens_of_pages(kc, pages, length), _tokens_of_pages(vc, pages, length))
            )
        scale = x[-1]
    heads, kv_heads = q.shape[1], seqs[0][2].shape[1]
    out = torch.zeros(q.shape[0], heads, seqs[0][3].shape[-1], dtype=torch.float64)
    lse = torch.zeros(q.shape[0], heads, dtype=torch.float64)
    for qs, qe, keys, vals in seqs:
        qs, qe = int(qs), int(qe)
        for i in range(qe - qs):
            visible = keys.shape[0] - (qe - qs) + i + 1 + extra  # the query is the visible-th token
            for h in range(heads):
                g = h // (heads // kv_heads)
                out[qs + i, h], lse[qs + i, h] = _naive_attention(
                    q[qs + i, h], keys[:visible, g], vals[:visible, g], scale
                )
    return out, lse


def _naive_mla(problem, x, extra=0):
    """14, 15 (paged, page size 1) and 17 (sparse slots): logits over ckv and kpe, values ckv."""
    if problem.number == 17:
        qn, qp, ckv, kpe, slots, scale = x
        rows = [(t, t + 1, s[s >= 0].long(), 1) for t, s in enumerate(slots)]
        ckv, kpe = ckv.flatten(0, 1), kpe.flatten(0, 1)
    else:
        if problem.number == 14:
            qn, qp, ckv, kpe, kv, idx, scale = x
            qo = list(range(qn.shape[0] + 1))
        else:
            qn, qp, ckv, kpe, qo, kv, idx, scale = x
        ckv, kpe = ckv.flatten(0, 1), kpe.flatten(0, 1)
        rows = [(int(qo[b]), int(qo[b + 1]), idx[kv[b] : kv[b + 1]].long(), 0) for b in range(len(kv) - 1)]
    out = torch.zeros(qn.shape, dtype=torch.float64)
    lse = torch.zeros(qn.shape[:2], dtype=torch.float64)
    for qs, qe, tokens, whole in rows:
        for i in range(qe - qs):
            visible = tokens.numel() if whole else tokens.numel() - (qe - qs) + i + 1 + extra
            t = tokens[:visible]
            for h in range(qn.shape[1]):
                q = torch.cat([qn[qs + i, h], qp[qs + i, h]])
                keys = torch.cat([ckv[t], kpe[t]], dim=1)
                out[qs + i, h], lse[qs + i, h] = _naive_attention(q, keys, ckv[t], scale)
    return out, lse


NAIVE = {**{n: _naive_gqa for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 16)}, **{n: _naive_mla for n in (14, 15, 17)}}


@pytest.mark.parametrize("number", sorted(NAIVE), ids=lambda n: f"{n:02d}")
def test_reference_matches_a_naive_loop_over_queries_and_heads(number):
    problem = SUITE.find(number)
    inputs = _wide(problem.make_inputs("small", seed=4))
    out, lse = problem.correctness_reference(*inputs)
    naive_out, naive_lse = NAIVE[number](problem, inputs)
    assert out.dtype == lse.dtype == torch.float64
    torch.testing.assert_close(out, naive_out, rtol=0, atol=1e-10)
    torch.testing.assert_close(lse, naive_lse, rtol=0, atol=1e-10)


@pytest.mark.parametrize("number", [4, 5, 15])
def test_the_naive_check_sees_a_causal_window_one_token_off(number):
    # A reference whose queries saw one token more (or fewer) would fail the check above.
    problem = SUITE.find(number)
    inputs = _wide(problem.make_inputs("small", seed=4))
    out, _ = problem.correctness_reference(*inputs)
    for extra in (1, -1):
        shifted, _ = NAIVE[number](problem, inputs, extra=extra)
        assert not torch.allclose(out, shifted, rtol=0, atol=1e-6)


# --- 15: two formulations --------------------------------------------------------------------


def _compact_pool(inputs):
    """The same computation over a pool holding only the draw's pages (the full pool is 1 GB)."""
    q_nope, q_pe, ckv, kpe, qo, kv, idx, scale = inputs
    return [
        q_nope,
        q_pe,
        ckv[idx.long()],
        kpe[idx.long()],
        qo,
        kv,
        torch.arange(idx.numel(), dtype=idx.dtype),
        scale,
    ]


def test_15_defines_a_faster_correctness_reference():
    assert SUITE.find(15).has_correctness_reference
    assert not any(SUITE.find(n).has_correctness_reference for n in set(NAIVE) - {15})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_15_formulations_agree_on_the_small_workload(seed):
    problem = SUITE.find(15)
    draw = problem.make_inputs("small", seed=seed)
    expected = list(problem.correctness_reference(*[values.clone(x) for x in draw]))
    anchor = list(problem.correctness_reference(*values.upcast(draw)))
    assert _formulations_disagree(problem, draw, expected, anchor, seed) == []


@pytest.mark.slow
def test_15_formulations_agree_on_the_full_workload():
    problem = SUITE.find(15)
    draw = _compact_pool(problem.make_inputs("full", seed=0))
    expected = list(problem.correctness_reference(*[values.clone(x) for x in draw]))
    anchor = list(problem.correctness_reference(*values.upcast(draw)))
    assert expected[0].shape == (1954, 16, 512)
    assert _formulations_disagree(problem, draw, expected, anchor, 0) == []


def test_the_agreement_check_sees_a_formulation_that_differs():
    # A "faster formulation" 1% off in its softmax scale must be reported.
    problem = SUITE.find(15)
    draw = problem.make_inputs("small", seed=0)
    fast = problem.module.correctness_reference

    def off(*x):
        return fast(*x[:-1], x[-1] * 1.01)

    expected = list(off(*[values.clone(x) for x in draw]))
    anchor = list(off(*values.upcast(draw)))
    found = _formulations_disagree(problem, draw, expected, anchor, 0)
    assert any("misses the allowance" in f for f in found) and any("float64 runs differ" in f for f in found)


# --- 18: input conditioning ------------------------------------------------------------------


def _module18():
    return SUITE.find(18).module


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_18_draws_keep_the_top_k_decision_margin(seed):
    m = _module18()
    gaps = m.selection_margins(*SUITE.find(18).make_inputs("small", seed=seed))
    assert len(gaps) == 2 and min(gaps) >= m.DECISION_MARGIN


@pytest.mark.slow
def test_18_full_draw_keeps_the_margin_on_its_long_sequence():
    m = _module18()
    gaps = m.selection_margins(*SUITE.find(18).make_inputs("full", seed=0))
    assert len(gaps) == 1 and gaps[0] >= m.DECISION_MARGIN


def test_18_margin_sees_a_tie():
    m = _module18()
    q, cache, weights, seq_lens, table = SUITE.find(18).make_inputs("small", seed=0)
    # Copy the key of the 2,048th-ranked token of sequence 0 onto the 2,049th: their scores tie.
    keys = m.dequantize_index_cache(cache, torch.float32)
    pages, score = next(m.scores(q, keys, weights, seq_lens, table))
    order = torch.topk(score, m.TOPK + 1).indices
    raw = cache.view(torch.uint8).flatten(1).clone()
    page_size, dim = cache.shape[1], cache.shape[3] - 4

    def where(t):
        return int(pages[t // page_size]), int(t % page_size)

    (p_src, o_src), (p_dst, o_dst) = where(order[m.TOPK - 1]), where(order[m.TOPK])
    raw[p_dst, o_dst * dim : (o_dst + 1) * dim] = raw[p_src, o_src * dim : (o_src + 1) * dim]
    scales = page_size * dim
    raw[p_dst, scales + 4 * o_dst : scales + 4 * o_dst + 4] = raw[
        p_src, scales + 4 * o_src : scales + 4 * o_src + 4
    ]
    tied = raw.view(torch.int8).view(cache.shape)
    assert min(m.selection_margins(q, tied, weights, seq_lens, table)) < m.DECISION_MARGIN


def test_18_redraws_are_bounded(monkeypatch):
    m = _module18()
    monkeypatch.setattr(m, "DECISION_MARGIN", 1e9)  # no draw can meet it
    with pytest.raises(ValueError, match="in 16 draws"):
        SUITE.find(18).make_inputs("small", seed=0)


def test_18_reference_matches_a_naive_selection():
    m = _module18()
    q, cache, weights, seq_lens, table = SUITE.find(18).make_inputs("small", seed=5)
    (got,) = SUITE.find(18).reference(q, cache, weights, seq_lens, table)
    raw = cache.view(torch.uint8)
    for b, n in enumerate(seq_lens.tolist()):
        scores = []
        for t in range(n):
            page, offset = int(table[b, t // 64]), t % 64
            fp8 = raw[page].flatten()[offset * 128 : (offset + 1) * 128].view(torch.float8_e4m3fn)
            scale = raw[page].flatten()[64 * 128 + 4 * offset : 64 * 128 + 4 * offset + 4].view(torch.float32)
            key = fp8.double() * scale.double()
            scores.append(float((torch.relu(q[b].double() @ key) * weights[b].double()).sum()))
        best = sorted(sorted(range(n), key=lambda t: -scores[t])[: m.TOPK])  # in token order
        slots = [int(table[b, t // 64]) * 64 + t % 64 for t in best]
        assert got[b, : len(slots)].tolist() == slots
        assert (got[b, len(slots) :] == -1).all()


# --- 12, 13: independent formulations --------------------------------------------------------


def test_12_matches_a_naive_window_loop():
    problem = SUITE.find(12)
    x = _wide(problem.make_inputs("small", seed=2))
    hs, mask, wq, wk, wv, wp, per_dim, inv, cap = x
    b_, t_, _ = hs.shape
    scale = 64**-0.5 / math.log(2.0) * torch.nn.functional.softplus(per_dim)
    q = (hs @ wq.T).view(b_, t_, 8, 64) * scale
    k, v = (hs @ wk.T).view(b_, t_, 8, 64), (hs @ wv.T).view(b_, t_, 8, 64)
    want = torch.zeros(b_, t_, 8, 64, dtype=torch.float64)
    for b in range(b_):
        for i in range(t_):
            keys = [j for j in range(max(0, i - 12), i + 1) if not mask[b, j]]
            d = torch.tensor([i - j for j in keys], dtype=torch.float64)[:, None] * inv
            rel = (torch.cat([d.sin(), d.cos()], dim=1) @ wp.T).view(-1, 8, 64)
            logits = torch.einsum("nh,jnh->nj", q[b, i], k[b, keys] + rel)
            want[b, i] = torch.einsum(
                "nj,jnh->nh", torch.softmax(torch.tanh(logits / cap) * cap, -1), v[b, keys]
            )
    torch.testing.assert_close(problem.reference(*x), want, rtol=0, atol=1e-12)


def test_13_rope_matches_complex_rotation_and_the_joint_flag_matters():
    problem = SUITE.find(13)
    x = _wide(problem.make_inputs("small", seed=3))
    m = problem.module
    y = torch.randn(1, 16, 3, 128, dtype=torch.float64)
    positions = x[17:20]
    tables = [(x[20 + 2 * a], x[21 + 2 * a]) for a in range(3)]
    got = m._rope3d(y, positions, tables)
    want = y.clone()
    for a, (pos, (cos, sin)) in enumerate(zip(positions, tables)):
        # Pairs (2i, 2i + 1) as complex numbers, turned by cos + i sin of the token's position.
        part = y[..., 42 * a : 42 * a + 42].reshape(1, 16, 3, 21, 2)
        turn = torch.complex(cos, sin)[pos][None, :, None, :]
        turned = torch.view_as_complex(part.contiguous()) * turn
        want[..., 42 * a : 42 * a + 42] = torch.view_as_real(turned).flatten(-2)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    assert torch.equal(got[..., 126:], y[..., 126:])
    alone = problem.reference(*x[:-1], 0)
    assert not torch.allclose(alone, problem.reference(*x))


# --- 10-13: the recipes' facts ----------------------------------------------------------------


FACTS = TABLE["problems"]
KINDS = {"float": ("float64", float), "int": ("int64", int)}


def _shape(spec, params):
    return tuple(int(d) if d.lstrip("-").isdigit() else params[d] for d in spec.shape)


def _meta_draw(problem):
    inputs = problem.make_inputs("full", device="meta", seed=0)
    if problem.number == 11:  # the reference reads the sequence ends' values
        inputs[1] = torch.tensor(problem.module.SEQ_SPLITS).cumsum(0)
    return inputs


def test_the_table_covers_the_sol_execbench_attention_problems():
    assert [f["number"] for f in FACTS] == [10, 11, 12, 13]
    for facts in FACTS:
        problem = SUITE.find(facts["number"])
        assert facts["recipe"] == f"problems/_sol_execbench/{problem.number:02d}_{problem.slug}.json"
        assert problem.message.provenance.source == "S2"
        assert facts["recipe"].rsplit("/", 1)[1] in problem.message.provenance.notes


@pytest.mark.parametrize("facts", FACTS, ids=lambda f: f"{f['number']:02d}")
def test_metadata_and_full_draw_pose_the_recipes_inputs(facts):
    problem = SUITE.find(facts["number"])
    params = problem.workload("full").params
    specs = list(problem.message.inputs)
    draw = problem.make_inputs("full", device="meta", seed=0)
    assert len(specs) == len(draw) == len(facts["inputs"])
    for index, (spec, x, fact) in enumerate(zip(specs, draw, facts["inputs"], strict=True)):
        where = f"input {index} ({spec.name})"
        if fact["name"] is not None:
            assert spec.name == fact["name"], where
        if fact["kind"] in KINDS:
            dtype, python_type = KINDS[fact["kind"]]
            assert spec.scalar and spec.dtype == dtype and type(x) is python_type, where
            assert spec.value is not None and x == spec.value, where
            if fact["value"] is not None:
                assert x == fact["value"], where
            continue
        assert not spec.scalar and type(x) is torch.Tensor, where
        assert tuple(x.shape) == _shape(spec, params), where
        assert str(x.dtype).removeprefix("torch.") == spec.dtype, where
        if fact["shape"] is not None:
            assert all(
                want is None or want == got for want, got in zip(fact["shape"], x.shape, strict=True)
            ), where
        if fact["dtype"] is not None:
            assert spec.dtype == fact["dtype"], where


@pytest.mark.parametrize("facts", FACTS, ids=lambda f: f"{f['number']:02d}")
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(facts):
    problem = SUITE.find(facts["number"])
    params = problem.workload("full").params
    out = problem.reference(*_meta_draw(problem))
    container = problem.message.output_container
    wanted = facts["outputs"]
    if wanted["container"] is not None:
        assert container == {"tensor": "single_tensor"}.get(wanted["container"], wanted["container"])
    if wanted["count"] is not None:
        assert len(problem.message.outputs) == wanted["count"]
    outs = [out] if container == "single_tensor" else list(out)
    assert type(out) is (torch.Tensor if container == "single_tensor" else tuple)
    for y, spec in zip(outs, problem.message.outputs, strict=True):
        assert tuple(y.shape) == _shape(spec, params), spec.name
        assert str(y.dtype).removeprefix("torch.") == spec.dtype, spec.name
