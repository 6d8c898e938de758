"""metakernelbench.stats against independent computations: numpy / pandas re-implementations of
the documented formulas (docs/statistics.md), scipy.stats (wilcoxon, binomtest, bootstrap) and
statsmodels (mcnemar, multipletests, proportion_confint), on synthetic cell-replicates."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import metakernelbench as mkb
import numpy as np
import pandas as pd
import pytest
from metakernelbench import stats
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

REPO = Path(__file__).resolve().parents[2]
THRESHOLDS = (0.0, 0.5, 1.0, 2.0, 4.0)
CLIP_LOW, CLIP_HIGH, FLOOR = 2.0**-4, 2.0**4, 2.0**-5
FAMILIES = ("attention", "kv_cache", "mlp_norm", "moe", "quantization", "linear_attention")
DIRECTIONS = ("cutedsl2tirx", "tirx2cutedsl")
RTOL = 1e-9


# ------------------------------------------------------------------------------------------------
# Synthetic experiments


def _attempt(rng: np.random.Generator, quality: float, *, nan_rate: float = 0.05) -> dict:
    """One solo-like attempt: passes with a probability rising with `quality`."""
    if rng.random() > 1 / (1 + math.exp(-quality)):
        return {"passed": False, "speedup": float(rng.choice([np.nan, 0.0]))}
    if rng.random() < nan_rate:
        return {"passed": True, "speedup": math.nan}  # passed, no speedup: counts as failed
    return {"passed": True, "speedup": float(np.exp(rng.normal(quality * 0.4, 0.7)))}


def _usage(rng: np.random.Generator) -> dict:
    return {
        "input_tokens": int(rng.integers(1000, 90000)),
        "cached_input_tokens": int(rng.integers(0, 1000)),
        "output_tokens": int(rng.integers(100, 9000)),
        "cost_usd": float(rng.uniform(0.01, 3.0)),
        "agent_seconds": float(rng.uniform(10, 2400)),
    }


def synthetic_cells(
    seed: int = 1,
    *,
    models=("model_a", "model_b"),
    n_problems: int = 18,
    replicates: int = 3,
    controls: bool = True,
    skip_rate: float = 0.1,
    unresolved_rate: float = 0.03,
) -> list[dict]:
    """Cell-replicates of the standard arms: each solo attempt (model, dsl, problem, replicate)
    is generated once and appears as the source of one direction and the base of the other."""
    rng = np.random.default_rng(seed)
    cells = []
    for model in models:
        skill_effect = {"model_a": 0.5, "model_b": -0.3}.get(model, 0.0)
        for p in range(n_problems):
            slug = f"problem_{p:02d}"
            family = FAMILIES[p % len(FAMILIES)]
            difficulty = rng.normal(0, 1.2)
            for r in range(replicates):
                solo = {}
                for dsl in ("cutedsl", "tirx"):
                    arm = _attempt(rng, difficulty)
                    arm["usage"] = _usage(rng)
                    arm["resolved"] = bool(rng.random() > unresolved_rate)
                    solo[dsl] = arm
                for direction in DIRECTIONS:
                    source_dsl, target_dsl = direction.split("2")
                    if rng.random() < skip_rate:
                        skill = {"skipped": True}
                    else:
                        skill = _attempt(rng, difficulty + skill_effect)
                        skill["usage"] = _usage(rng)
                        skill["resolved"] = bool(rng.random() > unresolved_rate)
                    cell = {
                        "model": model,
                        "direction": direction,
                        "problem_slug": slug,
                        "family": family,
                        "replicate": r,
                        "source": solo[source_dsl],
                        "base": solo[target_dsl],
                        "skill": skill,
                    }
                    if controls:
                        control = _attempt(rng, difficulty)
                        control["resolved"] = True
                        cell["control"] = control
                    cells.append(cell)
    return cells


# ------------------------------------------------------------------------------------------------
# Independent re-implementation of the documented formulas (pandas / numpy)


def _eff(arm: dict | None) -> tuple[bool, float]:
    """(effective pass, speedup or NaN)."""
    if arm is None:
        return False, math.nan
    s = arm.get("speedup")
    ok = bool(arm.get("passed")) and s is not None and math.isfinite(s)
    return ok, (s if ok else math.nan)


def _q(ok: bool, s: float) -> float:
    return math.log(min(max(s, CLIP_LOW), CLIP_HIGH)) if ok else math.log(FLOOR)


def _tier(ok: bool, s: float) -> int:
    return sum(1 for t in THRESHOLDS if ok and s >= t) if ok else 0


def reference_comparisons(cells: list[dict], tau: float) -> pd.DataFrame:
    rows = []
    for c in cells:
        base, skill = c["base"], c["skill"]
        skipped = bool(skill.get("skipped"))
        if not base.get("resolved", True) or not (skill.get("resolved", True) or skipped):
            continue
        b_ok, b_s = _eff(base)
        k_ok, k_s = (b_ok, b_s) if skipped else _eff(skill)
        src = c.get("source")
        src_res = src is not None and src.get("resolved", True)
        s_ok, s_s = _eff(src) if src_res else (False, math.nan)
        d = _q(k_ok, k_s) - _q(b_ok, b_s)
        tb, tk = _tier(b_ok, b_s), _tier(k_ok, k_s)
        ts = _tier(s_ok, s_s) if src_res else -1
        if not src_res:
            standing = "source_unresolved"
        else:
            standing = "above" if ts > tb else ("level" if ts == tb else "below")
        ctrl = c.get("control")
        has_ctrl = ctrl is not None and ctrl.get("resolved", True)
        c_ok, c_s = _eff(ctrl) if has_ctrl else (False, math.nan)
        d_ctrl = _q(c_ok, c_s) - _q(b_ok, b_s) if has_ctrl else math.nan
        rows.append(
            dict(
                model=c["model"],
                direction=c["direction"],
                problem_slug=c["problem_slug"],
                family=c["family"],
                replicate=c["replicate"],
                skill_skipped=skipped,
                source_resolved=src_res,
                source_passed=s_ok,
                base_passed=b_ok,
                skill_passed=k_ok,
                base_speedup=b_s,
                skill_speedup=k_s,
                q_base=_q(b_ok, b_s),
                q_skill=_q(k_ok, k_s),
                d=d,
                tier_source=ts,
                tier_base=tb,
                tier_skill=tk,
                standing=standing,
                outcome="help" if d > tau else ("harm" if d < -tau else "neutral"),
                has_control=has_ctrl,
                control_passed=c_ok,
                d_control=d_ctrl,
                tier_control=_tier(c_ok, c_s) if has_ctrl else -1,
            )
        )
    return pd.DataFrame(rows)


def reference_tau(cells: list[dict]) -> tuple[float, str, int]:
    names = {
        "cutedsl2tirx": {"source": "solo_cutedsl", "base": "solo_tirx", "control": "solo_tirx_control"},
        "tirx2cutedsl": {"source": "solo_tirx", "base": "solo_cutedsl", "control": "solo_cutedsl_control"},
    }
    attempts = {}
    for c in cells:
        for role in ("source", "base", "control"):
            arm = c.get(role)
            if arm is None:
                continue
            key = (c["model"], names[c["direction"]][role], c["problem_slug"], c["replicate"])
            attempts.setdefault(key, arm)
    by_solo: dict = {}
    for (model, arm_name, slug, _), arm in attempts.items():
        ok, s = _eff(arm)
        if arm.get("resolved", True) and ok:
            by_solo.setdefault((model, arm_name, slug), []).append(_q(ok, s))
    spreads = [abs(a - b) for qs in by_solo.values() for a, b in itertools.combinations(qs, 2)]
    if len(spreads) >= 10:
        return float(np.median(spreads)), "replicate_spread", len(spreads)
    return math.log(1.05), "default", len(spreads)


def _r_at(passed: pd.Series, speedup: pd.Series) -> list[float]:
    return [float(((passed) & (speedup >= t)).mean()) for t in THRESHOLDS]


def reference_aggregates(comp: pd.DataFrame, cells: list[dict]) -> pd.DataFrame:
    """The harness's aggregates (its results.py _group_metrics): per group, n_cell_replicates
    over every cell-replicate of the group, and over its resolved ones (comp) R@t, S,
    source_coverage (source passed) and skill_coverage (skill arm not skipped)."""
    rows = []
    every = pd.DataFrame([{k: c[k] for k in ("model", "direction", "problem_slug", "family")} for c in cells])

    def add(model, split, group, sub, all_cells=None):
        n_cells = len(sub) if all_cells is None else len(all_cells)
        if n_cells == 0 and group != "all":
            return
        rb = _r_at(sub.base_passed, sub.base_speedup)
        rs = _r_at(sub.skill_passed, sub.skill_speedup)
        n = len(sub)
        coverage = {
            "n_cell_replicates": n_cells,
            "source_coverage": (sub.source_resolved & sub.source_passed).sum() / n if n else math.nan,
            "skill_coverage": (~sub.skill_skipped).sum() / n if n else math.nan,
        }
        for arm, r in (("base", rb), ("skill", rs), ("lift", [b - a for a, b in zip(rb, rs, strict=True)])):
            rows.append(dict(model=model, split=split, group=group, arm=arm, n=n, r=r, **coverage))

    for model in [*sorted(every.model.unique()), "*"]:
        sub = comp if model == "*" else comp[comp.model == model]
        mine = every if model == "*" else every[every.model == model]
        add(model, "all", "all", sub, mine)
        add(model, "with_skill", "with_skill", sub[~sub.skill_skipped])
        add(model, "by_source_verdict", "source_passed", sub[sub.source_resolved & sub.source_passed])
        add(model, "by_source_verdict", "source_failed", sub[sub.source_resolved & ~sub.source_passed])
        add(model, "by_source_verdict", "source_unresolved", sub[~sub.source_resolved])
        for direction in sorted(every.direction.unique()):
            chosen = mine[mine.direction == direction]
            add(model, "by_direction", direction, sub[sub.direction == direction], chosen)
        for family in FAMILIES:
            add(model, "by_family", family, sub[sub.family == family], mine[mine.family == family])
        for problem, direction in sorted(set(zip(every.problem_slug, every.direction, strict=True))):
            add(
                model,
                "by_cell",
                f"{problem}/{direction}",
                sub[(sub.problem_slug == problem) & (sub.direction == direction)],
                mine[(mine.problem_slug == problem) & (mine.direction == direction)],
            )
    return pd.DataFrame(rows)


def _groups(comp: pd.DataFrame, level: str):
    keys = [] if level == "overall" else level.split(",")
    family_order = {
        f: i
        for i, f in enumerate(
            ("attention", "kv_cache", "mlp_norm", "moe", "quantization", "linear_attention")
        )
    }
    if not keys:
        yield ("*", "*", "*"), comp
        return
    grouped = comp.groupby(keys, sort=False)
    out = []
    for values, sub in grouped:
        values = values if isinstance(values, tuple) else (values,)
        named = dict(zip(keys, values, strict=True))
        key = (named.get("model", "*"), named.get("direction", "*"), named.get("family", "*"))
        out.append((key, sub))
    out.sort(key=lambda kv: (kv[0][0], kv[0][1], -1 if kv[0][2] == "*" else family_order[kv[0][2]]))
    yield from out


# ------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def cells():
    return synthetic_cells(1)


@pytest.fixture(scope="module")
def report(cells):
    return stats.compute(cells, {"bootstrap_resamples": 3000, "seed": 11})


@pytest.fixture(scope="module")
def reference(cells, report):
    return reference_comparisons(cells, report.config["tau"])


# ------------------------------------------------------------------------------------------------
# Comparisons, τ, aggregates, usage, tiers


def test_comparisons_match_the_formulas(report, reference):
    got = report.comparisons
    assert len(got) == len(reference) > 0
    for column in (
        "model",
        "direction",
        "problem_slug",
        "family",
        "replicate",
        "skill_skipped",
        "source_resolved",
        "source_passed",
        "base_passed",
        "skill_passed",
        "tier_source",
        "tier_base",
        "tier_skill",
        "standing",
        "outcome",
        "has_control",
        "control_passed",
        "tier_control",
    ):
        assert got[column].tolist() == reference[column].tolist(), column
    for column in ("base_speedup", "skill_speedup", "q_base", "q_skill", "d", "d_control"):
        np.testing.assert_allclose(got[column], reference[column], rtol=1e-12, equal_nan=True, err_msg=column)
    # The synthetic data exercise every path.
    assert got.skill_skipped.any() and (~got.source_resolved).any() and got.has_control.all()
    assert set(got.standing) >= {"above", "level", "below"}


def test_nan_speedups_count_as_failures(cells, report):
    nan_passes = [
        c
        for c in cells
        if c["base"].get("passed")
        and math.isnan(c["base"]["speedup"])
        and c["base"]["resolved"]
        and (c["skill"].get("resolved") or c["skill"].get("skipped"))
    ]
    assert nan_passes, "the synthetic data should contain passed attempts without a speedup"
    comp = report.comparisons.set_index(["model", "direction", "problem_slug", "replicate"])
    for c in nan_passes:
        row = comp.loc[(c["model"], c["direction"], c["problem_slug"], c["replicate"])]
        assert not row.base_passed
        assert row.q_base == pytest.approx(math.log(FLOOR))
        assert row.tier_base == 0


def test_tau_from_replicate_spread(cells, report):
    tau, source, pairs = reference_tau(cells)
    assert report.config["tau_source"] == source == "replicate_spread"
    assert report.config["tau_pairs"] == pairs
    assert report.config["tau"] == pytest.approx(tau, rel=1e-12)


def test_tau_default_and_configured():
    one_replicate = synthetic_cells(3, replicates=1, n_problems=6)
    assert stats.compute(one_replicate, {"bootstrap_resamples": 10}).config["tau_source"] == "default"
    configured = stats.compute(one_replicate, {"bootstrap_resamples": 10, "tau": 0.2}).config
    assert (configured["tau"], configured["tau_source"]) == (0.2, "config")


def test_aggregates_match_the_harness_formulas(cells, report, reference):
    expected = reference_aggregates(reference, cells)
    got = report.aggregates
    assert len(got) == len(expected)
    r_columns = [f"R@{t:g}" for t in THRESHOLDS]
    coverage = ["n_cell_replicates", "source_coverage", "skill_coverage"]
    assert list(got.columns) == ["model", "split", "group", "arm", "n", *r_columns, "S", *coverage]
    for (_, g), (_, e) in zip(got.iterrows(), expected.iterrows(), strict=True):
        assert (g.model, g.split, g.group, g.arm, g.n) == (e.model, e.split, e.group, e.arm, e.n)
        np.testing.assert_allclose(g[r_columns].astype(float), e.r, rtol=1e-12, atol=1e-15)
        if not np.isnan(g.S):
            assert g.S == pytest.approx(100 * np.mean(e.r), abs=1e-12)
        assert g.n_cell_replicates == e.n_cell_replicates
        np.testing.assert_allclose(
            g[["source_coverage", "skill_coverage"]].astype(float),
            [e.source_coverage, e.skill_coverage],
            rtol=1e-12,
            equal_nan=True,
        )
    # Some cell-replicates are unresolved, so the counts differ somewhere.
    assert (got.n_cell_replicates > got.n).any()


def test_usage_counts_each_attempt_once(cells, report):
    names = {
        ("cutedsl2tirx", "source"): "solo_cutedsl",
        ("cutedsl2tirx", "base"): "solo_tirx",
        ("tirx2cutedsl", "source"): "solo_tirx",
        ("tirx2cutedsl", "base"): "solo_cutedsl",
        ("cutedsl2tirx", "skill"): "cutedsl2tirx_skill",
        ("tirx2cutedsl", "skill"): "tirx2cutedsl_skill",
        ("cutedsl2tirx", "control"): "solo_tirx_control",
        ("tirx2cutedsl", "control"): "solo_cutedsl_control",
    }
    attempts = {}
    for c in cells:
        for role in ("source", "base", "skill", "control"):
            if c.get(role) is not None:
                key = (c["model"], names[(c["direction"], role)], c["problem_slug"], c["replicate"])
                attempts.setdefault(key, c[role])
    rows = []
    for (model, arm, _, _), a in attempts.items():
        u = a.get("usage", {})
        for m in (model, "*"):
            rows.append(
                dict(
                    model=m,
                    arm=arm,
                    skipped=bool(a.get("skipped")),
                    cost=u.get("cost_usd", 0.0),
                    tokens=u.get("input_tokens", 0),
                    seconds=u.get("agent_seconds", 0.0),
                )
            )
    ref = pd.DataFrame(rows)
    got = report.usage.set_index(["model", "arm"])
    for (model, arm), sub in ref.groupby(["model", "arm"]):
        row = got.loc[(model, arm)]
        ran = sub[~sub.skipped]
        assert row.attempts == len(ran) and row.skipped == int(sub.skipped.sum())
        assert row.cost_usd == pytest.approx(ran.cost.sum(), rel=1e-12)
        assert row.input_tokens == ran.tokens.sum()
        if len(ran):
            assert row.mean_agent_seconds == pytest.approx(ran.seconds.mean(), rel=1e-12)
    assert len(got) == ref.groupby(["model", "arm"]).ngroups


def test_tier_counts(report, reference):
    got = report.tiers.set_index(["model", "role"])
    for model in [*sorted(reference.model.unique()), "*"]:
        sub = reference if model == "*" else reference[reference.model == model]
        for role, tiers in (
            ("source", sub.tier_source[sub.source_resolved]),
            ("base", sub.tier_base),
            ("skill", sub.tier_skill),
            ("control", sub.tier_control[sub.has_control]),
        ):
            counts = np.bincount(tiers.to_numpy(dtype=int), minlength=6)
            assert got.loc[(model, role), [f"tier_{k}" for k in range(6)]].tolist() == counts.tolist()


# ------------------------------------------------------------------------------------------------
# The paired lift table


def test_lift_point_estimates_and_groups(report, reference):
    tau = report.config["tau"]
    lift = report.lift
    for level in report.levels:
        for arm in ("skill", "control"):
            for key, sub in _groups(reference, level):
                d = sub.d if arm == "skill" else sub.d_control[sub.has_control]
                row = lift[
                    (lift.level == level)
                    & (lift.arm == arm)
                    & (lift.model == key[0])
                    & (lift.direction == key[1])
                    & (lift.family == key[2])
                ]
                assert len(row) == 1, (level, arm, key)
                row = row.iloc[0]
                assert row.n_comparisons == len(d)
                assert row.n_problems == sub.loc[d.index].problem_slug.nunique()
                assert row.mean_d == pytest.approx(d.mean(), rel=1e-12, abs=1e-14)
                assert row.delta_gm == pytest.approx(math.exp(d.mean()) - 1, rel=1e-12, abs=1e-14)
                assert row.help_rate == pytest.approx((d > tau).mean(), abs=1e-15)
                assert row.harm_rate == pytest.approx((d < -tau).mean(), abs=1e-15)
                assert row.n_skipped == (int(sub.skill_skipped.sum()) if arm == "skill" else 0)
                assert row.adjustment == (
                    "none" if level == "overall" else "bh" if "family" in level else "holm"
                )


def test_per_problem_means(report, reference):
    problems = report.problems
    overall = problems[(problems.level == "overall") & (problems.arm == "skill")]
    expected = reference.groupby("problem_slug").d.agg(["mean", "size"]).sort_index()
    assert overall.problem_slug.tolist() == expected.index.tolist()
    np.testing.assert_allclose(overall.mean_d, expected["mean"], rtol=1e-12, atol=1e-14)
    assert overall.n_comparisons.tolist() == expected["size"].tolist()


def _problem_means(report, row) -> np.ndarray:
    p = report.problems
    sel = p[
        (p.level == row.level)
        & (p.arm == row.arm)
        & (p.model == row.model)
        & (p.direction == row.direction)
        & (p.family == row.family)
    ]
    assert len(sel) == row.n_problems
    return sel.mean_d.to_numpy()


def test_wilcoxon_and_sign_tests_match_scipy(report):
    for _, row in report.lift.iterrows():
        d = _problem_means(report, row)
        nonzero = d[d != 0]
        expected = sps.wilcoxon(d, zero_method="pratt", method="auto") if len(nonzero) else None
        if expected is not None:
            assert row.wilcoxon_p_value == pytest.approx(expected.pvalue, rel=RTOL)
            assert row.wilcoxon_statistic == pytest.approx(expected.statistic, rel=1e-12)
        ranks = sps.rankdata(np.abs(d))
        assert row.wilcoxon_w_plus == pytest.approx(ranks[d > 0].sum())
        assert row.wilcoxon_w_minus == pytest.approx(ranks[d < 0].sum())
        k, n = int((d > 0).sum()), int((d != 0).sum())
        assert (row.sign_n_positive, row.sign_n_negative) == (k, n - k)
        assert row.sign_p_value == pytest.approx(sps.binomtest(k, n).pvalue if n else 1.0, rel=RTOL)


def test_mcnemar_matches_statsmodels(report, reference):
    for _, row in report.lift.iterrows():
        sub = next(
            s for key, s in _groups(reference, row.level) if key == (row.model, row.direction, row.family)
        )
        if row.arm == "control":
            sub = sub[sub.has_control]
        other = sub.skill_passed if row.arm == "skill" else sub.control_passed
        table = [
            [int((sub.base_passed & other).sum()), int((sub.base_passed & ~other).sum())],
            [int((~sub.base_passed & other).sum()), int((~sub.base_passed & ~other).sum())],
        ]
        assert [
            [row.mcnemar_both_passed, row.mcnemar_base_only],
            [row.mcnemar_skill_only, row.mcnemar_both_failed],
        ] == table
        assert row.mcnemar_p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=RTOL)


def test_adjustments_match_multipletests(report):
    lift = report.lift
    checked = 0
    for _, rows in lift.groupby(["level", "arm"], sort=False):
        method = {"holm": "holm", "bh": "fdr_bh"}.get(rows.adjustment.iloc[0])
        for test in ("wilcoxon", "sign", "mcnemar"):
            p = rows[f"{test}_p_value"].to_numpy()
            adjusted = rows[f"{test}_p_adjusted"].to_numpy()
            if method is None:
                np.testing.assert_array_equal(adjusted, p)
                continue
            ok = ~np.isnan(p)
            np.testing.assert_allclose(adjusted[ok], multipletests(p[ok], method=method)[1], rtol=1e-12)
            checked += 1
    assert checked >= 6
    assert set(lift[lift.level == "model,direction"].adjustment) == {"holm"}
    assert set(lift[lift.level == "family"].adjustment) == {"bh"}


# ------------------------------------------------------------------------------------------------
# Bootstrap


def _cluster_totals(report, row, tau):
    comp = report.comparisons
    sub = comp
    if row.model != "*":
        sub = sub[sub.model == row.model]
    if row.direction != "*":
        sub = sub[sub.direction == row.direction]
    if row.family != "*":
        sub = sub[sub.family == row.family]
    d_column = "d" if row.arm == "skill" else "d_control"
    if row.arm == "control":
        sub = sub[sub.has_control]
    sums, counts, helps, harms = [], [], [], []
    for _, problem in sorted(sub.groupby("problem_slug", sort=False), key=lambda kv: kv[0]):
        total = 0.0
        for x in problem[d_column]:  # input order, as the C++ sums them: bit-identical totals
            total += x
        d = problem[d_column].to_numpy()
        sums.append(total)
        counts.append(len(d))
        helps.append(int((d > tau).sum()))
        harms.append(int((d < -tau).sum()))
    return np.array(sums), np.array(counts), np.array(helps), np.array(harms)


def _group_seed(seed: int, label: str) -> int:
    """GroupSeed of libmkb/stats/paired_lift.h: splitmix64(seed ^ fnv1a64(label))."""
    mask = (1 << 64) - 1
    h = 0xCBF29CE484222325
    for byte in label.encode():
        h = ((h ^ byte) * 0x100000001B3) & mask
    z = (seed ^ h) & mask
    z = (z + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


STATISTICS = {
    "delta_gm": lambda s, n, h, r, axis=-1: np.exp(s.sum(axis) / n.sum(axis)) - 1,
    "help_rate": lambda s, n, h, r, axis=-1: h.sum(axis) / n.sum(axis),
    "harm_rate": lambda s, n, h, r, axis=-1: r.sum(axis) / n.sum(axis),
}


def _scipy_intervals(data, name, distribution, method, confidence=0.95):
    """scipy.stats.bootstrap's interval from our bootstrap distribution: scipy computes the
    percentile / BCa interval itself (its own jackknife over the paired clusters)."""
    previous = sps._resampling.BootstrapResult(
        confidence_interval=None, bootstrap_distribution=np.asarray(distribution), standard_error=None
    )
    res = sps.bootstrap(
        data,
        STATISTICS[name],
        paired=True,
        vectorized=True,
        n_resamples=0,
        bootstrap_result=previous,
        method=method,
        confidence_level=confidence,
    )
    return res.confidence_interval


def test_report_intervals_are_the_cluster_bootstrap_of_each_group(report):
    tau, seed, resamples = report.config["tau"], report.config["seed"], report.config["bootstrap_resamples"]
    lift = report.lift
    rows = lift[lift.level.isin(["overall", "model,direction", "family"])]
    for _, row in rows.iterrows():
        s, n, h, r = _cluster_totals(report, row, tau)
        label = f"{row.level}|{row.model}|{row.direction}|{row.family}|{row.arm}"
        low = stats.bootstrap_paired_lift(s, n, h, r, resamples=resamples, seed=_group_seed(seed, label))
        for name in STATISTICS:
            for part in ("percentile_low", "percentile_high", "bca_low", "bca_high", "se"):
                assert row[f"{name}_{part}"] == low[name][part], (label, name, part)


@pytest.mark.parametrize("name", list(STATISTICS))
def test_percentile_and_bca_intervals_match_scipy(report, name):
    """Given the same bootstrap distribution, scipy.stats.bootstrap (paired, so that a cluster is
    resampled and jackknifed whole) computes the same percentile and BCa intervals."""
    tau = report.config["tau"]
    lift = report.lift
    compared = 0
    for _, row in lift[lift.level.isin(["overall", "model", "model,direction"])].iterrows():
        data = _cluster_totals(report, row, tau)
        res = stats.bootstrap_paired_lift(*data, resamples=2000, seed=5, keep_distributions=True)
        est = res[name]
        assert est["value"] == pytest.approx(STATISTICS[name](*data), rel=1e-12, abs=1e-15)
        assert est["se"] == pytest.approx(np.std(est["distribution"], ddof=1), rel=1e-9)
        pct = _scipy_intervals(data, name, est["distribution"], "percentile")
        assert (est["percentile_low"], est["percentile_high"]) == pytest.approx(
            (pct.low, pct.high), rel=1e-12
        )
        if est["bca_fallback"]:
            continue
        bca = _scipy_intervals(data, name, est["distribution"], "BCa")
        assert (est["bca_low"], est["bca_high"]) == pytest.approx((bca.low, bca.high), rel=1e-9, abs=1e-12)
        compared += 1
    assert compared >= 3


def test_bootstrap_agrees_with_scipy_resampling():
    """Independent resampling (scipy's own generator) lands on the same intervals up to Monte
    Carlo error, for one comparison per problem."""
    rng = np.random.default_rng(4)
    d = rng.normal(0.15, 0.6, size=40)
    ones = np.ones_like(d)
    ours = stats.bootstrap_paired_lift(
        d, ones, (d > 0.05).astype(float), (d < -0.05).astype(float), resamples=20000, seed=3
    )
    theirs = sps.bootstrap(
        (d,),
        lambda x, axis=-1: np.exp(x.mean(axis)) - 1,
        method="BCa",
        n_resamples=20000,
        rng=np.random.default_rng(9),
    )
    assert ours["delta_gm"]["bca_low"] == pytest.approx(theirs.confidence_interval.low, abs=0.01)
    assert ours["delta_gm"]["bca_high"] == pytest.approx(theirs.confidence_interval.high, abs=0.01)
    assert ours["delta_gm"]["se"] == pytest.approx(theirs.standard_error, rel=0.03)


def test_same_seed_same_report_other_seed_other_intervals(cells, report):
    again = stats.compute(cells, {"bootstrap_resamples": 3000, "seed": 11})
    assert again.to_json() == report.to_json()
    other = stats.compute(cells, {"bootstrap_resamples": 3000, "seed": 12})
    assert other.lift.delta_gm.tolist() == report.lift.delta_gm.tolist()
    assert other.lift.delta_gm_bca_low.tolist() != report.lift.delta_gm_bca_low.tolist()


def test_default_resamples_are_ten_thousand():
    r = stats.compute(synthetic_cells(2, models=("m",), n_problems=6, replicates=1))
    assert r.config["bootstrap_resamples"] == 10000
    row = r.lift.iloc[0]
    s, n, h, t = _cluster_totals(r, row, r.config["tau"])
    low = stats.bootstrap_paired_lift(
        s, n, h, t, keep_distributions=True, seed=_group_seed(r.config["seed"], "overall|*|*|*|skill")
    )
    assert len(low["delta_gm"]["distribution"]) == 10000
    assert row.delta_gm_bca_low == low["delta_gm"]["bca_low"]


# ------------------------------------------------------------------------------------------------
# Relative standing and its control


def test_relative_standing_with_wilson_intervals(report, reference):
    tau = report.config["tau"]
    standing = report.standing
    checked = 0
    for level in report.levels:
        for key, sub in _groups(reference, level):
            for arm in ("skill", "control"):
                for where in ("above", "level", "below"):
                    s = sub[(sub.standing == where) & (sub.has_control if arm == "control" else True)]
                    d = s.d if arm == "skill" else s.d_control
                    row = standing[
                        (standing.level == level)
                        & (standing.arm == arm)
                        & (standing.standing == where)
                        & (standing.model == key[0])
                        & (standing.direction == key[1])
                        & (standing.family == key[2])
                    ]
                    assert len(row) == 1
                    row = row.iloc[0]
                    n, k_help, k_harm = len(d), int((d > tau).sum()), int((d < -tau).sum())
                    assert (row.n, row.n_help, row.n_harm) == (n, k_help, k_harm)
                    if n == 0:
                        assert math.isnan(row.help_rate)
                        continue
                    for k, prefix in ((k_help, "help"), (k_harm, "harm")):
                        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
                        assert row[f"{prefix}_rate"] == pytest.approx(k / n)
                        assert row[f"{prefix}_low"] == pytest.approx(low, rel=1e-9, abs=1e-12)
                        assert row[f"{prefix}_high"] == pytest.approx(high, rel=1e-9, abs=1e-12)
                    assert row.delta_gm == pytest.approx(math.exp(d.mean()) - 1, rel=1e-12, abs=1e-14)
                    checked += 1
    assert checked > 50


def test_control_rows_only_with_controls():
    r = stats.compute(synthetic_cells(5, controls=False, n_problems=6), {"bootstrap_resamples": 50})
    assert set(r.standing.arm) == {"skill"}
    assert set(r.lift.arm) == {"skill"}
    assert r.counts["n_with_control"] == 0


def test_confidence_level_is_used(cells):
    r = stats.compute(cells, {"bootstrap_resamples": 200}, levels=["overall"], confidence=0.8)
    row = r.standing.iloc[0]
    low, high = proportion_confint(row.n_help, row.n, alpha=0.2, method="wilson")
    assert (row.help_low, row.help_high) == pytest.approx((low, high), rel=1e-9)
    assert r.config["confidence"] == 0.8


# ------------------------------------------------------------------------------------------------
# Building blocks against scipy / statsmodels on many random inputs


def _random_differences(rng, n):
    kind = rng.integers(3)
    if kind == 0:
        return rng.normal(0.1, 1, n)  # no ties
    if kind == 1:
        return np.round(rng.normal(0, 1.5, n))  # ties and zeros
    return np.round(rng.normal(0.3, 1, n), 1)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 14, 25, 50, 51, 120])
def test_wilcoxon_matches_scipy_in_every_method(n):
    rng = np.random.default_rng(n)
    for _ in range(4 if n == 13 else 12):  # scipy's 2^13-permutation test is slow
        d = _random_differences(rng, n)
        if not np.any(d != 0):
            continue
        for method, correction in (("auto", False), ("asymptotic", False), ("asymptotic", True)):
            ours = stats.wilcoxon_signed_rank(d, method=method, correction=correction)
            theirs = sps.wilcoxon(d, zero_method="pratt", method=method, correction=correction)
            assert ours["p_value"] == pytest.approx(theirs.pvalue, rel=RTOL), (d, method, correction)
            assert ours["statistic"] == pytest.approx(theirs.statistic, rel=1e-12)
            if method == "asymptotic":
                assert -abs(ours["z"]) == pytest.approx(theirs.zstatistic, rel=1e-9)
        if 2 <= n <= 13:  # scipy's permutation test needs two observations
            # Our "exact" with ties or zeros is scipy's exhaustive sign-flip permutation test.
            ours = stats.wilcoxon_signed_rank(d, method="exact")
            theirs = sps.wilcoxon(d, zero_method="pratt", method=sps.PermutationMethod())
            assert ours["p_value"] == pytest.approx(theirs.pvalue, rel=RTOL)


def test_wilcoxon_edge_cases():
    zeros = [0.0] * 5
    ours = stats.wilcoxon_signed_rank(zeros)
    assert ours["p_value"] == 1.0 and ours["n_zero"] == 5  # every sign flip gives W+ = 0
    assert math.isnan(stats.wilcoxon_signed_rank(zeros, method="asymptotic")["p_value"])
    assert math.isnan(stats.wilcoxon_signed_rank([])["p_value"])
    with pytest.raises(mkb.InvalidArgumentError, match=r"d\[1\]"):
        stats.wilcoxon_signed_rank([1.0, math.nan])
    with pytest.raises(mkb.InvalidArgumentError, match="method"):
        stats.wilcoxon_signed_rank([1.0], method="bogus")


def test_sign_mcnemar_holm_bh_wilson_match_references():
    rng = np.random.default_rng(7)
    for _ in range(40):
        d = np.round(rng.normal(0.2, 1, rng.integers(1, 60)))
        k, n = int((d > 0).sum()), int((d != 0).sum())
        expected = sps.binomtest(k, n).pvalue if n else 1.0
        assert stats.sign_test(d)["p_value"] == pytest.approx(expected, rel=RTOL)

        table = rng.integers(0, 30, size=4)
        ours = stats.mcnemar_exact(*table)
        theirs = mcnemar([[table[0], table[1]], [table[2], table[3]]], exact=True).pvalue
        assert ours["p_value"] == pytest.approx(theirs, rel=RTOL)

        p = rng.uniform(0, 0.2, rng.integers(1, 15)) ** 2
        np.testing.assert_allclose(stats.holm(p), multipletests(p, method="holm")[1], rtol=1e-12)
        np.testing.assert_allclose(
            stats.benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], rtol=1e-12
        )

        n_trials = int(rng.integers(1, 200))
        successes = int(rng.integers(0, n_trials + 1))
        rate, low, high = stats.wilson_interval(successes, n_trials, 0.95)
        ref_low, ref_high = proportion_confint(successes, n_trials, alpha=0.05, method="wilson")
        assert (low, high) == pytest.approx((ref_low, ref_high), rel=1e-9, abs=1e-12)
    adjusted = stats.holm([0.01, math.nan, 0.04])
    assert math.isnan(adjusted[1])
    np.testing.assert_allclose([adjusted[0], adjusted[2]], multipletests([0.01, 0.04], method="holm")[1])
    assert stats.mcnemar_exact(5, 0, 0, 5)["p_value"] == mcnemar([[5, 0], [0, 5]], exact=True).pvalue == 1.0


# ------------------------------------------------------------------------------------------------
# Edge cases of whole reports


def _cell(slug, base, skill, source=None, *, family="moe", replicate=0, model="m", direction="cutedsl2tirx"):
    cell = {
        "model": model,
        "direction": direction,
        "problem_slug": slug,
        "family": family,
        "replicate": replicate,
        "base": base,
        "skill": skill,
    }
    if source is not None:
        cell["source"] = source
    return cell


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy's z of an all-zero sample
def test_all_pairs_tied():
    cells = [
        _cell(
            f"p{i}",
            {"passed": True, "speedup": 1.0 + i},
            {"passed": True, "speedup": 1.0 + i},
            {"passed": True, "speedup": 1.0},
        )
        for i in range(8)
    ]
    r = stats.compute(cells, {"bootstrap_resamples": 500})
    row = r.lift[r.lift.level == "overall"].iloc[0]
    assert row.delta_gm == 0.0 and row.help_rate == 0.0 and row.harm_rate == 0.0
    assert (row.delta_gm_percentile_low, row.delta_gm_bca_high) == (0.0, 0.0)
    assert row.delta_gm_bca_fallback
    expected = sps.wilcoxon(np.zeros(8), zero_method="pratt")
    assert row.wilcoxon_p_value == pytest.approx(expected.pvalue, rel=RTOL)
    assert (row.wilcoxon_n_zero, row.sign_p_value, row.mcnemar_p_value) == (8, 1.0, 1.0)
    assert (r.aggregates[r.aggregates.arm == "lift"].S == 0).all()


def test_all_failures():
    cells = [_cell(f"p{i}", {"passed": False}, {"passed": False}, {"passed": False}) for i in range(5)]
    r = stats.compute(cells, {"bootstrap_resamples": 100})
    assert (r.comparisons.q_base == math.log(FLOOR)).all()
    assert (r.comparisons.d == 0).all()
    agg = r.aggregates[(r.aggregates.model == "*") & (r.aggregates.split == "all")]
    assert (agg[[f"R@{t:g}" for t in THRESHOLDS]] == 0).all().all()
    level = r.standing[(r.standing.level == "overall") & (r.standing.standing == "level")].iloc[0]
    assert (level.n, level.n_help, level.n_harm) == (5, 0, 0)
    row = r.lift.iloc[0]
    assert row.mcnemar_both_failed == 5 and row.mcnemar_p_value == 1.0


def test_one_problem():
    cells = [
        _cell("only", {"passed": True, "speedup": 1.0}, {"passed": True, "speedup": s}, replicate=i)
        for i, s in enumerate([2.0, 0.5, 3.0])
    ]
    r = stats.compute(cells, {"bootstrap_resamples": 300})
    row = r.lift[r.lift.level == "overall"].iloc[0]
    expected = math.exp(np.mean(np.log([2.0, 0.5, 3.0]))) - 1
    assert row.n_problems == 1 and row.n_comparisons == 3
    assert row.delta_gm == pytest.approx(expected)
    assert row.delta_gm_percentile_low == pytest.approx(expected)
    assert row.delta_gm_bca_fallback
    # One problem-level difference, positive: W+ = 1, p = 1 (scipy agrees).
    assert row.wilcoxon_p_value == pytest.approx(sps.wilcoxon([np.log(3.0) / 3], zero_method="pratt").pvalue)
    assert row.sign_p_value == 1.0


def test_skipped_arms_count_as_their_base():
    cells = [
        _cell("p0", {"passed": True, "speedup": 1.5}, {"skipped": True}, {"passed": True, "speedup": 3.0}),
        _cell("p1", {"passed": False}, {"skipped": True, "passed": True, "speedup": 9.0}, {"passed": False}),
        _cell(
            "p2",
            {"passed": True, "speedup": 1.0},
            {"passed": True, "speedup": 2.0},
            {"passed": True, "speedup": 2.0},
        ),
    ]
    r = stats.compute(cells, {"bootstrap_resamples": 100})
    comp = r.comparisons
    assert comp.skill_skipped.tolist() == [True, True, False]
    assert comp.d.tolist()[:2] == [0.0, 0.0]  # the skill fields of a skipped arm are ignored
    assert comp.skill_speedup.iloc[0] == 1.5
    with_skill = r.aggregates[(r.aggregates.model == "*") & (r.aggregates.split == "with_skill")]
    assert set(with_skill.n) == {1}
    row = r.lift[r.lift.level == "overall"].iloc[0]
    assert row.n_skipped == 2 and row.n_comparisons == 3
    usage = r.usage.set_index(["model", "arm"]).loc[("*", "cutedsl2tirx_skill")]
    assert (usage.attempts, usage.skipped) == (1, 2)


def test_unresolved_attempts_are_left_out():
    cells = [
        _cell("p0", {"passed": True, "speedup": 2.0, "resolved": False}, {"passed": True, "speedup": 2.0}),
        _cell("p1", {"passed": True, "speedup": 2.0}, {"passed": True, "speedup": 2.0, "resolved": False}),
        _cell("p2", {"passed": True, "speedup": 2.0}, {"passed": True, "speedup": 4.0}),
    ]
    r = stats.compute(cells, {"bootstrap_resamples": 100})
    assert r.counts == {"n_cells": 3, "n_resolved": 1, "n_with_control": 0}
    assert r.comparisons.problem_slug.tolist() == ["p2"]
    assert r.comparisons.standing.tolist() == ["source_unresolved"]


def test_empty_input():
    r = stats.compute([])
    assert r.counts["n_resolved"] == 0
    assert r.lift.empty and list(r.lift.columns)[:5] == ["level", "model", "direction", "family", "arm"]
    assert r.aggregates.S.isna().all()


# ------------------------------------------------------------------------------------------------
# Input forms, errors, JSON


def _flat(cells):
    rows = []
    for c in cells:
        row = {k: c[k] for k in ("model", "direction", "problem_slug", "family", "replicate")}
        for role in ("source", "base", "skill", "control"):
            arm = c.get(role)
            if arm is None:
                continue
            for key, value in arm.items():
                if key == "usage":
                    for u, v in value.items():
                        row[f"{role}_{u}"] = v
                else:
                    row[f"{role}_{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows)


def test_a_flat_dataframe_gives_the_same_report(cells, report):
    frame = _flat(cells)
    assert frame.skill_passed.isna().any()  # skipped arms: pandas upcasts the bool column
    from_frame = stats.compute(frame, {"bootstrap_resamples": 3000, "seed": 11})
    assert from_frame.to_json() == report.to_json()


def test_errors_name_the_field(cells):
    bad = [dict(c) for c in cells[:3]]
    bad[2] = {**bad[2], "base": {"passed": True, "speedup": -2.0}}
    with pytest.raises(mkb.InvalidArgumentError, match=r"cells\[2\]\.base\.speedup: must be >= 0"):
        stats.compute(bad)
    with pytest.raises(mkb.InvalidArgumentError, match=r"cells\[0\]\.family: 'gemm' is not one of"):
        stats.compute([{**cells[0], "family": "gemm"}])
    with pytest.raises(mkb.InvalidArgumentError, match=r"cells\[1\]: duplicates cells\[0\]"):
        stats.compute([cells[0], cells[0]])
    with pytest.raises(mkb.InvalidArgumentError, match=r"config\.clip_high"):
        stats.compute(cells[:2], {"clip_low": 8.0, "clip_high": 4.0})
    with pytest.raises(mkb.InvalidArgumentError, match=r"options\.levels\[0\]"):
        stats.compute(cells[:2], levels=["model,gpu"])
    with pytest.raises(ValueError, match=r"options\.confidence"):
        stats.compute(cells[:2], confidence=1.0)
    with pytest.raises(mkb.InvalidArgumentError, match=r"cells\[0\]\.base: required"):
        stats.validate_cells([{k: v for k, v in cells[0].items() if k != "base"}])


def _keys(value, out):
    if isinstance(value, dict):
        for key, sub in value.items():
            out.add(key)
            _keys(sub, out)
    elif isinstance(value, list):
        for sub in value:
            _keys(sub, out)
    return out


def test_json_keys_are_stable_and_documented(report):
    document = report.to_dict()
    assert list(document) == [
        "config",
        "confidence",
        "tau",
        "levels",
        "n_cells",
        "n_resolved",
        "n_with_control",
        "aggregates",
        "usage",
        "comparisons",
        "tiers",
        "lift",
        "problems",
        "standing",
        "measurement_noise",
    ]
    assert "NaN" not in report.to_json()
    docs = (REPO / "docs" / "statistics.md").read_text()
    documented = set(re.findall(r"`([a-z_0-9]+)`", docs))
    missing = sorted(_keys(document, set()) - documented)
    assert not missing, f"JSON keys missing from docs/statistics.md: {missing}"
    lift = document["lift"][0]
    assert set(lift["delta_gm"]) == {
        "value",
        "se",
        "percentile_low",
        "percentile_high",
        "bca_low",
        "bca_high",
        "bca_fallback",
    }
    json.loads(report.to_json(indent=0))


def test_the_resolved_states_are_the_cores():
    """Python's default for an arm without `resolved` reads C++'s resolved states (one definition):
    an arm whose state C++ calls resolved counts, any other state does not."""
    from metakernelbench import _core

    assert stats.RESOLVED_STATES == tuple(_core.stats.resolved_states()) == ("finished", "skipped")
    assert "pending" not in stats.RESOLVED_STATES and "blocked" not in stats.RESOLVED_STATES
