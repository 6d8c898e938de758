"""Eager PyTorch on every problem's full workload: the baseline the judge times kernels
against, how far it is from the problem's physical floor on this GPU, and peak memory against
the problem's estimate.

    python benchmarks/suite_eager/run.py --out suite_eager.json [--families mlp_norm,kv_cache] [--samples 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import date

import torch

import metakernelbench as mkb
from metakernelbench import _core
from metakernelbench.judge.values import clone, upcast
from metakernelbench.judge.worker import cupti_dirs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--families", default="")
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    suite = mkb.load_suite()
    problems = suite.select(families=[f for f in args.families.split(",") if f])
    flusher = _core.cuda.L2Flusher(0)
    tracer = _core.cuda.Tracer(cupti_dirs())
    bandwidth = _core.cuda.copy_bandwidth(0)
    rows = []
    for p in problems:
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        t = time.perf_counter()
        inputs = p.make_inputs("full", device="cuda", seed=1234)
        expected = p.correctness_reference(*[clone(x) for x in inputs])
        anchor = p.correctness_reference(*upcast(inputs))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del expected, anchor
        spans = []
        for i in range(args.samples + 3):
            args_i = [clone(x) for x in inputs]
            flusher.flush(torch.cuda.current_stream().cuda_stream)
            tracer.begin()
            p.reference(*args_i)
            torch.cuda.synchronize()
            trace = tracer.end()
            if i >= 3:
                spans.append(trace.span_ms)
        workload = p.workload("full")
        floor = _core.physical_floor_ms(workload.roofline, bandwidth, 1e16)
        median = statistics.median(spans)
        rows.append({"number": p.number, "slug": p.slug, "family": p.family, "eager_span_ms": median,
                     "eager_cv": statistics.stdev(spans) / statistics.fmean(spans), "floor_ms": floor,
                     "percent_of_floor": 100 * floor / median if median > 0 else None,
                     "peak_memory_bytes": peak, "peak_estimate_bytes": workload.peak_memory_bytes,
                     "setup_s": time.perf_counter() - t})
        print(f"{p.number:02d} {p.slug[:52]:52} eager {median:10.3f} ms  floor {floor:9.4f} ms "
              f"({rows[-1]['percent_of_floor']:5.1f}% of floor)  peak {peak / 2**30:6.2f} / "
              f"{workload.peak_memory_bytes / 2**30:6.2f} GiB", flush=True)
        del inputs
    props = torch.cuda.get_device_properties(0)
    document = {"benchmark": "suite_eager", "date": date.today().isoformat(), "gpu": props.name,
                "torch": torch.__version__, "copy_bandwidth_bytes_per_s": bandwidth, "samples": args.samples,
                "method": "CUPTI GPU span of one reference call, L2 flushed before each sample",
                "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(document, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
