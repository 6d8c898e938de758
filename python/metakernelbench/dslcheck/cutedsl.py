"""`mkb check` hook for NVIDIA CuTe DSL (nvidia-cutlass-dsl): compile a kernel.py for an arch
without a GPU and without launching anything.

How: the DSL is pointed at `arch` (CUTE_DSL_ARCH, and the already-created DSL singletons'
settings when the DSL was imported earlier), then kernel.py is imported as module "kernel" and
its `solve(*inputs)` runs on the CPU tensors of the problem's small workload. Everything `solve`
compiles goes through the real compiler (`cute.compile(...)` and implicit compiles of a directly
called `@cute.jit` function alike; MLIR -> PTX -> ptxas cubin for `arch`), but every compiled
function's call is replaced by a no-op while the check runs, so nothing is launched and no CUDA
context is needed. `torch.cuda.current_stream()` answers a stand-in stream (handle 0), so kernels
that pass torch's stream explicitly still reach their compile.

Diagnostics: "syntax" (Python's parser), "import" (importing kernel.py, or no `solve`),
"compile" (an error raised while the DSL traced or compiled: the DSL's own error classes, or any
exception from inside cute.compile / an implicit compile), "runtime" (any other exception in
`solve`, or `solve` compiled no DSL function), "ok" (one per compiled function, with its time).
Errors carry kernel.py's line: the innermost kernel.py frame of the traceback (the DSL's AST
rewriter keeps the file's line numbers), else the DSL error's own location. Ops are verified as
they are traced (CUTE_DSL_VERIFY_TRACE), so an invalid op fails inside the line that built it.
File caching is off: every check compiles for real.

`check_script(path, arch)` does the same for a script run as __main__ (the guide's examples).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from .common import ANSI, Patches, error_chain, from_exception, import_file, kernel_line, syntax_diagnostic


def check(kernel_path: str, inputs: list, arch: str) -> list[dict]:
    """Compiles what kernel.py's `solve(*inputs)` compiles, for `arch`; launches nothing."""
    kernel_path = str(kernel_path)

    def run(state):
        try:
            module = import_file(kernel_path, "kernel")
        except BaseException as error:
            return [_diagnostic(error, kernel_path, state.kind(error, "import"))]
        solve = getattr(module, "solve", None)
        if not callable(solve):
            return [
                {
                    "kind": "import",
                    "message": "kernel.py defines no solve(*inputs)",
                    "line": None,
                    "detail": "",
                }
            ]
        try:
            solve(*inputs)
        except BaseException as error:
            return [_diagnostic(error, kernel_path, state.kind(error, "runtime"))]
        return []

    return _checked(kernel_path, arch, run, "solve()")


def check_script(script_path: str, arch: str) -> list[dict]:
    """Runs a script as __main__ (e.g. a code example of docs/dsl/cutedsl.md) with the same
    offline compile for `arch`: whatever it compiles is compiled, nothing is launched."""
    script_path = str(script_path)

    def run(state):
        try:
            import_file(script_path, "__main__")
        except BaseException as error:
            return [_diagnostic(error, script_path, state.kind(error, "runtime"))]
        return []

    return _checked(script_path, arch, run, "the script")


def _checked(path: str, arch: str, run, what: str) -> list[dict]:
    try:
        source = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
        syntax = syntax_diagnostic(source, path)
        if syntax is not None:
            return [syntax]
        # Before the DSL is imported: it reads its settings once, when its singletons are made.
        os.environ["CUTE_DSL_ARCH"] = arch
        os.environ["CUTE_DSL_DISABLE_FILE_CACHING"] = "1"  # compile for real, not from a cache
        os.environ["CUTE_DSL_VERIFY_TRACE"] = "1"  # see _offline
        try:
            import cutlass.cute  # noqa: F401
        except BaseException as error:
            return [_diagnostic(error, path, "import", "cannot import the CuTe DSL: ")]
        compiled: list[str] = []
        with _offline(arch, compiled) as state:
            diagnostics = run(state)
        if not compiled and not diagnostics:
            diagnostics = [
                {
                    "kind": "runtime",
                    "line": None,
                    "detail": "",
                    "message": f"{what} compiled no CuTe DSL function (every call must "
                    "launch a kernel written in the DSL)",
                }
            ]
        return [{"kind": "ok", "message": m, "line": None, "detail": ""} for m in compiled] + diagnostics
    except BaseException as error:  # the hook never raises
        return [_diagnostic(error, path, "runtime")]


def _is_dsl_error(error: BaseException) -> bool:
    from cutlass.base_dsl.common import DSLBaseError

    return any(isinstance(e, DSLBaseError) for e in error_chain(error))


def _diagnostic(error: BaseException, kernel_path: str, kind: str, prefix: str = "") -> dict:
    d = from_exception(error, kernel_path, kind)
    text = ANSI.sub("", str(error)).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # DSL errors render as a block ("error[...]: summary", "error: detail", "note: ...",
    # "suggestion: ..."); the message keeps the summary and the first specific line.
    specific = [ln for ln in lines[1:4] if ln.startswith(("error:", "-->", "note:"))]
    first = lines[0] if lines else type(error).__name__
    message = f"{type(error).__name__}: {first}"
    if specific:
        message += " " + " ".join(specific[:2])
    message = message.split(" note: unknown: see current operation")[0]  # MLIR's op dump
    d["message"] = prefix + message[:600]
    d["detail"] = ANSI.sub("", d["detail"])
    if d["line"] is None:
        line = getattr(error, "line", None)
        filename = getattr(error, "filename", None)
        if isinstance(line, int) and (filename is None or filename == kernel_path):
            d["line"] = line
        else:
            d["line"] = kernel_line(error, kernel_path)
    return d


