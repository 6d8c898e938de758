"""The runtime audit's ctypes events, decided on the short walk to the DSL entry wrapper
(runtime_audit_hook.cc: Hook's first step, NativeWindowCaller), allow exactly what the policy
allows the DSL's native layer and nothing of the kernel's, however often the same code asks
(what a walk asks of a frame is worked out once per code object and kept).

A child process stands a folder in for a DSL's installed package (its executor mentions ctypes,
its front end does not), installs the worker's entry wrapper and the audit, enforcing, with
kernel.py's import begun, then asks for ctypes operations from each place, twice in turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_EXECUTOR = """
import ctypes


def addressof(depth=0):
    if depth:
        return addressof(depth - 1)
    return ctypes.addressof(ctypes.c_int(1))


def symbol(name):
    return getattr(ctypes.CDLL(None), name)


def call_back(fn):
    return fn()
"""

_FRONT_END = """
import importlib

# The module never names the foreign-function module: it is not the DSL's native layer.
c = importlib.import_module("c" + "types")


def addressof():
    return c.addressof(c.c_int(1))
"""

_KERNEL = """
from dsl_pkg import executor


def through_the_executor():
    return executor.addressof()
"""

_CHILD = r"""
import json, os, sys, sysconfig
root = sys.argv[1]
sys.path.insert(0, root)
from metakernelbench import _core
from metakernelbench.judge import dsl_entry
from dsl_pkg import executor, front_end
import kernel
_core.install_runtime_audit({
    "kernel_path": os.path.join(root, "kernel.py"), "dsl": "cutedsl",
    "dsl_roots": [os.path.join(root, "dsl_pkg")],
    "stdlib_roots": [sysconfig.get_paths()["stdlib"]],
    "code_roots": [os.path.dirname(os.path.dirname(_core.__file__))],
    "dsl_entry_file": dsl_entry.wrapper.__code__.co_filename,
    "dsl_entry_globals": dsl_entry.wrapper.__globals__,
}, enforce=True)
_core.runtime_audit_phase("import")
entry = lambda fn: dsl_entry.wrapper(None, fn)
cases = {
    "executor_in_entry": lambda: entry(executor.addressof)(),
    "executor_in_entry_deep": lambda: entry(executor.addressof)(30),
    "executor_direct": lambda: executor.addressof(),
    "kernel_frame_between": lambda: entry(executor.call_back)(kernel.through_the_executor),
    "front_end_in_entry": lambda: entry(front_end.addressof)(),
    "symbol_in_entry": lambda: entry(executor.symbol)("malloc"),
    "interpreter_symbol_in_entry": lambda: entry(executor.symbol)("PyObject_Free"),
}
out = {}
for round in range(2):
    for name, case in cases.items():
        try:
            case()
            result = "ok"
        except PermissionError as error:
            result = "refused: " + str(error)
        out.setdefault(name, []).append(result)
print(json.dumps(out))
"""


def test_ctypes_events_on_the_short_walk(tmp_path):
    package = tmp_path / "dsl_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "executor.py").write_text(textwrap.dedent(_EXECUTOR))
    (package / "front_end.py").write_text(textwrap.dedent(_FRONT_END))
    (tmp_path / "kernel.py").write_text(textwrap.dedent(_KERNEL))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])

    def refused(name: str, event: str) -> bool:
        return all(r.startswith(f"refused: blocked by the judge: {event}") for r in out[name])

    # The DSL's native layer inside an entry point: its own ctypes, at any depth, every time.
    assert out["executor_in_entry"] == ["ok", "ok"], out
    assert out["executor_in_entry_deep"] == ["ok", "ok"], out
    assert out["symbol_in_entry"] == ["ok", "ok"], out
    # The same code outside an entry point, or with kernel.py's frame between the entry point
    # and the event, or a module of the DSL's that is not its native layer: refused each time,
    # before and after the same code objects were allowed inside the window.
    assert refused("executor_direct", "ctypes.addressof"), out
    assert refused("kernel_frame_between", "ctypes.addressof"), out
    assert refused("front_end_in_entry", "ctypes.addressof"), out
    # The symbol's name is read on the short walk too: the interpreter's C API never.
    assert refused("interpreter_symbol_in_entry", "ctypes.dlsym"), out
