"""The worker's KernelThread (bindings/kernel_thread.cc): kernel.py's code runs on a thread whose
Python stack holds nothing of the caller's, its exceptions are described there (their __str__
and finalisers are kernel code), and timed calls are timed there."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from metakernelbench import _core

THREAD = _core.KernelThread()


@pytest.fixture(autouse=True)
def _collector_back():
    yield
    THREAD.release_collector()  # held after each call: never left so for the tests that follow


def test_a_frame_on_the_kernel_thread_leads_to_no_caller_frame():
    caller_marker = "the caller's local"  # noqa: F841 - what a walk from the callee must not find

    def callee():
        frame, seen = sys._getframe(0), []
        while frame is not None:
            seen.append((frame.f_code.co_name, dict(frame.f_locals)))
            frame = frame.f_back
        return seen, threading.get_ident()

    status, seconds, (seen, ident) = THREAD.call(callee)
    assert status == "ok" and seconds == 0.0
    assert [name for name, _ in seen] == ["callee"]  # f_back of the called function is None
    assert ident != threading.get_ident()
    assert not any("caller_marker" in f_locals for _, f_locals in seen)


def test_arguments_and_results_cross_as_they_are():
    value = object()
    assert THREAD.call(lambda a, b: (a, b), (value, 2)) == ("ok", 0.0, (value, 2))


def test_an_exception_is_described_on_the_kernel_thread_from_the_type_object():
    where = {}

    class Meta(type):
        @property
        def __name__(cls):  # kernel code the description must not run
            where["metaclass"] = True
            return "Spoofed"

    class Boom(Exception, metaclass=Meta):
        def __str__(self):
            where["str"] = threading.get_ident()
            return "went off"

    class Finalised:
        def __del__(self):
            where["del"] = threading.get_ident()

    def solve():
        keep = Finalised()  # noqa: F841 - freed with the traceback's frame
        raise Boom()

    done = THREAD.call(solve)
    status, name, qualname, module, message, entries = done
    assert status == "raised" and name == "Boom" and message == "went off"
    assert qualname.endswith("Boom") and module == __name__
    assert "metaclass" not in where
    assert where["str"] != threading.get_ident() and where["del"] == where["str"]
    assert entries[-1][2] == "solve" and entries[-1][0] == __file__ and entries[-1][1] > 0


def test_system_exit_and_a_failing_str_are_described_not_raised():
    class Mute(Exception):
        def __str__(self):
            raise RuntimeError("no")

    def leave():
        raise SystemExit(3)

    def mute():
        raise Mute()

    assert THREAD.call(leave)[:5] == ("raised", "SystemExit", "SystemExit", "builtins", "3")
    assert THREAD.call(mute)[4] == "<exception str() failed>"


def test_timed_calls_are_timed_on_the_kernel_thread():
    status, seconds, value = THREAD.call(lambda: time.sleep(0.02) or 5, (), True)
    assert status == "ok" and value == 5 and 0.015 < seconds < 1.0


def test_the_kernel_thread_cannot_call_itself():
    status, name, *_ = THREAD.call(lambda: THREAD.call(lambda: None))
    assert status == "raised" and name == "ValueError"


def test_the_collector_is_held_from_the_return_until_the_snapshot():
    import gc

    THREAD.release_collector()  # the tests above left it held
    assert gc.isenabled()
    inside = THREAD.call(gc.isenabled)
    assert inside == ("ok", 0.0, True)  # collections run during the call
    assert not gc.isenabled()  # none from its return until the worker's snapshot
    THREAD.release_collector()
    assert gc.isenabled()
    THREAD.call(lambda: None)
    assert THREAD.call(gc.isenabled)[2]  # the next call releases it too
    THREAD.release_collector()
    gc.disable()  # a collector the process had off stays off
    THREAD.call(lambda: None)
    THREAD.release_collector()
    assert not gc.isenabled()
    gc.enable()


def test_a_release_holds_the_collector_until_the_next_call_starts():
    import gc

    THREAD.release_collector()
    THREAD.hold_collector()  # the worker's RELEASE: the host writes the next inputs now
    assert not gc.isenabled()
    THREAD.hold_collector()  # held twice is held once: released as the process had it
    assert THREAD.call(gc.isenabled)[2]  # the call starts: collections run during it
    assert not gc.isenabled()  # and are held again from its return
    THREAD.release_collector()
    assert gc.isenabled()


def test_a_thread_left_alive_at_the_return_is_reported_in_any_interpreter():
    """The census at a call's return (runtime.thread): a thread state made by the call and alive
    when it returns is reported once, in the main interpreter or in a subinterpreter (whose
    thread states a census of the current interpreter alone would miss); threads there before
    mark_threads() are the judge's, and one that ended inside the call is nobody's concern. In a
    process of its own, with the runtime audit in record mode (the census reports through it)."""
    import subprocess

    code = """
