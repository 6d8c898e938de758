"""`mkb check`: compile a kernel.py offline, without a GPU and without spending a submission.

    diagnostics = check_kernel("kernel.py", dsl="cutedsl", problem="fused_add_rmsnorm_h4096_llama31_8b_bf16",
                               arch="sm_90a")

The check runs in a child process with only the DSL's toolchain active (as the judge's worker
does) and no GPU visible (CUDA_VISIBLE_DEVICES is emptied): it parses kernel.py (syntax errors
with their line), runs the judge's static audit (the same policy findings a submission would get),
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

KINDS = ("syntax", "audit", "import", "compile", "runtime", "timeout", "ok")


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


def check_kernel(kernel: str | os.PathLike, dsl: str, problem, arch: str, timeout_s: float = 600,
                 site_dirs: list[str] | None = None, python: str = sys.executable) -> CheckResult:
    """Compile-checks `kernel` (a path) in `dsl` for `problem` (Problem, slug or number) and
    `arch`. Never raises for a bad kernel: its errors are diagnostics."""
    import time

    from .. import toolchains
    from ..suite import Problem, load_suite

    dsl = toolchains.check_dsl(dsl)
    arch = check_arch(arch)
    path = Path(kernel)
    if not path.is_file():
        raise Error(f"{kernel}: no such file")
    if path.stat().st_size > 300_000:
        raise Error(f"{kernel}: {path.stat().st_size} bytes; a kernel.py may have at most 300,000")
    if not isinstance(problem, Problem):
        problem = load_suite().find(problem)
    sites = site_dirs if site_dirs is not None else toolchains.site_dirs(dsl, required=True)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    command = [python, "-m", "metakernelbench.dslcheck.run", "--dsl", dsl, "--kernel", str(path.resolve()),
               "--problem-dir", str(problem.directory), "--arch", arch, "--sites", json.dumps(sites)]
    result = CheckResult(str(path), dsl, problem.slug, arch)
    t0 = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=env,
                              start_new_session=True)
    except subprocess.TimeoutExpired as expired:
        result.seconds = time.monotonic() - t0
        tail = (expired.stderr or b"")[-2000:]
        tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
        message = f"the check took more than {timeout_s:.0f} s"
        result.diagnostics.append(Diagnostic("timeout", message, None, tail))
        return result
    result.seconds = time.monotonic() - t0
    marker = "@@mkb-check@@"
    payload = next((line[len(marker):] for line in done.stdout.splitlines() if line.startswith(marker)), None)
    if payload is None:
        result.diagnostics.append(Diagnostic(
            "runtime", f"the check process ended without a result (exit {done.returncode})", None,
            (done.stderr or done.stdout)[-3000:]))
        return result
    result.diagnostics = [Diagnostic(**d) for d in json.loads(payload)]
    return result
