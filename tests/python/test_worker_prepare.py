"""The GPU worker's prepare, on the CPU with fakes: what must happen before the runtime audit is
installed does, and in order. (On the H200, torch's device count left uncached until kernel.py
ran made torch dlopen NVML under the audit, which refused it: every solution that asked for its
device's capability failed with runtime.native_code.)"""

import gc
import os
import threading
from types import SimpleNamespace

import pytest
import torch
from metakernelbench import _core
from metakernelbench.judge import values, worker


def _python(code: str, *args: str, timeout: float = 120) -> str:
    """stdout of `code` run by this interpreter in a process of its own (sys.modules, the runtime
    audit and the CPU affinity are per process); its exit must be 0."""
    import subprocess
    import sys

    command = [sys.executable, "-c", code, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def calls(monkeypatch):
    seen: list[str] = []

    class Clock:
        def __init__(self, device):
            seen.append(f"PublishedClock({device})")

        def start(self):
            seen.append("clock.start")

        def stop(self):
            seen.append("clock.stop")
            return 0.25

    fake_cuda = SimpleNamespace(
        LaunchMonitor=lambda *a: SimpleNamespace(set_enabled=lambda on: None),
        Error=_core.Error,
        device_synchronize=lambda device=0: None,
    )
    monkeypatch.setattr(_core, "cuda", fake_cuda, raising=False)
    monkeypatch.setattr(values, "CudaTransport", lambda: SimpleNamespace())
    monkeypatch.setattr(values, "PublishedClock", Clock)
    monkeypatch.setattr(torch.cuda, "init", lambda: seen.append("torch.cuda.init"))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: seen.append("torch.cuda.device_count") or 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(
        torch.cuda, "set_device", lambda d: seen.append(f"set_device({d}) on {threading.get_ident()}")
    )
    monkeypatch.setattr(_core, "install_runtime_audit", lambda *a, **k: seen.append("install_runtime_audit"))
    monkeypatch.setattr(_core, "watch_kernel_code", lambda on: seen.append(f"watch({on})"))
    # The real one would seal this test process against new processes (every later test's too).
    monkeypatch.setattr(_core, "seal_processes", lambda: seen.append("seal_processes"))
    monkeypatch.setattr(worker, "_scrub_modules", lambda dsl: None)
    monkeypatch.setattr(worker, "cupti_dirs", lambda: [])
    # The real one replaces torch's, numpy's and the interpreter's callables for the process's
    # life: a later test of this process found torch.Tensor.to_sparse refusing.
    monkeypatch.setattr(worker, "_install_process_wide_guards", lambda: seen.append("guards"))
    return seen


def _prepare():
    w = worker.Worker(channel=None, device="cuda", sandbox={}, options={"audit": {}})
    return w, w._prepare(SimpleNamespace(dsl="none"))


def test_torch_cuda_is_settled_and_the_clock_made_before_the_audit(calls):
    w, reply = _prepare()
    assert reply["ok"], reply
    audit = calls.index("install_runtime_audit")
    assert calls.index("torch.cuda.init") < calls.index("torch.cuda.device_count") < audit
    assert calls.index("PublishedClock(0)") < audit
    assert calls.index("watch(True)") > audit  # the watch on kernel code, on before the calibration
    # The refusals record their violations through the audit: installed after it.
    assert audit < calls.index("guards") < calls.index("watch(True)")
    # No new process from the worker on a GPU either, once prepared.
    assert calls.index("seal_processes") > calls.index("watch(True)")
    # The device made current on the kernel's thread, not this one, before the audit.
    made = next(c for c in calls if c.startswith("set_device(0) on "))
    assert calls.index(made) < audit and made != f"set_device(0) on {threading.get_ident()}"
    assert gc.isenabled()  # the collector, held after that call, is back when prepare returns
    # The judge's clock, kept from prepare: a timed call on the kernel's thread is start, call,
    # stop there; an untimed one does not touch it.
    assert w._thread.call(lambda: calls.append("called") or 7, (), True) == ("ok", 0.25, 7)
    assert calls[-3:] == ["clock.start", "called", "clock.stop"]
    assert w._thread.call(lambda: 8) == ("ok", 0.0, 8) and calls[-1] == "clock.stop"
    w._thread.release_collector()  # as the worker does once it has taken its snapshot


def test_a_cuda_failure_in_prepare_is_the_judges_error(calls, monkeypatch):
    def broken():
        raise RuntimeError("no CUDA driver")

    monkeypatch.setattr(torch.cuda, "init", broken)
    _, reply = _prepare()
    assert not reply["ok"] and reply["judge_error"] == "CUDA in the worker: no CUDA driver"
    assert "install_runtime_audit" not in calls


def test_a_warm_host_preimports_what_prepare_would_import():
    """worker.preimport (run by a warm host before it forks the worker) imports the names
    prepare imports, so that the worker inherits them: torch's compiler stack took some 2 s of
    every worker's start on the CPU judge. In a process of its own (sys.modules is global)."""
    code = (
        "import sys\n"
        "from metakernelbench.judge import worker\n"
        "assert 'torch._dynamo' not in sys.modules\n"
        "worker.preimport('cutedsl')\n"
        "print(all(n in sys.modules for n in worker._TORCH_LAZY_IMPORTS))\n"
    )
    assert _python(code, timeout=300).strip() == "True"


@pytest.mark.parametrize("enforce", [True, False])
def test_a_refused_library_function_records_and_raises_or_in_record_mode_runs(enforce, tmp_path):
    """_core.refusing_function, what the worker puts in place of torch's raw-pointer
    constructors and TorchScript's compilers: a call records the violation and raises
    PermissionError; in the audit's record mode it records and the original runs. In a process of
    its own (the runtime audit is installed once per process)."""
    code = (
        "from metakernelbench import _core\n"
        "config = {'kernel_path': '/nonexistent/kernel.py', 'dsl': 'cutedsl'}\n"
        f"_core.install_runtime_audit(config, enforce={enforce})\n"
        "f = _core.refusing_function('runtime.native_code', 'x.y (why)', len)\n"
        "try:\n"
        "    print('returned', f([1, 2, 3]))\n"
        "except PermissionError as e:\n"
        "    print('raised', e)\n"
        "found = [x['code'] for x in _core.take_runtime_findings()] + list(_core.runtime_audit_recorded())\n"
        "print('recorded', any('runtime.native_code' in str(x) for x in found))\n"
    )
    out = _python(code, timeout=60)
    if enforce:
        assert "raised blocked by the judge: x.y (why)" in out, out
    else:
        assert "returned 3" in out, out
    assert "recorded True" in out, out


@pytest.mark.parametrize("enforce", [True, False])
def test_a_refused_method_is_refused_on_every_tensor_type_and_called_with_its_instance(enforce):
    """A refusal put in a type's dictionary (TensorBase.to_sparse) refuses the method through the
    instance and through a legacy tensor type's copy (torch.FloatTensor.to_sparse); in record
    mode the original runs, called with the instance (as a method, not a plain function)."""
    code = (
        "import torch\n"
        "from metakernelbench import _core\n"
        "from metakernelbench.judge import worker\n"
        "config = {'kernel_path': '/nonexistent/kernel.py', 'dsl': 'cutedsl'}\n"
        # Refusals first: their sweep of the collector's objects is the judge's own call, which the
        # audit refuses to this test's <string> frame (in the worker, worker.py's frames make it).
        "worker._refuse_unaudited_reach()\n"
        f"_core.install_runtime_audit(config, enforce={enforce})\n"
        "t = torch.ones(3)\n"
        "for call in (lambda: t.to_sparse(), lambda: torch.FloatTensor.to_sparse(t)):\n"
        "    try:\n"
        "        print('returned', call().layout)\n"
        "    except PermissionError as e:\n"
        "        print('raised', 'to_sparse' in str(e))\n"
    )
    out = _python(code, timeout=120).split("\n")
    want = "raised True" if enforce else "returned torch.sparse_coo"
    assert [line for line in out if line] == [want, want], out


def test_every_module_that_holds_an_unaudited_function_gets_the_refusal(tmp_path):
    """The worker replaces torch's raw-pointer constructors and TorchScript's compilers in every
    module and module-level class that holds them, not only where they are defined:
    `torch.CompilationUnit` and `torch.fork` (re-exports of torch._C's) passed both audits before
    (2026-12-05), and a storage method refused on torch.UntypedStorage alone was still in
    torch._C.StorageBase's dictionary (passed at 13.7x, 2026-12-05 night). In a process
    of its own with torch's compiler stack imported, as in the worker; fails when torch re-exports
    one somewhere the worker's table does not name."""
    code = (
        "import sys\n"
        "import torch, torch._dynamo  # noqa: F401\n"
        "from metakernelbench import _core\n"
        "from metakernelbench.judge import worker\n"
        "import types, threading, _thread  # noqa: F401\n"
        "table = worker._UNAUDITED_REACH + worker._BETWEEN_CALLS_REACH\n"
        "def resolve(path):\n"
        "    parts = path.split('.')\n"
        "    for k in range(len(parts), 0, -1):\n"
        "        if '.'.join(parts[:k]) in sys.modules:\n"
        "            obj = sys.modules['.'.join(parts[:k])]\n"
        "            for p in parts[k:]:\n"
        "                obj = getattr(obj, p)\n"
        "            return obj\n"
        "special = {'torch._C._EngineBase': worker._AUTOGRAD_ENGINE}  # no attribute of torch._C\n"
        "owners = {o: special.get(o) or resolve(o) for o, _, _, _ in table}\n"
        "# What each owner itself holds (a class's entry as its dictionary has it: a bound method is\n"
        "# made anew at each lookup), and a static method's function.\n"
        "def held(owner, n):  # a class's entry where its method resolution order finds it\n"
        "    for c in (owner.__mro__ if isinstance(owner, type) else (owner,)):\n"
        "        if n in vars(c):\n"
        "            return vars(c)[n]\n"
        "originals = [held(owners[o], n) for o, n, _, _ in table]\n"
        "originals += [f.__func__ for f in originals if isinstance(f, (staticmethod, classmethod))]\n"
        "originals = [f for f in originals if f is not None]\n"
        "# By identity, the originals kept alive in a closure: the worker's sweep rewrites every list,\n"
        "# dict, set and tuple that holds one (this test's own included).\n"
        "original_ids = {id(f) for f in originals}\n"
        "_keep = (lambda kept: (lambda: kept))(tuple(originals))\n"
        "del originals\n"
        "def holders():\n"
        "    for name, m in list(sys.modules.items()):\n"
        "        d = getattr(m, '__dict__', {})\n"
        "        yield name, d\n"
        "        for cname, c in list(d.items()):\n"
        "            if isinstance(c, type):\n"
        "                yield f'{name}.{cname}', vars(c)\n"
        "config = {'kernel_path': '/nonexistent/kernel.py', 'dsl': 'cutedsl'}\n"
        "worker._refuse_unaudited_reach()  # before the audit: see the test above\n"
        "_core.install_runtime_audit(config, enforce=True)\n"
        "left = sorted({f'{name}.{k}' for name, d in holders()\n"
        "               for k, v in list(d.items())\n"
        "               if id(v) in original_ids or (isinstance(v, (staticmethod, classmethod))\n"
        "                                            and id(v.__func__) in original_ids)})\n"
        "print(left)\n"
    )
    out = _python(code)
    assert out.strip() == "[]", out


_SEAL = """
import os, sys, threading
from metakernelbench import _core
from metakernelbench.judge.worker_setup import pin_every_thread
cpus = sorted(os.sched_getaffinity(0))
before = threading.Event(); go = threading.Event(); results = {}
def early():  # a thread that exists before the seal (a BLAS or OpenMP pool's)
    before.set(); go.wait()
    try:
        os.sched_setaffinity(0, cpus); results['early'] = 'widened'
    except PermissionError:
        results['early'] = 'refused'
t = threading.Thread(target=early); t.start(); before.wait()
pin_every_thread(cpus[0])
if sys.argv[1] == 'seal':
    _core.seal_cpu_affinity()
go.set(); t.join()
def late():
    try:
        os.sched_setaffinity(0, cpus); results['late'] = 'widened'
    except PermissionError:
        results['late'] = 'refused'
u = threading.Thread(target=late); u.start(); u.join()
try:
    os.sched_setaffinity(0, cpus); results['main'] = 'widened'
except PermissionError:
    results['main'] = 'refused'
results['cpus_now'] = len(os.sched_getaffinity(0))
print(sorted(results.items()))
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to widen a pin to")
def test_the_cpu_workers_pin_is_sealed_for_every_thread():
    """The CPU judge's worker pins itself to one CPU, then refuses sched_setaffinity to every
    thread (one that existed before, one started after, the main one): a red team undid the pin
    through psutil's C extension. Without the seal each thread widens its own affinity."""
    threads = ("early", "late", "main")
    sealed = _python(_SEAL, "seal", timeout=60).strip()
    assert sealed == str([("cpus_now", 1), *((t, "refused") for t in threads)])
    cpus = len(os.sched_getaffinity(0))
    unsealed = _python(_SEAL, "none", timeout=60).strip()
    assert unsealed == str([("cpus_now", cpus), *((t, "widened") for t in threads)])
