"""bytearray's assignment with every __index__ called before CPython's own takes the buffer's
address (_core.convert_bytearray_assignment, installed by the worker: CPython gh-91153, red team
round 3, 2026-12-06). Each check runs in a process of its own: the change is for the process's
life."""

import subprocess
import sys
import textwrap

ATTACK = """
def attack():
    holder = {}
    ba = bytearray(b"A" * 50)

    class Grow:
        def __index__(self):
            ba.extend(b"B" * 2000)  # the 64-byte block freed
            holder["v"] = bytearray(b"Z" * 50)  # a header where it was
            return 0x40

    try:
        ba[22] = Grow()
    except Exception:
        pass
    return len(holder["v"])
"""

INSTALL = """
from metakernelbench import _core
for name, method in _core.convert_bytearray_assignment().items():
    _core.replace_type_attribute(bytearray, name, _core.instance_method(method))
"""


def _unguarded_lengths(code: str) -> list[int] | None:
    """The attack's lengths without the guard, or None when the stale write crashed the process
    (a signal: the memory was corrupted, which is what the guard prevents)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    if done.returncode < 0:
        return None
    assert done.returncode == 0, done.stderr[-2000:]
    return [int(x) for x in done.stdout.split()]


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_an_index_hook_that_grows_the_bytearray_writes_no_freed_memory():
    lengths = [int(x) for x in _run(INSTALL + ATTACK + "print(*(attack() for _ in range(20)))").split()]
    assert lengths == [50] * 20
    # Without the change, on an interpreter with the bug, the stale write lands in the new header.
    unguarded = _unguarded_lengths(ATTACK + "print(*(attack() for _ in range(20)))")
    if unguarded is not None and any(n != 50 for n in unguarded):
        assert max(unguarded) > 1 << 40


def test_assignment_and_deletion_behave_as_before():
    checks = """
class I:
    def __init__(self, v):
        self.v = v
    def __index__(self):
        return self.v
class N(int):
    pass
out = []
ba = bytearray(b"abcdefgh")
ba[0] = 65; ba[-1] = I(90); ba[N(1)] = N(66); ba[I(2)] = 67
ba[3:5] = b"xy"; ba[I(5):I(7)] = [1, 2]; ba[::I(3)] = bytes(3)
del ba[I(1)]; del ba[0:1]
out.append(bytes(ba).hex())
for bad in ("ba[100] = 1", "ba[0] = 256", "ba[0] = 'a'", "ba['a'] = 1", "del ba[I(99)]", "ba[::2] = b'x'"):
    try:
        exec(bad)
        out.append("no error")
    except Exception as e:
        out.append(type(e).__name__)
class Sub(bytearray):
    pass
s = Sub(b"xyz"); s[I(1)] = 0; bytearray.__setitem__(s, 2, I(1)); out.append(bytes(s).hex())
print(" ".join(out))
"""
    assert _run(INSTALL + checks) == _run(checks)


ARRAY_INSTALL = """
import array
from metakernelbench import _core
for name, method in _core.convert_array_values(array.array).items():
    _core.replace_type_attribute(array.array, name, _core.instance_method(method))
"""

ARRAY_ATTACK = """
import array
def attack():
    a = array.array("d", [0.0] * 64)  # 512 bytes
    made = []

    class Shrink:
        def __float__(self):
            del a[1:]  # the buffer moved to a 64-byte block
            made.extend(bytearray(8) for _ in range(64))  # headers in that size class
            return 5e-324 * (1 << 44)  # the bits 1 << 44

    try:
        a[10] = Shrink()  # 80 bytes in: the next block's ob_size
    except Exception:
        pass
    return max(len(b) for b in made)
"""


def test_a_float_hook_that_shrinks_an_array_writes_no_freed_memory():
    lengths = [
        int(x) for x in _run(ARRAY_INSTALL + ARRAY_ATTACK + "print(*(attack() for _ in range(20)))").split()
    ]
    assert lengths == [8] * 20
    # Without the change, on an interpreter with the bug, a header takes the stale write.
    unguarded = _unguarded_lengths(ARRAY_ATTACK + "print(*(attack() for _ in range(20)))")
    if unguarded is not None and any(n != 8 for n in unguarded):
        assert max(unguarded) >= 1 << 44


def test_array_assignment_and_methods_behave_as_before():
    checks = """
import array
class F:
    def __init__(self, v):
        self.v = v
    def __float__(self):
        return self.v
class I:
    def __init__(self, v):
        self.v = v
    def __index__(self):
        return self.v
out = []
d = array.array("d", [1.0, 2.0])
d[0] = F(3.5); d[I(1)] = 4; d.insert(0, F(0.5)); d.append(F(9.0)); d.extend([F(1.0), 2]); d.fromlist([F(7.0)])
d.extend(array.array("d", [8.0])); d[1:2] = array.array("d", [6.0])
out.append(d.tolist())
i = array.array("i", [1]); i[0] = I(5); i.append(I(6)); i.insert(0, I(4)); i.extend(range(2))
out.append(i.tolist())
for bad in ("d[9] = 1.0", "d[0] = 'x'", "i[0] = 1.5", "i.fromlist((1,))", "d.extend(5)", "i[0] = 2**40"):
    try:
        exec(bad)
        out.append("no error")
    except Exception as e:
        out.append(type(e).__name__)
print(out)
"""
    assert _run(ARRAY_INSTALL + checks) == _run(checks)
