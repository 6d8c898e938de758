"""
The transfer protocol (libmkb/protocol). Use metakernelbench.experiments to define and run experiments.
"""
from __future__ import annotations
import metakernelbench._core
import metakernelbench._core.store
import typing
__all__: list[str] = ['TrialExecutor', 'plan', 'run']
class TrialExecutor:
    """
    Base of executors written in C++ (libmkb/protocol/trial_executor.h), e.g. the agent's.
    """
def plan(spec: typing.Any, suite: metakernelbench._core.Suite, store: metakernelbench._core.store.ResultStore = None, rerun_stale: bool = False, fingerprint_salt: str = '') -> dict:
    """
    The dry run: {'spec': the ExperimentSpec with defaults, 'entries': [one dict per trial, in start order: trial_id, arm, replicate, depends_on, action ('run', 'reuse', 'rerun_failed', 'rerun_interrupted', 'stale', 'rerun_stale', 'check_skill', 'blocked'), reason, ...], 'outside_plan': [ids of the experiment's stored trials that the plan no longer holds: a run retires them]}. Reads the store only.
    """
def run(spec: typing.Any, suite: metakernelbench._core.Suite, store: metakernelbench._core.store.ResultStore, executor: typing.Any, rerun_stale: bool = False, fingerprint_salt: str = '', retry_delay_s: typing.SupportsFloat | typing.SupportsIndex = 5.0, progress: typing.Any = None, cancel: typing.Any = None) -> dict:
    """
    Runs the experiment into the store and returns the summary dict (progress totals, failed, blocked, stale_kept, warnings, complete). Blocks until every runnable trial has ended, with the GIL released; `progress(event: dict)` is called for each event, `cancel()` about five times a second (True: start nothing new, wait for running trials, raise CancelledError). Ctrl-C cancels likewise, then raises KeyboardInterrupt. Raises FailedPreconditionError for stale trials (unless rerun_stale) or when another process runs the experiment.
    """
