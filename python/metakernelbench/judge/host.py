"""The trusted judge host: runs one evaluation (SPEC §3) of a kernel.py on a problem.

It forks the sandboxed worker before it touches CUDA, draws a seed or loads the reference, then
carries out the C++ core's MeasurementPlan: it times the eager baseline itself while the worker
has not imported kernel.py yet, calibrates the channel, has the worker import the kernel, draws
the correctness inputs (with a knockout draw among them on a GPU), runs the parity pass (the
published method) and on a GPU the strict pass, and re-checks the outputs of timing draws chosen
only once every draw's outputs were captured. Comparisons, audits and the verdict are the C++
core's.

Run as a program by mkb::Judge (`python -m metakernelbench.judge.host --reply-fd N [--dsl D]`:
a framed EvaluationRequest, then a framed key, on stdin; the framed, HMAC-tagged Verdict on fd
N), forked with the same pipes from a host template (`--template-fd N`, judge/template.py), or
in-process with evaluate_request().
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import sys
import tempfile
import time

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # is_available() without initialising CUDA

import torch  # noqa: E402

from .. import _core, toolchains  # noqa: E402
from ..kernel_imports import third_party_roots  # noqa: E402
from ..module_aliases import module_aliases  # noqa: E402
from ..suite import correctness_reference_of  # noqa: E402
from . import values  # noqa: E402
from .reference_numerics import StrictNumerics  # noqa: E402
from .session import ChannelForged, Session, WorkerLost, read_frame, write_frame  # noqa: E402
from .worker_setup import audit_config, fork_worker, pin_every_thread, realpaths, worker_view  # noqa: E402


def _cuda_visible() -> bool:
    try:
        return torch.cuda.is_available()
    except Exception:
        return False


def _in_place_flags(problem) -> list[bool]:
    return [spec.in_place for spec in problem.inputs]


def _exact_flags(problem, count: int) -> list[bool]:
    specs = list(problem.outputs)
    return [specs[i].exact if i < len(specs) else False for i in range(count)]


def _environment(device: str, versions) -> dict:
    env = {
        "hostname": socket.gethostname(),
        "device": device,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "cuda_runtime_version": torch.version.cuda or "",
        "os": platform.platform(),
        "cpu_model": _cpu_model(),
        "dsl_versions": [{"name": v.name, "version": v.version} for v in versions if v.name != "torch"],
    }
    # The judge's GPU slot for this evaluation (mkb::Judge sets it when it spawns the host).
    env["visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["gpu_name"] = props.name
        env["gpu_arch"] = f"sm_{props.major}{props.minor}"
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            env["gpu_uuid"] = f"GPU-{uuid}"
        try:
            nvml = _core.cuda.NvmlSampler(torch.cuda.current_device())
            env["driver_version"] = nvml.driver_version
            if nvml.uuid:
                env["gpu_uuid"] = nvml.uuid
            if nvml.index >= 0:
                env["gpu_index"] = nvml.index
        except Exception:
            env["driver_version"] = f"CUDA {_core.cuda.driver_version()}"
    return env


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# The worker's threads whose CPU time the host reads around each call (Session.last_cpu_ms).
CPU_PARTS = ("kernel_thread", "main_thread", "other_threads")


def _append_cpu(into: dict, cpu_ms: dict, report_ms: float) -> None:
    """One call's CPU times (ms) onto `into`'s lists, the kernel thread's less the call's report."""
    for part in CPU_PARTS:
        into[part].append(cpu_ms[part] - (report_ms if part == "kernel_thread" else 0.0))


class Evaluation:
    def __init__(self, request):
        self.request = request
        self.problem = _core.load_problem(request.problem_dir)
        self.config = _core.judge_config(request.config)
        if request.device == "cuda":
            self.device = "cuda"
        elif request.device == "cpu":
            self.device = "cpu"
        else:
            self.device = "cuda" if _cuda_visible() else "cpu"
        self.workload = request.workload or _core.default_workload(self.device == "cuda")
        if self.device == "cpu":
            torch.set_num_threads(1)  # as the worker does (see worker.Worker)
        self.builder = _core.VerdictBuilder(self.problem, request.dsl, self.workload, self.config)
        tolerance = self.problem.tolerance
        self.allowance_factor = tolerance.allowance_factor if tolerance is not None else 0.0
        self.eps_scale = tolerance.eps_scale if tolerance is not None else 0.0
        self.in_place = _in_place_flags(self.problem)
        self.times: dict = {}
        self.steps: dict[str, float] = {}  # PhaseTimes.steps: the finer split of the phases
        self.module = None
        self.versions = []
        self.policy = None
        self.require_dsl = True  # the DSL rule (the policy's require_dsl, else on CUDA only)
        self.clocks = None
        self.timed_structure = None  # the outputs' structure, from the calibration's reference
        self.plan = None
        self.gpu_tools = None
        self._call_clock = None  # PublishedClock.time (CUDA): the worker's clock, for the baseline too
        self.verdict_key = b""
        self._read_key = None

    # --- the problem's code, in this (trusted) process ------------------------------------------
    def _load_reference(self):
        import importlib.util

        path = os.path.join(self.request.problem_dir, "reference.py")
        spec = importlib.util.spec_from_file_location("_mkb_host_reference", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.module = module

    def make(self, seed: int) -> list:
        """The inputs of one draw, as the published grader draws them (reference numerics, a
        seeded generator)."""
        with StrictNumerics(), torch.no_grad():
            torch.manual_seed(seed)
            inputs = list(self.module.make_inputs(workload=self.workload, device=self.device))
        if self.device == "cuda":
            torch.cuda.synchronize()
        return inputs

    def references(self, inputs: list):
        # The expected outputs and anchors come from correctness_reference where the problem
        # defines one (the eager baseline times the published `reference`).
        reference = correctness_reference_of(self.module)
        with StrictNumerics():
            expected = reference(*[values.clone(x) for x in inputs])
            anchor = reference(*values.upcast(inputs))
        if self.device == "cuda":
            torch.cuda.synchronize()
        return expected, anchor

    def _step(self, name: str, since: float) -> float:
        """Records the step `name` as the time since `since`; returns now."""
        now = time.perf_counter()
        self.steps[name] = self.steps.get(name, 0.0) + (now - since)
        return now

    # --- the run -------------------------------------------------------------------------------
    def _take_key(self) -> None:
        """Reads the verdict's key (once): after the worker exists, or when none will."""
        if self._read_key is not None:
            self.verdict_key = self._read_key()
            self._read_key = None

    def run(self, read_key=None):
        """The verdict. `read_key` (main's) reads the verdict's key; it is called once the worker
        exists (or when none will), never before the fork."""
        b = self.builder
        start = time.perf_counter()
        self._read_key = read_key
        source = self.request.kernel_source
        if isinstance(source, str):
            source = source.encode("utf-8", "surrogateescape")
        try:
            if not b.check_submission(source):
                return b.finish()
            text = source.decode("utf-8")
            try:
                compile(text, self.request.kernel_name or "kernel.py", "exec", dont_inherit=True)
            except SyntaxError as error:
                b.set_unparseable(error.lineno or 0, error.msg or "syntax error")
                return b.finish()
            except (ValueError, TypeError) as error:
                b.set_unparseable(0, str(error))
                return b.finish()
            except (RecursionError, MemoryError) as error:
                # Nesting deeper than Python's compiler goes (1+1+... 5000 times, `not` 10000
                # deep): the kernel's, not a host failure to be retried (red team, 2026-12-05).
                b.set_unparseable(0, f"Python cannot compile it: {type(error).__name__}: {error}")
                return b.finish()
            self.plan = _core.MeasurementPlan(self.config, self.device == "cuda")
            self.policy = self.config.policy
            self.require_dsl = self.plan.require_dsl
            b.add_findings(
                _core.static_audit(
                    text,
                    self.request.dsl,
                    self.require_dsl,
                    self.policy,
                    module_aliases=module_aliases(),
                    third_party_roots=third_party_roots(),
                )
            )
            if b.has_violation():
                return b.finish()
            self._evaluate(text, start, self.plan)
        finally:
            self._take_key()
        env = _environment(self.device, self.versions)
        if self.clocks is not None:
            env["sm_clock_mhz"] = self.clocks.sm_clock_mhz
        b.set_environment(env)
        self.times["total_s"] = time.perf_counter() - start
        b.set_phase_times({**self.times, "steps": self.steps})
        return b.finish()

    def _evaluate(self, text: str, start: float, plan: _core.MeasurementPlan) -> None:
        b = self.builder
        config = self.config
        t = self._step("startup.audit", start)
        if config.has("pin_cpu"):
            # Every thread of this process, and so of the worker it forks and of the threads
            # either starts (mkb::Judge checked the CPU).
            pin_every_thread(config.pin_cpu)
        workdir = tempfile.mkdtemp(prefix="mkb-eval-")
        os.chmod(workdir, 0o711)
        work = os.path.join(workdir, "work")
        view_root = os.path.join(workdir, "root")
        os.mkdir(work, 0o700)
        os.mkdir(view_root, 0o700)
        uid = int(config.worker_uid)
        if os.geteuid() == 0:
            os.chown(work, uid, uid)
        kernel_path = os.path.join(work, "kernel.py")
        with open(kernel_path, "w") as f:
            f.write(text)
        if os.geteuid() == 0:
            os.chown(kernel_path, uid, uid)
        dsl_site_dirs = list(config.dsl_site_dirs) or toolchains.site_dirs(self.request.dsl)
        suite_root = os.path.dirname(os.path.dirname(os.path.abspath(self.request.problem_dir)))
        hidden = [suite_root, os.path.abspath(self.request.problem_dir), *config.hidden_paths]
        view = worker_view(self.device, dsl_site_dirs, work, view_root, hidden, list(config.read_only_paths))
        options = {
            "device": self.device,
            "work_dir": work,
            "kernel_path": kernel_path,
            "view": view,
            "dsl_site_dirs": dsl_site_dirs,
            "dsl_roots": realpaths(dsl_site_dirs),
            "audit": audit_config(kernel_path, self.request.dsl, view, dsl_site_dirs, work),
            "audit_record_only": os.environ.get("MKB_AUDIT_RECORD") == "1",
            "cpu_seconds": int(config.cpu_seconds_limit),
            "address_space_bytes": config.memory_limit_bytes if self.device == "cpu" else 0,
            "isolate_network": True,
            "uid": uid,
            "workspace_bytes": int(config.workspace_bytes),
            "kernel_thread_spin_us": plan.kernel_thread_spin_us,
        }
        pid, channel, out_r, err_r = fork_worker(options)
        supervisor = _core.ProcessSupervisor(pid, out_r, err_r, config.memory_limit_bytes, config.tail_bytes)
        # The worker exists now, and its stdin is /dev/null: only this process reads the key.
        self._take_key()
        channel_key = os.urandom(32)
        channel.send(channel_key)
        channel.authenticate(channel_key, "H", "W")
        del channel_key
        _core.protect_host()
        transport: values.CudaTransport | values.CpuTransport
        if self.device == "cuda":
            transport = values.CudaTransport()
            session = Session(channel, supervisor, transport, config.call_timeout_s)
            session.inputs = values.WorkerInputBuffer(
                lambda nbytes: self._reserve_inputs(session, nbytes),
                torch.cuda.current_device() if torch.cuda.is_initialized() else 0,
            )
        else:
            transport = values.CpuTransport()
            session = Session(channel, supervisor, transport, config.call_timeout_s)
            # Each call's private copies of the inputs packed into one segment of the host's,
            # reused from call to call (the worker maps it once). The kernel may keep views of
            # it, so before the host writes the next inputs there the worker releases the last
            # call's objects (Session.release): a finaliser of the kernel's on them otherwise
            # ran with the next inputs already written and computed the answer outside the
            # clock (red team, 2026-12-06: 4.5-5.4x on problem 28; case arena_prefetch_inputs).
            session.inputs = values.CpuArena()
        session.on_findings = self.builder.add_findings
        session.deadline = start + config.total_timeout_s
        session.total_timeout_s = config.total_timeout_s
        phase, index = "startup", 0
        try:
            t = self._step("startup.fork", t)
            self._load_reference()
            t = self._step("startup.reference", t)
            if self.device == "cuda":
                torch.cuda.init()
            t = self._step("startup.cuda_init", t)
            reply, _ = session.wait(0, config.import_timeout_s)
            b.add_findings(list(reply.findings))
            t = self._step("startup.worker_ready", t)
            reply, _, _, _ = session.request(
                "prepare", dsl=self.request.dsl, timeout_s=config.import_timeout_s
            )
            self._step("startup.prepare", t)
            b.add_findings(list(reply.findings))
            if reply.judge_error or not reply.ok:
                raise WorkerLost(f"the worker could not prepare: {reply.judge_error or reply.error}")
            # The kernel's thread, named while no code of the kernel's exists: its CPU time is
            # read around every call from here on (Session.request, AcceptReportedTimes).
            try:
                supervisor.watch_thread(reply.kernel_tid)
            except _core.Error as error:  # no NSpid in this /proc: the thread's check is off
                b.add_findings(
                    [
                        {
                            "code": "judge.cpu_unwatched",
                            "severity": "warning",
                            "phase": "startup",
                            "message": f"the worker's threads cannot be found here ({error}): "
                            "its clock is held to the round trip only, not to its CPU time",
                        }
                    ]
                )
            self.times["startup_s"] = time.perf_counter() - start
            if not config.skip_timing:
                # The eager baseline, while no code of the kernel's exists anywhere yet.
                phase = "eager"
                t = time.perf_counter()
                self._eager_passes()
                self.times["eager_s"] = time.perf_counter() - t
                phase = "calibration"
                t = time.perf_counter()
                self._calibrate(session)
                self.times["calibration_s"] = time.perf_counter() - t
            phase = "import"
            t = time.perf_counter()
            reply, _, _, _ = session.request(
                "load", kernel_path=kernel_path, dsl=self.request.dsl, timeout_s=config.import_timeout_s
            )
            self.times["import_s"] = time.perf_counter() - t
            self.versions = list(reply.versions)
            b.add_findings(list(reply.findings))
            if reply.judge_error:  # kernel.py's import had begun: the worker is the kernel's now
                b.set_import(False, "WorkerError", _kernels_claim(reply.judge_error))
            else:
                b.set_import(reply.ok, reply.error_type, reply.error)
            if b.can_continue():
                phase = "correctness"
                t = time.perf_counter()
                for seed, index, knockout in self.plan.correctness_sequence:
                    drawn = time.perf_counter()
                    if knockout:
                        self._knockout_draw(seed, session)
                    else:
                        self._draw("correctness", index, seed, session)
                    if "correctness.first_call" not in self.steps:
                        self._step("correctness.first_call", drawn)  # the DSL's compile
                    if not b.can_continue():
                        break
                self.times["correctness_s"] = time.perf_counter() - t
                if b.can_continue() and b.all_draws_correct() and not config.skip_timing:
                    phase = "timing"
                    t = time.perf_counter()
                    self._kernel_passes(session)
                    self.times["timing_s"] = time.perf_counter() - t
            phase = "shutdown"
            session.request("shutdown", timeout_s=30)
        except ChannelForged as forged:
            b.add_findings(
                [
                    {
                        "code": "runtime.channel_forged",
                        "severity": "violation",
                        "phase": "timing",
                        "message": str(forged),
                    }
                ]
            )
        except WorkerLost as lost:
            if phase in ("startup", "eager", "calibration"):
                # No code of the kernel's had run yet: the judge's own failure.
                b.record_infra_error(f"the worker was lost before kernel.py was imported ({phase}): {lost}")
            else:
                b.record_worker_lost("timing" if phase == "shutdown" else phase, index, str(lost))
        except Exception as error:
            # The judge's own GPU work (a draw, a reference, a copy) out of device memory: the
            # kernel's failure or a clear infrastructure error (C++ AuditJudgeOutOfMemory decides),
            # never a host that dies on it. Any other error is the judge's own, raised.
            if not self._judge_out_of_memory(phase, error, session):
                raise
            try:
                session.request("shutdown", timeout_s=10)
            except Exception:
                pass  # the supervisor below ends the worker either way
        finally:
            outcome = supervisor.finish(10.0)
            # The worker's output names kernel.py and its workspace as the agent knows them (a
            # warning printed from the kernel's line carries its path): as the findings do.
            if workdir in outcome.stdout_tail or workdir in outcome.stderr_tail:
                named = outcome.to_dict()
                kernel = os.path.join(work, "kernel.py")
                for field in ("stdout_tail", "stderr_tail"):
                    text = named.get(field, "").replace(kernel, "kernel.py").replace(work, "<workspace>")
                    named[field] = text.replace(workdir, "<workspace>")
                outcome = named
            b.set_process_outcome(outcome)
            if isinstance(session.inputs, values.WorkerInputBuffer):
                session.inputs.close()
            if isinstance(transport, values.CudaTransport):
                transport.close()
            shutil.rmtree(workdir, ignore_errors=True)

    def _reserve_inputs(self, session, nbytes: int):
        """The worker's input buffer of at least `nbytes` (RESERVE_INPUTS), asked for before a
        request whose inputs outgrow the last one (values.WorkerInputBuffer), outside the
        request's round trip. A worker that cannot allocate it is out of device memory (the
        C++ rule decides whose failure that is); any other failure loses the worker."""
        reply, fds, _, _ = session.request("reserve_inputs", reserve_bytes=nbytes)
        for fd in fds:
            os.close(fd)
        self.builder.add_findings(list(reply.findings))
        if reply.ok and reply.input_buffer is not None:
            return reply.input_buffer
        why = reply.judge_error or reply.error or "no buffer in the reply"
        if "cudaErrorMemoryAllocation" in why:
            raise _InputBufferExhausted(why)
        session.supervisor.kill()
        raise WorkerLost(f"the worker gave no input buffer: {why}")

    def _judge_out_of_memory(self, phase: str, error: Exception, session) -> bool:
        """When `error` is the judge's GPU work running out of device memory, records what the C++
        rule makes of it (runtime.gpu_memory_exhausted, the kernel's, once kernel.py's import
        began and its process held more than the judge's footprint; else an infrastructure
        error naming the numbers) and returns True; False for any other error."""
        if self.device != "cuda" or not _out_of_memory(error):
            return False
        kernel_loaded = phase in ("import", "correctness", "timing", "shutdown")
        try:
            free, total = torch.cuda.mem_get_info()
            judge = torch.cuda.memory_reserved() + getattr(session.inputs, "nbytes", 0)
        except Exception:  # unknown: nothing is blamed on the kernel
            free = total = judge = 0
        text = f"{type(error).__name__}: {str(error)[:300]}"
        finding = _core.audit_judge_out_of_memory(
            kernel_loaded,
            "timing" if phase == "shutdown" else phase if kernel_loaded else "startup",
            float(free),
            float(total),
            float(judge),
            text,
        )
        if finding is not None:
            self.builder.add_findings([finding])
        else:
            gib = 1 << 30
            self.builder.record_infra_error(
                f"the judge ran out of GPU memory for its own work ({phase}; {free / gib:.2f} GiB "
                f"free of {total / gib:.2f} GiB, {judge / gib:.2f} GiB the judge's): {text}"
            )
        return True

    # --- correctness ---------------------------------------------------------------------------
    def _draw(self, phase: str, index: int, seed: int, session):
        b = self.builder
        inputs = self.make(seed)
        expected, anchor = self.references(inputs)
        pristine = [values.clone(x) for x in inputs]
        reply, outputs, worker_inputs, seconds = self._worker_call(
            session, "call", inputs, want_outputs=True, poison=True
        )
        if reply.judge_error:
            b.record_call_error(phase, index, "WorkerError", _kernels_claim(reply.judge_error))
            return
        self._launch_findings(reply, phase)
        if not reply.ok:
            b.record_call_error(phase, index, reply.error_type or "Exception", reply.error)
            return
        self._judge_outputs(phase, index, expected, anchor, reply, outputs, pristine, worker_inputs, seconds)

    def _knockout_draw(self, seed: int, session):
        """A correctness draw whose DSL launches the launch monitor replaces with a no-op: the
        outputs must then fail, or the DSL's result did not reach them (SPEC §2)."""
        b = self.builder
        inputs = self.make(seed)
        expected, anchor = self.references(inputs)
        pristine = [values.clone(x) for x in inputs]
        reply, outputs, worker_inputs, seconds = self._worker_call(
            session, "call", inputs, want_outputs=True, poison=True, knockout=True
        )
        if reply.judge_error:
            b.record_call_error("correctness", -1, "WorkerError", _kernels_claim(reply.judge_error))
            return
        launches = reply.launches
        if launches is None:
            return
        # The outputs judged on a builder of their own (the draw is not one of the verdict's);
        # whether passing them breaks the DSL rule is C++'s (AuditKnockout).
        probe = _core.VerdictBuilder(self.problem, self.request.dsl, self.workload, self.config)
        passed = reply.ok and self._judge_outputs(
            "correctness",
            0,
            expected,
            anchor,
            reply,
            outputs,
            pristine,
            worker_inputs,
            seconds,
            builder=probe,
        )
        finding = _core.audit_knockout(launches, passed)
        if finding is not None:
            b.add_findings([finding])

    def _launch_findings(self, reply, phase: str, require_dsl_kernel: bool = True):
        """The DSL rule and the launch policy over one call's launch counts (C++ AuditLaunches)."""
        if reply.launches is None:
            return
        findings = _core.audit_launches(
            reply.launches, phase, reply.ok, require_dsl_kernel and self.require_dsl
        )
        if findings:
            self.builder.add_findings(_core.apply_audit_policy(findings, self.policy))

    def _worker_view_of_inputs(self, holder, copies):
        """The inputs as the worker left them: on CUDA the arena's views; on the CPU the shared
        segment the copies were packed into."""
        if self.device == "cuda":
            return holder if holder is not None else copies
        return values.CpuTransport().views(holder, copies)

    def _judge_outputs(
        self, phase, index, expected, anchor, reply, outputs, pristine, worker_inputs, seconds, builder=None
    ) -> bool:
        b = builder or self.builder
        expected_node = values.value_node(expected)
        mismatch = _core.compare_structure(expected_node, reply.output)
        if mismatch is not None:
            b.record_mismatch(phase, index, mismatch.to_dict(), seconds)
            return False
        for k, (before, after) in enumerate(zip(pristine, worker_inputs)):
            if self.in_place[k] if k < len(self.in_place) else False:
                continue
            if not isinstance(before, torch.Tensor):
                continue
            name = values.byte_dtype_name(before)
            if not _core.same_contents(values.capsule(after), name, values.capsule(before), name):
                spec = self.problem.inputs[k].name if k < len(self.problem.inputs) else str(k)
                b.record_mismatch(
                    phase,
                    index,
                    {
                        "output_path": f"inputs[{k}]",
                        "kind": "input_modified",
                        "message": f"inputs[{k}] ({spec}): solve modified an input it may not modify",
                    },
                    seconds,
                )
                return False
        if reply.side_stream_race:
            b.record_mismatch(
                phase,
                index,
                {
                    "output_path": "out",
                    "kind": "value",
                    "message": "outputs were not ready on the current stream when solve returned "
                    "(work on another stream was not joined before returning)",
                },
                seconds,
            )
            return False
        tensors, _keep = outputs if outputs else ([], None)
        return self._compare(phase, index, expected, anchor, tensors, seconds, b)

    def _compare(self, phase, index, expected, anchor, tensors, seconds, builder) -> bool:
        """Compares every expected tensor leaf with the output leaf at its place in `tensors` (one
        entry per output leaf, None where the reply carried no data): an expected leaf without
        an output to compare is a mismatch naming it, never a leaf left out."""
        exp_leaves, anc_leaves = values.leaves(expected), values.leaves(anchor)
        exact = _exact_flags(self.problem, len(exp_leaves))
        paths = _leaf_paths(expected)
        missing = next((i for i in range(len(exp_leaves)) if i >= len(tensors) or tensors[i] is None), None)
        if missing is not None:
            path = paths[missing]
            builder.record_mismatch(
                phase,
                index,
                {
                    "output_path": path,
                    "kind": "structure",
                    "message": f"{path}: the worker's reply carried no data for this output "
                    "(nothing of it could be compared)",
                },
                seconds,
            )
            return False
        leaves = [
            values.comparison_leaf(paths[i], out, e, a, exact[i])
            for i, (out, e, a) in enumerate(zip(tensors, exp_leaves, anc_leaves))
        ]
        return builder.judge_tensors(
            phase, index, leaves, True, seconds, self.allowance_factor, self.eps_scale
        )

    # --- the eager baseline (in this process, before the kernel exists) -----------------------
    def _eager_passes(self):
        """The published method on the reference under the reference numerics, with the timing
        draws' seeds; then, on a GPU, the strict samples (CUPTI span, L2 flushed) of as many
        strict-pass seeds as the kernel's strict pass may use."""
        plan = self.plan
        sync = torch.cuda.synchronize if self.device == "cuda" else _no_sync
        fn = self.module.reference
        t = time.perf_counter()
        with StrictNumerics():
            for seed in plan.warmup_seeds:
                fn(*self.make(seed))
            sync()
            self.eager_parity = [self._published_call(fn, self.make(seed)) for seed in plan.timing_seeds]
        t = self._step("eager.parity", t)
        self.eager_strict = []
        if plan.strict_pass:
            tools = self._gpu_tools()
            spans: list[float] = []
            started = time.perf_counter()
            with StrictNumerics():
                while (seed := plan.next_eager_strict_seed(spans, time.perf_counter() - started)) is not None:
                    inputs = self.make(seed)
                    trace = tools.traced(lambda inputs=inputs: fn(*inputs))
                    self.eager_strict.append(trace)
                    spans.append(trace.span_ms)
            self._step("eager.strict", t)
            self.steps["eager.strict_draws"] = float(len(self.eager_strict))

    def _published_call(self, fn, inputs) -> float:
        """sync, start event, call, sync, end event, sync: milliseconds, by the PublishedClock that
        times the kernel's calls in the worker (one clock for both sides of the ratio), on inputs
        drawn right before the call; the host clock on the CPU, as in the worker."""
        if self.device == "cuda":
            if self._call_clock is None:
                self._call_clock = values.PublishedClock(torch.cuda.current_device()).time
            seconds, _ = self._call_clock(lambda: fn(*inputs))
            return seconds * 1e3
        t = time.perf_counter()
        fn(*inputs)
        return (time.perf_counter() - t) * 1e3

    def _gpu_tools(self):
        if self.gpu_tools is None:
            self.gpu_tools = HostGpuTools()
        return self.gpu_tools

    # --- the channel's cost, before kernel.py is imported --------------------------------------
    def _calibrate(self, session):
        """No-op calls shaped like a timed call (same inputs, outputs of the reference's shapes):
        the round trip minus the reported time is what the channel and the harness cost."""
        plan = self.plan
        seeds = plan.warmup_seeds
        inputs = self.make(seeds[0])
        with StrictNumerics():
            expected = self.module.reference(*[values.clone(x) for x in inputs])
        metas = [values.tensor_meta(t) for t in values.leaves(expected)]
        # Every draw of a workload returns this structure (the problems' invariant, checked for
        # all 74 on their small workloads): each timed draw's reply is held to it before any of
        # its data is copied (_kernel_passes).
        self.timed_structure = values.value_node(expected)
        del expected
        self.calibration_gaps = []
        # The worker's CPU time per no-op call (ms; the kernel thread's less the report).
        self.calibration_cpu: dict[str, list[float]] = {k: [] for k in CPU_PARTS}
        refused: list = []
        for _ in range(plan.calibration_calls):
            reply, fds, _, rtt = session.request(
                "calibrate", [values.clone(x) for x in inputs], output_metas=metas
            )
            for fd in fds:
                os.close(fd)
            if reply.judge_error or not reply.ok:
                raise WorkerLost(f"calibration failed: {reply.judge_error or reply.error}")
            self.calibration_gaps.append((rtt - reply.seconds) * 1e3)
            _append_cpu(self.calibration_cpu, session.last_cpu_ms, reply.seconds * 1e3)
            refused.extend(reply.findings)
        if refused:
            # No code of the kernel's exists yet: whatever the audit refused here is the judge's
            # own doing, shown (not blamed on the kernel, not dropped).
            self.builder.add_findings(
                [
                    {
                        "code": "judge.calibration_refused",
                        "severity": "warning",
                        "phase": "timing",
                        "message": f"the runtime audit refused {len(refused)} event(s) of the judge's own "
                        f"calibration, before kernel.py was imported (a judge fault, not the kernel's): "
                        f"{refused[0].message}",
                        "evidence": refused[0].evidence,
                    }
                ]
            )

    # --- the kernel's timing ------------------------------------------------------------------
    def _kernel_passes(self, session):
        """The parity pass (the published method, nothing else running), then on a GPU the
        strict pass on the eager pass's strict seeds; every timed draw's outputs are captured the
        same way, and the re-checked ones are chosen as they come in and judged at the end."""
        b, plan = self.builder, self.plan
        reservoir = _core.RecheckReservoir(plan.recheck_draws, plan.fastest_recheck_draws)
        slots = OutputSlots(reservoir.discard_slot + 1)
        draw_seeds = []

        def timed(seed, trace):
            inputs = self.make(seed)
            reply, outputs, _, rtt = self._worker_call(
                session, "time_kernel", inputs, want_outputs=True, trace=trace
            )
            if reply.judge_error:
                b.record_call_error(
                    "timing", len(draw_seeds), "WorkerError", _kernels_claim(reply.judge_error)
                )
                return None, rtt
            if not reply.ok:
                b.record_call_error("timing", len(draw_seeds), reply.error_type or "Exception", reply.error)
                return None, rtt
            draw = len(draw_seeds)
            mismatch = _core.compare_structure(self.timed_structure, reply.output)
            if mismatch is not None:
                # Before the capture copies anything: outputs of another structure (more leaves,
                # larger ones) would have made the host hold several times what the kernel returned
                # (red team, 2026-12-05 night: eight aliases of 128 MiB per timed call got the host
                # killed for memory, and the failure counted as the judge's).
                b.record_mismatch("timing", draw, mismatch.to_dict(), reply.seconds)
                return None, rtt
            draw_seeds.append(seed)
            # A parity draw's time (the worker's report, at most the round trip, as the verdict
            # takes it) makes it a candidate for the fastest re-checks; a strict-pass draw's
            # (flushed, traced) is not comparable with them.
            ms = -1.0 if trace else min(reply.seconds, rtt) * 1e3
            slots.capture(reservoir.offer(draw, ms), outputs[0] if outputs else [], reply)
            return reply, rtt

        t = time.perf_counter()
        for seed in plan.warmup_seeds:
            reply, _, _, _ = self._worker_call(session, "warmup", self.make(seed), want_outputs=False)
            if reply.judge_error:
                b.record_call_error("timing", 0, "WorkerError", _kernels_claim(reply.judge_error))
                return
            if not reply.ok:
                b.record_call_error("timing", 0, reply.error_type or "Exception", reply.error)
                return
        t = self._step("timing.warmup", t)
        reported, round_trips = [], []
        worker_cpu: dict[str, list[float]] = {k: [] for k in CPU_PARTS}
        for seed in plan.timing_seeds:
            reply, rtt = timed(seed, False)
            if reply is None:
                return
            reported.append(reply.seconds * 1e3)
            round_trips.append(rtt * 1e3)
            _append_cpu(worker_cpu, session.last_cpu_ms, reply.seconds * 1e3)
            self._launch_findings(reply, "timing", require_dsl_kernel=False)
        accepted = _core.accept_reported_times(
            reported,
            round_trips,
            self.calibration_gaps,
            self.config,
            self.device == "cuda",
            cpu={
                **worker_cpu,
                **{f"{k}_calibration": v for k, v in self.calibration_cpu.items()},
            },
            # The CPU judge's worker is on one CPU, its affinity sealed (worker._one_cpu).
            one_cpu=self.device == "cpu",
        )
        # What the host's clock saw around the worker's (ms): the median time of a timed call
        # outside the worker's clock, the calibrated channel cost and the bound between them
        # (measurement_plan.h), kept in the verdict so that the bound can be set from a suite's
        # worth of honest calls (docs/judge.md, residual risks).
        self.steps["timing.clock_gap_ms"] = float(accepted["median_gap_ms"])
        self.steps["timing.clock_gap_calibrated_ms"] = float(accepted["calibration_gap_ms"])
        self.steps["timing.clock_gap_allowed_ms"] = float(accepted["allowed_gap_ms"])
        # The worker's CPU time per call (ms, medians over the timed and the calibration calls;
        # the kernel thread's outside its clock) and the bound on their difference.
        for part in CPU_PARTS:
            for key, value in accepted[part].items():
                self.steps[f"timing.cpu.{part}.{key}"] = float(value)
        if accepted["finding"] is not None:
            b.add_findings([accepted["finding"]])
        if not b.can_continue():
            return
        pmethod = "parity_e2e" if self.device == "cuda" else "host_clock"
        b.set_parity_timing(accepted["accepted_ms"], self.eager_parity, pmethod, [], [])
        t = self._step("timing.parity", t)

        if plan.strict_pass:
            kernel_traces, spans, sums, throttled = [], [], [], []
            eager_spans = [t.span_ms for t in self.eager_strict]
            started = time.perf_counter()
            # The eager series' seeds first, then more while the plan says the pass is not done.
            while (
                seed := plan.next_kernel_strict_seed(spans, eager_spans, time.perf_counter() - started)
            ) is not None:
                reply, rtt = timed(seed, True)
                if reply is None:
                    return
                self._launch_findings(reply, "timing")
                trace = reply.trace
                if trace is None:
                    continue
                span, kernel_sum = _core.accept_strict_sample(trace.span_ms, trace.kernel_sum_ms, rtt * 1e3)
                spans.append(span)
                sums.append(kernel_sum)
                throttled.append(bool(trace.throttled))
                kernel_traces.append(trace)
                if len(kernel_traces) == 1:
                    b.set_kernel_names(_core.kernel_names(trace))
                    self.clocks = trace
                if not b.can_continue():
                    return
            eager = self.eager_strict
            method = "cupti_span" if kernel_traces and kernel_traces[0].method == "cupti" else "cuda_events"
            b.set_span_timing(spans, eager_spans, sums, method, throttled, [bool(t.throttled) for t in eager])
            floor = self._physical_floor()
            # The DSL rule as the policy sets it, as in the static audit and the launch monitor's
            # findings (a waived rule made every timed call of an eager kernel a violation here).
            findings = _core.audit_kernel_calls(
                kernel_traces, self.require_dsl, self.config.library_share_limit, floor
            )
            b.add_findings(_core.apply_audit_policy(findings, self.policy))
            t = self._step("timing.strict", t)
            self.steps["timing.strict_draws"] = float(len(spans))

        # The re-checks: known only now that every timed draw's outputs are in.
        for slot, draw in reservoir.kept():
            inputs = self.make(draw_seeds[draw])
            expected, anchor = self.references(inputs)
            structure, tensors = slots.taken(slot)
            mismatch = _core.compare_structure(values.value_node(expected), structure)
            if mismatch is not None:
                b.record_mismatch("timing_recheck", draw, mismatch.to_dict(), 0.0)
            else:
                self._compare("timing_recheck", draw, expected, anchor, tensors, 0.0, b)
            if not b.can_continue():
                return
        self._step("timing.rechecks", t)

    def _physical_floor(self) -> float:
        """The problem's physical floor on this GPU (C++ JudgeFloorMs) from the measured copy
        bandwidth."""
        try:
            bandwidth = _core.cuda.copy_bandwidth(torch.cuda.current_device())
        except _core.Error:
            return 0.0
        return _core.judge_floor_ms(self._workload_message().roofline, bandwidth)

    def _workload_message(self):
        for w in self.problem.workloads:
            if w.name == self.workload:
                return w
        raise _core.NotFoundError(f"no workload {self.workload}")

    def _worker_call(self, session, op: str, inputs: list, want_outputs: bool, **fields):
        """One request on private copies of `inputs`. Returns the reply, the outputs it returned
        (opened only when wanted), the inputs as the worker left them, and the round trip (s)."""
        (reply, fds, holder, rtt) = session.request(op, inputs, **fields)
        self.builder.add_findings(list(reply.findings))
        outputs = None
        if want_outputs and reply.ok and reply.output is not None:
            nodes = _leaf_nodes(reply.output)
            with_data = [k for k, node in enumerate(nodes) if _has_data(node)]
            try:
                opened, keep = session.transport.open(
                    [nodes[k].tensor for k in with_data], list(fds), writable=False
                )
            except (_core.Error, KeyError, RuntimeError) as error:
                session.supervisor.kill()
                raise WorkerLost(f"the worker returned an unreadable tensor: {error}") from None
            # One entry per tensor leaf of the reply, None where it carried no data: the
            # comparison then names that output (a leaf is never dropped).
            tensors: list = [None] * len(nodes)
            for k, t in zip(with_data, opened):
                tensors[k] = t
            outputs = (tensors, keep)
        else:
            for fd in fds:
                os.close(fd)
        worker_inputs = self._worker_view_of_inputs(holder, inputs) if holder is not None else inputs
        return reply, outputs, worker_inputs, rtt