class _State:
    def __init__(self):
        self.in_compile = 0  # depth of DSL compile calls on the stack
        self.compile_errors: set[int] = set()  # ids of exceptions that left a compile call

    def kind(self, error: BaseException, otherwise: str) -> str:
        return "compile" if id(error) in self.compile_errors or _is_dsl_error(error) else otherwise


@contextlib.contextmanager
def _offline(arch: str, compiled: list[str]):
    """While active: every DSL compile targets `arch` and is recorded in `compiled`; calling a
    compiled function does nothing; torch.cuda.current_stream() needs no GPU."""
    from cutlass.base_dsl import dsl as dsl_module
    from cutlass.base_dsl.compiler import CompileCallable
    from cutlass.base_dsl.jit_executor import JitCompiledFunction

    state = _State()
    patches = Patches()
    patch = patches.set

    for instance in list(dsl_module.DSLSingletonMeta._instances.values()):
        envar = instance.envar
        for name, value in (("_arch", arch), ("disable_file_caching", True)):
            patch(envar, name, value)
    # Verify every MLIR op as it is traced: an invalid op (a misaligned vector copy, ...) then
    # fails inside the kernel.py line that built it instead of in a later, location-less pass.
    with contextlib.suppress(ImportError):
        from cutlass._mlir_helpers import op as op_helpers

        patch(op_helpers, "_VERIFY_TRACE_ENABLED", True)

    def recorded(original):
        """`original` (a compile entry point) with its outermost calls recorded in `compiled`,
        and the exceptions that leave them marked as compile errors."""

        def entry(self, func, *args, **kwargs):
            if state.in_compile:  # nested: a jit function traced inside another
                return original(self, func, *args, **kwargs)
            t0 = time.monotonic()
            state.in_compile += 1
            try:
                result = original(self, func, *args, **kwargs)
            except BaseException as error:
                state.compile_errors.add(id(error))
                raise
            finally:
                state.in_compile -= 1
            name = getattr(func, "__qualname__", None) or type(func).__name__
            # An explicit --gpu-arch in the kernel's options wins over CUTE_DSL_ARCH: say so.
            pinned = re.search(r"gpu-arch[=\s]+'?(sm_\w+)", str(kwargs.get("options") or ""))
            options = getattr(self, "_compile_options", None)
            pinned = pinned.group(1) if pinned else getattr(options, "gpu_arch", "")
            target = arch if pinned in ("", arch) else f"{pinned} (pinned in the code, not {arch})"
            compiled.append(f"compiled {name} for {target} in {time.monotonic() - t0:.1f} s")
            silence(type(result))
            return result

        return entry

    # What the judge's worker refuses of a compile (dsl_facts.cute_host_ops, decided in C++:
    # a memory access in host code), said here first.
    from cutlass.base_dsl.compiler import Compiler

    from metakernelbench import _core, dsl_facts

    def refused(self, module, *args, **kwargs):
        ops = dsl_facts.cute_host_ops(module)
        reason = "not an MLIR module" if ops is None else _core.cute_host_refusal(ops)
        if reason:
            raise RuntimeError(f"the judge refuses this compile: {reason}")
        return checked_original(self, module, *args, **kwargs)

    checked_original = Compiler.compile
    patch(Compiler, "compile", refused)

    # cute.compile(...) and a direct call of a @cute.jit function (compile, then run) both go
    # through BaseDSL._func; cute.compile parses its options first.
    patch(CompileCallable, "_compile", recorded(CompileCallable._compile))
    for cls in [dsl_module.BaseDSL, *_subclasses(dsl_module.BaseDSL)]:
        if "_func" in vars(cls):
            patch(cls, "_func", recorded(vars(cls)["_func"]))

    def no_launch(self, *args, **kwargs):
        return None

    silenced: set[type] = set()

    def silence(cls):
        """Make calling a compiled function of class `cls` (and its bases) launch nothing."""
        for c in cls.__mro__:
            if c not in silenced and issubclass(c, JitCompiledFunction):
                silenced.add(c)
                for name in ("__call__", "run_compiled_program"):
                    if name in vars(c):
                        patch(c, name, no_launch)

    with contextlib.suppress(ImportError):  # imported lazily by the DSL on a first TVM-FFI compile
        import cutlass.cutlass_dsl.tvm_ffi_provider  # noqa: F401
    for cls in [JitCompiledFunction, *_subclasses(JitCompiledFunction)]:
        silence(cls)

    try:
        import torch

        patches.stand_in_streams(torch)
    except ImportError:
        pass

    try:
        yield state
    finally:
        patches.restore()


def _subclasses(cls) -> list[type]:
    out, stack = [], list(cls.__subclasses__())
    while stack:
        c = stack.pop()
        if c not in out:
            out.append(c)
            stack.extend(c.__subclasses__())
    return out
