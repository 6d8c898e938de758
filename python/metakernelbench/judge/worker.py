"""The sandboxed worker: imports a candidate kernel.py and calls solve() on inputs the host
sends. It runs in a process forked from the judge host before the host draws any seed or
touches CUDA; it never sees seeds, expected outputs or anchors, and it decides nothing: it
reports outputs and times, and the host judges them (docs/judge.md)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys
import sysconfig
import threading
import time
import traceback
import warnings

import torch

from .. import _core, toolchains
from . import values

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB_DIRS = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def _is_stdlib(filename: str) -> bool:
    """The standard library's own files (in a venv platstdlib can be the venv's lib directory,
    which also holds site-packages: those are libraries, not the standard library)."""
    return filename.startswith(_STDLIB_DIRS) and "-packages" not in filename

# Audit events a candidate may not raise from its own code, with the finding code they map to.
_BLOCKED_EVENTS = {
    "socket.__new__": "runtime.network",
    "socket.connect": "runtime.network",
    "socket.bind": "runtime.network",
    "socket.getaddrinfo": "runtime.network",
    "subprocess.Popen": "runtime.subprocess",
    "os.system": "runtime.subprocess",
    "os.exec": "runtime.subprocess",
    "os.posix_spawn": "runtime.subprocess",
    "os.spawn": "runtime.subprocess",
    "os.fork": "runtime.subprocess",
    "os.forkpty": "runtime.subprocess",
    "os.kill": "runtime.signal",
    "os.killpg": "runtime.signal",
    "ctypes.dlopen": "runtime.native_code",
    "ctypes.dlsym": "runtime.native_code",
    "ctypes.addressof": "runtime.native_code",
    "ctypes.cdata": "runtime.native_code",
    "ctypes.string_at": "runtime.native_code",
    "ctypes.call_function": "runtime.native_code",
    "ctypes.wstring_at": "runtime.native_code",
    "sys._getframe": "runtime.introspection",
    "sys._current_frames": "runtime.introspection",
    "sys.settrace": "runtime.introspection",
    "sys.setprofile": "runtime.introspection",
    "sys.addaudithook": "runtime.introspection",
    "object.__getattr__": "runtime.introspection",
    "code.__new__": "runtime.dynamic_code",
    "function.__new__": "runtime.dynamic_code",
    "exec": "runtime.dynamic_code",
    "compile": "runtime.dynamic_code",
    "open": "runtime.file_access",
    "os.listdir": "runtime.file_access",
    "os.scandir": "runtime.file_access",
    "os.remove": "runtime.file_access",
    "os.rename": "runtime.file_access",
    "shutil.rmtree": "runtime.file_access",
    "import": "runtime.forbidden_import",
}


class RuntimeAudit:
    """A sys.addaudithook hook (it cannot be removed once installed) that blocks what the
    candidate's own code may not do, and records each attempt as a finding. Library code the
    candidate calls (torch, the DSL) is not blocked: only events raised from kernel.py itself,
    directly or through the standard library."""

    def __init__(self, kernel_path: str):
        self.kernel_path = kernel_path
        self.findings: list[dict] = []
        self.phase = "import"
        self._busy = threading.local()
        self._getframe = sys._getframe

    def candidate_line(self) -> int | None:
        """Line of kernel.py that raised the event, when the innermost frame outside the
        standard library (and this module) is the candidate's."""
        frame = self._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename == self.kernel_path:
                return frame.f_lineno
            if not (filename.startswith("<frozen") or _is_stdlib(filename) or filename == __file__):
                return None
            frame = frame.f_back
        return None

    def __call__(self, event: str, args) -> None:
        code = _BLOCKED_EVENTS.get(event)
        if code is None and not event.startswith("os.exec") and not event.startswith("os.spawn"):
            return
        if getattr(self._busy, "on", False):
            return
        self._busy.on = True
        try:
            if event == "open" and args and args[0] == self.kernel_path and str(args[1] or "r").startswith("r"):
                return  # linecache reading kernel.py for a traceback or a warning
            if event == "import":
                module = args[0] if args else ""
                verdict = _core.audit_module(module) if module else None
                if verdict is None:
                    return
                code = "runtime.forbidden_import"
            line = self.candidate_line()
            if line is None:
                return
            detail = _describe(event, args).replace(os.path.dirname(self.kernel_path), "<workspace>")
            self.findings.append({
                "code": code or "runtime.subprocess",
                "severity": "violation",
                "phase": self.phase,
                "message": f"kernel.py raised the audited event '{event}' ({detail}); blocked",
                "evidence": f"kernel.py:{line}: {event} {detail}",
            })
        finally:
            self._busy.on = False
        raise PermissionError(f"blocked by the judge: {event}")

    def take(self) -> list[dict]:
        out, self.findings = self.findings, []
        return out


