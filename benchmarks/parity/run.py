"""Parity of the judge's speedup with the published harness's method, side by side on one GPU.

For every row (a shipped solution, or an eager-only kernel), on the same files and problems:
  * the published method, implemented plainly here (`published_method_run`): 10 warm-up calls,
    then for each of 50 draws the inputs drawn under the reference numerics with a seeded
    generator, then synchronise, start event, solve, synchronise, end event, synchronise; the
    median; the eager baseline the same way on the reference under the reference numerics. Run
    `--published-runs` times, each in a fresh process (one per DSL: a process holds one DSL);
  * the judge (`mkb.evaluate`), `--judge-runs` times; with `--judge-config KEY=VALUE` (JudgeConfig
    fields, repeatable) each run also with that config beside it (the rows' judge_variant);
    `--judge-pin-cpu N` is `--judge-config pin_cpu=N`.
It reports each method's median speedup with its run-to-run spread, and judge / published.
`--diagnose` adds, per row, the published process's own calls timed other ways (the judge's clock,
an L2 flush, a C++ thread, drawn first, the collector off) and in a child process woken for each
call as the judge's worker is, free, on the parent's CPU or on another.
`--diagnose-inputs` adds, per row, the published call with its inputs copied into a cudaMalloc
buffer of the process and into one of another process mapped by CUDA IPC (the judge's worker
reads its inputs from such a mapping).
`--diagnose-monitor` adds, per row, the published call after its process subscribed to CUPTI's
callbacks as the judge's worker does before its first call (the domains off, as in the judge's
parity pass, then on, then off again); each row then runs in a process of its own.
`--diagnose-worker` adds, per row, the published call on the judge's kernel thread and clock with
the worker's layers added one at a time (launch monitor, DSL entry points, runtime audit, guards,
the watch, seccomp); each row then runs in a process of its own.
With `--published-checkout DIR` (a checkout of github.com/YIGE24/MetaKernelBench), it also runs the
published grader itself, unchanged (its template/grader.py and contract.py beside the published
problem file as task.py, the solution at the /app/kernel.py it reads, its reward at
/logs/verifier), `--grader-runs` times per row whose problem is one of the checkout's .py files.

    python benchmarks/parity/run.py --out parity.json [--published-runs 5] [--judge-runs 3]
        [--problems 28 36] [--dsl cutedsl] [--judge-config kernel_thread_spin_us=2000]
        [--judge-pin-cpu 2] [--diagnose] [--eager-rows-only]
        [--published-checkout DIR [--grader-runs 1]] [--diagnose-inputs]
        [--diagnose-monitor | --diagnose-worker]
    python benchmarks/parity/run.py --child DSL ROWS.json   (one published-method run; internal)
    python benchmarks/parity/run.py --wakeup-child ROW      (the woken child; internal)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import select
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADVERSARIAL = ROOT / "tests" / "adversarial" / "kernels"

# Eager-only rows (the DSL rule waived): kernels from a few microseconds to milliseconds.
EAGER_ROWS = [
    ("36", "small", ADVERSARIAL / "honest_bf16_products.py"),  # ~3-10 us
    ("36", "full", ADVERSARIAL / "honest_bf16_products.py"),  # ~0.1-0.3 ms
    ("36", "full", ADVERSARIAL / "honest_cached_inplace.py"),  # ~1 ms (float32 chain)
    ("02", "full", ADVERSARIAL / "honest_paged_decode.py"),  # ~ms
]


def _rows(args) -> list[dict]:
    import metakernelbench as mkb

    suite = mkb.load_suite()
    rows = []
    for problem in suite:
        for dsl in args.dsl or ("cutedsl", "tirx"):
            path = Path(problem.directory) / "solutions" / f"{dsl}.py"
            if (
                path.is_file()
                and not args.eager_rows_only
                and (not args.problems or problem.number in args.problems)
            ):
                rows.append(
                    {
                        "problem": problem.number,
                        "slug": problem.slug,
                        "dsl": dsl,
                        "workload": "full",
                        "kernel": str(path),
                        "require_dsl": True,
                        "dir": str(problem.directory),
                    }
                )
    if not args.no_eager_rows:
        for number, workload, kernel in EAGER_ROWS:
            if kernel.is_file() and (not args.problems or int(number) in args.problems):
                p = suite.find(number)
                rows.append(
                    {
                        "problem": p.number,
                        "slug": p.slug,
                        "dsl": "cutedsl",
                        "workload": workload,
                        "kernel": str(kernel),
                        "require_dsl": False,
                        "dir": str(p.directory),
                    }
                )
    return rows


# --- the published method, plainly --------------------------------------------------------------


def _reference_numerics():
    import contextlib

    import torch

    @contextlib.contextmanager
    def numerics():
        m = torch.backends.cuda.matmul
        saved = (
            torch.backends.cudnn.allow_tf32,
            m.allow_bf16_reduced_precision_reduction,
            m.allow_fp16_reduced_precision_reduction,
            torch.get_float32_matmul_precision(),
            torch.get_default_dtype(),
        )
        torch.backends.cudnn.allow_tf32 = False
        m.allow_bf16_reduced_precision_reduction = False
        m.allow_fp16_reduced_precision_reduction = False
        torch.set_float32_matmul_precision("highest")
        torch.set_default_dtype(torch.float32)
        try:
            yield
        finally:
            (
                torch.backends.cudnn.allow_tf32,
                m.allow_bf16_reduced_precision_reduction,
                m.allow_fp16_reduced_precision_reduction,
            ) = saved[:3]
            torch.set_float32_matmul_precision(saved[3])
            torch.set_default_dtype(saved[4])

    return numerics


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def published_method_run(rows: list[dict], seed: int) -> list[dict]:
    """One run of the published method over `rows` (one process, one DSL)."""
    import torch

    torch._dynamo.config.disable = True  # as the published grader's child does
    numerics = _reference_numerics()
    rng = random.Random(seed)
    out = []
    for k, row in enumerate(rows):
        try:
            out.append(_published_row(k, row, numerics, rng))
        except Exception as exc:  # one broken row must not cost the others their run
            print(f"  published method: {row['slug'][:40]} {row['dsl']}: failed: {exc!r}", flush=True)
    return out


def _events_ms(fn, inputs, start, end) -> float:
    """One call by the published method's clock: sync, start event, call, sync, end event, sync;
    the events' elapsed milliseconds."""
    import torch

    torch.cuda.synchronize()
    start.record()
    fn(*inputs)
    torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def _published_row(k: int, row: dict, numerics, rng: random.Random) -> dict:
    import torch

    ref = _load(f"_parity_ref_{k}", os.path.join(row["dir"], "reference.py"))
    kernel = _load(f"_parity_kernel_{k}", row["kernel"])

    def draw(s, ref=ref, row=row):
        with numerics(), torch.random.fork_rng():
            torch.manual_seed(s)
            return list(ref.make_inputs(workload=row["workload"], device="cuda"))

    def median_ms(fn, warmup, timing):
        for s in warmup:
            fn(*draw(s))
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        return statistics.median(_events_ms(fn, draw(s), start, end) for s in timing)

    warmup = [rng.getrandbits(63) for _ in range(10)]
    timing = [rng.getrandbits(63) for _ in range(50)]
    kernel_ms = median_ms(kernel.solve, warmup, timing)
    with numerics():
        eager_ms = median_ms(ref.reference, warmup, timing)
    print(
        f"  published method: {row['slug'][:40]} {row['dsl']} {row['workload']}: "
        f"{eager_ms / kernel_ms:.3f}x ({kernel_ms:.4f} vs {eager_ms:.4f} ms)",
        flush=True,
    )
    out = {**row, "kernel_ms": kernel_ms, "eager_ms": eager_ms, "speedup": eager_ms / kernel_ms}
    if row.get("diagnose_inputs"):
        out["input_memory"] = _input_memory_diagnostics(kernel.solve, draw, timing)
        print(f"  input memory: {row['slug'][:40]} {row['dsl']}: {out['input_memory']}", flush=True)
    if row.get("diagnose"):
        out["diagnostics"] = _diagnostics(kernel.solve, draw, timing)
        if row.get("diagnose_wakeup"):  # the first published run only: a child per row is slow
            out["diagnostics"].update(_wakeup_diagnostics(row, timing))
    if row.get("diagnose_monitor"):  # last: the monitor stays for the process's life
        monitor = _monitor_diagnostics(kernel.solve, lambda fn: median_ms(fn, warmup, timing))
        out.setdefault("diagnostics", {}).update(monitor)
        print(f"  launch monitor: {row['slug'][:40]} {row['dsl']}: {monitor}", flush=True)
    elif row.get("diagnose_worker"):  # last: the layers stay for the process's life
        layers = _worker_layer_diagnostics(
            row, kernel.solve, draw, warmup, timing, lambda: median_ms(kernel.solve, warmup, timing)
        )
        out.setdefault("diagnostics", {}).update(layers)
        print(f"  worker layers: {row['slug'][:40]} {row['dsl']}: {layers}", flush=True)
    return out


