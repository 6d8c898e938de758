"""What the judge decides a DSL compile on, read from what the compile is given: TVM's TIR
(tir_facts) and CuTe DSL's MLIR (cute_host_ops). The decisions are the C++ core's
(runtime_policy.h: TirCompileRefusal, CuteHostRefusal); the worker's checked compiles
(`_core.checked_compile`, given tir_compile_facts and cute_compile_facts) and `mkb check`
(dslcheck/) both read the facts here.

Outside the judge's package so that `mkb check` works in the agent's shell, whose view of the
judge's folder holds only its __init__.py; and with no module-level import, so that the globals
of these functions, which kernel.py could reach through the worker's wrappers, hold nothing but
them."""


def tir_facts(mod, target, pipeline=None):
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
            elif name.endswith("reinterpret") and node.args and str(node.args[0].dtype) == "handle":
                ops.append("handle_to_number")  # a pointer's address as a number
            elif name.endswith(".ret") and node.args and str(node.args[0].dtype) == "handle":
                ops.append("handle_to_number")  # a pointer's address returned to Python
            elif name.endswith("address_of") and str(node.dtype) != "handle":
                ops.append("handle_to_number")  # an address typed as a number (call_intrin)
        elif type(node) is tir.Cast and str(node.dtype) == "handle":
            ops.append("cast_to_handle")
        elif type(node) is tir.Cast and str(node.value.dtype) == "handle":
            ops.append("handle_to_number")
        elif type(node) in (tir.LetStmt, tir.Let) and str(node.var.dtype) == "handle":
            ops.append("let_handle")
        elif type(node) in (tir.BufferStore, tir.BufferLoad) and str(node.buffer.dtype) == "handle":
            ops.append("handle_buffer")  # a pointer stored or read as data: a number by a pun

    def gpu(iter_var):
        tag = str(getattr(iter_var, "thread_tag", "") or "")
        return tag.startswith(("threadIdx", "blockIdx"))

    def host(node):
        # The host code: what is outside the device code (TIRx's T.device_entry, a thread
        # extent, a thread-binding loop), whose children are not visited. It launches kernels
        # and reads no buffer: compiled into the worker, a host buffer access indexes memory
        # unchecked (red team, fourteenth session: a host buffer indexed by an offset from its own
        # address stored anywhere, strict).
        kind = type(node)
        # TIRx's T.device_entry() makes a kernel of what follows under TIRx's pipeline only;
        # under another, TVM compiles it as host code (red team, fourteenth session, round 3: a
        # host store there passed strict).
        if kind is tir.AttrStmt and str(node.attr_key) == "tirx.device_entry" and pipeline == "tirx":
            return False
        if kind is tir.AttrStmt and str(node.attr_key) == "thread_extent" and gpu(node.node):
            return False
        # A virtual thread is the host's own loop (TVM lowers it there): only the GPU's threads
        # and blocks are device code (red team, fourteenth session: host code in a vthread loop).
        binding = kind is tir.For and int(node.kind) == int(tir.ForKind.THREAD_BINDING)
        if binding and gpu(node.thread_binding):
            return False
        if kind in (tir.BufferStore, tir.BufferLoad):
            ops.append("host_buffer_access")
        return True

    # TVM's passes switched off for the compile: the IR the check reads is not what TVM's
    # remaining passes make of it (red team, fourteenth session: a handle store the switched-off
    # passes would have refused).
    context = tvm.transform.PassContext.current()
    if context is not None and len(context.disabled_pass) > 0:
        ops.append("disabled_pass")
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
        tir.stmt_functor.pre_order_visit(func.body, host)
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
    # Every conversion: its flags, width and precision (a '$' names an argument by position) and
    # its letter; only those that read no memory through an argument are allowed (red team,
    # fourteenth session, round 3: "%1$n" went past a list of refused letters).
    conversion = re.compile(r"%([^A-Za-z%]*)(?:hh|h|ll|l|j|z|t|L|q)?([A-Za-z%])")
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
                    if name == "func.func" and not any(len(r.blocks) for r in inner.regions):
                        names.append("func.external_declaration")  # a native symbol by name
                    if name == "cute.print":
                        attributes = inner.attributes
                        for key in list(attributes):  # the attributes' names
                            try:
                                text = ir.StringAttr(attributes[key]).value
                            except (TypeError, ValueError):  # not a string: an argument's type
                                continue
                            if any(
                                "$" in spec or letter not in "diouxXeEfFgGaAcp%"
                                for spec, letter in conversion.findall(text)
                            ):
                                names.append("cute.print_through_pointer")
                    pending.append(inner)
    return names


def tir_compile_facts(args, kwargs):
    """tir_facts of a call of tvm.compile or one of TVM's builds, `(mod, target=None, ...)`, from
    its arguments (for `_core.checked_compile`)."""
    mod = args[0] if args else kwargs.get("mod")
    target = args[1] if len(args) > 1 else kwargs.get("target")
    # tvm.compile's tir_pipeline, tvm.tirx.build's pipeline (its third argument)
    pipeline = kwargs.get("tir_pipeline", kwargs.get("pipeline", args[2] if len(args) > 2 else None))
    return tir_facts(mod, target, pipeline if isinstance(pipeline, str) else None)


def cute_compile_facts(args, kwargs):
    """(cute_host_ops,) of a call of CuTe DSL's `Compiler.compile(self, module, ...)`, from its
    arguments; None when the module is not one (for `_core.checked_compile`)."""
    module = args[1] if len(args) > 1 else kwargs.get("module")
    ops = cute_host_ops(module)
    return None if ops is None else (ops,)


def tir_materialize(built):
    """TVM's host code of a compiled module made executable now, inside the checked compile
    (`_core.checked_compile`'s materialize): TVM's LLVM JIT makes it at a module's first function
    look-up, and the worker's gate allows executable memory only inside a checked compile. A look-up
    of a name no module has makes it and answers AttributeError."""
    module = getattr(built, "mod", built)
    get = getattr(module, "get_function", None)
    if get is None:
        return
    try:
        get("__mkb_materialize__", query_imports=False)  # the host module only: TVM's LLVM one
    except AttributeError:
        pass
