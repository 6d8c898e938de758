"""Every problem's reference on its small CPU workload: runs, matches its metadata, is
deterministic for a seed and differs across seeds."""

import metakernelbench as mkb
import pytest
import torch
from metakernelbench.judge.values import DTYPES, same_bits

SUITE = mkb.load_suite()


def _outputs(problem, out):
    container = problem.message.output_container
    if container == "single_tensor":
        assert isinstance(out, torch.Tensor)
        return [out]
    assert isinstance(out, tuple if container == "tuple" else list)
    return list(out)


def _fresh(inputs):
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


SCALAR_TYPES = {"float64": float, "int64": int, "bool": bool}


@pytest.mark.parametrize("problem", SUITE, ids=lambda p: f"{p.number:02d}")
def test_reference_matches_metadata(problem):
    inputs = problem.make_inputs("small", seed=1)
    assert len(inputs) == len(problem.message.inputs)
    for x, spec in zip(inputs, problem.message.inputs):
        if spec.scalar:
            assert type(x) is SCALAR_TYPES[spec.dtype], spec.name
            assert spec.value is None or x == spec.value, spec.name
            continue
        assert type(x) is torch.Tensor, spec.name
        assert x.dtype == DTYPES[spec.dtype], spec.name
        assert problem.shape_fits(x.shape, spec, "small"), (spec.name, tuple(x.shape))
    outs = _outputs(problem, problem.reference(*_fresh(inputs)))
    assert len(outs) == len(problem.message.outputs)
    for y, spec in zip(outs, problem.message.outputs):
        assert type(y) is torch.Tensor
        assert y.dtype == DTYPES[spec.dtype], spec.name
        assert problem.shape_fits(y.shape, spec, "small"), (spec.name, tuple(y.shape))
        if y.is_floating_point():
            assert torch.isfinite(y.float()).all(), spec.name


@pytest.mark.parametrize("problem", SUITE, ids=lambda p: f"{p.number:02d}")
def test_reference_is_deterministic_for_a_seed_and_varies_across_seeds(problem):
    a = _outputs(problem, problem.reference(*problem.make_inputs("small", seed=7)))
    b = _outputs(problem, problem.reference(*problem.make_inputs("small", seed=7)))
    c = _outputs(problem, problem.reference(*problem.make_inputs("small", seed=8)))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, z) for x, z in zip(a, c))


@pytest.mark.parametrize("problem", SUITE, ids=lambda p: f"{p.number:02d}")
def test_reference_leaves_inputs_untouched_unless_in_place(problem):
    inputs = problem.make_inputs("small", seed=3)
    before = _fresh(inputs)
    problem.reference(*inputs)
    for x, y, spec in zip(inputs, before, problem.message.inputs):
        if not spec.in_place and not spec.scalar:
            assert same_bits(x, y), f"reference modified input {spec.name}"


def _upcast(inputs):
    wide = (torch.float32, torch.float16, torch.bfloat16)
    return [
        x.to(torch.float64) if isinstance(x, torch.Tensor) and x.dtype in wide else _fresh([x])[0]
        for x in inputs
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("problem", SUITE, ids=lambda p: f"{p.number:02d}")
def test_full_workload_runs_on_the_gpu_within_its_memory_estimate(problem):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    if problem.workload("full").peak_memory_bytes > free:
        # 45's full workload (81.7 GiB) on an 80 GB H100: an out-of-memory error here held its
        # tensors in the traceback and failed the next three problems too (2026-12-05).
        pytest.skip(
            f"the full workload needs {problem.workload('full').peak_memory_bytes / 2**30:.1f} GiB; "
            f"{free / 2**30:.1f} GiB free on this GPU"
        )
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    inputs = problem.make_inputs("full", device="cuda", seed=11)
    expected = _outputs(problem, problem.correctness_reference(*_fresh(inputs)))
    anchor = _outputs(problem, problem.correctness_reference(*_upcast(inputs)))
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    estimate = problem.workload("full").peak_memory_bytes
    print(f"{problem.number:02d} peak {peak / 2**20:.1f} MiB, estimate {estimate / 2**20:.1f} MiB")
    for e, a in zip(expected, anchor):
        assert e.device.type == "cuda"
        if e.is_floating_point():
            assert torch.isfinite(e.float()).all()
            assert a.dtype in (torch.float64, e.dtype)
    assert peak <= 1.25 * estimate, f"peak {peak} B is over the estimate {estimate} B"
    del inputs, expected, anchor
    torch.cuda.empty_cache()