def _worker_layer_diagnostics(row: dict, solve, draw, warmup, timing, median_on_main) -> dict:
    """The published method's kernel median again after each layer the judge's worker puts
    around a parity call, added one at a time in this process, in the worker's order
    (`--diagnose-worker`): the call on the worker's kernel thread timed by its PublishedClock,
    then the launch monitor subscribed (domains off, begin_call / end_call around each call as
    the parity pass does), the DSL's entry points wrapped, the runtime audit installed (recording
    what it would refuse instead of refusing: this process is not sandboxed), the process-wide
    guards, the watch on kernel code, and the process sealed (seccomp). The same 10 warm-ups and
    50 draws each time; finally the published method again on the main thread with every layer
    on. Which layer moves a host-bound call is where the judge's and the published method's
    kernel times part. The layers stay for the process's life: a process per row."""
    import torch
    from metakernelbench import _core, toolchains
    from metakernelbench.judge import dsl_entry, values
    from metakernelbench.judge import worker as judge_worker
    from metakernelbench.judge.worker_setup import audit_config, realpaths, worker_view

    device = torch.cuda.current_device()
    try:
        thread = _published_kernel_thread(device)
    except RuntimeError as error:
        return {"layers_error": f"the kernel thread: {error}"}
    state: dict = {"monitor": None}

    def on_thread(inputs, timed, on, before):
        if before is not None:  # untimed work on that thread right before the call
            on.call(before, (), False)
            on.release_collector()
        monitor = state["monitor"]
        if monitor is not None:
            monitor.set_enabled(False)  # the parity pass: off
            monitor.begin_call(knockout=False)
        try:
            done = on.call(solve, tuple(inputs), timed)
        finally:
            if monitor is not None:
                monitor.end_call()
        on.release_collector()
        if done[0] != "ok":
            raise RuntimeError(f"{done[1]}: {done[4]}")
        return done[1] * 1e3

    def median_on_thread(on=thread, before=None) -> float:
        for s in warmup:
            on_thread(draw(s), False, on, before)
        return statistics.median(on_thread(draw(s), True, on, before) for s in timing)

    out: dict = {"layer_published_again_ms": median_on_main()}
    out["layer_thread_ms"] = median_on_thread()
    out.update(_thread_variants(device, thread, median_on_thread))
    dsl = row["dsl"]
    dsl_site_dirs = toolchains.site_dirs(dsl) if dsl in ("cutedsl", "tirx") else []
    kernel_path = os.path.realpath(row["kernel"])
    work = os.path.dirname(kernel_path)

    class _Marker:  # what Worker._mark_dsl_entry_points reads of the worker
        _monitor = None

    def monitor_on():
        state["monitor"] = _core.cuda.LaunchMonitor(judge_worker.cupti_dirs(), realpaths(dsl_site_dirs))
        _Marker._monitor = state["monitor"]

    def entry_points():
        judge_worker.Worker._mark_dsl_entry_points(_Marker(), dsl)

    def audit():
        view = worker_view("cuda", dsl_site_dirs, work, "/nonexistent", [], [])
        config = dict(
            audit_config(kernel_path, dsl, view, dsl_site_dirs, work),
            dsl_entry_file=dsl_entry.wrapper.__code__.co_filename,
            dsl_entry_globals=dsl_entry.wrapper.__globals__,
        )
        _core.install_runtime_audit(config, enforce=False)

    def guards():
        judge_worker._install_process_wide_guards()
        thread.guard_clock(values.harness_reach())

    layers = (
        ("monitor_off", monitor_on),
        ("entry_points", entry_points),
        ("audit", audit),
        ("guards", guards),
        ("watch", lambda: _core.watch_kernel_code(True)),
        ("sealed", _core.seal_processes),
    )
    audited = False
    for name, add in layers:
        try:
            add()
        except Exception as error:  # a layer that cannot be added here: said, and the rest stop
            out[f"layer_{name}_error"] = f"{type(error).__name__}: {str(error)[:300]}"
            break
        audited = audited or name == "audit"
        # What the audit recorded (would have refused) while the layer was added, and during
        # its calls: a refusal on the calls' path makes them slower here than in the worker,
        # where it would have failed the call instead.
        before = len(_core.runtime_audit_recorded()) if audited else 0
        out[f"layer_{name}_ms"] = [median_on_thread() for _ in range(3)]
        if audited:
            recorded = _core.runtime_audit_recorded()
            out[f"layer_{name}_recorded_in_calls"] = len(recorded) - before
            out[f"layer_{name}_recorded_first"] = [str(r)[:240] for r in recorded[before : before + 3]]
    _core.watch_kernel_code(False)  # the main thread's calls below run kernel code between jobs
    out["layer_all_on_main_ms"] = median_on_main()
    # The audit events one timed call raises, by name (a Python hook added last, counting only
    # inside the timed calls): what the runtime audit's hook decides on the clock.
    counts: dict[str, int] = {}
    counting = [False]

    def count(event, _args):
        if counting[0]:
            counts[event] = counts.get(event, 0) + 1

    sys.addaudithook(count)
    for s in timing[:10]:
        inputs = draw(s)
        counting[0] = True
        try:
            on_thread(inputs, True)
        finally:
            counting[0] = False
    out["layer_events_per_call"] = {k: v / 10 for k, v in sorted(counts.items(), key=lambda kv: -kv[1])}
    return out


