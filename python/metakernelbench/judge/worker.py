"""The sandboxed worker: imports a candidate kernel.py and calls solve() on inputs the host
sends. It is forked from the judge host before the host draws any seed, loads the reference or
touches CUDA, enters the sandbox first thing (C++ EnterSandbox: its own namespaces and
filesystem view, PID 1 of its own PID namespace, an unprivileged user without capabilities,
no_new_privs, a syscall filter), and holds nothing the verdict depends on: it reports outputs,
times and launch counts, and the host checks and judges them (docs/judge.md)."""

from __future__ import annotations

import enum
import gc
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import time
import traceback
import types
import warnings

import torch

from .. import _core, dsl_facts, toolchains
from . import dsl_entry, values
from .worker_setup import pin_every_thread

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The DSLs' compile and call entry points (module, attribute, ...): modules loaded while one of
# them runs are the DSL runtime's (docs/judge.md, "The DSL rule"). CuTe DSL loads its kernels
# from the code it compiled, at compile time or at the first call; TVM loads them from its
# native runtime library, which the launch monitor also recognises by path.
_DSL_ENTRY_POINTS = {
    "cutedsl": (
        ("cutlass.cute", "compile"),
        ("cutlass.base_dsl.jit_executor", "JitCompiledFunction", "__call__"),
        ("cutlass.base_dsl.jit_executor", "JitExecutor", "__call__"),
        ("cutlass.cutlass_dsl.cuda_jit_executor", "CudaDialectJitCompiledFunction", "__call__"),
        ("cutlass.cutlass_dsl.tvm_ffi_provider", "TVMFFIJitCompiledFunctionBase", "__call__"),
        ("cutlass.cutlass_dsl.tvm_ffi_provider", "TVMFFIJitCompiledFunction", "__call__"),
        ("cutlass.cutlass_dsl.tvm_ffi_provider", "TVMFFIJitCompiledFunctionWithKwargs", "__call__"),
    ),
    "tirx": (("tvm", "compile"),),
}
# TVM's builds besides the entry point (tvm.compile is tvm.driver.build_module.compile).
_TIR_BUILDS = (
    ("tvm.tirx", "build"),
    ("tvm.tirx.build", "build"),
    ("tvm", "build"),
    ("tvm.driver.build_module", "compile"),
    ("tvm.driver.build_module", "build"),
)
# Modules the DSLs import lazily while they compile, imported before kernel.py so that they are
# the harness's imports, not events raised during the kernel's calls.
_DSL_LAZY_IMPORTS = {
    "cutedsl": (
        "cutlass",
        "cutlass.cute",
        "cutlass.base_dsl.jit_executor",
        "cutlass.cutlass_dsl.cuda_jit_executor",
        "cutlass.cutlass_dsl.tvm_ffi_provider",
    ),
    "tirx": ("tvm", "tvm.script", "tvm.support.nvcc", "cuda.bindings.nvrtc"),
}
# What torch imports lazily for features a kernel may use (a dispatch mode, torch.library): its
# compiler stack, whose imports (sympy, mpmath) read frames and build code as they load.
_TORCH_LAZY_IMPORTS = ("torch._dynamo",)
# The requests whose work runs on the kernel's thread, which holds the cyclic collector from its
# return until the worker has replied.
_KERNEL_JOBS = ("load", "calibrate", "call", "warmup", "time_kernel")