class OutputSlots:
    """Host-side copies of timed draws' outputs, one slot per kept re-check plus a discard slot:
    every draw's outputs are copied into some slot, the same work whichever it is."""

    def __init__(self, count: int):
        self._slots = [None] * count

    def capture(self, slot: int, tensors: list, reply) -> None:
        copies = [t.clone() if t is not None else None for t in tensors]
        self._slots[slot] = (reply.output, copies)

    def taken(self, slot: int):
        return self._slots[slot]


class HostGpuTools:
    """The host's own strict-pass tools for the eager baseline: L2 flush, NVML, CUPTI."""

    def __init__(self):
        from .worker import GpuTracing

        self._tracing = GpuTracing(torch.cuda.synchronize)

    def traced(self, fn):
        self._tracing.before()
        fn()
        torch.cuda.synchronize()
        return _core.message("CallTrace", self._tracing.after())


def _kernels_claim(judge_error: str) -> str:
    """A judge fault the worker reports once kernel.py's import has begun: the worker is then the
    kernel's process (it may have replaced the worker's code), so the claim counts against the
    kernel, never as an infrastructure error that is not counted (docs/judge.md, "Blame")."""
    return (
        f"the worker reported a fault of the judge's after kernel.py was loaded ({judge_error}); "
        "the worker is the kernel's process then, so this counts against the kernel"
    )


