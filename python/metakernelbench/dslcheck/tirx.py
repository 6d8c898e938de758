"""`mkb check` hook for Apache TVM TIRx (apache-tvm 0.25): compile a kernel.py for an arch without
a GPU and without launching anything.

How: kernel.py is imported as module "kernel" and its `solve(*inputs)` runs on the CPU tensors of
the problem's small workload while
  - `tvm.compile` / `tvm.tirx.build` / `tvm.build` compile every module for CUDA `arch` (whatever
    target the kernel asked for; a CPU-only target is left alone) through the real TIRx pipeline,
    then the device source is compiled to a cubin with NVRTC in this process, as TVM does on a GPU
    machine (on a machine without libcuda TVM only keeps the CUDA source, so this step is ours);
  - the executable they return launches nothing: calling one of its functions only checks the
    arguments against the PrimFunc's signature (count, dtype, rank, fixed and symbolic extents,
    contiguity), as TVM's own argument checks would on the GPU;
  - `torch.cuda.get_device_capability()` answers `arch`, so kernels that derive their target from
    the device reach their compile; `torch.cuda.current_stream()` answers a stand-in stream
    (handle 0) and `torch.cuda.synchronize()` does nothing.
Then every PrimFunc / IRModule defined at module level that `solve` did not compile is compiled
the same way.

Diagnostics: "syntax" (Python's parser), "import" (importing kernel.py, or no `solve`),
"compile" (a TVMScript parse error, a TVM pass / codegen error, or an NVRTC / ptxas error),
"runtime" (any other exception in `solve`, an argument that does not fit the compiled
signature, or no TIRx kernel compiled at all), "ok" (one per compiled module, with its time).
Errors carry kernel.py's line: the `--> kernel.py:LINE:COL` location of a TVMScript diagnostic,
else the innermost kernel.py frame of the traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from pathlib import Path

from metakernelbench import _core, dsl_facts

from .common import ANSI, Patches, error_chain, from_exception, import_file, kernel_line, syntax_diagnostic

_TORCH_TO_TVM = {
    "bool": "bool",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float64": "float64",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
}


def check(kernel_path: str, inputs: list, arch: str) -> list[dict]:
    try:
        return _check(str(kernel_path), inputs, arch)
    except BaseException as error:  # the hook never raises
        return [_diagnostic(error, str(kernel_path), "runtime")]


def _check(kernel_path: str, inputs: list, arch: str) -> list[dict]:
    try:
        source = Path(kernel_path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as error:
        return [
            {"kind": "import", "message": f"cannot read {kernel_path}: {error}", "line": None, "detail": ""}
        ]
    syntax = syntax_diagnostic(source, kernel_path)
    if syntax is not None:
        return [syntax]
    try:
        import tvm  # noqa: F401
        from tvm.script import tirx  # noqa: F401
    except BaseException as error:
        return [_diagnostic(error, kernel_path, "import", "cannot import TVM TIRx: ")]

    compiled: list[str] = []
    diagnostics: list[dict] = []
    with _captured_stderr() as warnings, _offline(arch, compiled) as state:
        try:
            module = import_file(kernel_path, "kernel")
        except BaseException as error:
            kind = "compile" if state.in_compile or _is_dsl_error(error) else "import"
            return [_diagnostic(error, kernel_path, kind)]
        solve = getattr(module, "solve", None)
        if not callable(solve):
            diagnostics.append(
                {
                    "kind": "import",
                    "message": "kernel.py defines no solve(*inputs)",
                    "line": None,
                    "detail": "",
                }
            )
        else:
            try:
                solve(*inputs)
            except BaseException as error:
                kind = "compile" if state.in_compile or _is_dsl_error(error) else "runtime"
                diagnostics.append(_diagnostic(error, kernel_path, kind))
        # Kernels defined at module level that solve() did not reach (or not yet).
        for name, value in list(vars(module).items()):
            if not _is_tirx_module(value) or state.was_compiled(value):
                continue
            try:
                state.compile_offline(value, None, tir_pipeline="tirx", label=name)
            except BaseException as error:
                d = _diagnostic(error, kernel_path, "compile")
                d["line"] = d["line"] or _definition_line(source, name)
                diagnostics.append(d)
    if not compiled and not diagnostics:
        diagnostics.append(
            {
                "kind": "runtime",
                "line": None,
                "detail": "",
                "message": "solve() compiled no TIRx kernel (a call must launch a kernel written in the DSL)",
            }
        )
    oks = [{"kind": "ok", "message": m, "line": None, "detail": ""} for m in compiled]
    if warnings and oks:
        # TVM logs some likely mistakes only as warnings (e.g. `acc = 0` makes an int32 scalar,
        # and `acc = acc + x` then truncates): show them with what compiled.
        oks[0]["message"] += f" -- TVM warned: {warnings[0]}"
        oks[0]["detail"] = "\n".join(warnings)
    elif warnings and diagnostics:
        diagnostics[0]["detail"] = "TVM warned: " + "\n".join(warnings) + "\n\n" + diagnostics[0]["detail"]
    return oks + diagnostics


def _definition_line(source: str, name: str) -> int | None:
    """The line defining module-level `name` (a `def` or an assignment), for errors that carry none."""
    pattern = re.compile(rf"^(?:def\s+{re.escape(name)}\s*\(|{re.escape(name)}\s*[:=])")
    for number, line in enumerate(source.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


@contextlib.contextmanager
def _captured_stderr():
    """Collects the warnings TVM's C++ logging writes to file descriptor 2 meanwhile."""
    import tempfile

    warnings: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield warnings
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield warnings
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode(errors="replace")
            os.write(2, text.encode())  # still shown to whoever reads the check's stderr
            for line in text.splitlines():
                m = re.search(r"Warning:\s*(.*)", line)
                if m and m.group(1) not in warnings and "Unable to detect CUDA version" not in line:
                    warnings.append(m.group(1).strip())


