"""The trusted judge host: runs one evaluation (SPEC §3) of a kernel.py on a problem.

It forks the sandboxed worker before touching CUDA or drawing seeds, then for every draw:
draws a secret seed, builds the inputs, runs the reference twice (original dtypes and the
float64 anchor) under strict numerics, hands the worker a private copy of the inputs, and has
the C++ core compare what comes back. Timing interleaves the kernel and the eager baseline in
the worker on the same fresh inputs and re-checks outputs on secretly chosen timing draws.

Run as a program by mkb::Judge (`python -m metakernelbench.judge.host --reply-fd N`, an
EvaluationRequest on stdin, the Verdict written to fd N), or in-process with evaluate_request().
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import socket
import sys
import tempfile
import time

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # is_available() without initialising CUDA

import torch  # noqa: E402

from .. import _core, toolchains  # noqa: E402
from ..suite import correctness_reference_of  # noqa: E402
from . import values  # noqa: E402

# No kernel computes faster than this (FLOP/s): above every tensor-core rate of current GPUs,
# so that the physical floor only ever rejects the impossible.
PEAK_FLOPS_CEILING = 1e16


class WorkerLost(Exception):
    """The worker died or stopped answering."""


def _cuda_visible() -> bool:
    try:
        return torch.cuda.is_available()
    except Exception:
        return False


class StrictNumerics:
    """Reference runs: TF32 off, reduced-precision reductions off, float32 matmul 'highest'."""

    def __enter__(self):
        m = torch.backends.cuda.matmul
        self.saved = (m.allow_tf32, torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision(),
                      m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction)
        m.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        m.allow_fp16_reduced_precision_reduction = False
        m.allow_bf16_reduced_precision_reduction = False
        self.grad = torch.is_grad_enabled()
        return self

    def __exit__(self, *exc):
        m = torch.backends.cuda.matmul
        m.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved[0], self.saved[1]
        torch.set_float32_matmul_precision(self.saved[2])
        m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = self.saved[3:]
        torch.set_grad_enabled(self.grad)
        return False


class Session:
    """The host's side of one worker: requests, deadlines, and what counts as losing it."""

    def __init__(self, channel, supervisor, transport, call_timeout_s: float):
        self.channel = channel
        self.supervisor = supervisor
        self.transport = transport
        self.call_timeout_s = call_timeout_s
        self._next_id = 1
        self._held = None

    def request(self, op: str, inputs=(), timeout_s: float | None = None, **fields):
        handles, fds, holder = self.transport.export(list(inputs)) if inputs else ([], [], None)
        request_id = self._next_id
        self._next_id += 1
        message = {"op": op, "id": request_id, "inputs": handles, **fields}
        try:
            # The descriptors stay owned by `holder` (the shared segment); the worker gets copies.
            self.channel.send(_core.message("WorkerRequest", message).serialize(), fds)
        except _core.UnavailableError as gone:
            raise WorkerLost("the worker closed its channel") from gone
        return self.wait(request_id, timeout_s or self.call_timeout_s), holder

    def wait(self, request_id: int, timeout_s: float):
        try:
            data, fds = self.channel.receive(timeout_s)
        except _core.DeadlineExceededError:
            self.supervisor.kill(timed_out=True)
            raise WorkerLost(f"no answer within {timeout_s:g} s") from None
        except _core.UnavailableError:
            raise WorkerLost("the worker died") from None
        try:
            reply = _core.parse_message("WorkerReply", data)
        except _core.Error:
            self.supervisor.kill()
            raise WorkerLost("the worker sent a malformed message") from None
        if reply.id != request_id:
            self.supervisor.kill()
            raise WorkerLost(f"the worker answered request {reply.id}, not {request_id}") from None
        return reply, fds


