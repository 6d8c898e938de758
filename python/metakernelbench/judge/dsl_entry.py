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
    names of every call in `mod`'s PrimFuncs (and "reinterpret_to_handle" / "cast_to_handle" for
    a pointer made from a number) and the kinds of the targets it is built for; None
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
            name = str(node.op.name)
            ops.append(name)
            if name.endswith("reinterpret") and str(node.dtype) == "handle":
                ops.append("reinterpret_to_handle")  # a pointer from a number
        elif type(node) is tir.Cast and str(node.dtype) == "handle":
            ops.append("cast_to_handle")
        elif type(node) in (tir.LetStmt, tir.Let) and str(node.var.dtype) == "handle":
            ops.append("let_handle")

    kinds: list[str] = []
    if target is not None:
        kinds.append(str(tvm.target.Target(target).kind.name))
    else:
        current = tvm.target.Target.current(allow_none=True)
        if current is not None:
            kinds.append(str(current.kind.name))
    for func in funcs:
        # A handle parameter no buffer matches is a pointer the caller chose (None: null, then
        # indexed by any offset), and a handle bound by a let is one TVM's memory check does not
        # follow to a parameter (red team, thirteenth session: host code reading and writing any
        # address through T.decl_buffer over such a handle, strict).
        matched = set(func.buffer_map.keys())
        if any(str(p.dtype) == "handle" and p not in matched for p in func.params):
            ops.append("unmatched_handle_param")
        tir.stmt_functor.post_order_visit(func.body, visit)
        attrs = func.attrs
        if attrs is not None and "target" in attrs:
            kinds.append(str(attrs["target"].kind.name))
    return ops, kinds


def cute_host_ops(module):
    """The op names of a CuTe DSL module's host code: every op outside its kernels (cuda.kernel,
    gpu.func, gpu.module and what they hold); None when `module` is not an MLIR module as the
    DSL makes them (a stand-in could answer for another)."""
    from cutlass._mlir import ir

    if type(module) is not ir.Module:
        return None
    import re

    device = ("cuda.kernel", "gpu.func", "gpu.module", "gpu.binary")
    # A conversion of C's printf that writes through its argument (%n) or reads a string at it
    # (%s): cute.printf lowers to printf on the host (red team, thirteenth session: %hhn stores).
    conversion = re.compile(r"%[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L|q)?([A-Za-z%])")
    names: list[str] = []
    pending = [module.operation]
    while pending:
        op = pending.pop()
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    name = str(inner.name)
                    if name in device:
                        continue
                    names.append(name)
                    if name == "cute.print":
                        attributes = inner.attributes
                        for key in list(attributes):  # the attributes' names
                            try:
                                text = ir.StringAttr(attributes[key]).value
                            except (TypeError, ValueError):  # not a string: an argument's type
                                continue
                            if any(c in "nsS" for c in conversion.findall(text)):
                                names.append("cute.print_through_pointer")
                    pending.append(inner)
    return names


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
