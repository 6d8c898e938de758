"""Checks that a problem is well posed (issue: `mkb suite validate`).

For every problem: it loads; its reference runs on the small workload with outputs that match
the metadata, are finite, deterministic for a seed and different across seeds, and leave the
inputs alone (except `in_place` ones); and the trivial candidates — zeros, a constant, random
values, an input passed through, the reference at low precision where that misses the
allowance — all fail the judge's correctness rule (the C++ comparison the judge uses). Where
reference.py defines a faster correctness_reference, the published reference must agree with it.
On a GPU it also runs the full workload: peak memory against the estimate, and the eager time.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field

import torch

from . import _core
from .judge import values
from .suite import Problem


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class ProblemReport:
    number: int
    slug: str
    family: str
    checks: list[Check] = field(default_factory=list)
    worst_factor: dict[str, float] = field(default_factory=dict)  # candidate -> min over seeds of its factor
    full: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict:
        """As strict JSON holds it: an infinite factor is null, and the candidates whose factor is
        infinite (an exact output differs, a NaN, a wrong shape or dtype) are listed, unbounded."""
        factors = {k: (v if math.isfinite(v) else None) for k, v in self.worst_factor.items()}
        unbounded = [k for k, v in self.worst_factor.items() if math.isinf(v)]
        return {"number": self.number, "slug": self.slug, "family": self.family, "ok": self.ok,
                "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
                "trivial_candidate_factor": factors, "trivial_candidate_unbounded": unbounded,
                "full_workload": self.full}


def _outputs(problem: Problem, out) -> list:
    container = problem.message.output_container
    if container == "single_tensor":
        return [out] if isinstance(out, torch.Tensor) else None
    wanted = tuple if container == "tuple" else list
    return list(out) if type(out) is wanted else None


def _shape(problem: Problem, spec) -> tuple:
    """The spec's shape on the small workload, a drawn dimension as 'lo..hi'."""
    return tuple(lo if lo == hi else f"{lo}..{hi}" for lo, hi in problem.dimensions(spec, "small"))


@contextlib.contextmanager
def _no_upcast():
    """The reference computed in its input dtypes: torch.promote_types returns its first
    (floating) argument, as references derive their compute dtype through it."""
    original = torch.promote_types

    def first(a, b):
        return a if a.is_floating_point else original(a, b)

    torch.promote_types = first
    try:
        yield
    finally:
        torch.promote_types = original


def _scalar_problems(x, spec) -> list[str]:
    """What is wrong with a drawn scalar input against its spec: its Python type (a bool is not an
    int here, nor an int a float) and, where the spec fixes it, its value."""
    wanted = _core.python_scalar_type(spec.dtype)
    if type(x).__name__ != wanted or type(x) not in (float, int, bool):
        return [f"input {spec.name}: a {type(x).__name__}, metadata a Python {wanted} scalar"]
    if spec.value is not None and x != spec.value:
        return [f"input {spec.name}: {x!r}, metadata fixes it at "
                f"{_core.python_scalar_literal(spec.dtype, spec.value)}"]
    return []


def factor_over_allowance(problem: Problem, outs: list, expected: list, anchor: list) -> float:
    """The largest factor over the allowance among the outputs (inf for a failed exact output,
    a NaN, or a wrong shape / dtype); a value <= 1 means the candidate passes."""
    tolerance = problem.message.tolerance
    factor_, scale = (tolerance.allowance_factor, tolerance.eps_scale) if tolerance is not None else (0.0, 0.0)
    specs = list(problem.message.outputs)
    worst = 0.0
    for i, (o, e, a) in enumerate(zip(outs, expected, anchor)):
        if not isinstance(o, torch.Tensor) or o.shape != e.shape or o.dtype != e.dtype:
            return float("inf")
        leaf = values.comparison_leaf("", o, e, a, specs[i].exact if i < len(specs) else False)
        r = _core.compare_tensor(*leaf[1:], factor_, scale)
        exact = leaf[-1]
        worst = max(worst, (0.0 if r["passed"] else float("inf")) if exact else r["factor_over"])
    return worst