def _is_tirx_module(value) -> bool:
    import tvm

    return isinstance(value, (tvm.tirx.PrimFunc, tvm.IRModule))


def _is_dsl_error(error: BaseException) -> bool:
    """TVMScript diagnostics and errors raised by TVM's C++ passes (tvm.error.*)."""
    import tvm

    def ours(e: BaseException) -> bool:
        diagnosed = isinstance(e, (tvm.error.DiagnosticError, _CompileError))
        return diagnosed or type(e).__module__.startswith("tvm")

    return any(ours(e) for e in error_chain(error))


class _CompileError(RuntimeError):
    """NVRTC / ptxas rejected the CUDA source TVM generated."""


_LOCATION = re.compile(r"-->\s*(.+?):(\d+):(\d+)")


def _diagnostic(error: BaseException, kernel_path: str, kind: str, prefix: str = "") -> dict:
    d = from_exception(error, kernel_path, kind)
    text = ANSI.sub("", str(error)).strip()
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    # A TVMScript diagnostic names the offending line of kernel.py itself ("--> path:LINE:COL");
    # it is more precise than the traceback's frame (the decorator or the factory's call).
    for m in _LOCATION.finditer(text):
        if m.group(1) == kernel_path or m.group(1).endswith("kernel.py"):
            d["line"] = int(m.group(2))
            break
    if isinstance(error, _CompileError):
        first = lines[0] if lines else ""
    else:
        first = lines[0] if lines else type(error).__name__
        first = f"{type(error).__name__}: {first}"
    d["message"] = (prefix + first)[:600]
    d["detail"] = (text[:3000] + "\n\n" + ANSI.sub("", d["detail"]))[-6000:]
    if d["line"] is None:
        d["line"] = kernel_line(error, kernel_path)
    return d