class Worker:
    def __init__(self, channel: _core.Channel, device: str, sandbox: dict, options: dict):
        self.channel = channel
        self.device = device
        self.sandbox = sandbox
        self.options = options
        self.transport = values.CudaTransport() if device == "cuda" else values.CpuTransport()
        if device == "cpu":
            # One intra-op thread on the CPU judge (as in the host's eager baseline): its timings
            # serve tests, and idle OpenMP threads competing with a loaded machine cost ms.
            torch.set_num_threads(1)
            _one_cpu()
            # And it stays there: sched_setaffinity is refused from now on (a red team widened
            # it through psutil's C extension, which raises no audit event: 1.54x against an
            # honest 1.02x on 28's full workload).
            _core.seal_cpu_affinity()
        # Bound before kernel.py is imported: the harness's own operations.
        self._sync = _core.cuda.device_synchronize if device == "cuda" else _no_sync
        self._perf = time.perf_counter
        self._clone = torch.Tensor.clone
        # What solve returns is read once, right after it returns, through these descriptors.
        self._facts = values.TensorFacts()
        # The kernel's thread (kernel_thread.cc), made in prepare: kernel.py is imported and
        # solve called there, timed calls timed there by the published method's clock in C++
        # (torch.cuda.Event's methods are Python attributes kernel.py could replace; on the CPU
        # the monotonic clock). Its stack holds nothing of the worker's.
        self._thread: _core.KernelThread | None = None
        self._monitor = None
        self._dsl_guards: list[tuple[object, str, bool, object]] = []
        self._state: _StateSnapshot | None = None  # taken at the end of prepare
        self._tracing = None  # GpuTracing, created at the first strict call
        self._outputs = None  # the arena of the outputs' snapshots (CudaArena, CpuArena)
        self._input_buffers: list = []  # RESERVE_INPUTS's device buffers, each kept to the end
        self.solve = None
        self.kernel_path = ""
        self.versions = []
        self._recorded = 0
        self._held: object = None  # the last call's inputs and outputs, alive until the next request

    # --- protocol ------------------------------------------------------------------------------
    def serve(self) -> None:
        self._reply({"id": 0, "ok": True, "findings": self._sandbox_findings()})
        while True:
            data, fds = self.channel.receive(1e9)
            request = _core.parse_message("WorkerRequest", data)
            op = request.op
            self._let_go()
            if op == "shutdown":
                self._reply({"id": request.id, "ok": True})
                return
            try:
                if op == "prepare":
                    reply = self._prepare(request)
                elif op == "load":
                    reply = self._load(request)
                elif op == "calibrate":
                    reply = self._calibrate(request, fds)
                elif op == "reserve_inputs":
                    reply = self._reserve_inputs(request)
                elif op == "release":
                    reply = self._release()
                elif op in ("call", "warmup", "time_kernel"):
                    reply = self._call(request, fds)
                else:
                    reply = {"ok": False, "error_type": "ProtocolError", "error": f"unknown op {op}"}
            except PermissionError as blocked:  # the runtime audit refused something
                reply = {"ok": False, "error_type": "PermissionError", "error": str(blocked)}
            reply["id"] = request.id
            if self._thread is not None and op in (*_KERNEL_JOBS, "release"):
                # The guarded names once more, right before the reply: a change made after the
                # call's return (while the worker exported its outputs) is seen here, after the
                # fact (runtime.clock_tampered; the verdict is not final).
                self._thread.check_guard()
            reply.setdefault("findings", []).extend(_core.take_runtime_findings())
            if self.options.get("audit_record_only"):
                # What the runtime audit would have refused (MKB_AUDIT_RECORD=1), as notes.
                recorded = _core.runtime_audit_recorded()
                reply["findings"].extend(
                    {"code": "runtime.recorded", "severity": "info", "phase": "correctness", "message": line}
                    for line in recorded[self._recorded :]
                )
                self._recorded = len(recorded)
            self._reply(reply)
            # The cyclic collector stays held here: the kernel's thread holds it from each
            # return and lets it run only while it runs a call, so that every collection, and
            # every finaliser of the kernel's garbage it runs, happens there (_let_go says why).

    def _state_rewritten(self, fds) -> dict | None:
        """Before a call's inputs are opened: the worker's own objects as prepare left them
        (_StateSnapshot), else the call is refused (runtime.clock_tampered) with its inputs
        unopened, so that nothing the kernel put there runs on this thread with them."""
        state = self._state
        if type(state) is _StateSnapshot:  # exact: a red team gave it a class of its own (20-33x)
            what = state.changed()
        elif state is not None:
            what = "the worker's state check replaced"
        else:  # taken in prepare, with the kernel's thread: gone since only if removed
            what = "the worker's state check removed" if self._thread is not None else None
        if what is None:
            return None
        for fd in fds:
            values._close(fd)
        finding = {
            "code": "runtime.clock_tampered",
            "severity": "violation",
            "phase": "timing",
            "message": "the worker's own state was rewritten by kernel.py (its main thread would "
            f"run what the kernel put there, outside the clock): {what}",
        }
        message = finding["message"]
        return {"ok": False, "error_type": "PolicyViolation", "error": message, "findings": [finding]}

    def _let_go(self) -> None:
        """Drops what the last call got and gave (`_held`) on the kernel's thread, as work between
        calls (KernelThread.between: watched, the collector held), so that a finaliser of the
        kernel's on them runs there and never on this thread. This thread's state is read by
        the worker's own work: a red team's finaliser, run here at a RELEASE, entered a torch
        function mode of torch's own (no frame of kernel.py's) whose hook, a property made of C
        callables, ran on the next tensor the worker made while opening the next call's inputs,
        after the host had written them, and computed the answer outside the clock (passed at
        50-55x, strict; another installed a SIGIO handler on the channel, which only this
        thread can do). The cyclic collector is held on this thread for the same reason."""
        held, self._held = self._held, None
        if held is None:
            return
        if self._thread is None:
            del held
            return
        box = [held]
        del held
        self._thread.between(_drop_and_collect, (box,))  # the last reference goes there

    def _reply(self, reply: dict) -> None:
        fds = reply.pop("_fds", [])
        try:
            self.channel.send(_core.message("WorkerReply", reply).serialize(), fds)
        except _core.InvalidArgumentError as too_large:
            # Over the channel's limit (an exception's text or a structure the kernel made huge):
            # the call's failure, said in a reply that fits, not the worker's death.
            self.channel.send(
                _core.message(
                    "WorkerReply",
                    {
                        "id": reply.get("id", 0),
                        "ok": False,
                        "error_type": "ReplyTooLarge",
                        "error": f"the call's reply could not be sent: {too_large}",
                        "findings": reply.get("findings", [])[:100],
                    },
                ).serialize()
            )

    def _sandbox_findings(self) -> list[dict]:
        s = self.sandbox
        notes = [
            f"worker uid {s.get('uid')}, PID namespace {s.get('own_pid_namespace')}, "
            f"filesystem view {s.get('filesystem_view')}, network isolated "
            f"{s.get('network_isolated')}, syscall filter {s.get('syscall_filter')}, speculative "
            f"store bypass {_speculation_status()}"
        ]
        notes += list(s.get("notes", []))
        return [{"code": "sandbox.note", "severity": "info", "phase": "startup", "message": m} for m in notes]

    # --- LOAD ----------------------------------------------------------------------------------
    def _prepare(self, request) -> dict:
        """Everything before kernel.py: the launch monitor first (it must see every module this
        process loads), the DSL imported (with what it imports lazily and loads natively), its
        entry points marked, the runtime audit, and the judge's modules out of sys.modules. The
        channel's calibration runs after this, in the state the kernel's calls will run in."""
        dsl = request.dsl
        if self.device == "cuda":
            try:
                self._monitor = _core.cuda.LaunchMonitor(
                    cupti_dirs(), list(self.options.get("dsl_roots", []))
                )
            except _core.Error as error:
                return {"ok": False, "judge_error": f"launch monitor: {error}"}
        root = {"cutedsl": "cutlass", "tirx": "tvm"}.get(dsl)
        if root is not None and root not in sys.modules:
            # Not imported by a warm host before the fork: the variant's toolchain now.
            toolchains.activate(self.options.get("dsl_site_dirs", []))
        preimport(dsl)  # each already imported when a warm host did it before the fork
        _refresh_import_caches()
        if dsl == "tirx":
            pin_tvm_cuda_toolkit()
            if self.device == "cuda":
                _preload_nvrtc()
        self.versions = _versions()
        self._mark_dsl_entry_points(dsl)
        if self.device == "cuda":
            try:
                # torch's lazy CUDA state, settled before the audit: initialised, and its device
                # count cached, which torch does only once initialised. Uncached, each torch.cuda
                # call that asks for it (get_device_capability, is_available) dlopens NVML, and
                # the audit refuses that once kernel.py runs: on the H200 every DSL solution that
                # asked for its device's capability failed so (runtime.native_code).
                torch.cuda.init()
                torch.cuda.device_count()
                device = torch.cuda.current_device()
                clock = values.PublishedClock(device)
                self._thread = _core.KernelThread(
                    clock, spin_us=int(self.options.get("kernel_thread_spin_us", 0))
                )
                # What the clock's torch functions look up when they run (torch._C's
                # synchronise, torch.cuda.current_stream, ...), guarded from here on: one changed
                # before a timed window closes is a runtime.clock_tampered violation.
                self._thread.guard_clock(values.clock_reach(clock))
                # The device and its primary context current on the kernel's thread as on this
                # one, before kernel.py runs there (a DSL's first driver call needs a context).
                made = self._thread.call(torch.cuda.set_device, (device,))
                self._thread.release_collector()  # held from its return: nothing to snapshot
                if made[0] != "ok":
                    raise RuntimeError(f"the kernel's thread: {made[1]}: {made[4]}")
            except (RuntimeError, _core.Error) as error:
                return {"ok": False, "judge_error": f"CUDA in the worker: {error}"}
        else:
            self._thread = _core.KernelThread()
        # The DSL's code is trusted after kernel.py's import began only inside the wrapped entry
        # points: the wrapper's frames are named by the file its code objects were made from.
        audit = dict(
            self.options["audit"],
            dsl_entry_file=dsl_entry.wrapper.__code__.co_filename,
            dsl_entry_globals=dsl_entry.wrapper.__globals__,
        )
        _core.install_runtime_audit(audit, enforce=not self.options.get("audit_record_only"))
        _install_process_wide_guards()
        # torch's __torch_function__ dispatch locked off on the kernel's thread too (torch keeps
        # the switch per thread; _lock_torch_function_dispatch, which the guards just ran: no
        # lock only where a test of the judge's own left them out).
        if _TORCH_FUNCTION_LOCK is not None:
            locked = self._thread.call(_TORCH_FUNCTION_LOCK, ())
            self._thread.release_collector()
            if locked[0] != "ok":
                return {"ok": False, "judge_error": f"the kernel's thread: {locked[1]}: {locked[4]}"}
        # What the worker's own handling of the outputs looks up after solve returns (torch.Tensor's
        # methods, torch's functions and dtypes, builtins), guarded as the clock's names are: one
        # changed by kernel.py is seen when its call returns (runtime.clock_tampered), before the
        # export could run it. Taken after the worker's own replacements above.
        self._thread.guard_clock(values.harness_reach() + self._dsl_guards)
        # From now on kernel.py's code may run only while it is imported or solve is called:
        # anywhere else (the export after the clock stopped, the next inputs, the wait) it is a
        # runtime.outside_call violation. On already for the calibration, so that it measures
        # the channel as the timed calls will see it.
        _core.watch_kernel_code(True)
        # No new process from here on, whoever asks (a raw clone() too), on either device: all
        # the CPU the calls use is this process's, which the host reads around each
        # (AcceptReportedTimes), and nothing the kernel starts works beside or after its calls (a
        # process of its own on the GPU with the outputs' memory mapped). Both DSLs compile
        # without one (their Python routes to a process were already refused by the audit).
        _core.seal_processes()
        # And no native code made from here on but by a checked compile of the DSL's, for the
        # DSL's own frames (the gate on the C library's calls that make memory executable, in
        # every object: _core.arm_exec_gate). With the static rules waived, a kernel replaced
        # CuTe DSL's checked compile for one compile by its own, which ran the DSL's pass
        # pipeline itself, and its host code stored anywhere (passed at 0.71x on the CPU judge,
        # fourteenth session; case cute_compile_reimplemented_permissive).
        freeze_dsl_reach(dsl)
        _core.arm_exec_gate()
        self._dsl = dsl
        _scrub_modules(dsl)
        self._state = _StateSnapshot(self)
        return {"ok": True, "versions": self.versions, "kernel_tid": self._thread.native_id}

    def _load(self, request) -> dict:
        self.kernel_path = os.path.abspath(request.kernel_path)
        versions = self.versions
        spec = importlib.util.spec_from_file_location("kernel", self.kernel_path)
        if spec is None or spec.loader is None:
            return {
                "ok": False,
                "error_type": "ImportError",
                "error": "cannot import kernel.py",
                "versions": versions,
            }
        module = importlib.util.module_from_spec(spec)
        sys.modules["kernel"] = module
        # An exception a finaliser of the kernel's raises is ignored, as Python ignores it, and
        # not printed: the interpreter's printer parses the source line of the frame the
        # finaliser ran under (the worker's own, where it lets go of a call's objects), a compile
        # the runtime audit refuses, and the kernel got runtime.dynamic_code naming worker.py.
        sys.unraisablehook = _IGNORE_UNRAISABLE
        _core.runtime_audit_phase("import")
        # Every Python thread there is now is the judge's: one of kernel.py's alive when its
        # import or a call of solve returns is a runtime.thread violation (kernel_thread.cc).
        self._kernel_thread().mark_threads()
        # On the kernel's thread, the watch on kernel code off only while its code may run there:
        # the module body, and the lookup of solve (a module-level __getattr__ is kernel.py's
        # code). Anything it raises (SystemExit too) is described there.
        done = self._on_kernel_thread(spec.loader.exec_module, (module,))
        if done[0] == "ok":
            done = self._on_kernel_thread(getattr, (module, "solve", None))
        # The collector stays held on this thread from here on (_let_go).
        if done[0] != "ok":
            return {
                "ok": False,
                "error_type": done[1],
                "error": self._format_raised(done),
                "versions": versions,
            }
        solve = done[2]
        if not callable(solve):
            return {
                "ok": False,
                "error_type": "ImportError",
                "error": "kernel.py defines no callable solve(*inputs)",
                "versions": versions,
            }
        self.solve = solve
        _core.runtime_audit_phase("correctness")
        return {"ok": True, "versions": versions}

    def _mark_dsl_entry_points(self, dsl: str) -> None:
        """The DSL's entry points wrapped so that the launch monitor knows what they load, and its
        compiles checked (C++: _core.checked_compile); the wrappers hold nothing of the worker's
        (dsl_entry.py), and each name set here is guarded (self._dsl_guards, with
        harness_reach's): one kernel.py replaces is seen when its import or call returns."""
        monitor = self._monitor
        self._dsl_guards = []
        for module_name, *path in _DSL_ENTRY_POINTS.get(dsl, ()):
            owner = sys.modules.get(module_name)
            for name in path[:-1]:
                owner = getattr(owner, name, None)
            original = getattr(owner, path[-1], None) if owner is not None else None
            if callable(original):
                if (dsl, module_name, *path) == ("tirx", "tvm", "compile"):
                    original = _tir_checked(original)
                # The call ends the approval a checked compile made inside it (the gate on
                # native code, _core.dsl_entry_call), and goes through the launch monitor's
                # runner where there is one.
                inner = monitor.entry_runner(original) if monitor is not None else original
                run = _core.dsl_entry_call(inner, monitor is not None)
                installed = dsl_entry.wrapper(run, original)
                setattr(owner, path[-1], installed)
                self._dsl_guards.append((owner, path[-1], True, installed))
        if dsl == "cutedsl":
            guard = check_cute_host_code()
            if guard is not None:
                self._dsl_guards.append(guard)
        if dsl == "tirx":
            # TVM's other doors to the same build, checked as tvm.compile is (a kernel calling
            # one of them directly would build for the host unchecked), and DSL entry points for
            # the audit and the gate on native code (no launch monitor runner: they load nothing
            # on the device), so that a kernel may build with them directly.
            for module_name, name in _TIR_BUILDS:
                owner = sys.modules.get(module_name)
                original = getattr(owner, name, None) if owner is not None else None
                if callable(original):
                    checked = _tir_checked(original)
                    installed = dsl_entry.wrapper(_core.dsl_entry_call(checked, False), checked)
                    setattr(owner, name, installed)
                    self._dsl_guards.append((owner, name, True, installed))

    # --- RESERVE_INPUTS ------------------------------------------------------------------------
    def _reserve_inputs(self, request) -> dict:
        """A device buffer of this process's own (cudaMalloc) of at least reserve_bytes, exported
        for the host to write each call's inputs into (values.WorkerInputBuffer): the kernel
        reads its inputs from local memory, as the published method's come from its own
        process's allocator. Handles naming it open as views of it here (transport.adopt).
        Older buffers are kept: the host may still map them."""
        wanted = int(request.reserve_bytes)
        transport = self.transport
        if not isinstance(transport, values.CudaTransport) or wanted <= 0:
            return {"ok": False, "error_type": "ProtocolError", "error": f"no input buffer of {wanted} bytes"}
        try:
            buffer = _core.cuda.DeviceBuffer(wanted, torch.cuda.current_device())
            handle = buffer.ipc_handle()
        except _core.Error as error:  # out of memory, most likely: the host's rule decides
            return {"ok": False, "judge_error": f"the worker's input buffer of {wanted} bytes: {error}"}
        self._input_buffers.append(buffer)
        transport.adopt(handle, buffer.ptr, buffer.bytes)
        return {
            "ok": True,
            "input_buffer": {
                "cuda_ipc_handle": handle,
                "nbytes": buffer.bytes,
                "device_index": buffer.device,
            },
        }

    # --- RELEASE -------------------------------------------------------------------------------
    def _release(self) -> dict:
        """The host is about to write the next call's inputs into memory reused from call to call
        (the GPU judge's input buffer, the CPU judge's input arena), of which the kernel may keep
        views. serve has let go of the last call's objects on receiving this request (on the
        kernel's thread: _let_go), so a finaliser of the kernel's on them (C callables: no frame
        for the watch) runs now, while that memory still holds inputs already used; the device
        is synchronised, so no copy it enqueued reads the memory later; and the cyclic collector
        is held until the next call starts (KernelThread.RunWatched), so that no collection the
        worker's own allocations trigger runs a finaliser after this reply. A red team's
        finaliser otherwise read the next call's inputs when the worker released the last call's
        objects after the host had written them, and computed the answer outside the clock
        (passed at 4.5-5.4x, CPU judge, 2026-12-06; case arena_prefetch_inputs)."""
        if self._thread is not None:  # prepared: the device's context is made
            self._sync()
            self._thread.hold_collector()
        return {"ok": True}

    # --- CALIBRATE -----------------------------------------------------------------------------
    def _calibrate(self, request, fds) -> dict:
        """A timed call without solve: the same steps, synchronisations, snapshot and export."""
        if (refused := self._state_rewritten(fds)) is not None:
            return refused
        inputs, keep = self.transport.open(list(request.inputs), list(fds), writable=True, scalars=True)
        if self._monitor is not None:
            self._monitor.set_enabled(False)  # as in the parity pass it calibrates
        _, seconds, _ = self._on_kernel_thread(_NOTHING, (), True)
        out = [values.empty_like_meta(meta, self.device) for meta in request.output_metas]
        reply = self._export(out, self._facts.describe(out), seconds, keep, race=False)
        self._held = (self._held, inputs, keep)  # as after a call (the same steps; serve releases)
        return reply

    # --- CALL / WARMUP / TIME_KERNEL -----------------------------------------------------------
    def _call(self, request, fds) -> dict:
        if (refused := self._state_rewritten(fds)) is not None:
            return refused
        inputs, keep = self.transport.open(list(request.inputs), list(fds), writable=True, scalars=True)
        # What the call gets and gives stays alive until the next request, whatever happens
        # here, and is let go of on the kernel's thread then (_let_go): never here.
        self._held = (inputs, keep)
        op = request.op
        if self.solve is None:
            return {"ok": False, "error_type": "ProtocolError", "error": "kernel not loaded"}
        _core.runtime_audit_phase("correctness" if op == "call" else "timing")
        poison = op == "call" and bool(request.poison)
        traced = op == "time_kernel" and bool(request.trace) and self.device == "cuda"
        tracing = None
        try:
            if traced:
                tracing = self._gpu_tracing()
                tracing.before()
        except Exception as error:  # the judge's machinery, not the kernel
            return {"ok": False, "judge_error": f"GPU tracing: {type(error).__name__}: {error}"}
        monitor = self._monitor
        if monitor is not None:
            # Off in the parity pass (the published method measures the kernel and nothing else).
            monitor.set_enabled(not (op == "time_kernel" and not traced))
        sync, perf = self._sync, self._perf
        race = False
        launches = None
        try:
            if poison:
                _poison(True)
            if monitor is not None:
                monitor.begin_call(knockout=bool(request.knockout))
            try:
                if op == "call" and self.device == "cuda":
                    # What a consumer on the current stream reads the moment solve returns.
                    start = perf()
                    _, out = self._kernel_call(inputs)
                    returned = self._facts.describe(out)
                    snapshot = self._snapshot(returned)
                    sync()
                    seconds = perf() - start
                    race = any(_differs(s, t) for s, t in zip(snapshot, self._exported(returned)))
                elif op == "warmup":
                    _, out = self._kernel_call(inputs)
                    seconds = 0.0
                else:
                    seconds, out = self._kernel_call(inputs, timed=True)
                    returned = self._facts.describe(out)
            finally:
                if monitor is not None:
                    launches = monitor.end_call()
        except _KernelRaised as raised:
            return {
                "ok": False,
                "error_type": raised.error_type,
                "error": raised.text,
                **({"launches": launches} if launches is not None else {}),
            }
        except Exception as error:  # the snapshot or the synchronisation after solve: its outputs
            self._held = (self._held, error)
            return {
                "ok": False,
                "error_type": type(error).__name__,
                "error": self._format(error),
                **({"launches": launches} if launches is not None else {}),
            }
        finally:
            if poison:
                _poison(False)
        trace = None
        if tracing is not None:
            try:
                trace = tracing.after(monitor)
            except _core.Error as error:
                return {"ok": False, "judge_error": f"GPU tracing: {error}"}
        try:
            if op == "warmup":
                reply = {"ok": True, "seconds": 0.0}
            else:
                reply = self._export(out, returned, seconds, keep, race)
        except Exception as error:  # copying what solve returned failed (e.g. a view too large)
            self._held = (self._held, error)
            return {
                "ok": False,
                "error_type": type(error).__name__,
                "error": f"its outputs could not be copied for the judge: {self._format(error)}",
                **({"launches": launches} if launches is not None else {}),
            }
        # What the call got and gave stays alive until the next request (_held), and the
        # collector held: a callback of the kernel's on one of them (a weakref's, made of C
        # callables) would otherwise run between the export and the reply and write into the
        # exported outputs (red team, 2026-12-05 evening: 11.3x).
        if launches is not None:
            reply["launches"] = launches
        if trace is not None:
            reply["trace"] = trace
        return reply

    def _kernel_call(self, inputs: list, timed: bool = False) -> tuple:
        """(seconds, solve(*inputs)) on the kernel's thread, the watch on kernel code off there
        from the clock's start to solve's return (kernel_thread.cc): kernel.py runs there and only
        then, and nothing profiles the timed call. Timed: the published method (synchronise,
        start event, call, synchronise, end event, synchronise; the events' elapsed time by the
        PublishedClock, its functions bound before kernel.py was imported; the monotonic clock
        in C++ on the CPU), all on that thread. Its exception is
        described there (str() of it is the kernel's code)."""
        done = self._on_kernel_thread(self.solve, tuple(inputs), timed)
        if done[0] == "ok":
            self._held = (self._held, done[2])  # what solve returned: let go of with the rest
        if done[0] != "ok":
            raise _KernelRaised(done[1], self._format_raised(done))
        return done[1], done[2]

    def _exported(self, returned) -> list[torch.Tensor]:
        """The leaves of a described return value that the worker exports: plain tensors on its
        device (others are reported by their description: a subclass, another device)."""
        _node, leaves = returned
        return [leaf.tensor for leaf in leaves if leaf.device_type == self.device]

    def _snapshot(self, returned) -> list:
        """Copies of the exported output leaves taken by the harness (a kernel's later writes to
        its own buffers do not change what is judged)."""
        monitor = self._monitor
        if monitor is not None:
            monitor.enter_judge()
        try:
            return [self._clone(t) for t in self._exported(returned)]
        finally:
            if monitor is not None:
                monitor.leave_judge()

    def _export(self, out, returned, seconds: float, keep, race: bool) -> dict:
        """Snapshots the exported output leaves of `returned` (TensorFacts.describe of `out`, read
        once when solve returned; a kernel's later writes to its own buffers do not change what is
        judged) and exports them. The snapshot is a copy into the worker's own arena (CUDA: one
        IPC handle; CPU: one shared segment) that the host maps once: the same copy and no IPC
        calls, segments or mappings on every call, so the channel's cost stays what the
        calibration measured."""
        node, leaves = returned
        exported = [leaf for leaf in leaves if leaf.device_type == self.device]
        data = [leaf.tensor for leaf in exported]
        monitor = self._monitor
        if monitor is not None:
            monitor.enter_judge()
        try:
            if self._outputs is None:
                cuda = self.device == "cuda"
                self._outputs = values.CudaArena(torch.cuda.current_device()) if cuda else values.CpuArena()
            handles, out_fds, holder = self._outputs.export(data)
            self._sync()
        finally:
            if monitor is not None:
                monitor.leave_judge()
        for leaf, handle in zip(exported, handles):
            # The data's fields; the metadata stays the one read when solve returned.
            leaf.handle.update({k: v for k, v in handle.items() if k != "meta"})
        self._held = (self._held, out, leaves, holder, keep)
        return {"ok": True, "output": node, "seconds": seconds, "side_stream_race": race, "_fds": out_fds}

    def _gpu_tracing(self):
        if self._tracing is None:
            self._tracing = GpuTracing(self._sync)
        return self._tracing

    def _kernel_thread(self) -> _core.KernelThread:
        if self._thread is None:
            raise RuntimeError("the kernel's thread was not made in prepare")
        return self._thread

    def _on_kernel_thread(self, fn, args: tuple = (), timed: bool = False) -> tuple:
        return self._kernel_thread().call(fn, args, timed)

    def _format(self, error: BaseException) -> str:
        return format_error(error, self.kernel_path)

    def _format_raised(self, raised: tuple) -> str:
        _, _name, qualname, module, message, entries = raised
        return format_entries(entries, _exception_line(qualname, module, message), self.kernel_path)


