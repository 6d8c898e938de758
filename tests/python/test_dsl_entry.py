"""The wrappers the worker puts around the DSL's entry points (judge/dsl_entry.py): they behave
as the originals, bind as methods, and hand kernel.py nothing of the worker's."""

import subprocess
import sys
import types

import pytest
from metakernelbench import _core, dsl_facts
from metakernelbench.judge import dsl_entry, worker


def _runner(original, log):
    def run(args, kwargs):
        log.append("enter")
        try:
            return original(*args, **kwargs)
        finally:
            log.append("leave")

    return run


def test_a_function_and_a_method_are_called_through_the_runner():
    log = []

    def compile_(fn, *, opt=0):
        """compiles"""
        return ("compiled", fn, opt)

    class Compiled:
        def __call__(self, x):
            return x + 1

    wrapped = dsl_entry.wrapper(_runner(compile_, log), compile_)
    assert wrapped("f", opt=3) == ("compiled", "f", 3)
    assert (wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__) == ("compile_", "compiles", compile_)
    Compiled.__call__ = dsl_entry.wrapper(_runner(Compiled.__call__, log), Compiled.__call__)
    assert Compiled()(41) == 42
    assert log == ["enter", "leave", "enter", "leave"]


def test_an_exception_of_the_original_passes_through_and_the_window_closes():
    log = []

    def broken():
        raise ValueError("from the DSL")

    wrapped = dsl_entry.wrapper(_runner(broken, log), broken)
    try:
        wrapped()
    except ValueError as error:
        assert str(error) == "from the DSL"
    assert log == ["enter", "leave"]


def test_the_wrapper_leads_to_nothing_of_the_judge():
    """What kernel.py can read off a wrapper it finds in the DSL's module: its globals hold no
    module and no function but the factories (worker.py's globals hold _core, the Worker class);
    its closure holds the runner and the original only."""
    wrapped = dsl_entry.wrapper(_runner(len, []), len)
    reachable = {k: v for k, v in wrapped.__globals__.items() if not k.startswith("__")}
    # The factories only: the DSLs' compile checks are C++ (_core.checked_compile).
    assert reachable == {"wrapper": dsl_entry.wrapper, "method": dsl_entry.method}
    # The facts' own globals (metakernelbench.dsl_facts, outside the judge's folder for the
    # agent's shell) hold its functions and nothing else.
    facts = {k: v for k, v in dsl_facts.tir_facts.__globals__.items() if not k.startswith("__")}
    assert facts == {
        "tir_facts": dsl_facts.tir_facts,
        "cute_host_ops": dsl_facts.cute_host_ops,
        "tir_compile_facts": dsl_facts.tir_compile_facts,
        "cute_compile_facts": dsl_facts.cute_compile_facts,
        "tir_materialize": dsl_facts.tir_materialize,
    }
    assert not any(isinstance(v, types.ModuleType) for v in reachable.values())
    assert "Worker" in vars(worker) and "_core" in vars(worker)  # what a worker.py closure would leak
    contents = [c.cell_contents for c in wrapped.__closure__]
    # The runner and the original (which kernel.py reaches anyway, as __wrapped__ and in the DSL).
    assert len(contents) == 2 and len in contents and all(callable(c) for c in contents)


def test_without_a_runner_the_wrapper_calls_the_original():
    """The CPU judge has no launch monitor: the wrappers are there all the same (their frames
    mark the DSL's entry points for the runtime audit) and call the original."""

    def compile_(fn, *, opt=0):
        return ("compiled", fn, opt)

    wrapped = dsl_entry.wrapper(None, compile_)
    assert wrapped("f", opt=2) == ("compiled", "f", 2)
    assert wrapped.__code__.co_name == "entry"  # the name the runtime audit looks for


def test_constant_function_is_a_cpp_function_without_globals():
    answer = _core.constant_function((13, 0))
    assert answer() == (13, 0) and answer("/usr/local/cuda") == (13, 0)
    assert answer(cuda_path=None) == (13, 0)
    assert not hasattr(answer, "__globals__") and not hasattr(answer, "__closure__")


def test_tracebacks_are_read_in_c_and_formatted_without_frames():
    """The worker formats a kernel's exception without reading tb_frame from Python (refused
    once kernel.py is loaded: the judge's code is trusted for nothing then)."""

    def inner():
        try:
            {}["missing"]
        except KeyError as error:
            raise ValueError("a chained failure") from error

    try:
        inner()
    except ValueError as error:
        entries = _core.traceback_entries(error.__traceback__)
        text = worker.format_error(error)
    assert [name for _, _, name in entries][-1] == "inner"
    assert all(isinstance(line, int) and line > 0 for _, line, _ in entries)
    assert text.startswith("Traceback (most recent call last):\n")
    assert 'in inner\n    raise ValueError("a chained failure") from error\n' in text
    assert text.endswith("ValueError: a chained failure\n")
    assert _core.traceback_entries(None) == []


