"""Every problem's reference on its small CPU workload: runs, matches its metadata, is
deterministic for a seed and differs across seeds."""

import pytest
import torch

import metakernelbench as mkb

SUITE = mkb.load_suite()
DTYPES = {
    "float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}
SCALAR_TYPES = {"float64": float, "int64": int, "bool": bool}


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
            assert torch.equal(x, y), f"reference modified input {spec.name}"


def _upcast(inputs):
    wide = (torch.float32, torch.float16, torch.bfloat16)
    return [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.dtype in wide else _fresh([x])[0]
            for x in inputs]


@pytest.mark.gpu
@pytest.mark.parametrize("problem", SUITE, ids=lambda p: f"{p.number:02d}")
def test_full_workload_runs_on_the_gpu_within_its_memory_estimate(problem):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
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