def _candidates(problem: Problem, inputs: list, expected: list) -> dict:
    out = {
        "zeros": [torch.zeros_like(e) for e in expected],
        "constant": [torch.ones_like(e) for e in expected],
        "random": [(torch.randn(e.shape, device=e.device).to(e.dtype) if e.is_floating_point()
                    else torch.randint(-3, 4, e.shape, device=e.device).to(e.dtype)) for e in expected],
    }
    passthrough, matched = [], False
    for e in expected:
        match = next((x for x in inputs if isinstance(x, torch.Tensor) and x.shape == e.shape and x.dtype == e.dtype),
                     None)
        matched |= match is not None
        passthrough.append(match.clone() if match is not None else torch.zeros_like(e))
    if matched:
        out["passthrough"] = passthrough
    return out


# How closely the float64 results of the two formulations of a slow reference must agree, relative
# to the largest magnitude of the output: the same computation differs only by float64 rounding.
FORMULATION_AGREEMENT = 1e-9


def _formulations_disagree(problem: Problem, draw: list, expected: list, anchor: list,
                           seed: int) -> list[str]:
    """Where a problem's published `reference` and its faster `correctness_reference` differ on a
    draw: the published one, taken as a candidate, must pass the judge's rule against the other's
    expected outputs and anchors, and the two float64 runs must agree to FORMULATION_AGREEMENT."""
    out = []
    published = _outputs(problem, problem.reference(*[values.clone(x) for x in draw]))
    factor = factor_over_allowance(problem, published, expected, anchor)
    if factor > 1:
        out.append(f"seed {seed}: reference misses the allowance of correctness_reference by {factor:.3g}x")
    wide = _outputs(problem, problem.reference(*values.upcast(draw)))
    for spec, a, b in zip(problem.message.outputs, wide, anchor):
        if a.dtype != b.dtype or a.shape != b.shape:
            out.append(f"seed {seed}: {spec.name}: float64 runs return {a.dtype}{tuple(a.shape)} and "
                       f"{b.dtype}{tuple(b.shape)}")
        elif not a.is_floating_point():
            if not torch.equal(a, b):
                out.append(f"seed {seed}: {spec.name}: float64 runs differ")
        else:
            scale = max(float(b.abs().max()), 1e-30) if b.numel() else 1.0
            gap = float((a.double() - b.double()).abs().max()) if b.numel() else 0.0
            if not gap <= FORMULATION_AGREEMENT * scale:
                out.append(f"seed {seed}: {spec.name}: float64 runs differ by {gap:.3g} "
                           f"(allowed {FORMULATION_AGREEMENT:g} x {scale:.3g})")
    return out