def _published_kernel_thread(device: int, spin_us: int = 0):
    """A KernelThread timed by the worker's PublishedClock, its device current (RuntimeError if
    it cannot be made so)."""
    import torch
    from metakernelbench import _core
    from metakernelbench.judge import values

    thread = _core.KernelThread(values.PublishedClock(device), spin_us=spin_us)
    made = thread.call(torch.cuda.set_device, (device,))
    thread.release_collector()
    if made[0] != "ok":
        raise RuntimeError(f"{made[1]}: {made[4]}")
    return thread


def _thread_variants(device, thread, median_on_thread) -> dict:
    """The kernel thread's call again three ways, three medians each, before any layer: on a
    second KernelThread that polls for its next job for 2 ms before it sleeps (spin_us, the
    judge's config kernel_thread_spin_us), so that its CPU is busy while the main thread draws
    the next inputs; on the first thread with it and the main thread pinned to one CPU (the
    handoff on one core); and on the first thread after 200 us of busy work on it right before
    each call, untimed (a core that was just running, without polling)."""
    out: dict = {}
    try:
        spinning = _published_kernel_thread(device, spin_us=2000)
    except RuntimeError as error:
        return {"layer_thread_spin_error": str(error)}
    out["layer_thread_spin_ms"] = [median_on_thread(spinning) for _ in range(3)]
    main_tid = threading.get_native_id()
    was_main = os.sched_getaffinity(main_tid)
    was_kernel = os.sched_getaffinity(thread.native_id)
    cpu = sorted(was_main)[0]
    try:
        os.sched_setaffinity(main_tid, {cpu})
        os.sched_setaffinity(thread.native_id, {cpu})
        out["layer_thread_same_cpu"] = cpu
        out["layer_thread_same_cpu_ms"] = [median_on_thread() for _ in range(3)]
    except OSError as error:
        out["layer_thread_same_cpu_error"] = str(error)
    finally:
        os.sched_setaffinity(main_tid, was_main)
        os.sched_setaffinity(thread.native_id, was_kernel)

    def busy() -> None:
        until = time.perf_counter() + 200e-6
        while time.perf_counter() < until:
            pass

    out["layer_thread_busy_before_ms"] = [median_on_thread(thread, busy) for _ in range(3)]
    print(f"  kernel thread variants: {out}", flush=True)
    return out


def _monitor_diagnostics(solve, median_ms) -> dict:
    """The published method's kernel median again after the process subscribed to CUPTI's
    callbacks as the judge's worker does before the first call (`--diagnose-monitor`): with the
    callback domains switched off, as in the judge's parity pass, and on, as in its correctness
    and strict calls. The subscription lasts for the process's life, so each row that asks runs
    in a process of its own, and this comes after the row's own published timing."""
    from metakernelbench import _core
    from metakernelbench.judge.worker import cupti_dirs

    try:
        monitor = _core.cuda.LaunchMonitor(cupti_dirs(), [])
    except _core.Error as error:
        return {"monitor_error": str(error)}
    monitor.set_enabled(False)
    out = {"monitor_subscribed_off_kernel_ms": median_ms(solve)}
    monitor.set_enabled(True)
    monitor.begin_call()
    try:
        out["monitor_on_kernel_ms"] = median_ms(solve)
    finally:
        monitor.end_call()
    monitor.set_enabled(False)
    out["monitor_off_again_kernel_ms"] = median_ms(solve)
    return out