import json, os, threading, time
import _xxsubinterpreters as interpreters
from metakernelbench import _core

_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
before = threading.Thread(target=time.sleep, args=(30,), daemon=True)
before.start()  # the judge's: there when the threads are marked
thread = _core.KernelThread()
thread.mark_threads()
gate = threading.Event()

sub = interpreters.create(isolated=False)  # the judge's own, made before the calls (unmarked)

def nothing():
    pass

def left_alive():
    threading.Thread(target=gate.wait, daemon=True).start()

def in_subinterpreter():
    interpreters.run_string(sub, "import threading, time\\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\\n")

for fn in (nothing, left_alive, left_alive, in_subinterpreter):
    assert thread.call(fn)[0] == "ok"
    thread.release_collector()
    print(json.dumps([l for l in _core.runtime_audit_recorded() if l.startswith("runtime.thread")]))
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    main = [[r for r in step if "in interpreter" not in r] for step in seen]
    # nothing: no thread of the main interpreter; each left_alive: one more, reported once.
    assert [len(step) for step in main] == [0, 1, 2, 2], done.stdout
    # The subinterpreter's thread, alive at the return: reported, named by its interpreter.
    new = [r for r in seen[3] if r not in seen[2]]
    assert any("in interpreter" in r and "threading.py" in r for r in new), done.stdout


def test_the_pending_call_queue_is_held_all_but_one_slot_while_a_job_runs():
    """Py_AddPendingCall from the kernel's thread: the main thread would run the call after the
    clock stopped, before the outputs are read (red teams 2026-12-05/06). While a job runs the
    queue holds the judge's no-op calls in all but one slot: a kernel's first call is queued and
    reported (runtime.pending_call), a second is refused; a job that queues none reports nothing.
    In a process of its own, the runtime audit in record mode (the report goes through it)."""
    code = """
import ctypes, json, os
from metakernelbench import _core

_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
thread = _core.KernelThread()
add = ctypes.pythonapi.Py_AddPendingCall
add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
add.restype = ctypes.c_int
ran = []
callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda _: ran.append(1) or 0)

def queue(n):
    return [add(ctypes.cast(callback, ctypes.c_void_p), None) for _ in range(n)]

out = []
for n in (0, 1, 2, 0):
    status, _, codes = thread.call(queue, (n,))
    thread.release_collector()
    reports = [l for l in _core.runtime_audit_recorded() if l.startswith("runtime.pending_call")]
    out.append({"codes": codes, "reports": len(reports), "ran": len(ran)})
print(json.dumps(out))
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert [s["codes"] for s in steps] == [[], [0], [0, -1], []], steps
    # Reported once per job that queued; the queued call ran (on the main thread) after the job.
    assert [s["reports"] for s in steps] == [0, 1, 2, 2], steps
    assert [s["ran"] for s in steps] == [0, 1, 2, 2], steps


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the queue's layout is CPython 3.11's")
def test_a_judge_entry_rewritten_in_the_queue_is_reported():
    """Raw memory rewrote one of the judge's queued no-op calls in place into a call of the
    kernel's, which the main thread ran after the clock; the count never changed (red team round
    20, 2026-12-06: 3.3-5.3x strict). Each of the judge's calls carries a token it marks as it
    runs: here the job rewrites the last queued entry's function (CPython 3.11's queue, read
    through ctypes: the test's own raw memory) and the token not run is reported
    (runtime.pending_call); a job that rewrites nothing reports nothing."""
    code = """
import ctypes, json, os
from metakernelbench import _core

_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
thread = _core.KernelThread()
main = ctypes.pythonapi.PyInterpreterState_Main
main.restype = ctypes.c_void_p
interp = main()
CALLS, FIRST, LAST = 128, 640, 644  # ceval.pending in PyInterpreterState (3.11)
ran = []
callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda _: ran.append(1) or 0)
address = ctypes.cast(callback, ctypes.c_void_p).value

