"""Many machines on Ray (metakernelbench.distributed, `mkb run --ray`): on a local Ray cluster
started by the test, with two declared (fake) GPUs and the CPU judge, the demo's 12 trials
finish with attempts as Ray tasks and evaluations on one judge actor per GPU; each evaluation
reports its actor's device slot; a task process and a GPU actor killed mid-run lose nothing
(the trial is retried as a transient failure)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import metakernelbench as mkb  # noqa: E402
from metakernelbench import distributed  # noqa: E402
from metakernelbench.cli import demo as demo_cli  # noqa: E402

pytestmark = pytest.mark.timeout(400)


def _killer(pid_dir: Path, backend: distributed.RayBackend, done: threading.Event, killed: dict) -> None:
    """Kills the first attempt task's process once it has run a while (mid-attempt), then one
    GPU actor's process."""
    deadline = time.monotonic() + 240
    while not done.is_set() and time.monotonic() < deadline:
        pids = sorted(pid_dir.glob("*.pid"), key=lambda p: p.stat().st_mtime)
        if pids and time.time() - pids[0].stat().st_mtime > 1.5 and "task" not in killed:
            pid = int(pids[0].stem)
            killed["task"] = (pid, pids[0].read_text())
            os.kill(pid, signal.SIGKILL)
        since = killed.setdefault("t", time.monotonic()) if "task" in killed else None
        if since is not None and "actor" not in killed and time.monotonic() > since + 4:
            pid = backend.actor_pids()[0]
            killed["actor"] = pid
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.2)


def test_the_demo_on_a_local_ray_cluster_survives_killed_workers(tmp_path):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    store = tmp_path / "ray-demo.db"
    backend = distributed.RayBackend(
        None,
        device="cpu",
        workspace_root=tmp_path / "workspaces",
        init={"num_cpus": 3, "num_gpus": 2, "object_store_memory": 80 * 1024 * 1024},
        executor_options={"store_path": str(store)},
        pid_dir=pid_dir,
    )
    try:
        # One judge actor per GPU, each seeing its own GPU alone.
        slots = sorted(s for actor in backend.gpu_slots() for s in actor)
        assert slots == ["0", "1"]
        done = threading.Event()
        killed: dict = {}
        killer = threading.Thread(target=_killer, args=(pid_dir, backend, done, killed), daemon=True)
        killer.start()
        result = demo_cli.demo_experiment(concurrency=2).run(
            store, executor=backend.executor, retry_delay_s=0.5
        )
        done.set()
        killer.join(5)
    finally:
        backend.close()

    assert result.complete, (result.failed, result.blocked)
    s = mkb.Store(store, read_only=True)
    trials = s.trials("demo")
    assert len(trials) == 12
    assert set(trials["state"]) <= {"finished", "skipped"}
    assert int((trials["passed"] == 1).sum()) == 12

    # The killed task's trial was retried: its lost try is archived as transient.
    assert "task" in killed, "the test never saw an attempt task to kill"
    archived = s.table("archived_tries", "demo")
    assert (archived["reason"] == "transient").any()
    assert killed["task"][1] in set(archived["trial_id"])

    # Every evaluation names the GPU slot (CUDA_VISIBLE_DEVICES) of the actor that judged it;
    # both actors judged. An evaluation sent to the killed actor is a judge failure: not
    # counted, and the agent submits again.
    verdicts = s.table("verdicts", "demo")
    assert len(verdicts) >= 24
    seen = set()
    for status, message, raw in zip(verdicts["status"], verdicts["message"], verdicts["verdict_json"]):
        if status == "infra_error":
            assert "the GPU actor judging it was lost" in message, message
            continue
        verdict = raw if isinstance(raw, dict) else json.loads(raw)
        seen.add(verdict.get("environment", {}).get("visible_devices"))
    assert seen == {"0", "1"}