def validate_problem(problem: Problem, device: str = "cpu", seeds: tuple[int, ...] = (11, 12, 13),
                     full: bool = False) -> ProblemReport:
    report = ProblemReport(problem.number, problem.slug, problem.family)
    add = report.checks.append
    try:
        problem.module
        add(Check("loads", True))
    except Exception as error:  # noqa: BLE001 - a broken reference.py is what this reports
        add(Check("loads", False, f"{type(error).__name__}: {error}"))
        return report
    try:
        inputs = problem.make_inputs("small", device=device, seed=seeds[0])
        start = time.perf_counter()
        raw = problem.reference(*[values.clone(x) for x in inputs])
        seconds = time.perf_counter() - start
        outs = _outputs(problem, raw)
        add(Check("reference runs", True, f"{seconds * 1e3:.1f} ms on the small workload"))
    except Exception as error:  # noqa: BLE001
        add(Check("reference runs", False, f"{type(error).__name__}: {error}"))
        return report

    problems = []
    if outs is None or len(outs) != len(problem.message.outputs):
        problems.append(f"returns {type(raw).__name__}, metadata says {problem.message.output_container} of "
                        f"{len(problem.message.outputs)}")
    else:
        for o, spec in zip(outs, problem.message.outputs):
            if (type(o) is not torch.Tensor or values.dtype_name(o) != spec.dtype
                    or not problem.shape_fits(o.shape, spec, "small")):
                problems.append(f"{spec.name}: {getattr(o, 'dtype', type(o))}{tuple(getattr(o, 'shape', ()))}, "
                                f"metadata {spec.dtype}{_shape(problem, spec)}")
    if len(inputs) != len(problem.message.inputs):
        problems.append(f"make_inputs returns {len(inputs)} inputs, metadata lists {len(problem.message.inputs)}")
    for x, spec in zip(inputs, problem.message.inputs):
        if spec.scalar:
            problems += _scalar_problems(x, spec)
        elif not isinstance(x, torch.Tensor):
            problems.append(f"input {spec.name}: a {type(x).__name__}, metadata a {spec.dtype} tensor")
        elif values.dtype_name(x) != spec.dtype or not problem.shape_fits(x.shape, spec, "small"):
            problems.append(f"input {spec.name}: {x.dtype}{tuple(x.shape)}, metadata {spec.dtype}{_shape(problem, spec)}")
    add(Check("matches metadata", not problems, "; ".join(problems)))
    if problems:
        return report
    finite = all(torch.isfinite(o.float()).all() for o in outs if o.is_floating_point())
    add(Check("outputs finite", bool(finite)))
    again = _outputs(problem, problem.reference(*problem.make_inputs("small", device=device, seed=seeds[0])))
    add(Check("deterministic for a seed", all(torch.equal(a, b) for a, b in zip(outs, again))))
    other = _outputs(problem, problem.reference(*problem.make_inputs("small", device=device, seed=seeds[1])))
    add(Check("varies across seeds", not all(torch.equal(a, b) for a, b in zip(outs, other))))
    fresh = problem.make_inputs("small", device=device, seed=seeds[0])
    kept = [values.clone(x) for x in fresh]
    problem.reference(*fresh)
    touched = [spec.name for x, y, spec in zip(fresh, kept, problem.message.inputs)
               if not spec.in_place and isinstance(x, torch.Tensor) and not torch.equal(x, y)]
    add(Check("inputs untouched", not touched, ", ".join(touched)))

    factors: dict[str, list[float]] = {}
    disagreements = []
    for seed in seeds:
        draw = problem.make_inputs("small", device=device, seed=seed)
        expected = _outputs(problem, problem.correctness_reference(*[values.clone(x) for x in draw]))
        anchor = _outputs(problem, problem.correctness_reference(*values.upcast(draw)))
        torch.manual_seed(seed + 1000)
        for name, candidate in _candidates(problem, draw, expected).items():
            factors.setdefault(name, []).append(factor_over_allowance(problem, candidate, expected, anchor))
        with _no_upcast():
            low = _outputs(problem, problem.correctness_reference(*[values.clone(x) for x in draw]))
        factors.setdefault("low_precision", []).append(factor_over_allowance(problem, low, expected, anchor))
        if problem.has_correctness_reference:
            disagreements += _formulations_disagree(problem, draw, expected, anchor, seed)
    if problem.has_correctness_reference:
        add(Check("correctness_reference agrees with reference", not disagreements, "; ".join(disagreements)))
    report.worst_factor = {name: min(f) for name, f in factors.items()}
    for name, f in factors.items():
        if name == "low_precision":
            detail = ("within the allowance (allowed: low precision is legitimate where it meets the tolerance)"
                      if min(f) <= 1 else f"fails by {min(f):.3g}x")
            add(Check("low precision", True, detail))
            continue
        passing = [seed for seed, value in zip(seeds, f) if value <= 1]
        add(Check(f"{name} fails", not passing,
                  f"passes on seed(s) {passing}" if passing else f"fails by >= {min(f):.3g}x"))

    if full and device == "cuda":
        report.full = _full_workload(problem)
        estimate = problem.workload("full").peak_memory_bytes
        add(Check("full workload within memory estimate", report.full["peak_memory_bytes"] <= 1.25 * estimate,
                  f"peak {report.full['peak_memory_bytes'] / 2**30:.2f} GiB, estimate {estimate / 2**30:.2f} GiB"))
    return report


def _full_workload(problem: Problem) -> dict:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    inputs = problem.make_inputs("full", device="cuda", seed=5)
    problem.correctness_reference(*[values.clone(x) for x in inputs])
    problem.correctness_reference(*values.upcast(inputs))
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    times = []
    for _ in range(5):
        copies = [values.clone(x) for x in inputs]
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        problem.reference(*copies)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    del inputs
    torch.cuda.empty_cache()
    return {"peak_memory_bytes": peak, "eager_ms": sorted(times)[len(times) // 2]}
