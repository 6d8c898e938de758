"""The worker's guard on memory reached through ctypes objects (bindings/ctypes_guard.cc).

A kernel that holds ctypes' types reads and writes any address through a pointer's item, a
c_char_p's or py_object's value, a union's field or an array of such, or a foreign function's call
(memmove, cast), with no audit event of the interpreter's (red team, 2026-12-06), and past a
structure's buffer once it gave the structure a larger one's class (an event the audit allowed).
Each route is refused to kernel.py once its import began and works before it, for pointer types
made before and after the guard, through the slot, the type's `__getitem__` and a subclass's
`super()`. Each in a process of its own (the audit cannot be removed)."""

import json
import subprocess
import sys
import textwrap

import pytest

# Each operation reads or writes through an address the kernel chose (here, one of its own
# objects, so that it works when allowed).
OPERATIONS = {
    "pointer_item": "P(C(b'z'))[0]",
    "pointer_slice": "P(C(b'z'))[0:1]",
    "pointer_item_assignment": "P(C(b'z')).__setitem__(0, b'y')",
    "pointer_made_before": "EARLY(C(b'z'))[0]",
    "pointer_type_getitem": "type(P(C(b'z'))).__getitem__(P(C(b'z')), 0)",
    "pointer_base_getitem": "ctypes._Pointer.__getitem__(P(C(b'z')), 0)",
    "pointer_subclass_super": "Sub(C(b'z'))[0]",
    "pointer_contents": "P(C(b'z')).contents",
    "char_p_value": "ctypes.c_char_p(b'abc').value",
    "py_object_value": "ctypes.py_object(KEEP).value",
    "simple_repr": "repr(type('Z', (ctypes._SimpleCData,), {'_type_': 'z'})(b'abc'))",
    "simple_outparam": "CharP(b'abc').__ctypes_from_outparam__()",
    "union_field": "Pun(a=id(KEEP)).o",
    "array_item": "(ctypes.c_char_p * 1)(b'abc')[0]",
    "foreign_memmove": "ctypes.memmove((ctypes.c_char * 4)(), b'abc', 3)",
    "foreign_cast": "ctypes.cast(P(C(b'z')), ctypes.c_void_p)",
    "foreign_callback": "ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 1)()",
    "module_resize": "ctypes.resize((ctypes.c_char * 4)(), 64)",
    "module_incref": "__import__('_ctypes').Py_INCREF(KEEP)",
    "module_decref": "__import__('_ctypes').Py_DECREF(KEEP)",  # after the incref: balanced
    # A small structure given a larger one's class: its field's write lands past the buffer.
    "class_assignment": "setattr(Small(), '__class__', Big)",
}

SCRIPT = """
import ctypes, importlib.util, json, sys
from metakernelbench import _core

kernel = sys.argv[1]
EARLY = ctypes.POINTER(type('Early', (ctypes.c_char,), {{}}))  # a pointer type made before the guard
{install}
import ctypes
C = ctypes.c_char
P = ctypes.POINTER(C)
class Sub(P):
    _type_ = C
    def __getitem__(self, i):
        return super().__getitem__(i)
class CharP(ctypes.c_char_p):
    pass
class Small(ctypes.Structure):
    _fields_ = [("a", ctypes.c_char)]
class Big(ctypes.Structure):
    _fields_ = [("pad", ctypes.c_char * 100000), ("b", ctypes.c_char)]
class Pun(ctypes.Union):
    _fields_ = [("a", ctypes.c_void_p), ("o", ctypes.py_object)]
KEEP = object()
ns = {{k: v for k, v in globals().items() if not k.startswith("__")}}
{phase}
spec = importlib.util.spec_from_file_location("kernel", kernel)
module = importlib.util.module_from_spec(spec)
module.__dict__.update(ns)
spec.loader.exec_module(module)
out = {{}}
for name in module.NAMES:
    try:
        module.run(name)
        out[name] = "ok"
    except PermissionError as error:
        out[name] = "refused: " + str(error)
    except Exception as error:
        out[name] = f"{{type(error).__name__}}: {{error}}"
print(json.dumps(out))
"""


def _run(tmp_path, install: bool, kernel_started: bool) -> dict:
    kernel = tmp_path / "kernel.py"
    kernel.write_text(
        "OPS = {\n"
        + "".join(f"    {name!r}: lambda: {expr},\n" for name, expr in OPERATIONS.items())
        + "}\nNAMES = list(OPS)\n\ndef run(name):\n    return OPS[name]()\n"
    )
    install_line = (
        '_core.install_runtime_audit({"kernel_path": kernel, "dsl": "none", '
        '"stdlib_roots": [], "code_roots": []}, enforce=True)'
        if install
        else ""
    )
    phase = '_core.runtime_audit_phase("import")' if kernel_started else ""
    code = textwrap.dedent(SCRIPT.format(install=install_line, phase=phase))
    done = subprocess.run(
        [sys.executable, "-c", code, str(kernel)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("guarded"), install=True, kernel_started=True)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_memory_through_ctypes_is_refused_to_the_kernel(guarded, operation):
    event = "ctypes.foreign_call" if operation.startswith("foreign_") else "ctypes.memory/"
    assert guarded[operation].startswith(f"refused: blocked by the judge: {event}"), guarded[operation]


def test_the_same_operations_work_before_the_kernel_and_without_the_guard(tmp_path):
    """The control: every operation above works (so each refusal is the guard's), with the guard
    installed while kernel.py's import has not begun, and with no audit at all."""
    before = _run(tmp_path, install=True, kernel_started=False)
    assert before == {name: "ok" for name in OPERATIONS}, before
    bare = _run(tmp_path, install=False, kernel_started=False)
    assert bare == {name: "ok" for name in OPERATIONS}, bare