def _describe(event: str, args) -> str:
    try:
        shown = args[0] if args else ""
        text = shown if isinstance(shown, (str, int)) else type(shown).__name__
        return str(text)[:120]
    except Exception:
        return ""


class Numerics:
    """torch's global numerics flags as the worker found them, restored before every call so
    that neither side of the timing sees the other's settings."""

    def __init__(self):
        m = torch.backends.cuda.matmul
        self.saved = (
            m.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.get_float32_matmul_precision(),
            m.allow_fp16_reduced_precision_reduction,
            m.allow_bf16_reduced_precision_reduction,
        )

    def restore(self):
        m = torch.backends.cuda.matmul
        m.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved[0], self.saved[1]
        torch.set_float32_matmul_precision(self.saved[2])
        m.allow_fp16_reduced_precision_reduction = self.saved[3]
        m.allow_bf16_reduced_precision_reduction = self.saved[4]
        if torch.are_deterministic_algorithms_enabled():
            torch._C._set_deterministic_algorithms(False)


class Worker:
    def __init__(self, channel: _core.Channel, device: str, sandbox: dict):
        self.channel = channel
        self.device = device
        self.sandbox = sandbox
        self.transport = values.CudaTransport() if device == "cuda" else values.CpuTransport()
        if device == "cuda":
            self._sync = _core.cuda.device_synchronize
        else:
            self._sync = _no_sync
        self._perf = time.perf_counter
        self._clone = torch.Tensor.clone
        self._numerics = Numerics()
        self._tracing = None  # GpuTracing, created at the first traced call
        self.solve = None
        self.reference = None
        self.kernel_path = ""
        self.audit: RuntimeAudit | None = None
        self._held = None  # the last call's outputs, alive until the next request

    # --- protocol ------------------------------------------------------------------------------
    def serve(self) -> None:
        self._reply({"id": 0, "ok": True, "findings": self._sandbox_findings()})
        while True:
            data, fds = self.channel.receive(1e9)
            request = _core.parse_message("WorkerRequest", data)
            op = request.op
            self._held = None
            if op == "shutdown":
                self._reply({"id": request.id, "ok": True})
                return
            try:
                if op == "load":
                    reply = self._load(request)
                elif op in ("call", "time_kernel", "time_eager", "calibrate"):
                    reply = self._call(request, fds)
                else:
                    reply = {"ok": False, "error_type": "ProtocolError", "error": f"unknown op {op}"}
            except PermissionError as blocked:  # the runtime audit refused something during LOAD
                reply = {"ok": False, "error_type": "PermissionError", "error": str(blocked)}
            reply["id"] = request.id
            if self.audit is not None:
                reply.setdefault("findings", []).extend(self.audit.take())
            self._reply(reply)

    def _reply(self, reply: dict) -> None:
        fds = reply.pop("_fds", [])
        self.channel.send(_core.message("WorkerReply", reply).serialize(), fds)

    def _sandbox_findings(self) -> list[dict]:
        notes = []
        if not self.sandbox.get("network_isolated"):
            notes.append(("sandbox.network", "the worker has no private network namespace; network calls are "
                          "blocked by the runtime audit only"))
        for note in self.sandbox.get("notes", []):
            if "network" not in note:
                notes.append(("sandbox.note", note))
        return [{"code": c, "severity": "info", "phase": "startup", "message": m} for c, m in notes]

    # --- LOAD ----------------------------------------------------------------------------------
    def _load(self, request) -> dict:
        dsl = request.dsl
        if dsl == "cutedsl":
            _try_import("cutlass", "cutlass.cute")
        elif dsl == "tirx":
            _try_import("tvm", "tvm.script")
        self.reference = _private_module("_mkb_reference", os.path.join(request.problem_dir, "reference.py")).reference
        versions = _versions()
        self.kernel_path = os.path.abspath(request.kernel_path)
        self.audit = RuntimeAudit(self.kernel_path)
        sys.addaudithook(self.audit)
        try:
            module = _private_module("kernel", self.kernel_path, register=True)
        except BaseException as error:  # SystemExit too: an import must not end the worker
            return {"ok": False, "error_type": type(error).__name__, "error": self._format(error),
                    "versions": versions}
        solve = getattr(module, "solve", None)
        if not callable(solve):
            return {"ok": False, "error_type": "ImportError", "error": "kernel.py defines no callable solve(*inputs)",
                    "versions": versions}
        self.solve = solve
        self.audit.phase = "correctness"
        return {"ok": True, "versions": versions}

    # --- CALL / TIME_* ---------------------------------------------------------------------------
    def _call(self, request, fds) -> dict:
        inputs, keep = self.transport.open(list(request.inputs), list(fds), writable=True, scalars=True)
        op = request.op
        if op == "calibrate":
            self._sync()
            return {"ok": True}
        if self.solve is None:
            return {"ok": False, "error_type": "ProtocolError", "error": "kernel not loaded"}
        fn = self.reference if op == "time_eager" else self.solve
        if self.audit is not None:
            self.audit.phase = "timing" if op.startswith("time") else "correctness"
        self._numerics.restore()
        poison = bool(request.poison)
        race = False
        try:
            tracing = self._gpu_tracing() if request.trace and self.device == "cuda" else None
            if tracing is not None:
                tracing.before()
        except Exception as error:  # the judge's machinery, not the kernel
            return {"ok": False, "judge_error": f"GPU tracing: {type(error).__name__}: {error}"}
        trace = None
        try:
            if poison:
                _poison(True)
            sync, perf = self._sync, self._perf
            sync()
            start = perf()
            out = fn(*inputs)
            if tracing is not None:
                sync()
                seconds = perf() - start
                try:
                    trace = tracing.after(keep_records=op == "time_kernel")
                except _core.Error as error:
                    return {"ok": False, "judge_error": f"GPU tracing: {error}"}
                exported = values.leaves(out)
            elif op == "call" and self.device == "cuda":
                # What a consumer on the current stream would read the moment solve returns.
                snapshot = [self._clone(t) if _exportable(t, self.device) else t for t in values.leaves(out)]
                sync()
                seconds = perf() - start
                race = any(_differs(s, t) for s, t in zip(snapshot, values.leaves(out)) if _exportable(t, self.device))
                exported = snapshot
            else:
                sync()
                seconds = perf() - start
                exported = values.leaves(out)
        except (Exception, SystemExit) as error:  # sys.exit in solve is the kernel's exception
            return {"ok": False, "error_type": type(error).__name__, "error": self._format(error)}
        finally:
            if poison:
                _poison(False)
        data = [t for t in exported if _exportable(t, self.device)]
        handles, out_fds, holder = self.transport.export(data)
        handle_iter = iter(handles)

        def handle_of(t):
            if _exportable(t, self.device):
                h = next(handle_iter)
                h["meta"] = values.tensor_meta(t)
                return h
            return {"meta": values.tensor_meta(t)}

        node = values.value_node(out, handle_of)
        self._held = (out, exported, holder, keep)
        reply = {"ok": True, "output": node, "seconds": seconds, "side_stream_race": race, "_fds": out_fds}
        if trace is not None:
            reply["trace"] = trace
        return reply

    def _gpu_tracing(self):
        if self._tracing is None:
            self._tracing = GpuTracing(self._sync)
        return self._tracing

    def _format(self, error: BaseException) -> str:
        return format_error(error, self.kernel_path)