class _KernelRaised(Exception):
    """solve raised: its type's name and its formatted traceback, taken while kernel.py may run."""

    def __init__(self, error_type: str, text: str):
        super().__init__(error_type)
        self.error_type = error_type
        self.text = text


def format_error(error: BaseException, kernel_path: str = "") -> str:
    """A traceback of the worker's own exception (the kernel's are described on its thread:
    KernelThread), without the judge's frames. The entries are read in C and the last line is
    made here (the standard library's formatter walks the chained exceptions' frames)."""
    try:
        message = str(error)
    except Exception:
        message = "<exception str() failed>"
    kind = type(error)
    return format_entries(
        _core.traceback_entries(error.__traceback__),
        _exception_line(kind.__qualname__, kind.__module__, message),
        kernel_path,
    )


def format_entries(entries, last_line: str, kernel_path: str = "") -> str:
    """The standard library's traceback text of (file, line, function) entries and the
    exception's line, without the judge's own frames, kernel.py named as such."""
    frames = [
        traceback.FrameSummary(file, line, name)
        for file, line, name in entries
        if not file.startswith(_PACKAGE_DIR)
    ]
    text = "".join(traceback.format_list(frames)) + last_line
    # A DSL's diagnostic names the frame it was called from, which is the judge's entry wrapper
    # (dsl_entry.py) when it is raised inside one: the judge's files go by one name.
    text = text.replace(_PACKAGE_DIR, "<judge>")
    if kernel_path:
        text = text.replace(kernel_path, "kernel.py").replace(os.path.dirname(kernel_path), "<workspace>")
    return ("Traceback (most recent call last):\n" + text) if frames else text


def _exception_line(qualname: str, module: str, message: str) -> str:
    """`Type: message` as the standard library's last traceback line writes it."""
    name = qualname if module in ("builtins", "__main__", "") else f"{module}.{qualname}"
    return f"{name}: {message}\n" if message else f"{name}\n"


class _StateSnapshot:
    """The worker's own objects that its main thread reads for every call, as prepare left them,
    before kernel.py existed: the worker's collaborators (channel, transport, clock functions,
    kernel thread, launch monitor, output describer), every attribute of the output describer
    (TensorFacts: functions bound at its making), and the type of every attribute of the
    transport (its segment map is replaced when a sender's segment grows, never its type).
    Python objects' attributes are not guarded by the names KernelThread guards (module and class
    namespaces): a red team with raw memory found the Worker through the interpreter's thread
    states and frames, and replaced the transport's segment map with an object whose `get`, a
    property of C callables, ran the answer on this thread while it opened each call's inputs
    (19.1-20.1x strict on the CPU judge, tenth session, 2026-12-07)."""

    _WORKER = ("channel", "transport", "_thread", "_facts", "_sync", "_perf", "_clone", "_monitor")

    def __init__(self, worker: Worker):
        self._worker = worker
        self._ids = {name: vars(worker)[name] for name in self._WORKER}
        self._facts = dict(vars(worker._facts))
        self._transport = {name: type(value) for name, value in vars(worker.transport).items()}

    def changed(self) -> str | None:
        """What differs, or None. Reads the objects' dictionaries and types only: no code of
        anything in them runs (every key a plain str first, whose comparison in a lookup is C: a
        key of a str subclass would compare with its own __eq__)."""
        for owner in (self._worker, self._ids["_facts"], self._ids["transport"]):
            if any(type(key) is not str for key in vars(owner)):
                return "a key that is not a plain str put in one of the worker's objects"
        now = vars(self._worker)
        for name, value in self._ids.items():
            if now.get(name, _MISSING) is not value:
                return f"Worker.{name} replaced"
        facts = vars(self._ids["_facts"])
        if len(facts) != len(self._facts):
            return "the output describer's attributes changed"
        for name, value in self._facts.items():
            if facts.get(name, _MISSING) is not value:
                return f"the output describer's {name} replaced"
        transport = vars(self._ids["transport"])
        if len(transport) != len(self._transport):
            return "the transport's attributes changed"
        for name, kind in self._transport.items():
            value = transport.get(name, _MISSING)
            if type(value) is not kind:
                return f"the transport's {name} replaced by a {type(value).__name__}"
            # Its maps hold the transport's own plain values (segment identities, handles,
            # addresses, sizes) and the segments it mapped with their tensors, nothing else: a red
            # team kept the segment map a dict and put a tuple of its own in it, whose segment's
            # `size` property ran the answer on this thread (21x strict, the same day).
            if kind is dict:
                for key, item in value.items():
                    if not (_plain(key) and _plain(item)):
                        return f"the transport's {name} holds a {type(item).__name__} it did not put there"
        return None


_MISSING = object()
_PLAIN_TYPES = (int, bool, bytes, str, type(None))


def _plain(value) -> bool:
    """A value the worker's transport keeps: a plain number, bytes or text, a mapped segment or
    a tensor, or a tuple of those (by exact type: no subclass, whose methods would be another's)."""
    kind = type(value)
    if kind in _PLAIN_TYPES or kind is torch.Tensor or kind is _core.SharedSegment:
        return True
    return kind is tuple and all(_plain(v) for v in value)


