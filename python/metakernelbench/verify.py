"""`mkb suite verify-solutions`: judge every shipped reference solution and tabulate it.

Each problem may ship `solutions/<dsl>.py` (written by us, read by people: a header says the
approach). Every one is evaluated by the real judge, like a submission, and the table records per
problem x DSL: the verdict, the parity speedup over eager, the CUPTI GPU span and the kernel's
share of the physical floor (bytes / measured copy bandwidth, flops / the GPU's dense peak: 100%
would be a kernel at the roofline), and the compile time (the first call's wall-clock minus a
steady call's). Results are appended to a JSON file as they come, so a killed run resumes.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import toolchains
from .suite import Problem, Suite

# Dense tensor-core peaks (FLOP/s) by GPU name, for the compute side of the floor. Unknown GPUs
# use the bytes side only.
DENSE_PEAK_FLOPS = {"H200": 989e12, "H100": 989e12, "B200": 2250e12, "GB200": 2500e12}


@dataclass
class SolutionRow:
    number: int
    slug: str
    dsl: str
    solution: str
    status: str
    passed: bool
    speedup_vs_eager: float | None = None
    speedup_span: float | None = None
    kernel_ms: float | None = None  # parity (end to end) median
    eager_ms: float | None = None
    span_ms: float | None = None  # CUPTI GPU span median
    span_ci95: tuple[float, float] | None = None
    floor_ms: float | None = None
    floor_pct: float | None = None  # floor / span
    compile_s: float | None = None
    wall_s: float | None = None  # the whole evaluation, as the caller waited for it
    message: str = ""
    detail: str = ""  # for a failure: the worker's traceback / stderr tail
    kernels: list[str] | None = None
    # The host's clock around the worker's (PhaseTimes.steps "timing.clock_gap*"): the median time
    # of a timed call outside the worker's clock, the calibrated no-op's, and the bound.
    clock_gap_ms: float | None = None
    clock_gap_calibrated_ms: float | None = None
    clock_gap_allowed_ms: float | None = None
    # The worker's CPU time per call, timed and calibrated, and the bound (PhaseTimes.steps
    # "timing.cpu.*": its kernel thread's outside the clock, its main thread's, its other threads').
    cpu: dict[str, float] | None = None
    # Where the evaluation's time went (PhaseTimes, seconds: queue, host, compile, the passes and
    # their steps other than the ones above).
    phases: dict[str, float] | None = None
    dsl_versions: dict[str, str] | None = None
    # What was judged: the problem's fingerprint and the solution file's SHA-256. A row whose
    # problem or solution has changed since is stale (not resumed from, not cited).
    problem_fingerprint: str | None = None
    solution_sha256: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def solutions(
    suite: Suite, dsls: tuple[str, ...] = toolchains.DSLS, problems: list[Problem] | None = None
) -> list[tuple[Problem, str, Path]]:
    out = []
    for problem in problems if problems is not None else list(suite):
        for dsl in dsls:
            path = problem.directory / "solutions" / f"{dsl}.py"
            if path.is_file():
                out.append((problem, dsl, path))
    return out


def floor_ms(problem: Problem, workload: str, bandwidth: float, gpu_name: str) -> float | None:
    roofline = problem.roofline(workload)
    parts = []
    if bandwidth > 0 and roofline["min_bytes"] > 0:
        parts.append(roofline["min_bytes"] / bandwidth * 1e3)
    peak = next((v for k, v in DENSE_PEAK_FLOPS.items() if k in gpu_name), None)
    if peak and roofline["flops"] > 0:
        parts.append(roofline["flops"] / peak * 1e3)
    return max(parts) if parts else None


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def is_current(row: dict, problem: Problem, path: Path) -> bool:
    """Whether a table row judged this problem's current definition and this solution file."""
    return row.get("problem_fingerprint") == problem.fingerprint and row.get(
        "solution_sha256"
    ) == file_sha256(path)