class _InputBufferExhausted(RuntimeError):
    """The worker could not allocate the judge's input buffer: out of device memory."""


def _out_of_memory(error: BaseException) -> bool:
    """A CUDA out-of-memory error: torch's allocator's, or a cudaMalloc of the judge's own buffers
    (the worker's input buffer, CudaArena) failing with cudaErrorMemoryAllocation."""
    if isinstance(error, (torch.OutOfMemoryError, _InputBufferExhausted)):
        return True
    text = str(error)
    return "cudaErrorMemoryAllocation" in text or "CUDA out of memory" in text


def _no_sync() -> None:
    pass


def _leaf_nodes(node) -> list:
    if node.kind == "tensor":
        return [node]
    if node.kind in ("tuple", "list"):
        return [leaf for item in node.items for leaf in _leaf_nodes(item)]
    return []


def _has_data(node) -> bool:
    h = node.tensor
    return h is not None and (h.nbytes > 0 or _numel(h.meta.shape) == 0) and h.meta.plain


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _leaf_paths(value, root: str = "out") -> list[str]:
    if isinstance(value, torch.Tensor):
        return [root]
    if type(value) in (tuple, list):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, f"{root}[{i}]")]
    return []


def evaluate_request(request):
    """Runs one evaluation in this process (which must not have initialised CUDA: the worker is
    forked from it). Returns the Verdict message."""
    if not isinstance(request, _core.Message):
        request = _core.message("EvaluationRequest", request)
    return Evaluation(request).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="MetaKernelBench judge host (run by mkb::Judge).")
    parser.add_argument("--reply-fd", type=int, help="where the verdict goes (a host)")
    parser.add_argument(
        "--template-fd",
        type=int,
        help="serve as a host template on this socket: fork each evaluation's host (judge/template.py)",
    )
    parser.add_argument("--dsl", choices=("cutedsl", "tirx"), help="import this DSL before the request")
    args = parser.parse_args(argv)
    if (args.reply_fd is None) == (args.template_fd is None):
        parser.error("give one of --reply-fd (a host) or --template-fd (a host template)")
    if args.dsl:
        # A warm host: the variant's DSL is imported once, here, and the worker inherits it.
        dirs = toolchains.site_dirs(args.dsl)
        toolchains.activate(dirs)
        try:
            __import__("cutlass.cute" if args.dsl == "cutedsl" else "tvm.script")
        except Exception:
            pass  # the worker reports the DSL's import error
        from .worker import preimport

        preimport(args.dsl)
        module_aliases()  # listed once here, before any host is forked
        third_party_roots()
    if args.template_fd is not None:
        from .template import serve

        if not serve(args.template_fd):
            # The judge closed the channel (it is being destroyed, and waits for this exit):
            # every host is reaped, nothing is left for the interpreter's teardown to do.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        args.reply_fd = 3  # a forked host: its pipes are fds 0-3
    stdin = sys.stdin.buffer
    if not stdin.peek(1):
        return 0  # a warm host whose judge went away without a request
    request = _core.parse_message("EvaluationRequest", read_frame(stdin))
    evaluation = Evaluation(request)
    verdict = evaluation.run(read_key=lambda: read_frame(stdin))
    write_frame(args.reply_fd, verdict.serialize(), evaluation.verdict_key)
    # The caller waits for this process to exit before it returns the verdict, and the
    # interpreter's teardown with torch (and a CUDA context) loaded takes a second or more. The
    # evaluation cleaned up after itself (worker reaped, work folder removed): nothing is left
    # for the teardown to do.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