class GpuTracing:
    """Around each strict-pass call: evict the L2 cache, sample clocks, and trace the call's GPU
    work with CUPTI (or, when another profiler holds CUPTI, time the window with the judge's
    CallClock: device-wide synchronisations and events no Python code can replace)."""

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
            clock = cuda.CallClock(torch.cuda.current_device())
            self._clock_start, self._clock_stop = clock.start, clock.stop
        self._sample = None

    def before(self) -> None:
        self._flusher.flush(torch.cuda.current_stream().cuda_stream)
        # Drained before the window opens: the trace keeps every record that starts after
        # begin(), and whatever was still queued (the flush, the copies that staged this call's
        # inputs) then counted as the call's. On the H200 (2026-12-02) the worker's spans of the
        # problems with large inputs read 2-20x their event-timed calls (25: 608 us against
        # 33 us), while 28's and 36's agreed.
        self._sync()
        self._sample = self._nvml.sample() if self._nvml is not None else None
        if self._tracer is not None:
            self._tracer.begin()
        else:
            self._clock_start()

    def after(self, monitor=None) -> dict:
        if self._tracer is not None:
            self._sync()
            trace = self._tracer.end(monitor).to_dict()
        else:
            span = self._clock_stop() * 1e3
            trace = {"method": "cuda_events", "span_ms": span, "kernel_sum_ms": span}
        if self._sample is not None:
            trace.update(
                {
                    k: self._sample[k]
                    for k in ("sm_clock_mhz", "temperature_c", "throttle_reasons", "throttled")
                }
            )
        return trace


def cupti_dirs() -> list[str]:
    """Where libcupti may live: pip's nvidia-cuda-cupti (torch's dependency), the toolkit."""
    dirs = []
    try:
        import nvidia.cuda_cupti as pip_cupti  # type: ignore[import-not-found]

        dirs += [os.path.join(p, "lib") for p in pip_cupti.__path__]
    except ImportError:
        pass
    home = cuda_toolkit_home()
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "extras/CUPTI/lib64"):
        dirs.append(os.path.join(home, sub))
    return [d for d in dirs if os.path.isdir(d)]


def _no_sync() -> None:
    pass


# The calibration's call: C++, so that the kernel's thread runs no Python code of the worker's.
_NOTHING = _core.constant_function(None)
_IGNORE_UNRAISABLE = _core.constant_function(None)  # C++: takes any arguments, runs no Python
# The collector's functions as they were before kernel.py was imported.
_GC_COLLECT, _GC_COUNT, _GC_THRESHOLD = gc.collect, gc.get_count, gc.get_threshold


def _drop_and_collect(box: list) -> None:
    """On the kernel's thread, between calls: drops the last call's objects (box holds the only
    reference), then runs the collection the interpreter would have run by now, had the worker's
    main thread not held the collector (the youngest generation over its threshold, and the
    older ones theirs), so that the worker's own garbage is not collected inside the next timed
    call instead."""
    box.clear()
    counts, thresholds = _GC_COUNT(), _GC_THRESHOLD()
    if thresholds[0] and counts[0] > thresholds[0]:
        _GC_COLLECT(max(g for g in range(3) if counts[g] > thresholds[g]))