def _fork_worker(options: dict):
    """Forks the worker (this process must not have initialised CUDA yet)."""
    host_end, worker_end = _core.Channel.pair()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(out_r)
        os.close(err_r)
        os.close(host_end.detach())
        fd = worker_end.detach()
        os.set_inheritable(fd, True)
        from . import worker

        worker.run(fd, out_w, err_w, options)
    os.close(out_w)
    os.close(err_w)
    del worker_end
    return pid, host_end, out_r, err_r


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
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["gpu_name"] = props.name
        env["gpu_arch"] = f"sm_{props.major}{props.minor}"
        try:
            env["driver_version"] = _core.cuda.NvmlSampler(torch.cuda.current_device()).driver_version
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
        self.workload = request.workload or ("full" if self.device == "cuda" else "small")
        self.builder = _core.VerdictBuilder(self.problem, request.dsl, self.workload, self.config)
        tolerance = self.problem.tolerance
        self.allowance_factor = tolerance.allowance_factor if tolerance is not None else 0.0
        self.eps_scale = tolerance.eps_scale if tolerance is not None else 0.0
        self.in_place = _in_place_flags(self.problem)
        self.times: dict[str, float] = {}
        self.module = None
        self.versions = []
        self.policy = None
        self.clocks = None
        self.bandwidth = 0.0

    # --- the problem's code, in this (trusted) process ------------------------------------------
    def _load_reference(self):
        import importlib.util

        path = os.path.join(self.request.problem_dir, "reference.py")
        spec = importlib.util.spec_from_file_location("_mkb_host_reference", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.module = module

    def make(self, seed: int) -> list:
        torch.manual_seed(seed)
        with torch.no_grad():
            inputs = list(self.module.make_inputs(workload=self.workload, device=self.device))
        if self.device == "cuda":
            torch.cuda.synchronize()
        return inputs

    def references(self, inputs: list):
        # The expected outputs and anchors come from correctness_reference where the problem
        # defines one (the worker's eager baseline times the published `reference`).
        reference = correctness_reference_of(self.module)
        with StrictNumerics():
            expected = reference(*[values.clone(x) for x in inputs])
            anchor = reference(*values.upcast(inputs))
        if self.device == "cuda":
            torch.cuda.synchronize()
        return expected, anchor

    # --- the run -------------------------------------------------------------------------------
    def run(self):
        b = self.builder
        start = time.perf_counter()
        source = self.request.kernel_source
        if not b.check_submission(source):
            return b.finish()
        try:
            compile(source, self.request.kernel_name or "kernel.py", "exec", dont_inherit=True)
        except SyntaxError as error:
            b.set_unparseable(error.lineno or 0, error.msg or "syntax error")
            return b.finish()
        except (ValueError, TypeError) as error:
            b.set_unparseable(0, str(error))
            return b.finish()
        policy = self.config.policy
        require_dsl = policy.require_dsl if policy is not None and policy.has("require_dsl") else self.device == "cuda"
        self.policy = policy
        b.add_findings(_core.static_audit(source, self.request.dsl, require_dsl, policy))
        if b.has_violation():
            return b.finish()

        workdir = tempfile.mkdtemp(prefix="mkb-eval-")
        os.chmod(workdir, 0o700)
        kernel_path = os.path.join(workdir, "kernel.py")
        with open(kernel_path, "w") as f:
            f.write(source)
        options = {
            "device": self.device,
            "workdir": workdir,
            "kernel_path": kernel_path,
            # The variant's DSL toolchain (SPEC §2): the configured site directories, else the
            # one `mkb dsl install` made for this DSL.
            "dsl_site_dirs": list(self.config.dsl_site_dirs) or toolchains.site_dirs(self.request.dsl),
            "cpu_seconds": int(self.config.cpu_seconds_limit),
            "address_space_bytes": self.config.memory_limit_bytes if self.device == "cpu" else 0,
            "max_processes": 0,
            # MKB_WORKER_NETNS=0 skips the private network namespace (for environments where
            # namespaces are unavailable; the runtime audit still blocks sockets).
            "isolate_network": os.environ.get("MKB_WORKER_NETNS", "1") != "0",
            "drop_privileges": self.config.drop_privileges,
        }
        pid, channel, out_r, err_r = _fork_worker(options)
        supervisor = _core.ProcessSupervisor(pid, out_r, err_r, self.config.memory_limit_bytes, self.config.tail_bytes)
        _core.protect_host()
        transport = values.CudaTransport() if self.device == "cuda" else values.CpuTransport()
        session = Session(channel, supervisor, transport, self.config.call_timeout_s)
        phase, index = "startup", 0
        try:
            self._load_reference()
            if self.device == "cuda":
                torch.cuda.init()
            reply, _ = session.wait(0, self.config.import_timeout_s)
            b.add_findings(list(reply.findings))
            self.times["startup_s"] = time.perf_counter() - start
            phase = "import"
            t = time.perf_counter()
            (reply, _), _ = session.request("load", kernel_path=kernel_path, problem_dir=self.request.problem_dir,
                                            dsl=self.request.dsl, timeout_s=self.config.import_timeout_s)
            self.times["import_s"] = time.perf_counter() - t
            self.versions = list(reply.versions)
            b.add_findings(list(reply.findings))
            b.set_import(reply.ok, reply.error_type, reply.error)
            if b.can_continue():
                phase = "correctness"
                t = time.perf_counter()
                seeds = _core.draw_seeds(self.config.correctness_draws + self.config.warmup_calls
                                         + self.config.timing_draws)
                for index in range(self.config.correctness_draws):
                    self._draw("correctness", index, seeds[index], session)
                    if not b.can_continue():
                        break
                self.times["correctness_s"] = time.perf_counter() - t
                if b.can_continue() and b.all_draws_correct() and not self.config.skip_timing:
                    phase = "timing"
                    t = time.perf_counter()
                    self._timing(seeds[self.config.correctness_draws:], session)
                    self.times["timing_s"] = time.perf_counter() - t
            phase = "shutdown"
            session.request("shutdown", timeout_s=30)
        except WorkerLost as lost:
            b.record_worker_lost(phase if phase != "shutdown" else "timing", index, str(lost))
        finally:
            outcome = supervisor.finish(10.0)
            b.set_process_outcome(outcome)
            if isinstance(transport, values.CudaTransport):
                transport.close()
            shutil.rmtree(workdir, ignore_errors=True)
        env = _environment(self.device, self.versions)
        if self.clocks is not None:
            env["sm_clock_mhz"] = self.clocks.sm_clock_mhz
        b.set_environment(env)
        self.times["total_s"] = time.perf_counter() - start
        b.set_phase_times(self.times)
        return b.finish()

    def _draw(self, phase: str, index: int, seed: int, session):
        b = self.builder
        inputs = self.make(seed)
        expected, anchor = self.references(inputs)
        pristine = [values.clone(x) for x in inputs]
        t = time.perf_counter()
        reply, outputs, segment_inputs = self._worker_call(session, "call", inputs, want_outputs=True, poison=True)
        seconds = time.perf_counter() - t
        if reply.judge_error:
            b.record_infra_error(reply.judge_error)
            return
        if not reply.ok:
            b.record_call_error(phase, index, reply.error_type or "Exception", reply.error)
            return
        self._judge_outputs(phase, index, expected, anchor, reply, outputs, pristine, segment_inputs, seconds)

    def _worker_view_of_inputs(self, holder, copies):
        """The inputs as the worker left them: on CUDA the copies it mapped; on the CPU the
        shared segment the copies were packed into."""
        if self.device == "cuda":
            return copies
        return values.CpuTransport().views(holder, copies)

    def _judge_outputs(self, phase, index, expected, anchor, reply, outputs, pristine, worker_inputs, seconds):
        b = self.builder
        expected_node = values.value_node(expected)
        mismatch = _core.compare_structure(expected_node, reply.output)
        if mismatch is not None:
            b.record_mismatch(phase, index, mismatch.to_dict(), seconds)
            return
        for k, (before, after) in enumerate(zip(pristine, worker_inputs)):
            if self.in_place[k] if k < len(self.in_place) else False:
                continue
            if not isinstance(before, torch.Tensor):
                continue
            name = values.byte_dtype_name(before)
            if not _core.same_contents(values.capsule(after), name, values.capsule(before), name):
                spec = self.problem.inputs[k].name if k < len(self.problem.inputs) else str(k)
                b.record_mismatch(phase, index, {
                    "output_path": f"inputs[{k}]", "kind": "input_modified",
                    "message": f"inputs[{k}] ({spec}): solve modified an input it may not modify"}, seconds)
                return
        if reply.side_stream_race:
            b.record_mismatch(phase, index, {
                "output_path": "out", "kind": "value",
                "message": "outputs were not ready on the current stream when solve returned "
                           "(work on another stream was not joined before returning)"}, seconds)
            return
        tensors, _keep = outputs if outputs else ([], None)
        exp_leaves, anc_leaves = values.leaves(expected), values.leaves(anchor)
        exact = _exact_flags(self.problem, len(exp_leaves))
        paths = _leaf_paths(expected)
        leaves = [values.comparison_leaf(paths[i], out, e, a, exact[i])
                  for i, (out, e, a) in enumerate(zip(tensors, exp_leaves, anc_leaves))]
        b.judge_tensors(phase, index, leaves, True, seconds, self.allowance_factor, self.eps_scale)

    def _timing(self, seeds, session):
        """Interleaved timing of the kernel and the eager baseline on the same fresh inputs.

        The first timing_draws samples give the parity metric (and hold the secret re-check
        draws); on a GPU every sample is also traced (CUPTI spans), and sampling goes on until
        both span medians are known to target_relative_ci, within max_timing_draws and
        timing_budget_s."""
        b, config = self.builder, self.config
        warmups, draws = config.warmup_calls, config.timing_draws
        traced = self.device == "cuda" and not config.disable_tracing
        max_draws = max(draws, config.max_timing_draws or 200) if traced else draws
        target = config.target_relative_ci or 0.01
        budget_s = config.timing_budget_s or 60.0
        rechecks = set(random.SystemRandom().sample(range(draws), min(config.recheck_draws, draws)))
        seeds = list(seeds)
        parity = {"time_kernel": [], "time_eager": []}
        spans = {"time_kernel": [], "time_eager": []}
        throttled = {"time_kernel": [], "time_eager": []}
        rtt = {"time_kernel": [], "time_eager": []}
        kernel_sums, kernel_traces = [], []
        method = "cupti_span"
        started = time.perf_counter()
        n = 0
        while True:
            sample = n - warmups
            if sample >= draws and (not traced or self._converged(spans, target) or sample >= max_draws
                                    or time.perf_counter() - started > budget_s):
                break
            if n >= len(seeds):
                seeds += _core.draw_seeds(64)
            inputs = self.make(seeds[n])
            order = ("time_kernel", "time_eager") if n % 2 == 0 else ("time_eager", "time_kernel")
            for op in order:
                recheck = op == "time_kernel" and sample in rechecks
                if recheck:
                    expected, anchor = self.references(inputs)
                    pristine = [values.clone(x) for x in inputs]
                t = time.perf_counter()
                reply, outputs, worker_inputs = self._worker_call(session, op, inputs, want_outputs=recheck,
                                                                  trace=traced)
                round_trip = time.perf_counter() - t
                if reply.judge_error:
                    b.record_infra_error(reply.judge_error)
                    return
                if not reply.ok:
                    if op == "time_eager":
                        b.record_infra_error(f"the eager baseline failed: {reply.error_type}: {reply.error[-300:]}")
                        return
                    b.record_call_error("timing_recheck" if recheck else "timing", max(sample, 0),
                                        reply.error_type or "Exception", reply.error)
                    return
                if recheck:
                    self._judge_outputs("timing_recheck", sample, expected, anchor, reply, outputs, pristine,
                                        worker_inputs, reply.seconds)
                if sample < 0:
                    continue
                trace = reply.trace
                if sample < draws:
                    parity[op].append(reply.seconds * 1e3)
                    rtt[op].append(round_trip - reply.seconds)
                if trace is not None:
                    method = "cupti_span" if trace.method == "cupti" else "cuda_events"
                    spans[op].append(trace.span_ms)
                    throttled[op].append(bool(trace.throttled))
                    if op == "time_kernel":
                        kernel_sums.append(trace.kernel_sum_ms)
                        kernel_traces.append(trace)
                        if len(kernel_traces) == 1:
                            b.set_kernel_names(_core.kernel_names(trace))
                            self.clocks = trace
            if not b.can_continue():
                return
            n += 1
        pmethod = "parity_e2e" if self.device == "cuda" else "host_clock"
        b.set_parity_timing(parity["time_kernel"], parity["time_eager"], pmethod,
                            throttled["time_kernel"][:draws], throttled["time_eager"][:draws])
        if traced:
            b.set_span_timing(spans["time_kernel"], spans["time_eager"], kernel_sums, method,
                              throttled["time_kernel"], throttled["time_eager"])
            floor = self._physical_floor()
            findings = _core.audit_kernel_calls(kernel_traces, True, config.library_share_limit, floor)
            b.add_findings(_core.apply_audit_policy(findings, self.policy))
        b.add_findings(self._timing_consistency(rtt, parity["time_kernel"]))

    @staticmethod
    def _converged(spans, target: float) -> bool:
        for samples in spans.values():
            if len(samples) < 10:
                return False
            s = _core.summarize_samples(samples, "")
            if s.median_ms <= 0 or (s.ci95_high_ms - s.ci95_low_ms) / 2 > target * s.median_ms:
                return False
        return True

    def _physical_floor(self) -> float:
        """The problem's physical floor on this GPU, from ceilings an honest kernel cannot beat:
        the measured copy bandwidth with a 25% margin, and 10 PFLOP/s."""
        try:
            bandwidth = _core.cuda.copy_bandwidth(torch.cuda.current_device())
        except _core.Error:
            return 0.0
        self.bandwidth = bandwidth
        return _core.physical_floor_ms(self._workload_message().roofline, 1.25 * bandwidth, PEAK_FLOPS_CEILING)

    def _workload_message(self):
        for w in self.problem.workloads:
            if w.name == self.workload:
                return w
        raise _core.NotFoundError(f"no workload {self.workload}")

    @staticmethod
    def _timing_consistency(rtt, kernel_ms) -> list[dict]:
        """The host's own clock against the worker's reports. For each timing draw the kernel and
        the eager baseline run back to back on the same inputs; the protocol's overhead (host
        round trip minus reported time) of the two is then the same up to noise, and its sign
        flips at random. A kernel that under-reports its time makes its own overhead larger on
        nearly every draw: flagged when it is larger on at least 90% of the draws and by a median
        of more than max(1 ms, a quarter of the kernel's time). (Noise from a loaded machine
        leaves the sign at random, so it does not trip this.)"""
        pairs = [k - e for k, e in zip(rtt["time_kernel"], rtt["time_eager"])]
        if len(pairs) < 10:
            return []
        larger = sum(d > 0 for d in pairs) / len(pairs)
        median_gap = sorted(pairs)[len(pairs) // 2]
        typical_s = sorted(kernel_ms)[len(kernel_ms) // 2] * 1e-3
        if larger >= 0.9 and median_gap > max(0.001, 0.25 * typical_s):
            return [{"code": "timing.inconsistent", "severity": "violation", "phase": "timing",
                     "message": f"the worker's reported kernel times are {median_gap * 1e3:.2f} ms per call below "
                                "what the host's clock saw (the eager baseline's reports agree with it)",
                     "evidence": f"kernel overhead above eager's on {100 * larger:.0f}% of {len(pairs)} draws"}]
        return []

    def _worker_call(self, session, op: str, inputs: list, want_outputs: bool, **fields):
        """One request on private copies of `inputs`. Returns the reply, the outputs it returned
        (opened only when wanted: correctness draws and re-checks), and the inputs as the worker
        left them."""
        copies = [values.clone(x) for x in inputs]
        if self.device == "cuda":
            torch.cuda.synchronize()
        (reply, fds), holder = session.request(op, copies, **fields)
        self.builder.add_findings(list(reply.findings))
        outputs = None
        if want_outputs and reply.ok and reply.output is not None:
            handles = [node.tensor for node in _leaf_nodes(reply.output) if _has_data(node)]
            try:
                outputs = session.transport.open(handles, list(fds), writable=False)
            except (_core.Error, KeyError, RuntimeError) as error:
                session.supervisor.kill()
                raise WorkerLost(f"the worker returned an unreadable tensor: {error}") from None
        else:
            for fd in fds:
                os.close(fd)
        return reply, outputs, self._worker_view_of_inputs(holder, copies)


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
    parser.add_argument("--reply-fd", type=int, required=True)
    args = parser.parse_args(argv)
    data = sys.stdin.buffer.read()
    if not data:
        return 0  # a warm host whose judge went away without a request
    request = _core.parse_message("EvaluationRequest", data)
    verdict = evaluate_request(request)
    payload = verdict.serialize()
    with os.fdopen(args.reply_fd, "wb") as reply:
        reply.write(payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