class _State:
    def __init__(self, arch: str, compiled: list[str]):
        self.arch = arch
        self.compiled = compiled
        self.in_compile = 0
        self.compile_fn = None  # the real tvm.compile
        self.hashes: set[int] = set()

    def was_compiled(self, value) -> bool:
        return _structural_hash(value) in self.hashes

    def _cuda(self):
        import tvm

        return tvm.target.Target({"kind": "cuda", "arch": self.arch})

    def compile_offline(self, mod, target, *args, label: str | None = None, **kwargs):
        """Compile `mod` for CUDA `arch` (host: LLVM) and its CUDA source with NVRTC."""
        import tvm

        # What the judge's worker refuses of a tvm.compile (dsl_facts.tir_facts, decided in C++),
        # said here first, for the target as given.
        # (The hook's own compile of a module-level PrimFunc, `label` given, is for CUDA `arch`.)
        as_given = target if target is not None or label is None else self._cuda()
        facts = dsl_facts.tir_compile_facts((mod, as_given, *args), kwargs)
        reason = "not a PrimFunc or IRModule" if facts is None else _core.tir_compile_refusal(*facts)
        if reason:
            raise RuntimeError(f"the judge refuses this tvm.compile: {reason}")
        self.hashes.add(_structural_hash(mod))
        funcs = _prim_funcs(mod)
        for func in funcs.values():
            self.hashes.add(_structural_hash(func))
        name = label or ", ".join(_display_name(k, f) for k, f in funcs.items()) or "module"
        t0 = time.monotonic()
        self.in_compile += 1
        try:
            executable = self.compile_fn(
                mod, tvm.target.Target({"kind": "cuda", "arch": self.arch}), *args, **kwargs
            )
            cubin_bytes = 0
            for source in _cuda_sources(executable.mod):
                _check_launch_bounds(source)
                cubin_bytes += len(_nvrtc(source, self.arch))
        finally:
            self.in_compile -= 1
        self.compiled.append(
            f"compiled {name} for {self.arch} in {time.monotonic() - t0:.1f} s (cubin {cubin_bytes} bytes)"
        )
        return _OfflineExecutable(executable, funcs)


def _structural_hash(value) -> int:
    import tvm_ffi

    try:
        return int(tvm_ffi.structural_hash(value, map_free_vars=True))
    except Exception:
        return id(value)


def _is_cuda(target) -> bool:
    import tvm

    try:
        return tvm.target.Target(target).kind.name == "cuda"
    except Exception:
        return True


def _prim_funcs(mod) -> dict:
    import tvm

    if isinstance(mod, tvm.tirx.PrimFunc):
        name = mod.attrs.get("global_symbol") if mod.attrs is not None else None
        return {str(name or "main"): mod}
    if isinstance(mod, tvm.IRModule):
        return {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)}
    return {}


def _display_name(key: str, func) -> str:
    """`main (fused_add_rmsnorm)` for a PrimFunc registered under another name than its own."""
    symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
    return key if not symbol or str(symbol) == key else f"{key} ({symbol})"


def _cuda_sources(runtime_module) -> list[str]:
    out, stack, seen = [], [runtime_module], set()
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        if m.kind == "cuda":
            source = m.inspect_source("cuda") or m.inspect_source("")
            if source:
                out.append(source)
        stack.extend(m.imports)
    return out


def _check_launch_bounds(source: str) -> None:
    """NVRTC accepts __launch_bounds__ above the hardware limit; the launch then fails."""
    for m in re.finditer(r"__launch_bounds__\((\d+)[^)]*\)\s*(\w+)", source):
        if int(m.group(1)) > 1024:
            raise _CompileError(
                f"kernel {m.group(2)} has {m.group(1)} threads per CTA (the product "
                f"of its T.thread_id / thread_binding extents); CUDA allows at "
                f"most 1024, the launch would fail"
            )


def _nvrtc(source: str, arch: str) -> bytes:
    from tvm.support import nvcc

    try:
        return nvcc.compile_cuda(source, target_format="cubin", arch=arch, compiler="nvrtc")
    except RuntimeError as error:
        text = str(error)
        # NVRTC's log is mostly warnings from CUDA's own headers; keep the errors.
        errors = [
            ln.strip()
            for ln in text.splitlines()
            if re.search(r"\berror\b", ln) and "NVRTC compilation failed" not in ln
        ]
        summary = "; ".join(errors[:3]) or text.splitlines()[0]
        raise _CompileError(f"NVRTC/ptxas rejected the generated CUDA: {summary}\n\n{text[-4000:]}") from None


class _OfflineExecutable:
    """Stands in for tvm.runtime.Executable: its functions check their arguments, launch nothing."""

    def __init__(self, executable, funcs: dict):
        self.mod = executable.mod
        self._funcs = funcs

    def __getitem__(self, name: str):
        return _OfflineFunction(name, self._funcs.get(name))

    def __call__(self, *args):
        return self["main" if "main" in self._funcs else next(iter(self._funcs), "main")](*args)

    def jit(self, *args, **kwargs):
        return self

    def get_function(self, name: str, query_imports: bool = False):
        return self[name]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]