def _differs(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.contiguous(), b.contiguous()
    if a.numel() == 0:
        return False
    return not torch.equal(a.view(-1).view(torch.uint8), b.view(-1).view(torch.uint8))


def _speculation_status() -> str:
    """The worker's Speculation_Store_Bypass line of /proc/self/status ("thread vulnerable",
    "thread force mitigated", ...): forced mitigations slow the kernel's host-bound calls against
    the published method's plain process (the syscall filter is installed so as not to force
    them: seccomp_filter.cc)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Speculation_Store_Bypass:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _poison(on: bool) -> None:
    """Memory torch allocates during a correctness call comes back filled with NaN (floats) or
    the largest integer, so that outputs a kernel leaves partly unwritten cannot pass. (torch
    fills uninitialised memory only in deterministic mode; warn_only keeps every op usable. The
    C-level switch avoids torch.use_deterministic_algorithms, which imports torch._inductor.)"""
    torch._C._set_deterministic_fill_uninitialized_memory(True)
    torch._C._set_deterministic_algorithms(on, warn_only=True)


def cuda_toolkit_home() -> str:
    """The CUDA toolkit the worker uses (CUPTI, TVM's headers) and the host binds into its view."""
    return os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"


def cuda_toolkit_version(home: str) -> tuple[int, int] | None:
    """(major, minor) from the toolkit's own cuda.h (CUDA_VERSION 13000 -> (13, 0)); None when it
    is not there."""
    try:
        with open(os.path.join(home, "include", "cuda.h"), encoding="latin-1") as header:
            for line in header:
                parts = line.split()
                if len(parts) >= 3 and parts[:2] == ["#define", "CUDA_VERSION"] and parts[2].isdigit():
                    number = int(parts[2])
                    return number // 1000, number % 1000 // 10
    except OSError:
        return None
    return None


def pin_tvm_cuda_toolkit() -> None:
    """TVM looks for the CUDA toolkit on every compile: `which nvcc` unless CUDA_PATH is set, and
    `nvcc --version` where the toolkit has no version.txt (CUDA 12 and later have none), both
    subprocesses the runtime audit refuses whoever asks. Before the audit: CUDA_PATH is set to
    the toolkit, and TVM's version lookup answers from its cuda.h."""
    home = cuda_toolkit_home()
    os.environ["CUDA_PATH"] = home
    version = cuda_toolkit_version(home)
    try:
        from tvm.support import nvcc  # type: ignore[import-not-found]
    except ImportError:
        return
    if version is not None:
        # A C++ function: a Python one of this module's would hand kernel.py (which can reach
        # tvm's modules) the worker's globals.
        nvcc.get_cuda_version = _core.constant_function(version)


# What the runtime audit cannot see, so the worker takes it away before kernel.py is imported,
# each replaced by a C++ callable that records the code and raises PermissionError. Neither the
# judge nor the DSLs use them.
#  * torch's constructors of a storage or tensor at a raw address (or of an object at one): no
#    audit event marks them, and through one kernel.py reads and writes any of the worker's
#    memory (its clock, its reports; a red-team kernel of 2026-12-05 reported 50 us for every
#    call so).
#  * TorchScript's compilers, loaders and fork: they compile code from text or from a function's
#    source with no `compile` event when its names resolve to C callables, and a fork's Python
#    op runs kernel.py's code on a native thread the watch never saw (red team, 2026-12-05: after
#    solve returned). torch.jit.is_scripting and the annotations torch itself uses stay. Also
#    its graph builders from IR text (parse_ir, _create_function_from_graph: a red team of the
#    evening reached them as torch._tensor._C).
#  * Registrations with torch's dispatcher (_dispatch_library, behind torch.library): a kernel
#    registered for aten::clone runs inside the judge's own torch calls, after the clock stopped
#    (red team, 2026-12-05 evening: the judge's snapshot clone computed the whole answer, passed
#    at 27x on 28's full workload). (The Python dispatcher's switch is thread-local: kernel.py
#    runs on the kernel's thread, the judge's snapshot and export on the worker's main thread.)
#  * torch's intra-op and inter-op thread counts: more threads than the baseline's one (the
#    CPU judge), reached past the static rule as torch._tensor._C.set_num_threads.
# torch._C is one module object under every alias (torch._python_dispatcher.C, x._C): its
# attributes replaced here are replaced for all of them, and a test scans every loaded module
# for a re-export of an original left behind.
_UNAUDITED_REACH = (
    ("torch._C", "_construct_storage_from_data_pointer", "runtime.native_code", "a tensor at a raw address"),
    (
        "torch._C",
        "_construct_CUDA_Tensor_From_Storage_And_Metadata",
        "runtime.native_code",
        "a tensor at a raw address",
    ),
    ("torch._C", "_wrap_tensor_impl", "runtime.native_code", "a tensor at a raw address"),
    # The storage type's own methods (torch._C.StorageBase, an immutable C type every storage
    # class inherits from: replaced in its dictionary, so that no alias or subclass walks around
    # them): a storage adopting a raw address (a red team of 2026-12-05 night forged a StorageImpl
    # in a tensor's bytes, _set_cdata'd it and rewrote the worker's clock: passed at 12-15x),
    # reading a raw address, or opening a file or shared memory in C++ (no audit event).
    *(
        ("torch._C.StorageBase", name, "runtime.native_code", "a storage at a raw address")
        for name in ("_set_cdata", "_new_with_weak_ptr", "_free_weak_ref", "_expired")
    ),
    *(
        ("torch._C.StorageBase", name, "runtime.file_access", "a storage of a file torch opens in C++")
        for name in (
            "from_file",
            "_new_with_file",
            "_set_from_file",
            "_new_shared_cuda",
            "_new_using_fd_cpu",
            "_new_shared_fd_cpu",
            "_new_using_filename_cpu",
            "_new_shared_filename_cpu",
        )
    ),
    *(
        (owner, "from_file", "runtime.file_access", "a tensor of a file torch opens in C++")
        for owner in ("torch", "torch._C._VariableFunctionsClass")
    ),
    # Memory freed or shrunk under a live tensor, which keeps its sizes: ordinary ops then read
    # and write past it into the heap (red team round 8, 2026-12-05 night: a storage shrunk by
    # resize_ or inductor's resize_storage_bytes_, a torch.frombuffer tensor over a bytearray or
    # array that then reallocated (torch does not hold the buffer), a from_numpy tensor whose
    # array was resized with refcheck off; each then rewrote the worker's clock, passed at
    # 11.5-15.1x strict), or a storage's reference count dropped by hand.
    *(
        ("torch._C.StorageBase", name, "runtime.native_code", "a storage freed or shrunk under its tensors")
        for name in ("resize_", "_shared_decref", "_shared_incref")
    ),
    # A storage moved into shared memory in place: its old bytes freed under a DLPack alias of
    # it, unresizable or not (red team round 23, 2026-12-06: share_memory_ after from_dlpack,
    # 4.9-5.1x strict). Tensor.share_memory_ and UntypedStorage.share_memory_ reach these.
    *(
        ("torch._C.StorageBase", name, "runtime.native_code", "a storage's memory moved under what views it")
        for name in ("_share_fd_cpu_", "_share_filename_cpu_")
    ),
    # A tensor given another storage or implementation in place: the tensor that keeps a view's
    # memory alive (the base numpy's array holds after Tensor.numpy(), a DLPack export's) lets go
    # of it, and the view reads freed memory (red team round 24, 2026-12-06: a.base.set_(...),
    # a.base.data = ..., torch.utils.swap_tensors(a.base, ...), 5.0-5.2x strict).
    *(
        (owner, name, "runtime.native_code", "a tensor given another storage under what views it")
        for owner, name in (
            ("torch._C.TensorBase", "set_"),
            ("torch.ops.aten", "set_"),
            # The operator behind a .data assignment, which the hold (below) does not see
            # (seventh session, 2026-12-06: numpy_base_data's window through it, 4.0x strict).
            ("torch.ops.aten", "set_data"),
            ("torch._C", "_swap_tensor_impl"),
        )
    ),
    # ATen kernels that trust index data (red team round 24: segment_reduce's offsets read any
    # word and its backward wrote one, 4.7-5.0x strict; embedding_bag's dense backward and
    # ctc_loss crashed on an index out of range): kernels need no autograd backward either.
    *(
        (owner, name, "runtime.native_code", "an ATen kernel that does not bound-check its indices")
        for owner in ("torch", "torch._C._VariableFunctionsClass", "torch.ops.aten")
        for name in (
            # embedding_bag's forward reads its indices at the offsets it is given before any
            # check: a negative offset read words behind the indices' storage and reported them
            # in its error (seventh session's red team, 2026-12-06: a tuple's header read, passed
            # strict; case embedding_bag_negative_offset*). F.embedding_bag and nn.EmbeddingBag
            # call torch.embedding_bag.
            "embedding_bag",
            "segment_reduce",
            "_segment_reduce",
            "_segment_reduce_backward",
            "ctc_loss",
            "_ctc_loss",
            # cummax / cummin's helpers write into a values tensor of the caller's, its shape and
            # 32-bit-cut stride unchecked (red team round 25: any word within 16 GiB, 5.0-5.2x
            # strict); torch.cummax / cummin allocate their own outputs.
            "_cummax_helper",
            "_cummin_helper",
            # The fused optimisers' kernels trust their state tensors' sizes (round 26: a
            # one-element exp_avg wrote 63 chosen floats past its storage); no kernel needs them.
            "_fused_adam_",
            "_fused_adamw_",
            "_fused_sgd_",
            "_fused_adagrad_",
            "_fused_adam",
            "_fused_adamw",
            "_fused_sgd",
            "_fused_adagrad",
        )
    ),
    # A storage's memory freed by its address (inductor's CUDA graph trees use it; red team round
    # 23 named it, untried: a live tensor's block freed in the caching allocator).
    (
        "torch._C",
        "_free_And_Remove_DeleterFn",
        "runtime.native_code",
        "a storage's memory freed by its address",
    ),
    (
        "torch.ops.inductor",
        "resize_storage_bytes_",
        "runtime.native_code",
        "a storage shrunk under its tensors",
    ),
    # A tensor's storage reallocated by resize_ under what views it from outside torch's own
    # views: a DLPack alias (torch.from_dlpack of a tensor, then the tensor grown) keeps the old
    # bytes after they are freed, raw memory of the worker (red team round 20a, 2026-12-06: the
    # judge's queued pending call rewritten through it, 3.8-4.4x strict; round 21 forged the
    # hold's tokens and the signal handler table with it, 2.8-4.8x). torch makes a storage that
    # numpy views unresizable; it does not for DLPack.
    *(
        (owner, name, "runtime.native_code", "a tensor's storage reallocated under what views it")
        for owner, name in (
            ("torch._C.TensorBase", "resize_"),
            ("torch._C.TensorBase", "resize_as_"),
            ("torch", "resize_as_"),
            ("torch._C._VariableFunctionsClass", "resize_as_"),
            ("torch.ops.aten", "resize_"),
            ("torch.ops.aten", "resize_as_"),
        )
    ),
    *(
        (owner, name, "runtime.native_code", "a tensor over a buffer torch does not hold")
        for owner in ("torch", "torch._C._VariableFunctionsClass")
        # torch.asarray shares a bytearray's or array's memory as frombuffer does, without
        # holding it (red team round 9: the bytearray shrunk under it, then the clock; 12.6-23.7x)
        for name in ("frombuffer", "asarray")
    ),
    # Views with no bounds check (red team round 9): aten's _reshape_alias takes any strides (a
    # view over a bytearray's header by a stride of its distance; 13.7-22x), inductor's
    # _alloc_from_pool any offset into its pool (11.9-15.2x); as_strided and set_ check theirs.
    *(
        (owner, name, "runtime.native_code", "a view whose bounds ATen does not check")
        for owner, name in (
            ("torch.ops.aten", "_reshape_alias"),
            ("torch.ops.aten", "_reshape_alias_copy"),
            ("torch", "_reshape_alias_copy"),
            ("torch._C._VariableFunctionsClass", "_reshape_alias_copy"),
            ("torch.ops.inductor", "_alloc_from_pool"),
        )
    ),
    *(
        (
            "numpy.ndarray",
            name,
            "runtime.native_code",
            "an array's memory freed under the tensors that view it",
        )
        for name in ("resize", "__setstate__")
    ),
    # A strided view not bounded by its buffer, and the wrapper of an array interface it is made
    # with: refused statically by their public path, and here wherever they are reached (numpy's
    # implementation module held the same function under a path no rule named: seventh session's
    # red team, 2026-12-06, a bytearray's header read, passed strict; case
    # as_strided_private_module*). numpy's sliding_window_view is made with it and is refused too.
    *(
        (owner, name, "runtime.native_code", "a strided view that reaches past its buffer")
        for owner in ("numpy.lib.stride_tricks", "numpy.lib._stride_tricks_impl")
        for name in ("as_strided", "DummyArray")
    ),
    *(
        ("torch._C", name, "runtime.file_access", "a TorchScript module of a file torch opens in C++")
        for name in ("_load_jit_module_from_file", "_load_mobile_module_from_file")
    ),
    *(
        (owner, name, "runtime.dynamic_code", "TorchScript compiles code the audits never read")
        for owner, names in (
            ("torch.jit", ("script", "trace", "trace_module", "CompilationUnit", "fork", "_fork", "load")),
            ("torch.jit._script", ("CompilationUnit", "script")),
            ("torch.jit._trace", ("script", "trace", "trace_module")),
            ("torch.jit._async", ("fork",)),
            ("torch.jit._serialization", ("load",)),
            (
                "torch",
                ("CompilationUnit", "fork", "import_ir_module", "import_ir_module_from_buffer", "parse_ir"),
            ),
            (
                "torch._C",
                (
                    "CompilationUnit",
                    "_jit_script_compile",
                    "_jit_script_class_compile",
                    "_jit_script_interface_compile",
                    "_create_function_from_trace",
                    "fork",
                    "import_ir_module",
                    "import_ir_module_from_buffer",
                    "parse_ir",
                    "_create_function_from_graph",
                    "_create_method_from_trace",
                    "_create_function_from_trace_with_dict",
                    "_create_method_from_trace_with_dict",
                    "_jit_script_compile_overload",
                ),
            ),
        )
        for name in names
    ),
    *(
        ("torch._C", name, "runtime.outside_call", why)
        for name, why in (
            (
                "_dispatch_library",
                "registers kernels for torch's operators, which the judge's own torch calls would run",
            ),
        )
    ),
    *(
        (owner, name, "runtime.limits", "more CPU threads than the eager baseline's")
        for owner in ("torch", "torch._C")
        for name in ("set_num_threads", "set_num_interop_threads")
    ),
    # A Python dispatch mode entered, whatever module defines it (torch.utils.checkpoint's
    # selective-checkpoint modes, flop_counter's, torch.autograd.graph's, fake and proxy tensor
    # modes; the infra modes' own slot; the pre-dispatch key they switch on): every ATen op then
    # runs the mode's Python, inside torch's C++. Converting a 0-d tensor in a list of sizes calls
    # item() in the middle of the parser's walk of the list (PyList_GET_ITEM, its length read
    # first), so a mode's callback of the kernel's (the selective-checkpoint policy) shortened the
    # list and Tensor.view read the slots past its end (eleventh session's red team: 8 sizes read
    # from a list of 6; a crash where the item array was reallocated). A dispatch mode left
    # entered also did a kernel's work in the harness's ops (lazy_export_dispatch_mode*).
    *(
        (
            "torch._C",
            name,
            "runtime.dispatch_mode",
            "a Python dispatch mode (its Python runs inside torch's C++)",
        )
        for name in (
            "_push_on_torch_dispatch_stack",
            "_set_dispatch_mode",
            "_dispatch_tls_set_dispatch_key_included",
        )
    ),
    # The switches of torch's __torch_function__ dispatch, off in the worker for every object
    # but torch's modes (_lock_torch_function_dispatch): turned back on, a handler of the
    # kernel's runs while torch's dispatch holds the arguments it collected borrowed.
    (
        "torch._C",
        "_set_torch_function_state",
        "runtime.dispatch_mode",
        "the switch of torch's __torch_function__ dispatch (off in the worker)",
    ),
    (
        "torch._C._EnableTorchFunction",
        "__enter__",
        "runtime.dispatch_mode",
        "the switch of torch's __torch_function__ dispatch (off in the worker)",
    ),
    (
        "torch._C",
        "_RestorePythonTLSSnapshot",
        "runtime.dispatch_mode",
        "torch's Python thread-local state restored from a dispatch's snapshot",
    ),
    # torch._numpy's ndarray (loaded with torch._dynamo): its conversions call
    # `self.tensor.item()`, and `tensor` is an attribute any code can set, so an ndarray in a list
    # of sizes ran a method of the kernel's in the middle of torch's walk of that list (eleventh
    # session: the list shortened there, the worker crashed reading past its end, with the static
    # rules waived). Private to torch (refused statically); neither the judge nor the DSLs convert
    # its arrays.
    *(
        (
            "torch._numpy._ndarray.ndarray",
            name,
            "runtime.native_code",
            "it calls an attribute any code can set",
        )
        for name in ("__index__", "__int__", "__float__", "__complex__", "__bool__", "__len__")
    ),
    # The tensor subclasses whose hooks call what a table any code can write holds for the
    # operator (values.TABLE_DRIVEN_TENSOR_HOOKS). torch's __torch_function__ dispatch keeps the
    # tensor arguments it collected as borrowed pointers while it calls each handler in turn, so a
    # handler of the kernel's in MaskedTensor's table emptied torch.cat's list, freed the next
    # argument, and torch read a forged object in its place: raw memory in strict mode, then the
    # worker's own code rewritten in place, passed at 126-147x (eleventh session's second red
    # team). Neither the judge nor the DSLs use these classes.
    *(
        (f"{module_name}.{class_name}", hook, "runtime.native_code", "it calls a table any code can write")
        for module_name, class_name, hooks in values.TABLE_DRIVEN_TENSOR_HOOKS
        for hook in hooks
    ),
)


# Sparse tensors, whole: ATen's kernels on a sparse tensor do not bound-check its indices, so one
# whose indices are set out of range (a constructor with the checks off, or an index tensor
# rewritten in place through indices(), an alias) adds to or reads any address (red team round
# 7, 2026-12-05 night: a bytearray's header rewritten so, then the worker's clock; passed at
# 10-11.8x under the strict policy). No problem needs one. Refused: every callable of torch, its
# functions' class and the tensor classes whose name says sparse (reads such as is_sparse and
# sparse_dim stay), the index and value accessors, and the same operators as torch.ops.aten
# holds them (a path past torch's Python bindings).
_SPARSE_ACCESSORS = (
    "indices",
    "_indices",
    "values",
    "_values",
    "crow_indices",
    "col_indices",
    "ccol_indices",
    "row_indices",
)
_SPARSE_READS = ("is_sparse", "is_sparse_csr", "sparse_dim", "_validate_sparse_coo_tensor_args")
_SPARSE_FORMATS = {"csr", "csc", "coo", "bsr", "bsc", "crow", "ccol"}


_VARIABLE_FUNCTIONS: type = type(torch._C._VariableFunctions)  # torch's functions' class
_TORCH_C_LINALG: types.ModuleType = getattr(torch._C, "_linalg")  # noqa: B009 (not in torch's stubs)
_TORCH_C_SPARSE: types.ModuleType = getattr(torch._C, "_sparse")  # noqa: B009


# The operators torch.ops.aten holds, by name (overloads folded): read once for the refusals below.
_ATEN_OP_NAMES = sorted(
    {
        op.split("::", 1)[1].split(".", 1)[0]
        for op in torch._C._dispatch_get_all_op_names()
        if op.startswith("aten::")
    }
)


def _sparse_reach() -> tuple:
    why = "a sparse tensor (ATen does not bound-check its indices: raw memory)"

    def refused(name: str) -> bool:
        # A sparse format's name in a word of it too: aten::_convert_indices_from_csr_to_coo
        # filled any address its crow values named (red team round 26, 2026-12-06: 4.0-4.9x
        # strict).
        words = set(name.lower().split("_"))
        return name not in _SPARSE_READS and (
            "sparse" in name or name in _SPARSE_ACCESSORS or bool(words & _SPARSE_FORMATS)
        )

    entries = []
    for owner, names in (
        ("torch", [n for n in dir(torch) if refused(n) and callable(getattr(torch, n, None))]),
        ("torch._C._VariableFunctionsClass", list(vars(_VARIABLE_FUNCTIONS))),
        ("torch._C.TensorBase", list(vars(torch._C.TensorBase))),
        ("torch.Tensor", list(vars(torch.Tensor))),
        ("torch.ops.aten", _ATEN_OP_NAMES),
    ):
        entries += [(owner, n, "runtime.native_code", why) for n in names if refused(n)]
    return tuple(entries)


_UNAUDITED_REACH += _sparse_reach()


def _backward_reach() -> tuple:
    """ATen's autograd backward kernels by name (no kernel needs one): they take index data from a
    forward they trust, and several do not bound-check it (red team round 24: segment_reduce's,
    embedding_bag's dense one, max_pool2d_with_indices'; an out-of-range index wrote or crashed)."""
    why = "an autograd backward kernel (ATen trusts its index data)"
    entries = []
    for owner, names in (
        ("torch", [n for n in dir(torch) if "backward" in n and callable(getattr(torch, n, None))]),
        ("torch._C._VariableFunctionsClass", list(vars(_VARIABLE_FUNCTIONS))),
        ("torch._C._nn", list(vars(torch._C._nn))),
        ("torch.ops.aten", _ATEN_OP_NAMES),
    ):
        entries += [(owner, n, "runtime.native_code", why) for n in names if "backward" in n]
    return tuple(entries)


_UNAUDITED_REACH += _backward_reach()

# Autograd's backward pass: it runs ATen's backward kernels in C++ with the index data their
# forward saved, which a saved-tensor hook replaces (torch.autograd.graph.saved_tensors_hooks:
# red team round 27, 2026-12-06, max_pool2d_with_indices_backward wrote where substituted
# indices said, out of bounds with no error, passed strict and permissive). No kernel needs a
# backward pass: torch.autograd.backward, grad and Tensor.backward all run it through the engine.
_AUTOGRAD_ENGINE: type = type(torch._C._ImperativeEngine())  # the engine autograd runs (torch._C._EngineBase)
_UNAUDITED_REACH += (
    (
        "torch._C._EngineBase",
        "run_backward",
        "runtime.native_code",
        "autograd's backward pass (ATen's backward kernels trust the index data their forward saved)",
    ),
)


# ATen's private operators but the allowed few (C++ RefusedPrivateOperators: the static audit's
# exceptions, torch._unique2 and torch._scaled_mm among them).
_REFUSED_PRIVATE_OPS = frozenset(_core.refused_private_operators(_ATEN_OP_NAMES))
_PRIVATE_OP_WHY = "a private ATen operator (it trusts its caller to have checked its inputs: raw memory)"


def _private_reach() -> tuple:
    """ATen's private operators on every owner a kernel reaches them by: its namespaces, the
    tensor type's methods, torch.ops.aten. Red team rounds 24-26 (2026-12-06) reached raw memory
    through helpers that trust their callers (_cummax_helper's stride, the fused optimisers'
    state sizes, _convert_indices_from_csr_to_coo's values): refused as a class, not by name."""
    why = _PRIVATE_OP_WHY

    def methods(owner: type) -> list[str]:
        return [
            n
            for n, entry in vars(owner).items()
            if isinstance(entry, (types.BuiltinFunctionType, types.MethodDescriptorType, staticmethod))
        ]

    entries = []
    for owner, names in (
        ("torch", [n for n in dir(torch) if callable(getattr(torch, n, None))]),
        ("torch._C._VariableFunctionsClass", methods(_VARIABLE_FUNCTIONS)),
        ("torch._C._nn", list(vars(torch._C._nn))),
        ("torch._C._linalg", list(vars(_TORCH_C_LINALG))),
        ("torch._C._sparse", list(vars(_TORCH_C_SPARSE))),
        ("torch._C.TensorBase", methods(torch._C.TensorBase)),
        ("torch.ops.aten", _ATEN_OP_NAMES),
    ):
        entries += [(owner, n, "runtime.native_code", why) for n in names if n in _REFUSED_PRIVATE_OPS]
    return tuple(entries)


_PRIVATE_OP_HOLDERS = ("torch.sparse", "torch.nn.utils.weight_norm", "torch.onnx.operators")
_UNAUDITED_REACH += _private_reach()


def _private_op_copies() -> tuple:
    """_private_reach's operators where public modules hold them under a name of their own
    (torch.sparse.mm is torch._C._sparse._sparse_mm, torch.onnx.operators.shape_as_tensor
    torch._shape_as_tensor), read when the refusals are put in place (those modules load late)."""
    why = _PRIVATE_OP_WHY
    originals = {
        id(f): f
        for space in (torch, _VARIABLE_FUNCTIONS, _TORCH_C_SPARSE)
        for n in _REFUSED_PRIVATE_OPS
        if (f := vars(space).get(n) if isinstance(space, type) else getattr(space, n, None)) is not None
    }
    entries = []
    for holder in _PRIVATE_OP_HOLDERS:
        module = sys.modules.get(holder)
        for n, v in vars(module).items() if module is not None else ():
            if originals.get(id(v)) is v and not n.startswith("__"):
                entries.append((holder, n, "runtime.native_code", why))
    return tuple(entries)


# torch's look-ups of an operator by its qualified name: a namespace object made anew
# (type(torch.ops.aten)("aten")) builds its packets through them, past the refusals above.
_OPERATOR_LOOKUPS = ("_jit_get_operation", "_get_operation_overload", "_dispatch_find_schema_or_throw")


# Refused only while no call of solve is under way (the watch on kernel code on): Python's thread
# starts. CPython 3.11 raises no audit event for them, and a thread made after the watch was
# switched on has no profile function, so kernel.py's code on it ran unseen; started from a hook
# the judge's own export ran after the clock stopped and joined before the next call, the census
# never saw it either (red team, 2026-12-05 evening: passed at 4.6-7.1x). During a call the
# original runs (a thread still alive at the return is runtime.thread).
_BETWEEN_CALLS_REACH = tuple(
    (owner, name, "runtime.thread", "a thread started while no call of solve is under way")
    for owner, name in (
        ("_thread", "start_new_thread"),
        ("_thread", "start_joinable_thread"),  # Python 3.13
        ("threading", "_start_new_thread"),
        ("threading", "_start_joinable_thread"),
    )
)


def _install_process_wide_guards() -> None:
    """What prepare replaces of torch's, numpy's and the interpreter's callables for the worker's
    whole life, once the runtime audit is installed (the replacements record their violations
    through it; with no audit installed they refuse on their own)."""
    _lock_torch_function_dispatch()  # first: it holds torch's switch before that is refused
    _refuse_unaudited_reach()
    _refuse_private_operator_lookups()
    _refuse_module_recreation()
    _hold_data_assignment()
    _guard_python_buffers()
    _pin_dlpack_exports()
    _hold_compared_items()
    _hold_sequence_items()
    _refuse_symbolic_scalars()
    _refuse_module_dunder_members()


def _refuse_unaudited_reach() -> None:
    """Each entry of _UNAUDITED_REACH replaced (after the runtime audit is installed: the
    callables record their violation there), and each of _BETWEEN_CALLS_REACH by one that refuses
    only between calls."""
    import _thread
    import threading

    owners = {
        "torch": torch,
        "torch._C": torch._C,
        "torch.jit": torch.jit,
        "torch.jit._script": torch.jit._script,
        "torch.jit._trace": torch.jit._trace,
        "torch.jit._async": torch.jit._async,
        "torch.jit._serialization": torch.jit._serialization,
        "torch._C.StorageBase": torch._C.StorageBase,
        "torch._C._VariableFunctionsClass": _VARIABLE_FUNCTIONS,
        "torch._C._nn": torch._C._nn,
        "torch._C._linalg": _TORCH_C_LINALG,
        "torch._C._sparse": _TORCH_C_SPARSE,
        "torch._C.TensorBase": torch._C.TensorBase,
        "torch._C._EngineBase": _AUTOGRAD_ENGINE,
        "torch._C._EnableTorchFunction": torch._C._EnableTorchFunction,
        "torch.Tensor": torch.Tensor,
        "torch.ops.aten": torch.ops.aten,
        "torch.ops.inductor": torch.ops.inductor,
        **{h: sys.modules[h] for h in _PRIVATE_OP_HOLDERS if h in sys.modules},
    }
    try:
        import numpy

        owners["numpy.ndarray"] = numpy.ndarray
        for name in ("numpy.lib.stride_tricks", "numpy.lib._stride_tricks_impl"):
            module = sys.modules.get(name)
            if module is not None:
                owners[name] = module
    except ImportError:  # no numpy: nothing of it to refuse
        pass
    owners.update({"_thread": _thread, "threading": threading})
    # Classes of torch's modules loaded on use (torch._numpy with torch._dynamo): imported here.
    library_classes = [("torch._numpy._ndarray", "ndarray")]
    library_classes += [(m, c) for m, c, _ in values.TABLE_DRIVEN_TENSOR_HOOKS]
    for module_name, class_name in library_classes:
        try:
            owners[f"{module_name}.{class_name}"] = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):  # not in this torch: nothing of it to refuse
            pass
    done: set[tuple[str, str]] = set()
    swapped: list[tuple[object, object]] = []  # (original, what now stands in its place)
    reach = _UNAUDITED_REACH + _private_op_copies()
    for between_calls, table in ((False, reach), (True, _BETWEEN_CALLS_REACH)):
        for owner, name, code, why in table:
            if owner not in owners or (owner, name) in done:
                continue
            done.add((owner, name))
            original = getattr(owners[owner], name, None)
            if original is not None:
                what = f"{owner}.{name} ({why})"
                # A thread started during a call begins with torch's __torch_function__
                # dispatch locked off, as the worker's threads are (torch keeps it per thread).
                prelude = _TORCH_FUNCTION_LOCK if between_calls else None
                refusal = _core.refusing_function(
                    code, what, original, between_calls=between_calls, thread_prelude=prelude
                )
                if isinstance(owners[owner], type):
                    # In the type's own dictionary, where its instances and subclasses look, and
                    # in every type that holds a copy of the entry: torch's legacy tensor types
                    # (torch.FloatTensor, torch.cuda.sparse.LongTensor...) copy TensorBase's
                    # methods into dictionaries of their own at start-up.
                    entry = owners[owner].__dict__[name]
                    bare = refusal  # what a table holding the plain callable gets (below)
                    if type(entry) in (staticmethod, classmethod):
                        refusal = staticmethod(refusal)
                    elif isinstance(entry, (types.FunctionType, types.MethodDescriptorType)):
                        refusal = _core.instance_method(refusal)  # called with the instance
                    holders = [
                        owners[owner],
                        *(c for c in _entry_copies(owner) if vars(c).get(name) is entry),
                    ]
                    for holder in holders:
                        _core.replace_type_attribute(holder, name, refusal)
                    swapped.append((entry, refusal))
                    if isinstance(entry, (staticmethod, classmethod)):
                        swapped.append((entry.__func__, bare))
                    if original is not entry and original is not getattr(entry, "__func__", None):
                        swapped.append((original, bare))
                else:
                    if owner.startswith("torch.ops."):
                        _disarm_packet(original, code, what)
                    setattr(owners[owner], name, refusal)
                    swapped.append((original, refusal))
    _swap_held_originals(swapped)


def _swap_held_originals(swapped: list) -> None:
    """Every list, dict (values and keys), set and tuple that still holds a refused callable's
    original gets its refusal in its place: tables torch filled before the refusals went in
    (torch.jit._builtins._builtin_ops, 336 of them; torch._dynamo's cached map of torch's
    callables, 312) handed the originals to a kernel that iterated them (red team round 28,
    2026-12-06: _chunk_cat, torch.frombuffer, torch.from_file, a storage at a raw address and
    torch._C._dispatch_library, each passed permissive). One pass over the collector's objects
    in C++ (_core.swap_held_originals); types' own dictionaries are the type-attribute
    replacement's (above), not touched here."""
    _core.swap_held_originals([o for o, _ in swapped], [r for _, r in swapped])


def _disarm_packet(packet, code: str, what: str) -> None:
    """A refused operator's packet and the overloads torch made of it before kernel.py loaded
    (torch._decomp's and torch._meta_registrations' tables hold 190 private ones after `import
    torch`): their callables refuse, so that no table that kept one reaches the operator."""
    holders = [packet, *(v for v in vars(packet).values() if isinstance(v, torch._ops.OpOverload))]
    for holder in holders:
        for attribute in ("_op", "_op_dk", "_handle"):
            value = vars(holder).get(attribute)
            if value is not None:
                setattr(holder, attribute, _core.refusing_function(code, what, value))


def _tir_checked(original):
    """TVM's compile or build `original`, checked (C++: _core.checked_compile, TirCompileRefusal)
    and its host code made executable inside the check's approval (dsl_facts.tir_materialize)."""
    return _core.checked_compile(original, dsl_facts.tir_compile_facts, "tirx", dsl_facts.tir_materialize)


def check_cute_host_code() -> tuple[object, str, bool, object] | None:
    """CuTe DSL's compiler, which every compile and JIT of the DSL goes through, with the host code
    it is given checked first (C++: _core.checked_compile, CuteHostRefusal, through
    dsl_entry.method): a @cute.jit function is compiled to native code in the worker, so its host
    code may make no memory access. The guard entry of the name set (owner, name, True, value),
    for KernelThread.guard_clock; None where the DSL is not loaded."""
    owner = getattr(sys.modules.get("cutlass.base_dsl.compiler"), "Compiler", None)
    original = getattr(owner, "compile", None) if owner is not None else None
    if not callable(original):
        return None
    checked = dsl_entry.method(_core.checked_compile(original, dsl_facts.cute_compile_facts, "cutedsl"))
    _core.replace_type_attribute(owner, "compile", checked)
    return (owner, "compile", True, checked)


# The modules of each DSL's compile path, by name prefix, frozen for the gate on native code
# (freeze_dsl_reach): their namespaces and those of the classes they define.
_DSL_REACH = {
    "cutedsl": ("cutlass.base_dsl", "cutlass.cutlass_dsl", "cutlass._mlir", "cutlass.cute"),
    "tirx": ("tvm.tirx", "tvm.ir", "tvm.target", "tvm.driver", "tvm.runtime", "tvm_ffi", "tvm"),
}


def freeze_dsl_reach(dsl: str) -> int:
    """The DSL's compile path as the worker prepared it, frozen (C++: _core.freeze_dsl_reach):
    its modules (by _DSL_REACH's prefixes; a module whose name is one, or below one), every class
    they define, `builtins` and `re` (what the checks' facts readers call). A compile's executable
    memory, and a checked compile, are refused where one of their names was replaced since: a
    red team replaced CuTe DSL's Compiler.jit for one compile with a descriptor whose code wrote
    a store into the checked module before the DSL made native code of it (fourteenth session,
    passed permissive); others replaced what the facts reader calls with C callables. Returns how
    many owners are frozen."""
    prefixes = _DSL_REACH.get(dsl, ())
    # CuTe DSL's classes (its MLIR bindings' among them) are frozen whole: a name set on a class
    # shadows its base's (a property on ir.Operation forged the op names the check read). TVM's
    # object classes gain their fields' properties as they are first used: their names are kept.
    whole = dsl == "cutedsl"
    owners: list[tuple] = [(sys.modules["builtins"], False), (sys.modules["re"], False)]
    seen = {id(o) for o, _ in owners}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType):
            continue
        if not _under(name, prefixes):
            continue
        if id(module) not in seen:
            seen.add(id(module))
            owners.append((module, False))
        for value in list(vars(module).values()):
            home = getattr(value, "__module__", None) if isinstance(value, type) else None
            if _under(home, prefixes) and id(value) not in seen:
                seen.add(id(value))
                owners.append((value, whole))
    owners.extend(_dsl_instances(prefixes, [o for o, _ in owners]))
    return _core.freeze_dsl_reach(owners)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _dsl_class(value: object, prefixes: tuple[str, ...]) -> bool:
    """Whether `value` is an instance of one of the DSL's own classes (not a class or module)."""
    if isinstance(value, (type, types.ModuleType, enum.Enum)):
        return False  # classes and modules are frozen as owners; enum members are constants
    if not type(value).__flags__ & _HEAP_TYPE:
        return False  # a C type's (TVM-FFI's functions, 376 of them): its methods are C
    return _under(getattr(type(value), "__module__", None), prefixes)


