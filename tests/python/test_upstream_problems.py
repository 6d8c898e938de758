"""`mkb import upstream-problems` and `mkb suite compare-upstream` on a small fake checkout of the
published harness that the tests write themselves, in its format: two shipped problem files that
draw on the CPU, one that draws on CUDA only, and SOL-ExecBench recipes with a fake dataset (one
recipe whose SHA-256 the dataset does not reproduce)."""

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch
from metakernelbench import upstream_problems as up

# Problem 23 as a published file would pose it (our own stand-in code), drawing on the CPU.
FAKE_23 = '''"""Paged MLA-cache gather with FP8 dequantization (a stand-in in the published format)."""

# Source: vLLM
# Reference: vllm-project/vllm@0000000 (test stand-in)
# Workload: tests/kernels/attention/test_cache.py;
#   a second line of the workload note
# License: Apache-2.0

import torch

BLOCK_SIZE = 16
NUM_BLOCKS = 1024
NUM_REQUESTS = 8
TOTAL_TOKENS = 4096
ENTRY = 576
SCALE = 0.1

@torch.no_grad()
def reference(src_cache, block_table, seq_lens, scale):
    codes = src_cache.view(torch.float8_e4m3fn)
    rows = []
    for request, length in enumerate(seq_lens.tolist()):
        p = torch.arange(length)
        rows.append(codes[block_table[request, p // BLOCK_SIZE].long(), p % BLOCK_SIZE].float() * scale)
    return torch.cat(rows)

def make_inputs():
    device = torch.device("cpu")
    values = torch.randn(NUM_BLOCKS, BLOCK_SIZE, ENTRY, device=device, dtype=torch.float16)
    src_cache = (values / SCALE).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(torch.uint8)
    block_table = torch.stack([torch.randperm(NUM_BLOCKS) for _ in range(NUM_REQUESTS)]).to(torch.int32)
    cuts = torch.randperm(TOTAL_TOKENS - 1)[:NUM_REQUESTS - 1].sort().values + 1
    bounds = torch.cat([cuts.new_zeros(1), cuts, cuts.new_full((1,), TOTAL_TOKENS)])
    return [src_cache, block_table, bounds.diff().to(torch.int32), SCALE]
'''

# Problem 24 posed differently from ours: it also returns the lengths, and its table is narrower.
FAKE_24 = '''"""Context-parallel paged gather (a stand-in that differs from the suite's problem 24)."""

# Source: vLLM
# Reference: vllm-project/vllm@0000000 (test stand-in)
# Workload: tests/kernels/test_cp_gather_fp8.py
# License: Apache-2.0

import torch

@torch.no_grad()
def reference(cache, block_table, seq_lens):
    rows = int(seq_lens.sum())
    return torch.zeros(rows, 576, dtype=torch.bfloat16), seq_lens.clone()

def make_inputs():
    cache = torch.randint(0, 256, (16, 64, 656), dtype=torch.uint8)
    block_table = torch.randperm(16)[:12].view(3, 4).to(torch.int32)
    seq_lens = torch.tensor([214, 214, 213], dtype=torch.int32)
    return [cache, block_table, seq_lens]
'''

# A file whose make_inputs() allocates on CUDA, as the published files do.
FAKE_36_CUDA = '''"""RMS normalization of rows of 128 (a stand-in that draws on CUDA)."""

# Source: FlashInfer-Trace / FlashInfer-Bench
# License: Apache-2.0

import torch

@torch.no_grad()
def reference(hidden_states, weight):
    x = hidden_states.float()
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(hidden_states.dtype)

def make_inputs():
    device = torch.device("cuda")
    return [torch.randn(4, 128, device=device, dtype=torch.bfloat16),
            torch.ones(128, device=device, dtype=torch.bfloat16)]
'''

# The SOL-ExecBench side: a dataset row's reference, and the problem file a recipe makes of it.
DATASET_REFERENCE = """import torch


def reference(x, alpha, exact):
    y = torch.nn.functional.gelu(x.to(torch.float32), approximate="none" if exact else "tanh")
    return (y * alpha).to(x.dtype)
"""
HEADER = (
    '"""GELU with a scale from a fake model (a stand-in for an assembled SOL-ExecBench problem)."""\n\n'
    "# Source: SOL-ExecBench\n# Reference: SOL-ExecBench/data/benchmark/L2/" + up.ENTRY_NAME + "\n"
    "# Workload: SOL-ExecBench/data/benchmark/L2/" + up.ENTRY_NAME + "/workload.jsonl\n"
    "#   record " + up.WORKLOAD_ID + "\n# License: NVIDIA Evaluation Dataset License Agreement\n\n"
)
TAIL = """

def make_inputs():
    return [torch.randn(64, 32, dtype=torch.bfloat16), 0.5, bool(torch.randint(0, 2, ()).item())]
"""