def _diagnostics(solve, draw, timing) -> dict:
    """Where the judge and the published method part (`--diagnose`): the kernel's median call
    (ms) over the same draws, each variant changing one thing of the published method: the
    judge's clock (CallClock, C++) for torch's events; the L2 cache flushed after the draw (the
    published method calls right after drawing, on what the draw left in L2); the call on a
    thread started in C++ (the judge's KernelThread) with the judge's clock, as the worker makes
    it. In this plain process: no sandbox, no audit, no launch monitor."""
    import torch
    from metakernelbench import _core

    device = torch.cuda.current_device()
    clock = _core.cuda.CallClock(device)
    flusher = _core.cuda.L2Flusher(device)
    thread = _core.KernelThread(_core.cuda.CallClock(device))
    made = thread.call(torch.cuda.set_device, (device,))
    thread.release_collector()
    if made[0] != "ok":
        return {"error": f"the kernel thread: {made[1]}: {made[4]}"}

    def clocked(inputs):
        return clock.time(lambda: solve(*inputs))[0] * 1e3

    def flushed(inputs):
        flusher.flush(torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        return clocked(inputs)

    def on_thread(inputs):
        done = thread.call(solve, tuple(inputs), True)
        thread.release_collector()
        if done[0] != "ok":
            raise RuntimeError(f"{done[1]}: {done[4]}")
        return done[1] * 1e3

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def events(inputs):
        return _events_ms(solve, inputs, start, end)

    out = {}
    for name, fn in (("callclock", clocked), ("l2_flushed", flushed), ("kernel_thread", on_thread)):
        times = []
        for s in timing:
            inputs = draw(s)
            torch.cuda.synchronize()
            times.append(fn(inputs))
        out[f"{name}_kernel_ms"] = statistics.median(times)
    # The published method's own clock, one thing changed each: every draw made before the first
    # call (the call no longer follows make_inputs' host work); the same, with a throwaway draw
    # right before each call (that host work back, the tensors not fresh); the collector off
    # during the calls (the judge's kernel thread holds it off); the judge's C++ clock on
    # pre-drawn inputs.
    # Every draw alive at once: a problem whose inputs do not fit 50 times over (02, 03: caches of
    # GBs) gets an error for these variants, not a lost row.
    drawn = []
    try:
        drawn = [draw(s) for s in timing]
        torch.cuda.synchronize()
        out["predrawn_kernel_ms"] = statistics.median(events(inputs) for inputs in drawn)
        times = []
        for k, inputs in enumerate(drawn):
            draw(timing[-1 - k])
            times.append(events(inputs))
        out["predrawn_then_draw_kernel_ms"] = statistics.median(times)
        out["predrawn_callclock_kernel_ms"] = statistics.median(clocked(inputs) for inputs in drawn)
    except torch.cuda.OutOfMemoryError as exc:
        out["predrawn_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    del drawn
    torch.cuda.empty_cache()
    import gc

    gc.disable()
    try:
        out["gc_off_kernel_ms"] = statistics.median(events(draw(s)) for s in timing)
    finally:
        gc.enable()
    return out


def _packed(inputs: list, raw) -> list:
    """`inputs` copied into the uint8 device tensor `raw`, packed as the judge's CudaArena packs a
    call's inputs (64-byte aligned, in order); scalars as they are. Synchronised."""
    import torch
    from metakernelbench import _core

    out, offset = [], 0
    for x in inputs:
        if not isinstance(x, torch.Tensor):
            out.append(x)
            continue
        offset = _core.align_tensor_offset(offset)
        nbytes = x.numel() * x.element_size()
        view = raw[offset : offset + nbytes]
        view.copy_(x.detach().contiguous().view(-1).view(torch.uint8))
        out.append(view.view(x.dtype).view(x.shape))
        offset += nbytes
    torch.cuda.synchronize()
    return out


def _input_memory_diagnostics(solve, draw, timing) -> dict:
    """Where the kernel's inputs live (`--diagnose-inputs`): the published method's call (its
    events, the same draws) on the inputs as drawn (torch's caching allocator); copied into one
    cudaMalloc buffer of this process, packed as the judge's CudaArena packs them; and copied
    into such a buffer allocated by another process and mapped here by its CUDA IPC handle, as
    the judge's worker sees its inputs. The copies are made before each call, untimed."""
    import torch
    from metakernelbench import _core

    device = torch.cuda.current_device()
    total = 0
    for x in draw(timing[0]):
        if isinstance(x, torch.Tensor):
            total = _core.align_tensor_offset(total) + x.numel() * x.element_size()
    total = max(total, 1)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def median_on(place) -> float:
        times = []
        for s in timing:
            inputs = place(draw(s))
            torch.cuda.synchronize()
            times.append(_events_ms(solve, inputs, start, end))
        return statistics.median(times)

    out = {"input_bytes": total, "as_drawn_kernel_ms": median_on(lambda inputs: inputs)}
    try:
        local = _core.cuda.DeviceBuffer(total, device)
        raw = torch.from_dlpack(local.capsule())
        out["local_buffer_kernel_ms"] = median_on(lambda inputs, raw=raw: _packed(inputs, raw))
        del raw, local
        torch.cuda.empty_cache()
        owner = subprocess.Popen(
            [sys.executable, __file__, "--ipc-buffer", str(total), str(device)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = owner.stdout.readline().strip()
            if not line:
                raise RuntimeError("the buffer's owner process gave no IPC handle")
            base = _core.cuda.ipc_open(bytes.fromhex(line), device)
            try:
                raw = torch.from_dlpack(_core.cuda.device_capsule(base, total, device))
                out["ipc_buffer_kernel_ms"] = median_on(lambda inputs, raw=raw: _packed(inputs, raw))
                del raw
                torch.cuda.synchronize()
            finally:
                _core.cuda.ipc_close(base)
        finally:
            owner.stdin.close()
            owner.wait(timeout=60)
    except (RuntimeError, _core.Error) as exc:  # out of memory, no IPC: the row keeps the rest
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return out


def _ipc_buffer_owner(nbytes: int, device: int) -> int:
    """`--ipc-buffer`: allocate a DeviceBuffer of `nbytes`, print its IPC handle (hex), hold it
    until stdin closes."""
    import torch
    from metakernelbench import _core

    torch.cuda.set_device(device)
    buffer = _core.cuda.DeviceBuffer(nbytes, device)
    print(buffer.ipc_handle().hex(), flush=True)
    sys.stdin.read()
    del buffer
    return 0


# --- the process boundary: the judge's kernel runs in a worker woken for each call ---------------


def _settled_draw(row: dict, name: str):
    """draw(seed) -> the row's inputs as the published method draws them, the device settled
    after (the woken child's and its parent's draws)."""
    import torch

    numerics = _reference_numerics()
    ref = _load(name, os.path.join(row["dir"], "reference.py"))
    device = row.get("device", "cuda")

    def draw(s):
        with numerics(), torch.random.fork_rng():
            torch.manual_seed(s)
            inputs = list(ref.make_inputs(workload=row["workload"], device=device))
        if device == "cuda":
            torch.cuda.synchronize()
        return inputs

    return draw


def _wakeup_diagnostics(row: dict, timing: list[int]) -> dict:
    """The published method's call of the kernel in a child process of this one (`--wakeup-child`),
    as the judge's worker makes it: the child draws the inputs, waits on a pipe while this process
    does a draw of its own (the host's make_inputs), and is woken to time the call. Against the
    child timing right after its own draw ("hot", the published method in another process),
    woken with both processes free, on one CPU, on two different CPUs, and free with the child
    polling instead of sleeping (medians, ms): whether the wake-up across processes, and where
    the processes run, moves a launch-bound call. One
    child per row (its start is the cost: torch, CUDA, the DSL), re-pinned between placements."""
    out: dict = {}
    cpus = sorted(os.sched_getaffinity(0))
    placements = [("", None, None)]
    if len(cpus) >= 2:
        placements += [("_same_cpu", cpus[0], cpus[0]), ("_other_cpu", cpus[0], cpus[1])]
    # Both free, the child polling its pipe without sleeping while it waits (its CPU never idles,
    # as the published method's one process never waits for another).
    placements.append(("_spinning", None, None))
    mine = set(cpus)
    host_draw = _settled_draw(row, "_wake_parent_ref")
    child = subprocess.Popen(
        [sys.executable, __file__, "--wakeup-child", json.dumps(row)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )

    def ask(line: str) -> str:
        child.stdin.write(line + "\n")
        child.stdin.flush()
        answer = child.stdout.readline().strip()
        if not answer or answer.startswith("error"):
            raise RuntimeError(f"wake-up child: {answer or 'no answer'}")
        return answer

    try:
        for s in timing[:10]:
            ask(f"warm {s}")
        out["child_hot_kernel_ms"] = statistics.median(float(ask(f"hot {s}")) for s in timing)
        for suffix, parent_cpu, child_cpu in placements:
            try:
                os.sched_setaffinity(0, mine if parent_cpu is None else {parent_cpu})
                ask(f"pin {-1 if child_cpu is None else child_cpu}")
                ask(f"spin {int(suffix == '_spinning')}")
                times = []
                for s in timing:
                    ask(f"prep {s}")
                    host_draw(s + 1)  # the host's own work while the worker waits
                    times.append(float(ask("go")))
                out[f"child_woken{suffix}_kernel_ms"] = statistics.median(times)
            except Exception as exc:  # a diagnostic, not a row: reported, never fatal
                out[f"child_woken{suffix}_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    except Exception as exc:
        out["child_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        os.sched_setaffinity(0, mine)
        try:
            child.stdin.write("quit\n")
            child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
    return out


def _wakeup_child(row_json: str) -> int:
    """`--wakeup-child ROW` (internal): times the row's kernel by the published method on
    request, one line per request: `warm S` (untimed), `hot S` (draw, then time), `prep S`
    (draw only), `go` (time the prepared call), `pin CPU` (-1: every CPU), `spin 1|0` (wait for
    the next request polling, never sleeping, or blocked), `quit`."""
    row = json.loads(row_json)
    every_cpu = os.sched_getaffinity(0)
    device = row.get("device", "cuda")
    if row["require_dsl"] and row["dsl"] in ("cutedsl", "tirx"):
        from metakernelbench import toolchains

        toolchains.activate(toolchains.site_dirs(row["dsl"]))
    import torch

    draw = _settled_draw(row, "_wake_ref")
    kernel = _load("_wake_kernel", row["kernel"])
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(inputs) -> float:
        if device == "cuda":
            return _events_ms(kernel.solve, inputs, start, end)
        t = time.perf_counter()
        kernel.solve(*inputs)
        return (time.perf_counter() - t) * 1e3

    prepared = None
    spin = False
    while True:
        if spin:  # poll without sleeping until the next request is there
            while not select.select([sys.stdin], [], [], 0)[0]:
                pass
        line = sys.stdin.readline()
        if not line:
            break
        op, _, arg = line.strip().partition(" ")
        try:
            if op == "quit":
                break
            if op == "warm":
                kernel.solve(*draw(int(arg)))
                answer = "ok"
            elif op == "hot":
                answer = repr(timed(draw(int(arg))))
            elif op == "prep":
                prepared = draw(int(arg))
                answer = "ok"
            elif op == "go":
                answer = repr(timed(prepared))
            elif op == "spin":
                spin = arg == "1"
                answer = "ok"
            elif op == "pin":
                os.sched_setaffinity(0, every_cpu if int(arg) < 0 else {int(arg)})
                answer = "ok"
            else:
                answer = f"error: unknown request {op!r}"
        except Exception as exc:
            answer = f"error: {type(exc).__name__}: {str(exc)[:200]}"
        print(answer, flush=True)
    return 0


def _child(dsl: str, rows_path: str, seed: int) -> int:
    rows = json.loads(Path(rows_path).read_text())
    from metakernelbench import toolchains

    if dsl in ("cutedsl", "tirx"):
        toolchains.activate(toolchains.site_dirs(dsl))
    print(json.dumps(published_method_run(rows, seed)))
    return 0


def _published_runs(rows: list[dict], run: int, tmp: Path) -> dict[tuple, list[float]]:
    """Run `run` of the published method: one fresh process per DSL."""
    results: dict[tuple, list[float]] = {}
    for dsl in ("cutedsl", "tirx"):
        mine = [r for r in rows if r["dsl"] == dsl]
        if not mine:
            continue
        if run == 0:  # --diagnose: the woken child's timings in the first run only
            mine = [{**r, "diagnose_wakeup": True} if r.get("diagnose") else r for r in mine]
        # --diagnose-monitor: a process per row (the monitor it starts stays).
        alone = any(r.get("diagnose_monitor") or r.get("diagnose_worker") for r in mine)
        groups = [[r] for r in mine] if alone else [mine]
        got = []
        for n, group in enumerate(groups):
            path = tmp / f"rows-{dsl}-{n}.json"
            path.write_text(json.dumps(group))
            done = subprocess.run(
                [sys.executable, __file__, "--child", dsl, str(path), "--seed", str(run * 7919)],
                capture_output=True,
                text=True,
            )
            lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
            if done.returncode != 0 or not lines:
                print(f"published-method run {run} ({dsl}) failed:\n{done.stderr[-3000:]}", flush=True)
                continue
            for line in done.stdout.splitlines():
                if line.startswith(("  published", "  launch monitor", "  worker layers")):
                    print(line, flush=True)
            got.extend(json.loads(lines[-1]))
        for r in got:
            results.setdefault(_key(r), []).append(r["speedup"])
            medians = {"kernel_ms": r["kernel_ms"], "eager_ms": r["eager_ms"]}
            PUBLISHED_MS.setdefault(_key(r), []).append(medians)
            if "input_memory" in r:
                DIAGNOSTICS.setdefault(_key(r), []).append({"input_memory": r["input_memory"]})
            if "diagnostics" in r:
                DIAGNOSTICS.setdefault(_key(r), []).append({"kernel_ms": r["kernel_ms"], **r["diagnostics"]})
    return results


DIAGNOSTICS: dict[tuple, list[dict]] = {}  # `--diagnose`: per row, one entry per published run
PUBLISHED_MS: dict[tuple, list[dict]] = {}  # per row, each published run's kernel and eager medians


def _key(row: dict) -> tuple:
    return (row["problem"], row["dsl"], row["workload"], os.path.basename(row["kernel"]))


# --- the published grader itself ------------------------------------------------------------

# The paths the published grader reads and writes, fixed in its code (its task container's).
GRADER_KERNEL = Path("/app/kernel.py")
GRADER_REWARDS = Path("/logs/verifier")


class GraderUnavailable(Exception):
    """The published grader cannot run here (named checkout file missing, /app not writable)."""


def _checkout_commit(checkout: Path) -> dict:
    """Where the grader came from: the checkout's path and commit (a COMMIT file's first line, or
    git's HEAD), so that a result names the grader it ran."""
    marker = checkout / "COMMIT"
    if marker.is_file():
        words = marker.read_text().split()
        commit = words[0] if words else None
    else:
        git = ["git", "-C", str(checkout), "rev-parse", "HEAD"]
        commit = subprocess.run(git, capture_output=True, text=True).stdout.strip() or None
    return {"path": str(checkout), "commit": commit}


def _published_problem(checkout: Path, number: int) -> Path | None:
    """The checkout's problem file for `number` (problems/<family>/NN_<slug>.py), or None (the
    problem is one of its JSON definitions, or absent)."""
    found = sorted(checkout.glob(f"problems/*/{number:02d}_*.py"))
    return found[0] if found else None


def _grader_files(checkout: Path) -> tuple[Path, Path]:
    template = checkout / "metakernelbench" / "template"
    grader, contract = template / "grader.py", template / "contract.py"
    for path in (grader, contract):
        if not path.is_file():
            raise GraderUnavailable(
                f"--published-checkout {checkout}: {path.relative_to(checkout)} is missing (a checkout "
                "of github.com/YIGE24/MetaKernelBench holds metakernelbench/template/grader.py and "
                "contract.py)"
            )
    return grader, contract


def _claim_grader_paths() -> None:
    """The grader reads /app/kernel.py and writes /logs/verifier: make them ours, or say why not
    (an existing /app/kernel.py is someone else's and is never overwritten)."""
    if GRADER_KERNEL.exists() and not GRADER_KERNEL.is_symlink():
        raise GraderUnavailable(f"{GRADER_KERNEL} exists and is not this benchmark's link; not touching it")
    try:
        GRADER_KERNEL.parent.mkdir(parents=True, exist_ok=True)
        GRADER_REWARDS.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GraderUnavailable(
            f"the published grader reads {GRADER_KERNEL} and writes {GRADER_REWARDS}, fixed in its "
            f"code, and they cannot be made here: {exc}"
        ) from exc


def published_grader_run(row: dict, checkout: Path, work: Path) -> dict:
    """One evaluation of `row`'s solution by the published grader, unchanged: its grader.py and
    contract.py with the published problem file as task.py in `work`, the solution linked at
    /app/kernel.py, the variant's DSL on PYTHONPATH; its reward files read back."""
    from metakernelbench import toolchains

    problem = _published_problem(checkout, row["problem"])
    if problem is None:
        return {"error": "no published .py problem file (a JSON definition, built by its sol_execbench.py)"}
    grader, contract = _grader_files(checkout)
    work.mkdir(parents=True, exist_ok=True)
    for source, name in ((grader, "grader.py"), (contract, "contract.py"), (problem, "task.py")):
        shutil.copyfile(source, work / name)
    if GRADER_KERNEL.is_symlink():
        GRADER_KERNEL.unlink()
    GRADER_KERNEL.symlink_to(Path(row["kernel"]).resolve())
    for name in ("reward.json", "reward-details.json"):
        (GRADER_REWARDS / name).unlink(missing_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        toolchains.python_path(row["dsl"]) + [p for p in [env.get("PYTHONPATH")] if p]
    )
    t = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(work / "grader.py")],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        return {"error": "the published grader ran past 900 s", "wall_s": time.perf_counter() - t}
    finally:
        GRADER_KERNEL.unlink(missing_ok=True)
    wall = time.perf_counter() - t
    try:
        rewards = json.loads((GRADER_REWARDS / "reward.json").read_text())
        details = json.loads((GRADER_REWARDS / "reward-details.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return {
            "error": f"the grader left no readable reward ({exc}); exit {done.returncode}",
            "stderr_tail": done.stderr[-2000:],
            "wall_s": wall,
        }
    entry = {
        "passed": bool(rewards.get("passed")),
        "speedup": rewards.get("speedup_vs_eager") if rewards.get("passed") else None,
        "median_ms": details.get("median_ms"),
        "n_correct_draws": details.get("n_correct_draws"),
        "error": details.get("error"),
        "mismatch": details.get("mismatch"),
        "wall_s": wall,
        "task_file": str(problem.relative_to(checkout)),
    }
    return entry


def _grader_runs(rows: list[dict], checkout: Path, run: int, tmp: Path, graded: dict, written) -> None:
    """Run `run` of the published grader over the solution rows, each entry added to `graded` and
    `written()` called after it (an evaluation takes 10-20 s: a killed run keeps its rows)."""
    for row in rows:
        if not row["require_dsl"]:
            continue  # eager-only rows break the published DSL rule: not the grader's to judge
        entry = published_grader_run(row, checkout, tmp / f"grader-{row['problem']}-{row['dsl']}")
        graded.setdefault(_key(row), []).append(entry)
        written()
        shown = (
            f"{entry['speedup']:.3f}x"
            if entry.get("speedup")
            else f"no speedup: {str(entry.get('error') or entry.get('mismatch'))[:300]}"
        )
        print(
            f"  published grader run {run}: {row['slug'][:40]} {row['dsl']}: {shown} "
            f"({entry.get('wall_s', 0):.1f} s)",
            flush=True,
        )


# --- the judge ----------------------------------------------------------------------------------


def _judge_runs(rows: list[dict], run: int, results: dict, written, variant: dict | None = None) -> None:
    """Run `run` of the judge over every row (with `variant`: those JudgeConfig fields set), each
    entry added to `results` and `written()` called after it (a row takes up to 20 s: a call's
    deadline keeps the rows judged so far)."""
    import metakernelbench as mkb

    for row in rows:
        config: dict = {} if row["require_dsl"] else {"policy": {"require_dsl": False}}
        config.update(variant or {})
        t = time.perf_counter()
        verdict = mkb.evaluate(
            row["problem"],
            row["dsl"],
            path=row["kernel"],
            device="cuda",
            workload=row["workload"],
            config=config,
        )
        entry = {
            "status": verdict.status,
            "speedup": verdict.speedup_vs_eager,
            "kernel_ms": verdict.kernel_parity.median_ms,
            "eager_ms": verdict.eager_parity.median_ms,
            "speedup_span": verdict.speedup_span,
            # the host's clock around the worker's (timing.clock_gap_ms, _calibrated_ms, _allowed_ms)
            "clock_gap": {
                k.removeprefix("timing."): v
                for k, v in verdict.phase_times.to_dict().get("steps", {}).items()
                if k.startswith(("timing.clock_gap", "timing.cpu."))
            },
            "wall_s": time.perf_counter() - t,
            "message": verdict.message,
        }
        results.setdefault(_key(row), []).append(entry)
        print(
            f"  judge run {run}{'' if not variant else f' {variant}'}: {row['slug'][:40]} "
            f"{row['dsl']} {row['workload']}: {verdict.status} {verdict.speedup_vs_eager}",
            flush=True,
        )
        written()


def _rounded(value: float | None) -> float | None:
    return value and round(value, 3)


def _spread(values: list[float]) -> dict:
    if not values:
        return {"median": None, "min": None, "max": None, "relative_spread": None, "runs": 0}
    m = statistics.median(values)
    return {
        "median": m,
        "min": min(values),
        "max": max(values),
        "relative_spread": (max(values) - min(values)) / (2 * m) if m else None,
        "runs": len(values),
    }


def _table(
    rows: list[dict],
    published: dict,
    judged: dict,
    variant: dict | None = None,
    graded: dict | None = None,
) -> list[dict]:
    table = []
    for row in rows:
        key = _key(row)
        pub = _spread(published.get(key, []))
        judge_values = [j["speedup"] for j in judged.get(key, []) if j["speedup"] is not None]
        jud = _spread(judge_values)
        ratio = jud["median"] / pub["median"] if jud["median"] and pub["median"] else None
        extra: dict = {}
        if variant is not None:  # --judge-config: the judge's runs with that config beside
            other = _spread([j["speedup"] for j in variant.get(key, []) if j["speedup"] is not None])
            extra = {
                "judge_variant": other,
                "judge_variant_runs": variant.get(key, []),
                "judge_variant_over_published": other["median"] / pub["median"]
                if other["median"] and pub["median"]
                else None,
            }
        if graded is not None and key in graded:  # --published-checkout: the grader itself
            grade = _spread([g["speedup"] for g in graded[key] if g.get("speedup")])
            extra["published_grader"] = grade
            extra["published_grader_runs"] = graded[key]
            extra["published_grader_over_published"] = (
                grade["median"] / pub["median"] if grade["median"] and pub["median"] else None
            )
            extra["judge_over_published_grader"] = (
                jud["median"] / grade["median"] if jud["median"] and grade["median"] else None
            )
        table.append(
            {
                "problem": row["problem"],
                "slug": row["slug"],
                "dsl": row["dsl"],
                "workload": row["workload"],
                "kernel": os.path.relpath(row["kernel"], ROOT),
                "require_dsl": row["require_dsl"],
                "published": pub,
                "published_runs": published.get(key, []),
                "published_ms_runs": PUBLISHED_MS.get(key, []),
                "judge": jud,
                "judge_runs": judged.get(key, []),
                "judge_over_published": ratio,
                "within_5_percent": ratio is not None and abs(ratio - 1) <= 0.05,
                **extra,
                **({"diagnostics": DIAGNOSTICS[key]} if key in DIAGNOSTICS else {}),
            }
        )
    return table


def _write(
    args,
    rows: list[dict],
    published: dict,
    judged: dict,
    complete: bool,
    variant: dict | None = None,
    graded: dict | None = None,
) -> list[dict]:
    """Writes the table as it stands (after every run: a killed benchmark keeps what it measured)."""
    table = _table(rows, published, judged, variant, graded)
    result = {
        "benchmark": "parity",
        "date": date.today().isoformat(),
        "published_runs": args.published_runs,
        "judge_runs": args.judge_runs,
        "complete": complete,
        **({"judge_variant_config": args.variant} if args.variant else {}),
        **(
            {"grader_runs": args.grader_runs, "published_checkout": _checkout_commit(args.published_checkout)}
            if args.published_checkout
            else {}
        ),
        "rows": table,
    }
    try:
        import torch

        result["gpu"] = torch.cuda.get_device_name(0)
        result["torch"] = torch.__version__
    except Exception:
        pass
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--published-runs", type=int, default=5)
    parser.add_argument("--judge-runs", type=int, default=3)
    parser.add_argument("--problems", type=int, nargs="*", default=[])
    parser.add_argument(
        "--dsl",
        choices=("cutedsl", "tirx"),
        action="append",
        help="only this DSL's solution rows (repeatable)",
    )
    parser.add_argument("--no-eager-rows", action="store_true")
    parser.add_argument("--eager-rows-only", action="store_true", help="no solution rows")
    parser.add_argument("--child", nargs=2, metavar=("DSL", "ROWS"))
    parser.add_argument("--wakeup-child", metavar="ROW")
    parser.add_argument("--ipc-buffer", nargs=2, type=int, metavar=("BYTES", "DEVICE"))
    parser.add_argument(
        "--diagnose-inputs",
        action="store_true",
        help="also time each published call with its inputs copied into a cudaMalloc buffer of "
        "the process and into one of another process mapped by CUDA IPC, as the judge's worker "
        "sees them (the rows' 'diagnostics', input_memory)",
    )
    parser.add_argument(
        "--diagnose-monitor",
        action="store_true",
        help="also time each published call after the process subscribed to CUPTI's callbacks as "
        "the judge's worker does (domains off, on, off again; a process per row; the rows' "
        "'diagnostics', monitor_*)",
    )
    parser.add_argument(
        "--diagnose-worker",
        action="store_true",
        help="also time each published call on the worker's kernel thread and clock with the "
        "worker's layers added one at a time (launch monitor, DSL entry points, runtime audit "
        "recording, process-wide guards, the watch, seccomp; a process per row; the rows' "
        "'diagnostics', layer_*). Not with --diagnose-monitor",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--published-checkout",
        type=Path,
        help="a checkout of github.com/YIGE24/MetaKernelBench: also run its grader, unchanged, on "
        "every solution row whose problem is one of its .py files (the rows' published_grader)",
    )
    parser.add_argument("--grader-runs", type=int, default=3, help="published grader runs per row")
    parser.add_argument(
        "--judge-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also run the judge with this JudgeConfig field set (VALUE read as JSON, else a "
        "string; repeatable), each run beside one with the default config (the rows' "
        "judge_variant)",
    )
    parser.add_argument(
        "--judge-pin-cpu",
        type=int,
        default=None,
        help="the same as --judge-config pin_cpu=N",
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="also time the published child's calls with the judge's clock, after an L2 flush, "
        "on a C++ thread, and in a process of their own woken for each call, pinned or not (the "
        "rows' 'diagnostics')",
    )
    args = parser.parse_args()
    if args.child:
        return _child(args.child[0], args.child[1], args.seed)
    if args.wakeup_child:
        return _wakeup_child(args.wakeup_child)
    if args.ipc_buffer:
        return _ipc_buffer_owner(*args.ipc_buffer)
    import tempfile

    args.variant = {}
    for item in args.judge_config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--judge-config {item!r}: expected KEY=VALUE")
        try:
            args.variant[key] = json.loads(value)
        except json.JSONDecodeError:
            args.variant[key] = value
    if args.judge_pin_cpu is not None:
        args.variant["pin_cpu"] = args.judge_pin_cpu
    rows = _rows(args)
    if args.diagnose:
        rows = [{**r, "diagnose": True} for r in rows]
    if args.diagnose_inputs:
        rows = [{**r, "diagnose_inputs": True} for r in rows]
    if args.diagnose_monitor:
        rows = [{**r, "diagnose_monitor": True} for r in rows]
    if args.diagnose_worker:
        if args.diagnose_monitor:
            parser.error("--diagnose-worker and --diagnose-monitor each hold their process: one at a time")
        rows = [{**r, "diagnose_worker": True} for r in rows]
    published: dict[tuple, list[float]] = {}
    judged: dict[tuple, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.published_runs):
            for key, values in _published_runs(rows, run, Path(tmp)).items():
                published.setdefault(key, []).extend(values)
            _write(args, rows, published, judged, complete=False)
    graded: dict[tuple, list[dict]] | None = None
    if args.published_checkout:
        graded = {}
        try:
            _grader_files(args.published_checkout)
            _claim_grader_paths()
        except GraderUnavailable as exc:
            print(f"parity: {exc}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.grader_runs):
                _grader_runs(
                    rows,
                    args.published_checkout,
                    run,
                    Path(tmp),
                    graded,
                    lambda: _write(args, rows, published, judged, complete=False, graded=graded),
                )
    variant: dict[tuple, list[dict]] | None = {} if args.variant else None

    def written() -> None:
        _write(args, rows, published, judged, complete=False, variant=variant, graded=graded)

    for run in range(args.judge_runs):
        _judge_runs(rows, run, judged, written)
        if variant is not None:
            _judge_runs(rows, run, variant, written, args.variant)
    table = _write(args, rows, published, judged, complete=True, variant=variant, graded=graded)
    for row in table:
        pub, jud, ratio = row["published"], row["judge"], row["judge_over_published"]
        print(
            f"{row['problem']:02d} {row['dsl']:8s} {row['workload']:5s} "
            f"{os.path.basename(row['kernel'])[:28]:28s} "
            f"published {pub['median'] and round(pub['median'], 3)} "
            f"(±{pub['relative_spread'] and round(100 * pub['relative_spread'], 1)}%) "
            f"judge {jud['median'] and round(jud['median'], 3)} "
            f"(±{jud['relative_spread'] and round(100 * jud['relative_spread'], 1)}%) "
            f"ratio {ratio and round(ratio, 3)}"
            + (
                f" grader {row['published_grader']['median'] and round(row['published_grader']['median'], 3)}"
                if "published_grader" in row
                else ""
            )
            + (
                f" variant {row['judge_variant']['median'] and round(row['judge_variant']['median'], 3)} "
                f"ratio {_rounded(row['judge_variant_over_published'])}"
                if "judge_variant" in row
                else ""
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