def _under(name: object, prefixes: tuple[str, ...]) -> bool:
    """Whether the module name `name` is one of `prefixes` or below one."""
    return isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in prefixes)


def _dsl_instances(prefixes: tuple[str, ...], owners: list) -> list[tuple[object, str, list[str]]]:
    """The DSL's objects on its compile path, for freeze_dsl_reach: instances of its classes held
    by its modules' and classes' names (directly, or in a dict: CuTe DSL's singletons are in its
    metaclass's `_instances`), then those their attributes hold, a few levels deep. Each with the
    attributes that hold callables, modules or the DSL's objects: a red team's residual (fourteenth
    session) was a C callable put on such an object for one compile (the compiler's provider,
    its post-compile hook), which no frame of the kernel's runs. Modules held too (CuTe DSL's
    compiler reaches its execution engine through an attribute holding the module)."""
    found: list[tuple[object, str, list[str]]] = []
    seen: set[int] = set()
    frontier: list[tuple[object, str]] = []
    for owner in owners:
        try:
            names = dict(vars(owner))
        except TypeError:
            continue
        label = getattr(owner, "__qualname__", getattr(owner, "__name__", "?"))
        for key, value in names.items():
            values = list(value.values()) if isinstance(value, dict) and len(value) <= 64 else [value]
            for item in values:
                if _dsl_class(item, prefixes):
                    frontier.append((item, f"{label}.{key}"))
    for _depth in range(4):
        following: list[tuple[object, str]] = []
        for obj, label in frontier:
            if id(obj) in seen or len(found) >= 4096:
                continue
            seen.add(id(obj))
            try:
                attributes = dict(vars(obj))
            except TypeError:
                continue  # no attribute dictionary: nothing to set on it
            held = []
            for key, value in attributes.items():
                if not isinstance(key, str):
                    continue
                if _dsl_class(value, prefixes):
                    held.append(key)
                    following.append((value, f"{label}.{key}"))
                elif callable(value) or isinstance(value, types.ModuleType):
                    held.append(key)  # a step of the compile: its function, or its module
            found.append((obj, label, held))
        frontier = following
    return found


