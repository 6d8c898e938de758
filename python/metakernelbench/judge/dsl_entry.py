"""The wrapper the worker puts in place of the DSL's compile and call entry points, so that the
launch monitor knows what loads while they run (docs/judge.md, "The DSL rule").

The wrapper sits in the DSL's modules, where kernel.py can reach it: its `__globals__` are this
module's, which holds nothing but `wrapper`, and its closure holds the original entry point and
a C++ runner (`LaunchMonitor.entry_runner`) that can only call that original. A wrapper written
in worker.py would hand kernel.py the worker's globals and, through its closure, the worker.
"""


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


def tir_facts(mod, target):
    """What the judge decides a tvm.compile on (runtime_policy.h, TirCompileRefusal): the op
    names of every call in `mod`'s PrimFuncs and the kinds of the targets it is built for; None
    when `mod` is not a PrimFunc or an IRModule as TVM makes them (a subclass could answer for
    another)."""
    import tvm

    tir = getattr(tvm, "tirx", None) or tvm.tir
    if type(mod) is tir.PrimFunc:
        funcs = [mod]
    elif type(mod) is tvm.IRModule:
        funcs = [f for f in mod.functions.values() if type(f) is tir.PrimFunc]
    else:
        return None
    ops: list[str] = []

    def visit(node):
        if type(node) is tir.Call and type(node.op) is tvm.ir.Op:
            ops.append(str(node.op.name))

    kinds: list[str] = []
    if target is not None:
        kinds.append(str(tvm.target.Target(target).kind.name))
    else:
        current = tvm.target.Target.current(allow_none=True)
        if current is not None:
            kinds.append(str(current.kind.name))
    for func in funcs:
        tir.stmt_functor.post_order_visit(func.body, visit)
        attrs = func.attrs
        if attrs is not None and "target" in attrs:
            kinds.append(str(attrs["target"].kind.name))
    return ops, kinds


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