class _OfflineFunction:
    def __init__(self, name: str, func):
        self.name = name
        self.func = func

    def __call__(self, *args):
        if self.func is not None:
            _check_arguments(self.name, self.func, args)
        return None


def _check_arguments(name: str, func, args) -> None:
    """What TVM's packed-function prologue checks on the GPU, for torch tensors on the CPU."""
    import torch
    import tvm

    params = list(func.params)
    if len(args) != len(params):
        raise TypeError(f"{name}() expects {len(params)} arguments, got {len(args)}")
    bound: dict = {}
    for index, (param, arg) in enumerate(zip(params, args, strict=True)):
        buffer = func.buffer_map.get(param)
        what = f"argument #{index} of {name}()"
        if buffer is None:
            if isinstance(arg, torch.Tensor):
                raise TypeError(f"{what} ({param.name}) is a scalar {param.dtype}, got a tensor")
            continue
        if not isinstance(arg, torch.Tensor):
            raise TypeError(f"{what} ({buffer.name}) expects a tensor, got {type(arg).__name__}")
        want = str(buffer.dtype)
        got = _TORCH_TO_TVM.get(str(arg.dtype).replace("torch.", ""), str(arg.dtype))
        if want != got:
            raise TypeError(f"Mismatched {buffer.name}.dtype on {what}: expected {want}, got {got}")
        if arg.dim() != len(buffer.shape):
            raise ValueError(
                f"Mismatched {buffer.name}.ndim on {what}: expected {len(buffer.shape)}, got {arg.dim()}"
            )
        for axis, extent in enumerate(buffer.shape):
            actual = int(arg.shape[axis])
            if isinstance(extent, tvm.tirx.IntImm):
                if int(extent) != actual:
                    raise ValueError(
                        f"Mismatched {buffer.name}.shape[{axis}] on {what}: "
                        f"expected {int(extent)}, got {actual}"
                    )
            elif isinstance(extent, tvm.tirx.Var):
                key = extent.name
                if key in bound and bound[key] != actual:
                    raise ValueError(
                        f"Mismatched {buffer.name}.shape[{axis}] on {what}: "
                        f"{key} is {bound[key]} from an earlier argument, got {actual}"
                    )
                bound[key] = actual
        if not buffer.strides and not arg.is_contiguous():
            raise ValueError(
                f"Mismatched {buffer.name}.strides on {what}: expected a compact (contiguous) tensor"
            )


@contextlib.contextmanager
def _offline(arch: str, compiled: list[str]):
    import torch
    import tvm

    state = _State(arch, compiled)
    state.compile_fn = tvm.compile
    build_fn = tvm.tirx.build
    patches = Patches()
    patch = patches.set

    def offline_compile(mod, target=None, *args, **kwargs):
        if state.in_compile:  # tvm.compile calls tvm.tirx.build: only the outer call is ours
            return state.compile_fn(mod, target, *args, **kwargs)
        return state.compile_offline(mod, target, *args, **kwargs)

    def offline_build(mod, target=None, pipeline="default"):
        if state.in_compile or (target is not None and not _is_cuda(target)):
            return build_fn(mod, target, pipeline)
        return state.compile_offline(mod, target, tir_pipeline=pipeline)

    patch(tvm, "compile", offline_compile)
    patch(tvm.tirx, "build", offline_build)
    if hasattr(tvm, "build"):
        patch(tvm, "build", offline_build)
    with contextlib.suppress(ImportError, AttributeError):
        import tvm.driver.build_module as build_module

        patch(build_module, "compile", offline_compile)
    major, minor = _capability(arch)
    patch(torch.cuda, "get_device_capability", lambda device=None: (major, minor))
    patches.stand_in_streams(torch)
    patch(torch.cuda, "synchronize", lambda device=None: None)
    try:
        yield state
    finally:
        patches.restore()


def _capability(arch: str) -> tuple[int, int]:
    m = re.fullmatch(r"sm_(\d+)(\d)[af]?", arch)
    return (int(m.group(1)), int(m.group(2))) if m else (9, 0)
