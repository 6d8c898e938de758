"""`mkb run` fails fast: the model id, the provider's API key and the device are checked before
anything is created. Each failure is one clear line and exit status 2, and leaves no store and
no workspace folder behind."""

from __future__ import annotations

import os
import subprocess
import sys

import metakernelbench as mkb
import pytest
from metakernelbench.cli import run as run_cli


def mkb_run(tmp_path, *args, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environment.update(env or {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "metakernelbench.cli",
            "run",
            "--store",
            str(tmp_path / "r.db"),
            "--problems",
            "28",
            "--replicates",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
    )


def assert_refused(done, tmp_path, *phrases):
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(lines) == 1, lines
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refused run must create nothing"


def test_unknown_provider(tmp_path):
    done = mkb_run(tmp_path, "--model", "foo/bar", "--device", "cpu")
    assert_refused(done, tmp_path, "--model", "unknown provider 'foo'")


def test_malformed_model_id(tmp_path):
    done = mkb_run(tmp_path, "--model", "gpt-5", "--device", "cpu")
    assert_refused(done, tmp_path, "--model", "no provider prefix")


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openai/gpt-5", "OPENAI_API_KEY"),
    ],
)
def test_missing_api_key(tmp_path, model, variable):
    done = mkb_run(tmp_path, "--model", model, "--device", "cpu")
    assert_refused(done, tmp_path, "--model", f"{variable} is not set")


def test_the_key_check_itself(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(mkb.FailedPreconditionError, match="ANTHROPIC_API_KEY"):
        mkb.agent.check_model("anthropic/claude-sonnet-4-5")
    mkb.agent.check_model("anthropic/claude-sonnet-4-5", api_key="sk-test")  # no request made
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    mkb.agent.check_model("anthropic/claude-sonnet-4-5")


@pytest.mark.skipif(run_cli.gpu_visible(), reason="a GPU is visible here")
def test_device_cuda_without_a_gpu(tmp_path):
    done = mkb_run(tmp_path, "--model", "scripted/demo", "--device", "cuda")
    assert_refused(done, tmp_path, "--device cuda", "no GPU is visible")


def test_gpus_with_the_cpu_judge_and_malformed_gpus(tmp_path):
    done = mkb_run(tmp_path, "--model", "scripted/demo", "--device", "cpu", "--gpus", "0,1")
    assert_refused(done, tmp_path, "--gpus", "CPU")
    done = mkb_run(tmp_path, "--model", "scripted/demo", "--device", "cpu", "--gpus", "0,,x")
    assert_refused(done, tmp_path, "--gpus", "empty entry")


def test_the_dsl_script_needs_the_gpu_judge(tmp_path):
    done = mkb_run(tmp_path, "--model", "scripted/demo-dsl", "--device", "cpu")
    assert_refused(done, tmp_path, "--model", "scripted/demo-dsl", "--device cuda")


def test_ray_without_ray_installed(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(
        mkb.FailedPreconditionError, match=r"--ray: Ray is not installed .*metakernelbench\[ray\]"
    ):
        run_cli.preflight("scripted/demo", "cpu", "cpu", None, "auto")
    with pytest.raises(mkb.InvalidArgumentError, match="--gpus"):
        run_cli.preflight("scripted/demo", "cpu", "cpu", "0", "auto")


def test_a_run_that_passes_the_checks_still_runs(tmp_path):
    done = mkb_run(tmp_path, "--model", "scripted/demo", "--device", "cpu", "--dry-run")
    assert done.returncode == 0, done.stderr
