"""An experiment over many machines, on Ray (docs/protocol.md, "Many machines on Ray").

    from metakernelbench import distributed
    with distributed.RayBackend("auto", model="anthropic/claude-sonnet-4-5") as backend:
        result = experiment.run("results.db", executor=backend.executor)

`mkb run ... --ray ADDRESS|auto` does the same. What runs where:

- **The driver** (this process) runs the protocol (libmkb/protocol: order, retries, resume) and
  owns the one results store, an SQLite file on its machine; every attempt comes back to it and
  is stored there as it ends.
- **Attempts** (the agent, its model calls and its shell sandbox: CPU work) run as Ray tasks,
  one CPU each, on any node of the cluster, in a workspace under that node's
  `workspace_root`.
- **Evaluations** run on Ray actors, one per GPU of the cluster (`num_gpus=1`: Ray gives each
  its own GPU and sets CUDA_VISIBLE_DEVICES for it), each holding an mkb::Judge with warm hosts
  that it reuses from one evaluation to the next. A dispatcher actor hands each evaluation to a
  free GPU actor; the time it waits for one is the attempt's GPU queueing.
- **A node that dies** loses nothing stored: an attempt whose task was lost (its worker
  process or its node died) is a transient failure (UnavailableError), so the protocol archives
  its try and runs the trial again. An evaluation whose GPU actor was lost is a judge failure
  inside the attempt: not counted, the agent submits again (the attempt loop turns
  max_consecutive_judge_failures in a row into a transient failure); Ray restarts the actor.

Every node needs metakernelbench installed, the suite at the same path as the driver's, the DSL
toolchains (`mkb dsl install`) and, for the agent's shell, bubblewrap. Ray is an optional
extra: `pip install metakernelbench[ray]`; nothing here is imported otherwise.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _core


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise _core.FailedPreconditionError(
            "--ray: Ray is not installed (pip install 'metakernelbench[ray]')"
        ) from None
    return ray


# Ray failures that mean a worker process, an actor or a node went away: the trial is retried.
_LOST = (
    "ActorDiedError",
    "ActorUnavailableError",
    "NodeDiedError",
    "ObjectLostError",
    "ObjectReconstructionFailedError",
    "OwnerDiedError",
    "RayActorError",
    "TaskCancelledError",
    "WorkerCrashedError",
    "LocalRayletDiedError",
    "RaySystemError",
)


def _lost(error: BaseException) -> bool:
    return any(type(error).__name__ == name for name in _LOST) or any(
        cls.__name__ in _LOST for cls in type(error).__mro__
    )


class JudgeActor:
    """One GPU's judge (created with num_gpus=1: Ray sets CUDA_VISIBLE_DEVICES to its GPU, which
    the judge's device pool takes as its only slot). Reuses its warm hosts across evaluations."""

    def __init__(self, python: str | None = None):
        environment = [f"{k}={v}" for k, v in sorted(os.environ.items())]
        self.judge = _core.Judge(
            python or sys.executable, environment, keep_warm_host=True, host_template=True
        )

    def devices(self) -> list[str]:
        return list(self.judge.devices)

    def pid(self) -> int:
        return os.getpid()

    def evaluate(self, request: Any) -> Any:
        return self.judge.evaluate(request)


class EvaluationDispatcher:
    """Hands each evaluation to a free GPU actor (an asyncio queue of them); an evaluation waits
    while every GPU is busy, and that wait is reported as the verdict's phase_times.queue_s."""

    def __init__(self, actors: list[Any]):
        import asyncio

        self.actors = list(actors)
        self.free: asyncio.Queue = asyncio.Queue()
        for actor in self.actors:
            self.free.put_nowait(actor)

    def size(self) -> int:
        return len(self.actors)

    async def evaluate(self, request: Any) -> tuple[str, Any, float]:
        """("ok", verdict, seconds queued) or ("lost", why, seconds queued)."""
        start = time.monotonic()
        actor = await self.free.get()
        queued = time.monotonic() - start
        try:
            verdict = await actor.evaluate.remote(request)
            return "ok", verdict, queued
        except Exception as error:  # noqa: BLE001 - a judge error is a status, never a crash here
            kind = "lost" if _lost(error) else "error"
            return kind, f"{type(error).__name__}: {error}", queued
        finally:
            # A lost actor is restarted by Ray (max_restarts): its handle stays usable.
            self.free.put_nowait(actor)


def _remote_evaluator(dispatcher: Any) -> Any:
    """The attempt's evaluator: sends the request to the dispatcher and waits (ray.get releases
    the GIL). The queue time is added to the verdict; a lost GPU actor is UnavailableError."""
    ray = _ray()

    def evaluate(request: Any) -> Any:
        kind, value, queued = ray.get(dispatcher.evaluate.remote(request))
        if kind == "lost":
            raise _core.UnavailableError(f"the GPU actor judging it was lost ({value})")
        if kind == "error":
            raise _core.UnavailableError(f"the GPU actor could not judge it ({value})")
        verdict = value.to_dict()
        times = verdict.setdefault("phase_times", {})
        times["queue_s"] = float(times.get("queue_s", 0.0)) + queued
        return verdict

    return evaluate


_EXECUTORS: dict[tuple, Any] = {}


