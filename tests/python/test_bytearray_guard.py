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
_, set_item, del_item = _core.convert_bytearray_assignment()
_core.replace_type_attribute(bytearray, "__setitem__", _core.instance_method(set_item))
_core.replace_type_attribute(bytearray, "__delitem__", _core.instance_method(del_item))
"""


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
    unguarded = [int(x) for x in _run(ATTACK + "print(*(attack() for _ in range(20)))").split()]
    if any(n != 50 for n in unguarded):
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