def format_error(error: BaseException, kernel_path: str = "") -> str:
    """A traceback without the judge's own frames, kernel.py named as such."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_PACKAGE_DIR)]
    text = "".join(traceback.format_list(frames) + traceback.format_exception_only(type(error), error))
    if kernel_path:
        text = text.replace(kernel_path, "kernel.py").replace(os.path.dirname(kernel_path), "<workspace>")
    return ("Traceback (most recent call last):\n" + text) if frames else text


class GpuTracing:
    """Around each timed call: evict the L2 cache, sample clocks, and trace the call's GPU work
    with CUPTI (or, when another profiler holds CUPTI, time the current stream with events)."""

    def __init__(self, sync):
        cuda = _core.cuda
        self._sync = sync
        self._flusher = cuda.L2Flusher(torch.cuda.current_device())
        try:
            self._nvml = cuda.NvmlSampler(torch.cuda.current_device())
        except _core.Error:
            self._nvml = None
        try:
            self._tracer = cuda.Tracer(cupti_dirs())
            self.method = "cupti"
        except _core.Error as error:
            self._tracer = None
            self.method = "cuda_events"
            self.unavailable = str(error)
        self._events = None
        self._sample = None

    def before(self) -> None:
        self._flusher.flush(torch.cuda.current_stream().cuda_stream)
        self._sample = self._nvml.sample() if self._nvml is not None else None
        if self._tracer is not None:
            self._tracer.begin()
        else:
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            self._events[0].record()

    def after(self, keep_records: bool) -> dict:
        if self._tracer is not None:
            trace = self._tracer.end().to_dict()
            if not keep_records:
                trace["records"] = []
        else:
            self._events[1].record()
            self._sync()
            span = self._events[0].elapsed_time(self._events[1])
            trace = {"method": "cuda_events", "span_ms": span, "kernel_sum_ms": span}
        if self._sample is not None:
            trace.update({k: self._sample[k] for k in ("sm_clock_mhz", "temperature_c", "throttle_reasons",
                                                        "throttled")})
        return trace


def cupti_dirs() -> list[str]:
    """Where libcupti may live: pip's nvidia-cuda-cupti (torch's dependency), the toolkit."""
    dirs = []
    try:
        import nvidia.cuda_cupti as pip_cupti  # type: ignore[import-not-found]

        dirs += [os.path.join(p, "lib") for p in pip_cupti.__path__]
    except ImportError:
        pass
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "extras/CUPTI/lib64"):
        dirs.append(os.path.join(home, sub))
    return [d for d in dirs if os.path.isdir(d)]


def _no_sync() -> None:
    pass


def _exportable(t, device: str) -> bool:
    return type(t) is torch.Tensor and t.device.type == device


def _differs(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.contiguous(), b.contiguous()
    if a.numel() == 0:
        return False
    return not torch.equal(a.view(-1).view(torch.uint8), b.view(-1).view(torch.uint8))


def _poison(on: bool) -> None:
    """Memory torch allocates during a correctness call comes back filled with NaN (floats) or
    the largest integer, so that outputs a kernel leaves partly unwritten cannot pass. (torch
    fills uninitialised memory only in deterministic mode; warn_only keeps every op usable. The
    C-level switch avoids torch.use_deterministic_algorithms, which imports torch._inductor.)"""
    torch._C._set_deterministic_fill_uninitialized_memory(True)
    torch._C._set_deterministic_algorithms(on, warn_only=True)


def _try_import(*modules: str) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            return


def _private_module(name: str, path: str, register: bool = False):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _versions() -> list[dict]:
    out = []
    for package in ("torch", *toolchains.VERSION_PACKAGES):
        try:
            out.append({"name": package, "version": importlib.metadata.version(package)})
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def run(channel_fd: int, stdout_fd: int, stderr_fd: int, options: dict) -> None:
    """Entry point of the forked worker; never returns."""
    code = 0
    try:
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        os.close(stdout_fd)
        os.close(stderr_fd)
        sandbox = _core.enter_sandbox(
            keep_fds=[channel_fd],
            address_space_bytes=options.get("address_space_bytes", 0),
            cpu_seconds=options.get("cpu_seconds", 0),
            max_processes=options.get("max_processes", 0),
            isolate_network=options.get("isolate_network", True),
            drop_privileges=options.get("drop_privileges", False),
        )
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        warnings.filterwarnings("ignore", message=".*deterministic.*")
        if options.get("workdir"):
            os.environ["HOME"] = os.environ["TMPDIR"] = options["workdir"]
            os.chdir(options["workdir"])
        # The variant's DSL: its site directories first on sys.path, their .pth files run.
        toolchains.activate(options.get("dsl_site_dirs", []))
        Worker(_core.Channel(channel_fd), options["device"], sandbox).serve()
    except BaseException as error:
        code = 70
        try:
            sys.stderr.write("the worker stopped: " + format_error(error, options.get("kernel_path", "")))
            sys.stderr.flush()
        except Exception:
            pass
    finally:
        os._exit(code)