def run_trial(spec: Any, options: Mapping[str, Any], dispatcher: Any) -> Any:
    """The body of an attempt task on a worker node: the agent runs the trial with the GPU
    actors as its judge. Returns the Attempt (a message: pickled back to the driver)."""
    from . import agent

    pid_file = options.get("pid_dir")
    if pid_file:  # tests find the task's process here to kill it mid-run
        Path(pid_file, f"{os.getpid()}.pid").write_text(str(spec.trial_id))
    # One executor per worker process and run (the dispatcher's actor id names the run).
    key = (str(getattr(dispatcher, "_actor_id", id(dispatcher))), repr(sorted(options.items(), key=str)))
    executor = _EXECUTORS.get(key)
    if executor is None:
        executor = _EXECUTORS[key] = agent.AgentTrialExecutor(
            options["workspace_root"],
            suite_root=options["suite_root"],
            device=options["device"],
            evaluator=_remote_evaluator(dispatcher),
            models=options.get("models"),
            **dict(options.get("executor_options") or {}),
        )
    return executor.run(spec)


class RayTrialExecutor:
    """The protocol's executor on the driver: runs each trial as a Ray task and waits for it.
    A task whose worker or node was lost raises UnavailableError (a transient failure: the
    protocol retries the trial); the agent's own errors keep their kind."""

    def __init__(self, backend: RayBackend):
        from .experiments import agent_fingerprint_salt

        self.backend = backend
        # The agent's: a trial run on Ray and one run locally have the same task fingerprint.
        self.fingerprint_salt = agent_fingerprint_salt()

    def __call__(self, spec: Any) -> Any:
        ray = _ray()
        backend = self.backend
        ref = backend._task.remote(spec, backend.task_options, backend.dispatcher)
        try:
            return ray.get(ref)
        except Exception as error:  # noqa: BLE001 - mapped to the protocol's two kinds
            cause = getattr(error, "cause", None)
            if isinstance(cause, _core.Error):
                raise cause from None
            if _lost(error) or isinstance(cause, ConnectionError):
                raise _core.UnavailableError(
                    f"{spec.trial_id}: the Ray task running it was lost ({type(error).__name__})"
                ) from None
            raise


class RayBackend:
    """A connection to a Ray cluster with the run's GPU actors and dispatcher. `address`: a
    cluster's address ("ray://host:10001", "host:6379"), "auto" (the cluster this machine
    belongs to), or "local"/None (a cluster of this machine alone, started here and stopped by
    close()). `num_gpus`: GPU actors to start (default: every GPU of the cluster);
    `init`: more ray.init arguments (a test declares fake GPUs with num_gpus=2). `task_cpus`:
    CPUs each attempt task takes."""

    def __init__(
        self,
        address: str | None,
        *,
        suite_root: str | os.PathLike | None = None,
        device: str = "cuda",
        workspace_root: str | os.PathLike | None = None,
        num_gpus: int | None = None,
        task_cpus: float = 1.0,
        init: Mapping[str, Any] | None = None,
        models: Any = None,
        executor_options: Mapping[str, Any] | None = None,
        pid_dir: str | os.PathLike | None = None,
    ):
        from ._paths import default_suite_root

        ray = _ray()
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            kwargs = dict(init or {})
            kwargs.setdefault("include_dashboard", False)
            kwargs.setdefault("log_to_driver", False)
            ray.init(address=None if address in (None, "", "local") else address, **kwargs)
            self.started = True
        gpus = int(ray.cluster_resources().get("GPU", 0))
        wanted = gpus if num_gpus is None else num_gpus
        if wanted < 1 or wanted > gpus:
            if self.started:
                ray.shutdown()
            raise _core.FailedPreconditionError(
                f"--ray: the cluster has {gpus} GPUs; the judge needs at least one"
                + ("" if num_gpus is None else f" (asked for {num_gpus})")
            )
        actor = ray.remote(num_gpus=1, num_cpus=0, max_restarts=-1, max_task_retries=0)(JudgeActor)
        # Each actor's own interpreter (the driver's path may not exist on another node).
        self.actors = [actor.remote(None) for _ in range(wanted)]
        dispatcher = ray.remote(num_cpus=0, max_restarts=-1)(EvaluationDispatcher)
        self.dispatcher = dispatcher.remote(self.actors)
        self._task = ray.remote(num_cpus=task_cpus, max_retries=0)(run_trial)
        root = Path(workspace_root) if workspace_root else Path(tempfile.gettempdir()) / "mkb-ray-workspaces"
        self.task_options: dict[str, Any] = {
            "suite_root": str(suite_root or default_suite_root()),
            "workspace_root": str(root),
            "device": device,
            "models": models,
            "executor_options": dict(executor_options or {}),
            "pid_dir": str(pid_dir) if pid_dir else "",
        }
        self.executor = RayTrialExecutor(self)

    def gpu_slots(self) -> list[list[str]]:
        """Each GPU actor's device slots (its CUDA_VISIBLE_DEVICES, as its judge sees it)."""
        return self.ray.get([a.devices.remote() for a in self.actors])

    def actor_pids(self) -> list[int]:
        return self.ray.get([a.pid.remote() for a in self.actors])

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.ray.kill(self.dispatcher)
        if self.started:
            self.ray.shutdown()

    def __enter__(self) -> RayBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["EvaluationDispatcher", "JudgeActor", "RayBackend", "RayTrialExecutor", "run_trial"]
