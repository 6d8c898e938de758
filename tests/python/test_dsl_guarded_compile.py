"""Every shipped solution compiles, in each installed DSL, under the worker's process-wide guards.

The worker replaces torch's, numpy's and the interpreter's callables for its whole life before
kernel.py is imported (refused operators and namespaces, the `.data` hold, numpy's constructor
and buffer export, bytearray's and array.array's assignment, memoryview's release, DLPack
pinning). A guard that refuses something a DSL's compiler needs fails every kernel of that DSL,
and only a GPU run of the solutions would show it. Here `mkb check`'s hook (the real compiler,
for sm_90a, no GPU, nothing launched) runs every solution in a child process with those guards
installed and enforcing (no runtime audit installed: the guards refuse on their own), and the
child first shows that a guard is live. For CuTe DSL the worker's check of the host code the DSL
compiles (worker.check_cute_host_code) is on too, and shown refusing a store in a @cute.jit
function first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from metakernelbench import toolchains

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import importlib.util, json, os, sys
from metakernelbench import toolchains
dsl, solutions = sys.argv[1], json.loads(sys.argv[2])
toolchains.activate(toolchains.site_dirs(dsl))
import numpy, torch
if dsl == "cutedsl":
    import cutlass  # noqa: F401  (imported before the guards, as the worker's template does)
    from metakernelbench.dslcheck import cutedsl as hook
else:
    import tvm  # noqa: F401
    from metakernelbench.dslcheck import tirx as hook
from metakernelbench.judge import worker
worker._install_process_wide_guards()
try:  # a guard is live: a dtype of Python objects over a buffer is refused
    numpy.ndarray((1,), dtype=object, buffer=bytearray(8))
    live = False
except PermissionError:
    live = True
host_check = None
if dsl == "cutedsl":
    # The worker's check of the DSL's host code, live: a store in a @cute.jit function is refused
    # where the DSL compiles it (no runtime audit installed: the refusal stands on its own).
    # (The DSL's preprocessor reads the function's source: it is written to a file first.)
    import tempfile
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    installed = worker.check_cute_host_code()
    source = os.path.join(tempfile.mkdtemp(), "host_store.py")
    with open(source, "w") as out:
        out.write("import cutlass.cute as cute\n@cute.jit\ndef store(m: cute.Tensor):\n    m[0] = m[1]\n")
    spec = importlib.util.spec_from_file_location("host_store", source)
    host_store = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host_store)
    try:
        cute.compile(host_store.store, from_dlpack(torch.zeros(2)))
        host_check = "compiled"
    except Exception as refused:  # the DSL re-raises the refusal as its own compile error
        text = str(refused)
        host_check = "refused" if installed and "memory access in the DSL's host code" in text else text[:500]
results = {}
for solution in solutions:
    problem = os.path.dirname(os.path.dirname(solution))
    spec = importlib.util.spec_from_file_location("_reference", problem + "/reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    torch.manual_seed(0)
    inputs = list(reference.make_inputs(workload="small", device="cpu"))
    results[os.path.basename(problem)] = hook.check(solution, inputs, "sm_90a")
print("@@results@@" + json.dumps({"live": live, "host_check": host_check, "results": results}))
"""


@pytest.mark.parametrize("dsl", ["cutedsl", "tirx"])
def test_every_solution_compiles_under_the_workers_guards(dsl):
    if not toolchains.site_dirs(dsl):
        pytest.skip(f"{dsl} toolchain not installed (mkb dsl install --dsl {dsl})")
    solutions = sorted(str(p) for p in ROOT.glob(f"problems/*/*/solutions/{dsl}.py"))
    assert solutions
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, dsl, json.dumps(solutions)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )
    payload = [ln for ln in done.stdout.splitlines() if ln.startswith("@@results@@")]
    assert payload, f"the check process failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
    report = json.loads(payload[0][len("@@results@@") :])
    assert report["live"], "the guards were not installed in the child"
    if dsl == "cutedsl":
        # Every solution below compiled with the host-code check on, and it refuses a host store.
        assert report["host_check"] == "refused", report["host_check"]
    failed = {
        problem: [d for d in diagnostics if d["kind"] != "ok"]
        for problem, diagnostics in report["results"].items()
        if not diagnostics or any(d["kind"] != "ok" for d in diagnostics)
    }
    assert not failed, f"{dsl} solutions that did not compile under the guards: {failed}"
    assert len(report["results"]) == len(solutions)
