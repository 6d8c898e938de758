"""`mkb check`: compile a kernel.py offline, without a GPU and without spending a submission.

    diagnostics = check_kernel("kernel.py", dsl="cutedsl", problem="fused_add_rmsnorm_h4096_llama31_8b_bf16",
                               arch="sm_90a")

First, the judge's own submission checks, on the bytes of the file: a kernel.py that is empty,
oversized, not UTF-8 or not parsable Python gets one "invalid_submission" diagnostic with the
message the judge would give (such a submission is not counted), and the check stops there.
Then the check runs in a child process with only the DSL's toolchain active (as the judge's worker
does) and no GPU visible (CUDA_VISIBLE_DEVICES is emptied): it runs the judge's static audit (the
same policy findings a submission would get),
imports it (import-time errors with kernel.py's line), then hands it to the DSL's hook
(dslcheck/<dsl>.py), which compiles every kernel the module defines or builds for `arch` from the
problem's small workload, launching nothing. Each result is a Diagnostic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import Error

KINDS = ("invalid_submission", "syntax", "audit", "import", "compile", "runtime", "timeout", "ok")


@dataclass
class Diagnostic:
    kind: str  # one of KINDS; everything but "ok" is an error
    message: str
    line: int | None = None
    detail: str = ""

    @property
    def is_error(self) -> bool:
        return self.kind != "ok"

    def render(self, filename: str = "kernel.py") -> str:
        where = f"{filename}:{self.line}: " if self.line else f"{filename}: "
        if self.kind == "invalid_submission":  # the judge's message says so itself
            return f"{where}{self.message}"
        return f"{where}{self.kind}: {self.message}"


@dataclass
class CheckResult:
    kernel: str
    dsl: str
    problem: str
    arch: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def default_arch() -> str | None:
    """MKB_TARGET_ARCH, else the local GPU's (sm_XY, with 'a' for Hopper and later), else None."""
    env = os.environ.get("MKB_TARGET_ARCH")
    if env:
        return env
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    except Exception:
        pass
    return None


def check_arch(arch: str) -> str:
    import re

    if not re.fullmatch(r"sm_\d{2,3}[af]?", arch or ""):
        raise Error(f"--arch: '{arch}' is not a CUDA architecture like sm_90a or sm_100a")
    return arch


def submission_diagnostic(data: bytes, dsl: str, problem, filename: str = "kernel.py") -> Diagnostic | None:
    """The judge's verdict on a kernel it refuses without evaluating it, as a diagnostic: the
    C++ checks (empty, oversized, not UTF-8, NUL bytes: libmkb/agent/submission_check.h), then
    Python's parser, as the judge host runs it; each message is the judge's. None: it would be
    evaluated."""
    from .. import _core

    config = _core.judge_config()
    refused = _core.refuse_before_judging(problem.message, dsl, data)
    if refused is not None:
        line = None
        if len(data) <= config.max_kernel_bytes:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as error:
                line = data.count(b"\n", 0, error.start) + 1
        return Diagnostic("invalid_submission", refused.message, line)
    builder = _core.VerdictBuilder(problem.message, dsl, "small", config)
    try:
        compile(data.decode("utf-8"), filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        builder.set_unparseable(error.lineno or 0, error.msg or "syntax error")
        return Diagnostic(
            "invalid_submission", builder.finish().message, error.lineno, (error.text or "").rstrip()
        )
    except (ValueError, TypeError) as error:
        builder.set_unparseable(0, str(error))
        return Diagnostic("invalid_submission", builder.finish().message, None)
    except (RecursionError, MemoryError) as error:  # nesting deeper than Python compiles
        builder.set_unparseable(0, f"Python cannot compile it: {type(error).__name__}: {error}")
        return Diagnostic("invalid_submission", builder.finish().message, None)
    return None


def check_kernel(
    kernel: str | os.PathLike,
    dsl: str,
    problem,
    arch: str,
    timeout_s: float = 600,
    site_dirs: list[str] | None = None,
    python: str = sys.executable,
) -> CheckResult:
    """Compile-checks `kernel` (a path) in `dsl` for `problem` (Problem, slug or number) and
    `arch`. Never raises for a bad kernel: its errors are diagnostics."""
    import time

    from .. import _core, toolchains
    from ..suite import Problem, load_suite

    dsl = toolchains.check_dsl(dsl)
    arch = check_arch(arch)
    path = Path(kernel)
    if not path.is_file():
        raise Error(f"{kernel}: no such file")
    if not isinstance(problem, Problem):
        problem = load_suite().find(problem)
    result = CheckResult(str(path), dsl, problem.slug, arch)
    with open(path, "rb") as f:  # one byte past the limit tells an oversized file
        data = f.read(_core.judge_config().max_kernel_bytes + 1)
    refused = submission_diagnostic(data, dsl, problem, path.name)
    if refused is not None:
        result.diagnostics.append(refused)
        return result
    sites = site_dirs if site_dirs is not None else toolchains.site_dirs(dsl, required=True)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    command = [
        python,
        "-m",
        "metakernelbench.dslcheck.run",
        "--dsl",
        dsl,
        "--kernel",
        str(path.resolve()),
        "--problem-dir",
        str(problem.directory),
        "--arch",
        arch,
        "--sites",
        json.dumps(sites),
    ]
    t0 = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, env=env, start_new_session=True
        )
    except subprocess.TimeoutExpired as expired:
        result.seconds = time.monotonic() - t0
        tail = (expired.stderr or b"")[-2000:]
        tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
        message = f"the check took more than {timeout_s:.0f} s"
        result.diagnostics.append(Diagnostic("timeout", message, None, tail))
        return result
    result.seconds = time.monotonic() - t0
    marker = "@@mkb-check@@"
    payload = next(
        (line[len(marker) :] for line in done.stdout.splitlines() if line.startswith(marker)), None
    )
    if payload is None:
        result.diagnostics.append(
            Diagnostic(
                "runtime",
                f"the check process ended without a result (exit {done.returncode})",
                None,
                (done.stderr or done.stdout)[-3000:],
            )
        )
        return result
    result.diagnostics = [Diagnostic(**d) for d in json.loads(payload)]
    return result