def _write_dataset(folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    rows = {
        "L1": [],
        "L2": [("fake_gelu_scale", DATASET_REFERENCE, [{"uuid": "0f-1e"}, {"uuid": "ab-cd"}])],
        "Quant": [],
    }
    for subset, entries in rows.items():
        table = pa.table(
            {
                "name": [e[0] for e in entries],
                "reference": [e[1] for e in entries],
                "workloads": [json.dumps(e[2]) for e in entries],
            },
            schema=pa.schema([("name", pa.string()), ("reference", pa.string()), ("workloads", pa.string())]),
        )
        pq.write_table(table, folder / f"{subset}.parquet")


def _recipe(problem: str, sha256: str | None = None) -> dict:
    layout = HEADER + re.sub(r"\w+|[^\w\s]", up.HOLE, DATASET_REFERENCE) + TAIL
    assembled = (
        HEADER.replace(up.ENTRY_NAME, "fake_gelu_scale").replace(up.WORKLOAD_ID, "ab-cd")
        + DATASET_REFERENCE
        + TAIL
    )
    units = len(re.findall(r"\w+|[^\w\s]", DATASET_REFERENCE))
    return {
        "problem": problem,
        "category": "mlp_norm",
        "subset": "L2",
        "row": 0,
        "workload": 1,
        "layout": layout,
        "runs": [[0, units]],
        "sha256": sha256 or hashlib.sha256(assembled.encode()).hexdigest(),
    }


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "MetaKernelBench"
    (root / "problems" / "kv_cache").mkdir(parents=True)
    (root / "problems" / "kv_cache" / "23_mla_cache_gather_dequantize_fp8.py").write_text(FAKE_23)
    (root / "problems" / "kv_cache" / "24_context_parallel_cache_gather_fp8_upconvert_bf16.py").write_text(
        FAKE_24
    )
    recipes = root / "problems" / "_sol_execbench"
    recipes.mkdir()
    (recipes / "29_gelu_scale_fake_bf16.json").write_text(json.dumps(_recipe("29_gelu_scale_fake_bf16")))
    (recipes / "30_gelu_scale_mismatch_bf16.json").write_text(
        json.dumps(_recipe("30_gelu_scale_mismatch_bf16", sha256="0" * 64))
    )
    _write_dataset(tmp_path / "sol-execbench")
    return root


def run(*args, env=None):
    proc = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_the_header_is_read_with_continuation_lines():
    docstring, fields = up.read_header(FAKE_23)
    assert docstring.startswith("Paged MLA-cache gather")
    assert fields["Source"] == "vLLM" and fields["License"] == "Apache-2.0"
    assert fields["Workload"] == "tests/kernels/attention/test_cache.py; a second line of the workload note"


def test_import_writes_a_suite_every_command_accepts(checkout, tmp_path):
    out = tmp_path / "imported"
    code, stdout, stderr = run(
        "import",
        "upstream-problems",
        str(checkout),
        "--out",
        str(out),
        "--sol-execbench",
        str(tmp_path / "sol-execbench"),
    )
    # The recipe the dataset does not reproduce is refused, so the import reports a failure...
    assert code == 1, stdout + stderr
    assert "30_gelu_scale_mismatch_bf16.json" in stdout and "refused" in stdout
    # ...and writes everything else.
    suite = mkb.load_suite(out)
    assert [p.number for p in suite] == [23, 24, 29]
    assert (out / ".gitignore").read_text().strip().endswith("*")
    p23 = suite.find(23)
    assert p23.family == "kv_cache" and p23.message.provenance.source == "vL"
    assert "a second line of the workload note" in p23.message.provenance.notes
    names = [(s.name, s.dtype, s.scalar, s.value) for s in p23.message.inputs]
    assert names == [
        ("src_cache", "uint8", False, None),
        ("block_table", "int32", False, None),
        ("seq_lens", "int32", False, None),
        ("scale", "float64", True, 0.1),
    ]
    assert [(o.dtype, list(o.shape)) for o in p23.message.outputs] == [("float32", ["4096", "576"])]
    # reference.py is the published file byte for byte, then the adapter: the fingerprint follows it.
    source = (p23.directory / "reference.py").read_text()
    assert source.startswith(FAKE_23) and up.ADAPTER_MARK in source
    assert hashlib.sha256(FAKE_23.encode()).hexdigest() in p23.message.provenance.notes
    # The assembled SOL-ExecBench problem: the dataset's text in the recipe's layout.
    p29 = suite.find(29)
    assert p29.message.provenance.source == "S2" and p29.family == "mlp_norm"
    assert "record ab-cd" in (p29.directory / "reference.py").read_text()
    scalars = {s.name: (s.dtype, s.value) for s in p29.message.inputs if s.scalar}
    assert scalars["alpha"] == ("float64", 0.5) and scalars["exact"][0] == "bool"
    # Every command accepts the folder: --suite and MKB_SUITE.
    code, stdout, _ = run("--suite", str(out), "problems", "show", "23", "--json")
    assert code == 0 and json.loads(stdout)["inputs"][3]["scalar"] is True
    code, stdout, _ = run("problems", "list", "--json", env=dict(os.environ, MKB_SUITE=str(out)))
    assert code == 0 and [p["number"] for p in json.loads(stdout)] == [23, 24, 29]
    code, stdout, stderr = run("--suite", str(out), "suite", "validate", "--json", "-p", "23", "-p", "29")
    assert code == 0, stdout + stderr


def test_in_place_updates_and_drawn_sizes_are_recorded(tmp_path):
    root = tmp_path / "checkout"
    (root / "problems" / "kv_cache").mkdir(parents=True)
    (root / "problems" / "kv_cache" / "25_block_copy_fake_uint8.py").write_text(
        '"""A block copy that updates its destination in place (stand-in)."""\n\n# Source: vLLM\n'
        "# License: Apache-2.0\n\nimport torch\n\n"
        "def reference(src, dst, mapping):\n    dst[mapping[:, 1]] = src[mapping[:, 0]]\n    return dst\n\n"
        "def make_inputs():\n    n = int(torch.randint(2, 5, ()).item())\n"
        "    chosen = torch.randperm(16)[: 2 * n]\n"
        "    return [torch.randint(0, 256, (16, 8), dtype=torch.uint8), "
        "torch.randint(0, 256, (16, 8), dtype=torch.uint8), torch.stack((chosen[:n], chosen[n:]), 1)]\n"
    )
    report = up.import_checkout(root, tmp_path / "out", seeds=range(8))
    assert report.ok, report.failed
    problem = mkb.load_suite(tmp_path / "out").find(25)
    assert [s.in_place for s in problem.message.inputs] == [False, True, False]
    assert problem.message.outputs[0].name == "dst"
    mapping = problem.message.inputs[2]
    assert list(mapping.shape) == ["mapping_dim0", "2"]
    full = problem.workload("full")
    assert full.param_minimums["mapping_dim0"] < full.params["mapping_dim0"] <= 4


def test_a_file_that_draws_on_cuda_needs_a_gpu(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the CUDA draw works here")
    root = tmp_path / "checkout"
    (root / "problems" / "mlp_norm").mkdir(parents=True)
    (root / "problems" / "mlp_norm" / "36_rmsnorm_fake_bf16.py").write_text(FAKE_36_CUDA)
    report = up.import_checkout(root, tmp_path / "out")
    assert not report.ok and "draws on CUDA" in report.failed[0][1] and "--device cuda" in report.failed[0][1]


def test_an_imported_gpu_only_problem_says_so_on_the_cpu(checkout, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    out = tmp_path / "imported"
    assert up.import_checkout(checkout, out, numbers=[23]).ok
    reference = next(out.glob("kv_cache/23_*/reference.py"))
    # As if it had been imported on a GPU (--device cuda), which is what the published files need.
    reference.write_text(reference.read_text().replace('_MKB_DRAWN_ON = "cpu"', '_MKB_DRAWN_ON = "cuda"'))
    problem = mkb.load_suite(out).find(23)
    with pytest.raises(RuntimeError, match="no small CPU workload, so it runs on a GPU only"):
        problem.make_inputs("small")
    code, stdout, _ = run("--suite", str(out), "suite", "validate", "--json")
    assert code == 1 and "runs on a GPU only" in stdout


def test_assembly_refuses_a_dataset_that_does_not_reproduce_the_file(checkout, tmp_path):
    entries = up.read_dataset(tmp_path / "sol-execbench")
    good, bad = up.sol_recipes(checkout)
    assert up.assemble_recipe(good, entries).number == 29
    with pytest.raises(up.UpstreamError, match="differs from the one the recipes were made from; refused"):
        up.assemble_recipe(bad, entries)
    # A dataset row whose text changed no longer reproduces the recorded hash either.
    changed = {
        k: up.DatasetEntry(v.name, v.reference.replace("alpha", "beta"), v.workload_ids)
        for k, v in entries.items()
    }
    with pytest.raises(up.UpstreamError, match="refused"):
        up.assemble_recipe(good, changed)


def test_compare_upstream_reports_matches_and_differences(checkout):
    code, stdout, stderr = run("suite", "compare-upstream", str(checkout), "--json")
    assert code == 1, stderr
    rows = {r["number"]: r for r in json.loads(stdout)}
    assert set(rows) == {23, 24}
    assert rows[23]["matches"], rows[23]
    assert rows[23]["ours_vs_published_factor"] <= 1 and rows[23]["published_vs_ours_factor"] <= 1
    assert not rows[24]["matches"]
    differences = " ".join(rows[24]["signature_differences"])
    assert "returns a single_tensor here, published a tuple" in differences
    assert "block_table" not in differences  # width 4 is within the drawn range of ours
    code, stdout, _ = run("suite", "compare-upstream", str(checkout), "-p", "23")
    assert code == 0 and "match" in stdout


def test_compare_upstream_catches_a_changed_constant(checkout):
    path = checkout / "problems" / "kv_cache" / "23_mla_cache_gather_dequantize_fp8.py"
    path.write_text(FAKE_23.replace("SCALE = 0.1", "SCALE = 0.125"))
    code, stdout, _ = run("suite", "compare-upstream", str(checkout), "--json", "-p", "23")
    row = json.loads(stdout)[0]
    assert code == 1 and not row["matches"]
    assert any("scale: fixed at 0.1 here, published 0.125" in d for d in row["signature_differences"])


def test_compare_upstream_out_streams_rows_and_a_rerun_resumes(checkout, tmp_path):
    log = tmp_path / "compare.jsonl"
    code, _, _ = run("suite", "compare-upstream", str(checkout), "--json", "-p", "23", "--out", str(log))
    assert code == 0
    assert [json.loads(line)["number"] for line in log.read_text().splitlines()] == [23]
    # A kill mid-write leaves a cut line: it is dropped, and that problem runs again.
    log.write_text(log.read_text() + '{"number": 24, "matc')
    code, stdout, _ = run("suite", "compare-upstream", str(checkout), "--json", "--out", str(log))
    assert code == 1  # 24 differs
    assert [r["number"] for r in json.loads(stdout)] == [24]  # 23 was in the file: not rerun
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["number"] for r in rows] == [23, 24] and rows[0]["matches"] and not rows[1]["matches"]


def test_a_row_log_that_is_not_json_lines_is_named(tmp_path):
    log = tmp_path / "validate.jsonl"
    log.write_text('{"number": 23, "ok": true}\nnot json\n{"number": 25}\n')
    code, _, stderr = run("suite", "validate", "-p", "23", "--out", str(log))
    assert code == 2 and f"--out {log}:2: not a JSON line" in stderr


def test_validate_out_streams_reports_and_a_rerun_skips_them(tmp_path):
    log = tmp_path / "validate.jsonl"
    code, _, stderr = run("suite", "validate", "-p", "25", "--out", str(log))
    assert code == 0, stderr
    assert [json.loads(line)["number"] for line in log.read_text().splitlines()] == [25]
    code, stdout, _ = run("suite", "validate", "-p", "25", "-p", "28", "--out", str(log))
    assert code == 0 and "1 problems already in" in stdout and "checking 28" in stdout
    assert [json.loads(line)["number"] for line in log.read_text().splitlines()] == [25, 28]


def test_compare_upstream_on_the_cpu_makes_the_published_cuda_tensors_there(tmp_path):
    # The published files draw on CUDA; with no GPU visible the comparison makes those tensors on
    # the CPU (the same shapes and dtypes), so a fidelity check needs no GPU. The importer does not:
    # what it writes must draw as published (test_a_file_that_draws_on_cuda_needs_a_gpu).
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the published draw runs as it is")
    root = tmp_path / "checkout"
    (root / "problems" / "mlp_norm").mkdir(parents=True)
    published = FAKE_36_CUDA.replace("4, 128", "520128, 128").replace(
        "torch.ones(128, device=device, dtype=torch.bfloat16)",
        "(1 + 0.1 * torch.randn(128, device=device)).to(torch.bfloat16).cuda()",
    )
    path = root / "problems" / "mlp_norm" / "36_rmsnorm_h128_qwen3_30b_bf16.py"
    path.write_text(published)
    code, stdout, stderr = run("suite", "compare-upstream", str(root), "--device", "cpu", "--json")
    row = json.loads(stdout)[0]
    assert row["error"] == "" and row["signature_differences"] == [], row
    assert code == 0 and row["matches"], stderr
    # Published code that reaches for CUDA some other way still fails, by name.
    path.write_text(
        published.replace("def make_inputs():", "def make_inputs():\n    torch.cuda.synchronize()")
    )
    code, stdout, _ = run("suite", "compare-upstream", str(root), "--device", "cpu", "--json")
    row = json.loads(stdout)[0]
    assert code == 1 and not row["matches"] and "CUDA" in row["error"], row


def test_compare_on_the_cpu_refuses_a_problem_too_large_for_its_memory(checkout, monkeypatch):
    monkeypatch.setattr(up, "_available_memory_bytes", lambda: 1024)
    file = next(f for f in up.published_files(checkout) if f.number == 23)
    row = up.compare_problem(mkb.load_suite().find(23), file, seed=0, device="cpu")
    assert not row.matches and "GiB is available: compare it on a GPU (--device cuda)" in row.error
