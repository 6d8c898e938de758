"""The wrapper the worker puts in place of the DSL's compile and call entry points, so that the
launch monitor knows what loads while they run (docs/judge.md, "The DSL rule").

The wrapper sits in the DSL's modules, where kernel.py can reach it: its `__globals__` are this
module's, which holds nothing but `wrapper`, and its closure holds the original entry point and
a C++ runner (`LaunchMonitor.entry_runner`) that can only call that original. A wrapper written
in worker.py would hand kernel.py the worker's globals and, through its closure, the worker.
"""

from metakernelbench.dsl_facts import cute_host_ops, tir_facts


def wrapper(run, original):
    """A function standing for `original` (a method too: it binds like one) that calls
    run(args, kwargs), or `original` itself where there is no runner (no launch monitor: the CPU
    judge).

    Its frames also mark the DSL's work on kernel.py's behalf for the runtime audit: the DSL's
    code is trusted (ctypes, frames, code it generates) only between such a frame and the event,
    with no frame of the kernel's in between (runtime_policy.h, AuditCaller::in_dsl_entry). The
    function must be named `entry`.
    """

    def entry(*args, **kwargs):
        if run is None:
            return original(*args, **kwargs)
        return run(args, kwargs)

    entry.__name__ = getattr(original, "__name__", "entry")
    entry.__qualname__ = getattr(original, "__qualname__", entry.__name__)
    entry.__doc__ = getattr(original, "__doc__", None)
    entry.__wrapped__ = original
    return entry


def cute_checked(original, refusal, refuse):
    """CuTe DSL's compiler (`Compiler.compile`, every compile and JIT of the DSL goes through it),
    with its host code checked before the pipeline runs: the op names outside its kernels
    (cute_host_ops) go to the C++ core (`refusal`: `_core.cute_host_refusal`); a refusal is
    recorded and raised by `refuse` (C++: `_core.refusing_function`). A @cute.jit function is
    host code compiled to native code in the worker: a store there through a pointer made from
    an integer wrote the interpreter's signal table (red team, thirteenth session, 7.4x strict)."""

    def compile(self, module, *args, **kwargs):
        try:
            ops = cute_host_ops(module)
        except Exception as error:  # unread is unchecked: refused, with what failed
            why = f"the DSL's host code could not be read for the check: {error!r:.200}"
            refuse("runtime.native_code", why)()
        if ops is None:
            refuse("runtime.native_code", "CuTe DSL's compiler given something not an MLIR module")()
        reason = refusal(ops)
        if reason:
            refuse("runtime.native_code", reason)()
        return original(self, module, *args, **kwargs)

    return compile


def tir_checked(original, refusal, refuse):
    """TVM's compile, with what it is given checked before TVM builds it: every call in its
    PrimFuncs, and the targets it is built for (tir_facts), go to the C++ core (`refusal`:
    `_core.tir_compile_refusal`); a refusal is recorded and raised by `refuse` (C++:
    `_core.refusing_function`). TIR built for the host calls any symbol of the process by name
    (`T.call_extern` and its kin) and indexes its buffers unchecked (red team, 2026-12-06)."""

    def compile(mod, target=None, *args, **kwargs):
        facts = tir_facts(mod, target)
        if facts is None:
            refuse("runtime.native_code", "tvm.compile of something not a PrimFunc or IRModule")()
        reason = refusal(*facts)
        if reason:
            refuse("runtime.native_code", reason)()
        return original(mod, target, *args, **kwargs)

    return compile