def entries():
    first = ctypes.c_int.from_address(interp + FIRST).value
    last = ctypes.c_int.from_address(interp + LAST).value
    out, i = [], first
    while i != last:
        base = interp + CALLS + 16 * i
        out.append((ctypes.c_void_p.from_address(base).value,
                    ctypes.c_void_p.from_address(base + 8).value))
        i = (i + 1) % 32
    return out

def rewrite(on):
    queued = entries()
    # The layout as expected: the judge's calls, one function, tokens 1, 2, ...
    layout = len({f for f, _ in queued}) == 1 and [a for _, a in queued] == list(
        range(1, len(queued) + 1))
    if on and layout:
        last = ctypes.c_int.from_address(interp + LAST).value
        ctypes.c_void_p.from_address(interp + CALLS + 16 * ((last - 1) % 32)).value = address
    return layout

out = []
for on in (False, True, False):
    status, _, layout = thread.call(rewrite, (on,))
    thread.release_collector()
    reports = [l for l in _core.runtime_audit_recorded() if l.startswith("runtime.pending_call")]
    out.append({"layout": layout, "reports": len(reports), "ran": len(ran)})
print(json.dumps(out))
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    if not all(s["layout"] for s in steps):
        pytest.skip(f"this interpreter's pending-call queue is not where 3.11.7 keeps it: {steps}")
    # The rewritten entry ran (the kernel's call, on the main thread) and was reported, once.
    assert [s["ran"] for s in steps] == [0, 1, 1], steps
    assert [s["reports"] for s in steps] == [0, 1, 1], steps