def torch_operator_namespaces() -> list[str]:
    """The namespaces of the operators torch itself registers, other than aten (quantized, prims,
    inductor, mkldnn, c10d...: 23 in torch 2.11), read from the dispatcher before kernel.py is
    imported, so that a namespace the kernel defines with torch.library is not among them."""
    names = torch._C._dispatch_get_all_op_names()
    return sorted({n.split("::", 1)[0] for n in names if "::" in n} - {"aten"})


def _refuse_private_operator_lookups() -> None:
    """torch._C's look-ups of an operator by its qualified name refuse every operator refused on
    torch.ops.aten (the private ones and those _UNAUDITED_REACH names: set_, segment_reduce...)
    and every operator of torch's other namespaces, and go on for every other: torch.ops builds
    its packets and overloads through them. Those namespaces' operators already made (packets a
    namespace object holds, and their overloads) have their callables replaced too: the quantized
    embedding bags read their indices behind the offsets they are given and reported the word in
    their error (seventh session's red team, 2026-12-06: a tuple's header read through
    torch.ops.quantized.embedding_bag_byte_rowwise_offsets, passed strict; case
    quantized_embedding_bag_offsets*), and no kernel needs an operator of torch's outside aten."""
    refused = sorted(_REFUSED_PRIVATE_OPS | {n for o, n, _, _ in _UNAUDITED_REACH if o == "torch.ops.aten"})
    spaces = torch_operator_namespaces()
    for name in _OPERATOR_LOOKUPS:
        original = getattr(torch._C, name, None)
        if original is not None:
            what = f"torch._C.{name} (a refused operator looked up by its name)"
            setattr(
                torch._C,
                name,
                _core.refusing_operator_lookup("runtime.native_code", what, original, refused, spaces),
            )
    for space in spaces:
        namespace = vars(torch.ops).get(space)
        if namespace is None:
            continue
        for op_name, packet in list(vars(namespace).items()):
            if isinstance(packet, torch._ops.OpOverloadPacket):
                what = f"torch.ops.{space}.{op_name} (an operator torch registers outside aten)"
                _disarm_packet(packet, "runtime.native_code", what)
                setattr(namespace, op_name, _core.refusing_function("runtime.native_code", what, packet))


def _refuse_module_recreation() -> None:
    """_imp's makers and executors of modules refuse a module loaded before kernel.py: made again
    from its spec, a single-phase extension comes back with the dictionary it had when first made
    (CPython keeps a copy), so torch._C's functions before the worker replaced any (red team,
    2026-12-06: _imp.create_dynamic, or importlib.util.module_from_spec(torch._C.__spec__) which
    also writes that copy back onto the live module, reached aten::_chunk_cat past every refusal,
    passed permissive); a module's exec run again puts its functions back. Modules loaded later
    (the DSL's, at its first compile) load as before."""
    import _imp
    import importlib.machinery

    names = sorted(sys.modules)
    modules = [m for m in sys.modules.values() if isinstance(m, types.ModuleType)]
    for name in ("create_dynamic", "create_builtin", "exec_dynamic", "exec_builtin"):
        original = getattr(_imp, name, None)
        if original is not None:
            setattr(
                _imp,
                name,
                _core.refusing_module_recreation(
                    "runtime.native_code",
                    f"_imp.{name}",
                    original,
                    names,
                    modules,
                    importlib.machinery.ModuleSpec,
                ),
            )


def _hold_data_assignment() -> None:
    """A tensor's `.data` assigned: its implementation given another storage in place, as set_
    does; the tensor keeping a numpy array's or a DLPack export's memory alive let go of it (red
    team round 24: a.base.data = ..., 5.0x strict). Refused outright until the sixth session, which
    refused every nn.Module.to / .cuda / .half too (they assign each parameter's .data: the round-27
    red team's false positive). Now the storage let go of is kept for the worker's life
    (_core.holding_setter), so whatever views its bytes keeps valid memory; the attribute reads as
    before (TensorBase's own descriptor)."""
    original = torch._C.TensorBase.__dict__["data"]
    storage_of = torch._C.TensorBase.__dict__["untyped_storage"]  # TensorBase's own, not a subclass's
    # Read with torch functions off (a subclass's __torch_function__ answered with a decoy), and
    # the getter a C++ function: original.__get__ is a method bound to the descriptor, whose
    # __set__ is the unheld setter (torch.Tensor.data.fget.__self__.__set__; seventh session).
    setter = _core.holding_setter(original.__set__, storage_of, torch._C.DisableTorchFunction)
    getter = _core.opaque_getter(original.__get__)
    _core.replace_type_attribute(torch._C.TensorBase, "data", property(getter, setter))


def _guard_python_buffers() -> None:
    """numpy.ndarray(shape, dtype, buffer) keeps the buffer's object, not its export: a bytearray
    or array.array grown afterwards freed the memory the array (and a torch.from_numpy tensor of
    it) still viewed (seventh session's red team, 2026-12-06: raw read and write through
    np.ndarray(buffer=bytearray), np.recarray(buf=...) and array.array, each passed strict; cases
    ndarray_buffer_freed*). The constructor now keeps a memoryview of the buffer for the worker's
    life (_core.hold_ndarray_buffers), so the object cannot be resized or released under it; it
    refuses a dtype of Python objects over a buffer, and an object array's buffer is not exported
    (round 2: object pointers written as bytes gave a fake bytearray over the whole address space,
    passed strict; cases object_dtype_over_bytes*, object_array_buffer_cast*). numpy's asarray and
    frombuffer keep a memoryview as their base, which the kernel could release (release() or
    `with`): a memoryview of a bytearray or array.array now keeps an export of it for the worker's
    life when released (round 2: passed strict; cases asarray_base_released*)."""
    # bytearray's assignment converts the index and the value after taking its buffer's address
    # (CPython gh-91153): an __index__ that grew the bytearray freed that buffer, and the stale
    # write into a bytearray header allocated there gave read and write of the whole address space
    # in pure Python (red team round 3, 2026-12-06, passed strict; case bytearray_index_resize*).
    # Its % formatting reads the format from the bytearray's buffer while the arguments' hooks run
    # (round 4's probe read freed memory): formatted from a copy now.
    for name, method in _core.convert_bytearray_assignment().items():
        _core.replace_type_attribute(bytearray, name, _core.instance_method(method))
    # array.array's the same way with __float__ (round 4: array('d')[i] = obj whose __float__
    # shrank the array, and insert / append, which convert twice around a resize: raw memory in
    # pure Python, passed strict; case array_float_shrink*).
    import array

    for name, method in _core.convert_array_values(array.array).items():
        _core.replace_type_attribute(array.array, name, _core.instance_method(method))
    for name in ("release", "__exit__"):
        original = memoryview.__dict__[name]
        _core.replace_type_attribute(
            memoryview, name, _core.instance_method(_core.holding_memoryview_release(original))
        )
    try:
        import numpy
    except ImportError:  # no numpy: nothing to hold
        return
    _core.hold_ndarray_buffers(numpy.ndarray)