def row_from_verdict(problem: Problem, dsl: str, path: Path, verdict, bandwidth: float) -> SolutionRow:
    status = verdict.status if isinstance(verdict.status, str) else str(verdict.status)
    row = SolutionRow(
        problem.number,
        problem.slug,
        dsl,
        str(path),
        status.lower(),
        bool(verdict.passed),
        message=verdict.message,
        problem_fingerprint=problem.fingerprint,
        solution_sha256=file_sha256(path),
    )
    if verdict.has("speedup_vs_eager"):
        row.speedup_vs_eager = verdict.speedup_vs_eager
    if verdict.has("speedup_span"):
        row.speedup_span = verdict.speedup_span

    def summary(name):
        value = getattr(verdict, name, None)
        return value if value is not None and value.samples else None

    if summary("kernel_parity") and summary("eager_parity"):
        row.kernel_ms = verdict.kernel_parity.median_ms
        row.eager_ms = verdict.eager_parity.median_ms
    if summary("kernel_span"):
        row.span_ms = verdict.kernel_span.median_ms
        row.span_ci95 = (verdict.kernel_span.ci95_low_ms, verdict.kernel_span.ci95_high_ms)
    env = verdict.environment
    row.floor_ms = floor_ms(problem, verdict.workload or "full", bandwidth, env.gpu_name if env else "")
    if row.floor_ms and row.span_ms:
        row.floor_pct = 100.0 * row.floor_ms / row.span_ms
    calls = [d.solve_seconds for d in verdict.draws if d.solve_seconds > 0]
    if len(calls) >= 2:
        row.compile_s = max(0.0, calls[0] - statistics.median(calls[1:]))
    process = getattr(verdict, "process", None)
    if not row.passed and process is not None:
        row.detail = (process.traceback or process.stderr_tail or "")[-2000:]
    row.kernels = list(verdict.kernel_names)
    phases = getattr(verdict, "phase_times", None)
    steps = phases.to_dict().get("steps", {}) if phases is not None else {}
    row.clock_gap_ms = steps.get("timing.clock_gap_ms")
    row.clock_gap_calibrated_ms = steps.get("timing.clock_gap_calibrated_ms")
    row.clock_gap_allowed_ms = steps.get("timing.clock_gap_allowed_ms")
    row.cpu = {k.removeprefix("timing.cpu."): v for k, v in steps.items() if k.startswith("timing.cpu.")}
    if phases is not None:
        split = {k: v for k, v in phases.to_dict().items() if isinstance(v, (int, float))}
        split.update(
            {k: v for k, v in steps.items() if not k.startswith(("timing.cpu.", "timing.clock_gap"))}
        )
        row.phases = split
    row.dsl_versions = {p.name: p.version for p in env.dsl_versions} if env else {}
    return row


def verify(
    suite: Suite,
    out: Path,
    device: str = "cuda",
    dsls: tuple[str, ...] = toolchains.DSLS,
    problems: list[Problem] | None = None,
    config: dict | None = None,
    resume: bool = True,
    progress: Callable[[str], None] = print,
) -> dict:
    """Evaluates every shipped solution; writes `out` (JSON) after each one. Returns the table."""
    from . import _core
    from .judge import evaluate

    todo = solutions(suite, dsls, problems)
    previous = {}
    if resume and out.is_file():
        try:
            for r in json.loads(out.read_text()).get("rows", []):
                previous[(r["slug"], r["dsl"])] = r
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
            raise toolchains.Error(f"{out}: cannot resume from it ({error}); move it away") from None
    bandwidth = 0.0
    if device == "cuda":
        import torch

        bandwidth = _core.cuda.copy_bandwidth(torch.cuda.current_device())
    table = {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device,
        "copy_bandwidth_bytes_per_s": bandwidth,
        "environment": {},
        "rows": [],
    }
    # Rows of an earlier run that this run does not redo are kept as they are.
    chosen = {(p.slug, d) for p, d, _ in todo}
    table["rows"] = [r for key, r in previous.items() if key not in chosen]
    for i, (problem, dsl, path) in enumerate(todo, 1):
        key = (problem.slug, dsl)
        if (
            key in previous
            and previous[key].get("status") != "infra_error"
            and is_current(previous[key], problem, path)
        ):
            table["rows"].append(previous[key])
            progress(f"[{i}/{len(todo)}] {problem.number:02d} {dsl}: kept from {out.name}")
            continue
        progress(f"[{i}/{len(todo)}] {problem.number:02d} {problem.slug} ({dsl}) ...")
        sites = toolchains.site_dirs(dsl, required=True)
        started = time.perf_counter()
        verdict = evaluate(
            problem, dsl, path=path, device=device, config=dict(config or {}, dsl_site_dirs=sites)
        )
        row = row_from_verdict(problem, dsl, path, verdict, bandwidth)
        row.wall_s = time.perf_counter() - started
        env = verdict.environment
        if env is not None:
            table["environment"] = {
                "gpu": env.gpu_name,
                "arch": env.gpu_arch,
                "driver": env.driver_version,
                "cuda": env.cuda_runtime_version,
                "torch": env.torch_version,
                "python": env.python_version,
            }
        table["rows"].append(row.to_dict())
        table["rows"].sort(key=lambda r: (r["number"], r["dsl"]))
        walls = [r["wall_s"] for r in table["rows"] if r.get("wall_s")]
        if walls:
            table["evaluations_per_gpu_hour"] = 3600.0 / statistics.median(walls)
        speedup = f", {row.speedup_vs_eager:.2f}x eager" if row.speedup_vs_eager else ""
        progress(
            f"    {row.status}"
            + speedup
            + (f", span {row.span_ms * 1e3:.1f} us" if row.span_ms else "")
            + (f" ({row.floor_pct:.0f}% of the floor)" if row.floor_pct else "")
            + ("" if row.passed else f": {row.message}\n{row.detail}")
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".partial")
        tmp.write_text(json.dumps(table, indent=2) + "\n")
        tmp.replace(out)
    return table