_REAL_RUNNER = """
from metakernelbench import _core
from metakernelbench.judge import dsl_entry
monitor = _core.cuda.LaunchMonitor()
def compile_(fn, target=None, *, opt=0):
    return (fn, target, opt)
wrapped = dsl_entry.wrapper(monitor.entry_runner(compile_), compile_)
print(repr(wrapped("mod", "cuda", opt=3)), repr(wrapped("mod")))
"""


@pytest.mark.gpu
def test_the_real_runner_passes_positional_and_keyword_arguments_through():
    """LaunchMonitor.entry_runner (C++, built with CUDA only) is called as run(args, kwargs) by
    the wrapper: the original gets the arguments themselves, not a tuple and a dict (the H200's
    smoke test of 2026-12-02: tvm.compile got `(mod, ...)` as one tuple). In a process of its
    own: the monitor subscribes to CUPTI, once a process."""
    from metakernelbench import _core

    if not _core.built_with_cuda:
        pytest.skip("the core was built without CUDA")
    done = subprocess.run([sys.executable, "-c", _REAL_RUNNER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["('mod',", "'cuda',", "3)", "('mod',", "None,", "0)"]


def test_the_checked_compiles_lead_to_nothing_unchecked():
    """A DSL's checked compile sits where kernel.py reaches it: C++ (_core.checked_compile), with
    no closure, globals or __wrapped__ that lead to the DSL's unchecked original; CuTe DSL's is
    bound as a method by dsl_entry.method, whose closure holds the checked one only. Found in the
    fourteenth session: the Python wrapper's closure handed the unchecked Compiler.compile to a
    kernel with the static rules waived, which compiled a host store with it."""
    seen = []

    def original(*args, **kwargs):
        seen.append((args, kwargs))
        return "built"

    checked = _core.checked_compile(original, lambda args, kwargs: ([], ["cuda"]), "tirx")
    assert checked("mod", "cuda", opt=1) == "built" and seen == [(("mod", "cuda"), {"opt": 1})]
    for name in ("__closure__", "__globals__", "__wrapped__", "__code__"):
        assert not hasattr(checked, name), name
    bound = dsl_entry.method(_core.checked_compile(original, lambda args, kwargs: ([],), "cutedsl"))
    contents = [c.cell_contents for c in bound.__closure__]
    assert len(contents) == 1 and not hasattr(contents[0], "__closure__")
    assert original not in contents

    class Compiler:
        compile = bound

    seen.clear()
    compiler = Compiler()
    assert compiler.compile("module", "pipeline") == "built"
    assert seen == [((compiler, "module", "pipeline"), {})]
    # Refused where the C++ core refuses: an extern call for TIR, a host store for CuTe DSL, and
    # a CuTe DSL module the facts cannot read (a TVM error stays TVM's: the kernel's).
    seen.clear()
    refusing = _core.checked_compile(original, lambda args, kwargs: (["tirx.call_extern"], ["cuda"]), "tirx")
    with pytest.raises(PermissionError, match="native symbol"):
        refusing("mod")
    store = _core.checked_compile(original, lambda args, kwargs: (["cute.memref_store"],), "cutedsl")
    with pytest.raises(PermissionError):
        store(None, "module")

    def unreadable(args, kwargs):
        raise ValueError("no module")

    with pytest.raises(PermissionError, match="could not be read"):
        _core.checked_compile(original, unreadable, "cutedsl")(None, "module")
    with pytest.raises(ValueError, match="no module"):
        _core.checked_compile(original, unreadable, "tirx")("mod")
    with pytest.raises(PermissionError, match="not a PrimFunc"):
        _core.checked_compile(original, lambda args, kwargs: None, "tirx")("mod")
    assert seen == []
    # The decision is the C++ core's: the DSL's own intrinsics on CUDA pass, an extern call or a
    # CPU target does not.
    assert _core.tir_compile_refusal(["tirx.cuda_warp_reduce"], ["cuda"]) == ""
    assert "native symbol" in _core.tir_compile_refusal(["tirx.call_extern"], ["cuda"])
    assert "'llvm' target" in _core.tir_compile_refusal([], ["llvm"])
