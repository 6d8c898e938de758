"""numpy's constructor, object arrays' buffers and released memoryviews in the worker
(_core.hold_ndarray_buffers, _core.holding_memoryview_release; red team rounds 1 and 2,
2026-12-06): honest use behaves as before, the routes to freed or forged memory fail. Each
check runs in a process of its own: the changes are for the process's life."""

import subprocess
import sys
import textwrap

INSTALL = """
import numpy as np
from metakernelbench import _core
for name in ("release", "__exit__"):
    original = memoryview.__dict__[name]
    _core.replace_type_attribute(
        memoryview, name, _core.instance_method(_core.holding_memoryview_release(original))
    )
_core.hold_ndarray_buffers(np.ndarray)
"""

HONEST = """
import numpy as np
out = []
a = np.ndarray((4,), np.uint8, buffer=bytes(range(4)))
out.append(a.tolist())
out.append(np.frombuffer(b"\\x01\\x02", np.uint8).tolist())
out.append(np.asarray(bytearray(b"\\x03")).tolist())
r = np.recarray((2,), dtype=[("x", "i4")], buf=bytearray(8))
out.append(r.x.tolist())
o = np.array([1, "a", None], dtype=object)
out.append([repr(v) for v in o])
out.append(bytes(memoryview(np.arange(3, dtype=np.uint8))).hex())
with memoryview(b"xyz") as m:
    out.append(m.tobytes().decode())
m = memoryview(bytearray(b"ab"))
m.release()
ba = bytearray(b"cd")
ba.extend(b"ef")  # never viewed: resizes as before
out.append(ba.decode())
print(out)
"""

ROUTES = {
    # growing a bytearray that an array views without an export
    "buffer": "ba = bytearray(64); a = np.ndarray((64,), np.uint8, buffer=ba); ba.extend(bytes(4096))",
    "recarray": (
        "ba = bytearray(64); r = np.recarray((8,), dtype=[('x', 'i8')], buf=ba); ba.extend(bytes(4096))"
    ),
    "asarray_release": "ba = bytearray(64); a = np.asarray(ba); a.base.release(); ba.extend(bytes(4096))",
    "frombuffer_exit": (
        "ba = bytearray(64); a = np.frombuffer(ba, np.uint8)\\nwith a.base: pass\\nba.extend(bytes(4096))"
    ),
    # object pointers made from bytes
    "object_buffer": "np.ndarray((1,), object, buffer=bytearray(8))",
    "object_cast": "memoryview(np.empty(1, object)).cast('B')",
}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_honest_numpy_and_memoryview_use_is_unchanged():
    guarded, plain = _run(INSTALL + HONEST), _run(HONEST)
    assert guarded.returncode == 0, guarded.stderr[-2000:]
    assert guarded.stdout == plain.stdout


def test_each_route_fails_with_the_guards_and_goes_through_without():
    for name, route in ROUTES.items():
        code = "import numpy as np\n" + route.replace("\\n", "\n") + "\nprint('went through')\n"
        guarded = _run(INSTALL + code)
        assert "went through" not in guarded.stdout, name
        assert "BufferError" in guarded.stderr or "PermissionError" in guarded.stderr, (
            name,
            guarded.stderr[-500:],
        )
        # Without them numpy lets each through (the freed memory is then still viewed).
        assert "went through" in _run(code).stdout, name