def test_a_clock_in_parts_closes_its_window_before_the_watch_and_reads_watched(tmp_path):
    """The watch on kernel code (runtime.outside_call) around a timed call: off from after the
    clock's start to the close of the timed window, so that a Python clock (PublishedClock) pays
    no re-instrumentation for the watch's switch inside the window; on again for everything
    after it. With the clock's methods written in the file the watch looks for, the findings
    name the parts that ran watched: a clock in parts (start / stop / read) is watched in start
    and read, not in stop; a two-part clock (start / stop -> seconds, as CallClock) in stop too,
    its stop being its reading."""
    clock_file = tmp_path / "kernel.py"
    clock_file.write_text(
        "import time\n"
        "class Parts:\n"
        "    def start(self):\n"
        "        self.t = time.perf_counter()\n"
        "    def stop(self):\n"
        "        self.u = time.perf_counter()\n"
        "    def read(self):\n"
        "        return self.u - self.t\n"
        "class Whole:\n"
        "    def start(self):\n"
        "        self.t = time.perf_counter()\n"
        "    def stop(self):\n"
        "        return time.perf_counter() - self.t\n"
    )
    code = f"""
import json, os, runpy
from metakernelbench import _core

_core.install_runtime_audit({{"kernel_path": {str(clock_file)!r}, "dsl": "none"}}, enforce=False)
made = runpy.run_path({str(clock_file)!r})
for name in ("Parts", "Whole"):
    thread = _core.KernelThread(made[name]())
    thread.call(lambda: None, (), True)  # the first call leaves the watch on
    thread.release_collector()
    _core.take_runtime_findings()
    status, seconds, _ = thread.call(lambda: sum(range(1000)), (), True)
    thread.release_collector()
    found = [f["message"] for f in _core.take_runtime_findings() if f["code"] == "runtime.outside_call"]
    print(json.dumps([name, status, seconds, found]))
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (parts, parts_status, parts_seconds, parts_found), (whole, whole_status, whole_seconds, whole_found) = (
        json.loads(line) for line in done.stdout.splitlines()
    )
    assert parts_status == whole_status == "ok" and parts_seconds > 0 and whole_seconds > 0
    assert len(parts_found) == 1 and len(whole_found) == 1, done.stdout

    def ran(found, part):  # the finding names each function of kernel.py's that ran watched
        return f" {part} (kernel.py:" in found[0]

    assert not ran(parts_found, "stop"), parts_found  # the window closed unwatched
    assert ran(parts_found, "start") and ran(parts_found, "read"), parts_found
    assert ran(whole_found, "start") and ran(whole_found, "stop"), whole_found


def test_a_name_the_clock_looks_up_changed_by_the_call_is_seen_before_the_window_closes(tmp_path):
    """runtime.clock_tampered: a clock in parts written in Python (as PublishedClock, whose torch
    functions look up torch._C's synchronise and torch.cuda.current_stream when they run) is
    traced by values.clock_reach before kernel.py runs, and the names it reached are guarded
    (KernelThread.guard_clock). A call that replaces a function the clock's module holds, adds a
    global that shadows a builtin the clock calls, assigns the module's __class__ (so that its
    attribute reads run the kernel's code), or replaces a method of a class the clock ran, is
    reported before the clock's stop runs, and that call is timed by the monotonic clock instead.
    Without the guard, the same patch forges the reading (the mutation the test checks)."""
    (tmp_path / "fakeclock.py").write_text(
        "import time\n"
        "def now():\n"
        "    return time.perf_counter()\n"
        "class Parts:\n"
        "    def start(self):\n"
        "        self.t = now()\n"
        "    def stop(self):\n"
        "        self.u = now()\n"
        "    def read(self):\n"
        "        return float(self.u - self.t)\n"
    )
    code = f"""
import json, os, sys, time, types
sys.path.insert(0, {str(tmp_path)!r})
import fakeclock
from metakernelbench import _core
from metakernelbench.judge import values

_core.install_runtime_audit({{"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}}, enforce=False)
original = dict(vars(fakeclock))

def work():
    time.sleep(0.02)

def forge_now():
    fakeclock.now = lambda: 0.0
    work()

def shadow_float():
    fakeclock.float = lambda x: 1e-9
    work()

class Lying(types.ModuleType):
    def __getattribute__(self, name):
        return (lambda: 0.0) if name == "perf_counter" else super().__getattribute__(name)

def swap_module_class():
    fakeclock.time.__class__ = Lying
    work()

def replace_method():
    fakeclock.Parts.read = lambda self: 1e-9
    work()

def restore():
    for name in set(vars(fakeclock)) - set(original):
        delattr(fakeclock, name)
    fakeclock.now = original["now"]
    fakeclock.time.__class__ = types.ModuleType
    fakeclock.Parts.read = parts_read

parts_read = fakeclock.Parts.__dict__["read"]
rows = []
for guard in (True, False):
    for patch in (work, forge_now, shadow_float, swap_module_class, replace_method):
        clock = fakeclock.Parts()
        thread = _core.KernelThread(clock)
        if guard:
            thread.guard_clock(values.clock_reach(clock))
        before = len(_core.runtime_audit_recorded())
        status, seconds, _ = thread.call(patch, (), True)
        thread.release_collector()
        found = [line.split(" | ")[2] for line in _core.runtime_audit_recorded()[before:]
                 if line.startswith("runtime.clock_tampered")]
        again = thread.call(work, (), True)[1]  # the next call: reported once, timed as before
        thread.release_collector()
        found += [line for line in _core.runtime_audit_recorded()[before + len(found):]
                  if line.startswith("runtime.clock_tampered")]  # none: reported once
        restore()
        rows.append([guard, patch.__name__, status, seconds, found, again, thread.guarded])
print(json.dumps(rows))
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    rows = {(guard, name): rest for guard, name, *rest in json.loads(done.stdout.splitlines()[-1])}
    status, seconds, found, _, guarded = rows[(True, "work")]
    assert status == "ok" and seconds >= 0.02 and found == [] and guarded > 0
    where = {
        "forge_now": "fakeclock.now replaced",
        "shadow_float": "fakeclock.float added",
        "swap_module_class": "the type of time",
        "replace_method": "fakeclock.Parts.read replaced",
    }
    for name, evidence in where.items():
        status, seconds, found, again, _ = rows[(True, name)]
        assert status == "ok" and seconds >= 0.02, (name, rows[(True, name)])  # the true time
        assert len(found) == 1 and found[0].startswith(evidence), (name, found)
        assert again >= 0.02
    # Without the guard each patch is read as the clock's time (the forgery the guard stops);
    # replacing the class's method changes nothing here (the clock's stop and read are bound).
    for name in ("forge_now", "shadow_float", "swap_module_class"):
        status, seconds, found, _, _ = rows[(False, name)]
        assert status == "ok" and seconds < 0.01 and found == [], (name, rows[(False, name)])


def test_a_new_kernel_thread_has_its_thread_state_before_the_watch_walks_them(tmp_path):
    """The CPU judge's prepare makes the kernel's thread and switches the watch on right after,
    walking every thread state: on CPython 3.11 a thread state being made is linked before it is
    initialised, and the walk crashed the worker (about 1 evaluation in 400; this loop crashed 2
    runs of 3 before the constructor waited for the thread's state)."""
    script = tmp_path / "race.py"
    script.write_text(
        "import sys, sysconfig\n"
        "from metakernelbench import _core\n"
        "config = {'kernel_path': sys.argv[1], 'dsl': 'cutedsl',\n"
        "          'stdlib_roots': [sysconfig.get_paths()['stdlib']]}\n"
        "_core.install_runtime_audit(config, enforce=False)\n"
        "threads = []\n"
        "for _ in range(300):\n"
        "    threads.append(_core.KernelThread())\n"
        "    _core.watch_kernel_code(True)\n"
        "    _core.watch_kernel_code(False)\n"
        "print('survived')\n"
    )
    _survives_three_runs(script, tmp_path)


def test_the_census_skips_a_thread_state_a_native_thread_is_still_making(tmp_path):
    """A native thread entering Python (a ctypes callback on a pthread here; a TorchScript fork's
    Python op in the red team's kernel of 2026-12-05) makes its thread state without the GIL, and
    CPython 3.11 links it before initialising it: the census at each call's return read its frame
    and the worker died of SIGSEGV. Without the check of ThreadStateInitialised this loop crashed
    3 runs of 3 at 3000 calls."""
    script = tmp_path / "census.py"
    script.write_text(
        "import ctypes, sys, sysconfig, threading\n"
        "from metakernelbench import _core\n"
        "config = {'kernel_path': sys.argv[1], 'dsl': 'cutedsl',\n"
        "          'stdlib_roots': [sysconfig.get_paths()['stdlib']]}\n"
        "_core.install_runtime_audit(config, enforce=False)\n"
        "libc = ctypes.CDLL(None)\n"
        "CB = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)\n"
        "callback = CB(lambda _: None)\n"
        "libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, CB,\n"
        "                                ctypes.c_void_p]\n"
        "libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.c_void_p]\n"
        "thread = _core.KernelThread()\n"
        "thread.mark_threads()\n"
        "stop = []\n"
        "def spawner():\n"
        "    while not stop:\n"
        "        tids = []\n"
        "        for _ in range(8):\n"
        "            tid = ctypes.c_ulong()\n"
        "            libc.pthread_create(ctypes.byref(tid), None, callback, None)\n"
        "            tids.append(tid.value)\n"
        "        for t in tids:\n"
        "            libc.pthread_join(t, None)\n"
        "threading.Thread(target=spawner, daemon=True).start()\n"
        "for _ in range(3000):\n"
        "    thread.call(int)\n"
        "    thread.release_collector()\n"
        "    _core.watch_kernel_code(True)\n"
        "    _core.watch_kernel_code(False)\n"
        "stop.append(1)\n"
        "print('survived')\n"
    )
    _survives_three_runs(script, tmp_path)


def _survives_three_runs(script, tmp_path) -> None:
    """Runs `script` (its argument: a kernel path under tmp_path) three times; each run must print
    "survived" and exit 0 (a race that crashes it shows as SIGSEGV's exit status)."""
    for _ in range(3):
        command = [sys.executable, str(script), str(tmp_path / "kernel.py")]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == "survived", (
            proc.returncode,
            proc.stderr[-2000:],
        )


def test_a_guarded_name_changed_outside_any_call_is_seen_by_check_guard(tmp_path):
    """The worker checks the guarded names again after each export of a call's outputs: a change
    made there (a callback of the kernel's that fires on a reference the export drops) is no
    call's return, and only check_guard sees it. Unchanged, it reports nothing."""
    import subprocess
    import sys

    code = """
import torch
from metakernelbench import _core
from metakernelbench.judge import values
_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
thread = _core.KernelThread()
thread.guard_clock(values.harness_reach())
before = thread.check_guard()
original = torch.Tensor.contiguous
torch.Tensor.contiguous = lambda self, *a, **k: self
after = thread.check_guard()
torch.Tensor.contiguous = original
found = [line.split(" | ")[0] for line in _core.runtime_audit_recorded()]
print(before, after, "runtime.clock_tampered" in found)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "True"]


def test_a_guarded_object_rewritten_in_place_is_seen_by_check_guard():
    """The same object under the same name, rewritten in place: a Python function given other code
    (its __code__ assigned), and os.fstat, a builtin the worker calls opening each call's inputs,
    made into a functools.partial by copying the partial's type pointer and fields over its own,
    as the ninth session's red team did with raw memory (ctypes here). No name changes and no
    dictionary's version tag moves; check_guard, off the clock, compares what each object is made
    of and reports both (without the comparison both read False: checked)."""
    import subprocess
    import sys

    code = """
import ctypes, functools, os
from metakernelbench import _core
from metakernelbench.judge import values
_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
thread = _core.KernelThread()
thread.guard_clock(values.harness_reach())
clean = thread.check_guard()
code = values._numel.__code__
values._numel.__code__ = (lambda shape: 0).__code__
python_function = thread.check_guard()
values._numel.__code__ = code
thread2 = _core.KernelThread()
thread2.guard_clock(values.harness_reach())
clean2 = thread2.check_guard()
target = os.fstat
partial = functools.partial(dict.get, {}, 0)
saved = ctypes.string_at(id(target) + 8, 48)
ctypes.memmove(id(target) + 8, id(partial) + 8, 48)
morphed_type = type(target).__name__
builtin = thread2.check_guard()
ctypes.memmove(id(target) + 8, saved, 48)
found = [line.split(" | ")[2] for line in _core.runtime_audit_recorded()]
print(clean, python_function, clean2, morphed_type, builtin,
      sum("rewritten in place" in f for f in found))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "False", "partial", "True", "2"]


def test_a_guarded_functions_code_rewritten_in_place_is_seen_by_check_guard():
    """A Python function whose code object keeps its address but not what it runs with: a
    constant of its code replaced in place (raw memory; ctypes here), as the eleventh session's
    second red team rewrote the worker's own _StateSnapshot.changed (bytecode and a constants
    tuple of its own, 137-147x strict). The function, its name and its code object's address are
    unchanged; check_guard compares the code's constants, names and shape too."""
    import subprocess
    import sys

    code = """
import ctypes, sys
from metakernelbench import _core
_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)

def victim():
    return 12345

owner = {"victim": victim}
thread = _core.KernelThread()
thread.guard_clock([(owner, "victim", True, victim)])
clean = thread.check_guard()
consts = victim.__code__.co_consts
slot = id(consts) + 24 + 8 * consts.index(12345)  # the tuple's item, in place
forged = 54321
ctypes.pythonapi.Py_IncRef(ctypes.py_object(forged))
ctypes.memmove(slot, ctypes.byref(ctypes.c_void_p(id(forged))), 8)
print(clean, thread.check_guard(), victim(), consts is victim.__code__.co_consts)
sys.stdout.flush()
import os; os._exit(0)  # the tuple's old item is not released
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "54321", "True"]


def test_one_report_does_not_blind_the_guard(tmp_path):
    """A change is reported and becomes the state later checks compare with: a second change, to
    another name, is reported too. (The worker's calibration turns a report of the judge's own
    into a warning; a guard that reported once and never again then hid the kernel's change.)"""
    import subprocess
    import sys

    code = """
import os
from metakernelbench import _core
from metakernelbench.judge import values
_core.install_runtime_audit({"kernel_path": "/nonexistent/kernel.py", "dsl": "none"}, enforce=False)
thread = _core.KernelThread()
thread.guard_clock(values.harness_reach())
fstat, close = os.fstat, os.close
os.fstat = len
first = thread.check_guard()
again = thread.check_guard()
count = len(_core.runtime_audit_recorded())
os.close = len
second = thread.check_guard()
os.fstat, os.close = fstat, close
found = [line.split(" | ")[2] for line in _core.runtime_audit_recorded()]
print(first, again, count, second, any("os.fstat" in f for f in found), any("os.close" in f for f in found))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # Tampered stays tampered (later calls are timed by the monotonic clock), the first change is
    # reported once, and the second, to another name, is reported too.
    assert done.stdout.split() == ["True", "True", "1", "True", "True", "True"]


def test_work_between_calls_runs_on_the_kernel_thread_with_the_collector_held():
    import gc

    THREAD.release_collector()
    seen = []

    class Dropped:
        def __del__(self):
            seen.append((threading.get_ident(), gc.isenabled()))

    box = [Dropped()]
    assert THREAD.between(box.clear) == ("ok", 0.0, None)
    assert box == []
    # The finaliser ran on the kernel's thread, never on this one, with no collection possible.
    ((ident, collecting),) = seen
    assert ident != threading.get_ident()
    assert ident == THREAD.call(threading.get_ident)[2]
    assert not collecting
    assert THREAD.between(int, ("x",))[0] == "raised"  # described as call() describes it
    THREAD.release_collector()


def _thread_cpu_ms(native_id: int) -> float:
    with open(f"/proc/self/task/{native_id}/schedstat") as f:  # ns on the CPU, first field
        return int(f.read().split()[0]) / 1e6


def test_a_spinning_thread_polls_for_its_next_call_and_then_sleeps():
    # spin_us keeps the thread's CPU busy between calls (a GPU worker's timed call then starts on
    # a CPU that was running), for that long and no longer; calls run as on any thread.
    if not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat"):
        pytest.skip("no per-thread schedstat in this kernel")
    spinning = _core.KernelThread(spin_us=30_000)
    resting = _core.KernelThread()
    assert spinning.call(lambda x: x + 1, (41,)) == ("ok", 0.0, 42)
    assert resting.call(lambda x: x + 1, (41,)) == ("ok", 0.0, 42)
    spinning.release_collector()
    resting.release_collector()
    before = (_thread_cpu_ms(spinning.native_id), _thread_cpu_ms(resting.native_id))
    time.sleep(0.1)  # the spinning thread polls for 30 ms of it, then sleeps
    after = (_thread_cpu_ms(spinning.native_id), _thread_cpu_ms(resting.native_id))
    polled, rested = after[0] - before[0], after[1] - before[1]
    assert rested < 2.0
    assert 3.0 < polled < 60.0, polled  # 30 ms of polling, on a loaded machine less of it on a CPU
    status, seconds, value = spinning.call(lambda: time.sleep(0.02) or 5, (), True)
    assert status == "ok" and value == 5 and 0.015 < seconds < 1.0
    spinning.release_collector()


def test_the_worker_refuses_a_call_once_its_own_objects_were_rewritten():
    # A red team with raw memory found the Worker through the thread states and replaced its
    # transport's segment map with an object whose `get` ran the answer on the main thread
    # (19-20x strict, 2026-12-07): the worker compares its objects with prepare's snapshot first.
    import types as pytypes

    from metakernelbench.judge import values, worker

    facts = values.TensorFacts()
    fake = pytypes.SimpleNamespace(
        channel=object(),
        transport=values.CpuTransport(),
        _thread=object(),
        _facts=facts,
        _sync=len,
        _perf=time.perf_counter,
        _clone=list,
        _monitor=None,
    )
    state = worker._StateSnapshot(fake)
    assert state.changed() is None
    fake.transport._mapped = {("dev", 1, True): None}  # the worker's own replacement: a dict
    assert state.changed() is None

    class Mapping:
        get = property(len)

    fake.transport._mapped = Mapping()
    assert "_mapped replaced by a Mapping" in state.changed()
    fake.transport._mapped = {("dev", 1, True): (Mapping(), None)}  # a dict, holding another's
    assert "_mapped holds a tuple it did not put there" in state.changed()
    fake.transport._mapped = {}
    facts._detach = len
    assert "describer's _detach replaced" in state.changed()
    del facts._detach
    assert "describer's attributes changed" in state.changed()

    class Key(str):
        pass

    vars(facts)[Key("_other")] = len
    assert "not a plain str" in state.changed()
    del vars(facts)["_other"]
    fake._clone = tuple
    assert state.changed() == "Worker._clone replaced"
    # And the check itself: a red team's next kernel set the worker's _state to None (21x strict).
    work = worker.Worker.__new__(worker.Worker)
    work._state, work._thread = None, object()
    refused = work._state_rewritten([])
    assert refused is not None and "state check removed" in refused["error"]
    work._thread = None  # before prepare: nothing to check yet
    assert work._state_rewritten([]) is None