def _hold_compared_items() -> None:
    """The interpreter's comparisons of items it holds by borrowed pointer, made to hold them:
    list comparison, OrderedDict equality, deque's index, count, remove and `in`, and
    functools.cmp_to_key's key comparison, weak proxies' comparison and itertools.groupby's next
    (_core.hold_compared_items; the last three since the third and fourth red-team rounds of
    2026-12-07: `cmp_to_key(next)` got a freed object back, 17-18x strict; a proxy's borrowed
    referent and groupby's replaced key, 17-25x strict). A
    comparison that emptied the containers and returned NotImplemented freed the other item, and
    the reflected comparison got the freed object as its `self` (read and write anywhere in pure
    Python). The static rule refuses the kernel's own
    comparison methods; the standard library's call the kernel's code too (ninth session's red
    team, 2026-12-07: ipaddress's __eq__ reading a property of the kernel's through deque.index,
    then fractions' reflected __eq__ on the freed address: passed strict at 146-170x, with the
    in-place rewrite of os.fstat it allowed; cases stdlib_compare_deque_uaf*)."""
    for owner, methods in _core.hold_compared_items():
        for name, method in methods.items():
            _core.replace_type_attribute(owner, name, _core.instance_method(method))


def _hold_sequence_items() -> None:
    """The compiled code that walks a list by borrowed pointer made to walk a tuple of its items
    (_core.hold_sequence_items: every loaded object's PySequence_Fast, and each one the
    interpreter loads from then on). numpy's array coercion asked each item of a list for its
    length while it held the list's items borrowed; a WeakValueDictionary item's __len__ ran the
    kernel's `pop`, which emptied the list and freed the items numpy went on to read (the tenth
    session's red team, 2026-12-07: a forged object, then a bytearray over the whole address
    space, 17-22x strict on the CPU judge; cases numpy_coerce_len_uaf*,
    weakvaluedict_len_mapped_get, mapped_segment_size_property, state_check_removed)."""
    _core.hold_sequence_items()


# The worker's lock of torch's __torch_function__ dispatch (_lock_torch_function_dispatch): called on
# a thread, it turns the dispatch off there if it is on.
_TORCH_FUNCTION_LOCK = None


def _lock_torch_function_dispatch() -> None:
    """torch's __torch_function__ dispatch turned off in the worker for tensor subclasses and every
    other object (torch._C's SUBCLASSES_DISABLED: torch's modes still run), on every thread
    kernel.py's code runs on: this one now, the kernel's thread in prepare, and each thread
    started during a call (the thread starts' prelude, _refuse_unaudited_reach). torch's dispatch
    keeps the arguments it collected as borrowed pointers while it calls each one's handler, so a
    handler of the kernel's (a subclass's method, an instance attribute on a plain object, a
    __getattr__ answering the name, a table a library class's hook reads) could free one and
    have torch read a forged object in its place: raw memory, the root of the eleventh
    session's second and third red teams (137-147x and 20-33x strict at their steps). Off, torch
    looks no hook up on an argument at all, so no code runs inside its walk of a list of tensors
    either. What turns it back on is refused (torch._C's switch, _EnableTorchFunction, in
    _UNAUDITED_REACH), and leaving a DisableTorchFunction(Subclass) context locks it again (an
    instance never entered restores "on"). Neither the judge nor the DSLs need the dispatch; the
    static rules refuse a kernel's __torch_function__, so no honest kernel loses one (a tensor
    subclass's results are then plain tensors)."""
    global _TORCH_FUNCTION_LOCK
    C = torch._C
    switch = C._set_torch_function_state  # type: ignore[attr-defined]  # not in torch's stubs
    off = C._TorchFunctionState.SUBCLASSES_DISABLED  # type: ignore[attr-defined]
    lock = _core.state_lock(C._is_torch_function_enabled, switch, off)
    lock()
    for cls in (C.DisableTorchFunction, C.DisableTorchFunctionSubclass):
        exit_ = cls.__dict__["__exit__"]
        _core.replace_type_attribute(cls, "__exit__", _core.instance_method(_core.then_calling(exit_, lock)))
    _TORCH_FUNCTION_LOCK = lock


def _refuse_symbolic_scalars() -> None:
    """torch.SymInt, SymFloat and SymBool given a `node` that refuses, read or written: torch's
    C++ walks a list of sizes with PyList_GET_ITEM and the length it read first, and converting a
    symbolic item reads its `node` and calls the node's Python methods (is_int, guard_int) in the
    middle of the walk. A node of the kernel's that shortened the list made Tensor.view read past
    the list's end (eleventh session: the slots there read as whatever they held; with the heap
    arranged, an object of the kernel's making). A property on the class: however an instance is
    made (its class called, object.__new__), its own dictionary cannot shadow it. torch makes
    these only while it traces (torch.compile, refused); no honest kernel needs one (static:
    kNoCompile)."""
    for cls in (torch.SymInt, torch.SymFloat, torch.SymBool):
        what = f"torch.{cls.__name__}.node (a symbolic scalar's node, called by torch mid-walk)"
        refusal = _core.refusing_function("runtime.native_code", what)
        cls.node = property(refusal, refusal, refusal)


def _refuse_module_dunder_members() -> None:
    """torch.nn.Module's __getattr__ made to refuse a submodule, parameter or buffer registered
    under a dunder name (the kernel's `add_module` or ModuleDict key built at run time): torch
    looks `__torch_function__` up on each argument of its functions, Module.__getattr__ answered
    with a module of the kernel's registered under that name, and its forward ran as a handler
    inside torch's dispatch, which holds the other arguments borrowed: it freed one, and the
    forged object in its place gave raw memory (eleventh session's third red team, strict, then
    20-33x with the worker's state check given a class of the kernel's). Names that are not
    dunders answer as before."""
    module = torch.nn.Module
    original = module.__dict__["__getattr__"]
    what = "a torch.nn.Module member under a dunder name (torch would call it as one of its hooks)"
    refusing = _core.dunder_refusing_getattr(original, "runtime.native_code", what)
    module.__getattr__ = _core.instance_method(refusing)  # type: ignore[method-assign]


def _pin_dlpack_exports() -> None:
    """torch's DLPack exporters replaced by ones that export a tensor of their own over the
    source's storage, left unresizable on the CPU (_core.pinning_dlpack_export): a DLPack alias
    (torch.from_dlpack, numpy.from_dlpack of a tensor) kept the source object alive, not its
    bytes, and set_, .data or an out= op growing the source freed them under the alias (red team
    rounds 20-23, 2026-12-06: raw memory, 2.8-5.3x strict)."""
    originals = {name: getattr(torch._C, name, None) for name in ("_to_dlpack", "_to_dlpack_versioned")}
    for owner, name, original_name in (
        (torch._C, "_to_dlpack", "_to_dlpack"),
        (torch._C, "_to_dlpack_versioned", "_to_dlpack_versioned"),
        (torch.utils.dlpack, "to_dlpack", "_to_dlpack"),
        (torch, "to_dlpack", "_to_dlpack"),
    ):
        original = originals[original_name]
        if original is not None and getattr(owner, name, None) is original:
            setattr(owner, name, _core.pinning_dlpack_export(original))
    # And torch's C exchange API (tvm_ffi's from_dlpack and callbacks take tensors through it,
    # without Python): its owning export pinned the same way, its non-owning one (a consumer's
    # call, for the call only) torch's own (round 23: 5x strict through tvm_ffi.from_dlpack).
    for name in ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"):
        api = vars(torch.Tensor).get(name)
        if api is not None:
            setattr(torch.Tensor, name, _core.pinning_dlpack_exchange_api(api))


def _entry_copies(owner: str) -> list:
    """The types that hold copies of `owner`'s dictionary entries (torch's legacy tensor types
    copy TensorBase's and torch.Tensor's)."""
    return sorted(torch._tensor_classes, key=str) if owner in ("torch._C.TensorBase", "torch.Tensor") else []


def _one_cpu() -> None:
    """The CPU judge's worker on one CPU, every thread of it (and so every thread it starts, a
    BLAS or OpenMP pool included): the eager baseline runs on one thread, so the kernel gets one
    CPU's worth too. The CPU it is on now (concurrent evaluations spread as the scheduler put
    them), or the first it may use."""
    allowed = sorted(os.sched_getaffinity(0))
    try:
        with open("/proc/self/stat") as f:
            current = int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        current = allowed[0]
    pin_every_thread(current if current in allowed else allowed[0])


def _preload_nvrtc() -> None:
    """TVM compiles CUDA with NVRTC, which cuda-python loads on first use (a dlopen from its
    own code): loaded here, before the runtime audit, so that it is the harness's load."""
    try:
        from cuda.bindings import nvrtc

        nvrtc.nvrtcVersion()
    except Exception:
        pass


def preimport(dsl: str) -> None:
    """What prepare imports for the DSL and torch's lazy features, imported ahead by a warm host
    (none of it touches CUDA), so that a worker forked from it inherits the modules: torch's
    compiler stack alone took some 2 s of every worker's start (the CPU judge, 2026-12-02)."""
    for name in (*_TORCH_LAZY_IMPORTS, *_DSL_LAZY_IMPORTS.get(dsl, ())):
        _try_import(name)


def _refresh_import_caches() -> None:
    """The import system's directory caches rebuilt in this process's filesystem view, before
    the audit: a warm host's imports (preimport) filled them in its own view, where each
    directory's mtime differs, so kernel.py's first lookup (a missing module, say) re-listed
    sys.path's folders and the audit refused it (`os.listdir reads /work/main`)."""
    importlib.invalidate_caches()
    importlib.util.find_spec("_mkb_no_such_module")  # every path entry listed once, here


def _try_import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:
        pass


def _scrub_modules(dsl: str) -> None:
    """Before kernel.py runs: the judge's modules and the host's __main__ leave sys.modules (an
    import of them is then a fresh one, which the runtime audit refuses), and so does the other
    DSL, should it be there."""
    other = {"cutedsl": "tvm", "tirx": "cutlass"}.get(dsl)
    for name in list(sys.modules):
        root = name.split(".", 1)[0]
        if root == "metakernelbench" or (other is not None and root == other):
            del sys.modules[name]
    sys.modules["__main__"] = types.ModuleType("__main__")


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
        view = options["view"]
        sandbox = _core.enter_sandbox(
            keep_fds=[channel_fd],
            address_space_bytes=options.get("address_space_bytes", 0),
            cpu_seconds=options.get("cpu_seconds", 0),
            isolate_network=options.get("isolate_network", True),
            view_root=view["root"],
            read_only_paths=view["read_only"],
            writable_paths=view["writable"],
            hidden_paths=view["hidden"],
            device_paths=view["devices"],
            writable_bytes=options.get("workspace_bytes", -1),
            uid=options.get("uid", 65534),
            gid=options.get("uid", 65534),
        )
        # From here on this is the worker: PID 1 of its namespace, not root.
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        warnings.filterwarnings("ignore", message=".*deterministic.*")
        work = options["work_dir"]
        os.environ["HOME"] = os.environ["TMPDIR"] = work
        os.chdir(work)
        channel = _core.Channel(channel_fd)
        channel.accept_key(60.0, "W", "H")
        Worker(channel, options["device"], sandbox, options).serve()
    except BaseException as error:
        code = 70
        try:
            sys.stderr.write("the worker stopped: " + format_error(error, options.get("kernel_path", "")))
            sys.stderr.flush()
        except Exception:
            pass
    finally:
        os._exit(code)
