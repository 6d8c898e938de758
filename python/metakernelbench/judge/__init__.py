"""The judge (SPEC §3): evaluate a kernel.py on a problem, get a Verdict.

    verdict = mkb.evaluate("fused_add_rmsnorm_h4096_llama31_8b_bf16", "cutedsl", source)
    print(mkb.report(verdict))

Every evaluation runs in a fresh judge host process started by the C++ core (mkb::Judge),
which forks a sandboxed worker for the kernel; nothing of the kernel runs in the caller's
process. See docs/judge.md.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import _core
from ..suite import Problem, load_suite


def _problem_dir(problem: Problem | str | int | _core.Message, suite_root: str | Path | None) -> str:
    if isinstance(problem, Problem):
        return str(problem.directory)
    if isinstance(problem, _core.Message):
        return problem.directory
    return str(load_suite(suite_root).find(problem).directory)


def evaluate(
    problem: Problem | str | int,
    dsl: str,
    source: str | bytes | None = None,
    *,
    path: str | os.PathLike | None = None,
    device: str = "auto",
    workload: str | None = None,
    config: dict[str, Any] | None = None,
    suite_root: str | Path | None = None,
    python: str | None = None,
    gpus: str | Sequence[str | int] | None = None,
) -> _core.Message:
    """Evaluates a kernel (its source text, or the file at `path`) in `dsl` ('cutedsl' or 'tirx')
    on `problem` (a Problem, slug or number). `device`: 'auto', 'cpu' or 'cuda'; `workload`:
    'full' or 'small' (default: full on CUDA, small on the CPU); `config`: JudgeConfig fields,
    e.g. {'timing_draws': 20, 'policy': {'permissive': True}}. `gpus`: the GPUs the judge may
    use ("0,1" or [0, 1]; default every visible one): each evaluation holds one for its whole
    duration, so concurrent calls (from threads) never share a GPU; the verdict's environment
    names the GPU (visible_devices, gpu_index, gpu_uuid). Returns the Verdict.

    Blocks for the whole evaluation. A kernel that fails is a verdict, not an exception; an
    exception means the judge itself could not run."""
    if (source is None) == (path is None):
        raise _core.InvalidArgumentError("evaluate: give exactly one of source or path")
    if path is not None:
        try:
            source = Path(path).read_bytes()  # as it is: the judge tells a non-UTF-8 file
        except OSError as error:
            raise _core.NotFoundError(f"{path}: {error.strerror}") from None
    if device not in ("auto", "cpu", "cuda"):
        raise _core.InvalidArgumentError(f"device: '{device}' is not one of auto, cpu, cuda")
    request = {
        "problem_dir": _problem_dir(problem, suite_root),
        "kernel_source": source,
        "dsl": dsl,
        "device": "device_kind_unspecified" if device == "auto" else device,
        "workload": workload or "",
        "config": config or {},
    }
    if device == "auto":
        del request["device"]
    return _judge(python or sys.executable, gpu_list(gpus)).evaluate(request)


def gpu_list(gpus: str | Sequence[str | int] | None) -> str:
    """The --gpus form ("0,1") of a GPU list given as a string, a sequence or None (every
    visible GPU: "")."""
    if gpus is None:
        return ""
    if isinstance(gpus, str):
        return gpus
    return ",".join(str(g) for g in gpus)


_JUDGES: dict[tuple, _core.Judge] = {}
_JUDGES_LOCK = threading.Lock()


def _judge(python: str, gpus: str = "") -> _core.Judge:
    """One judge per interpreter, environment and GPU set, forking each evaluation's host from a
    template per DSL that imported torch and the DSL once (those imports dominated an
    evaluation's start). Shared by threads: the judge spreads their evaluations over its GPUs."""
    environment = tuple(f"{k}={v}" for k, v in sorted(os.environ.items()))
    key = (python, environment, gpus)
    with _JUDGES_LOCK:
        judge = _JUDGES.get(key)
        if judge is None:
            _JUDGES.clear()  # a changed environment retires the old judge and its warm hosts
            judge = _JUDGES[key] = _core.Judge(
                python, list(environment), keep_warm_host=True, gpus=gpus, host_template=True
            )
    return judge


def report(verdict: _core.Message, show_environment: bool = True) -> str:
    """The readable report an agent sees: status, draws, first mismatch, timing, audit
    findings, output tails. No seeds, no judge internals."""
    return _core.render_report(verdict, show_environment)


__all__ = ["evaluate", "report"]
