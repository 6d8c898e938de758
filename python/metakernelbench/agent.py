"""Agents (SPEC §4): model clients, one attempt at a problem, and the trial executor.

    import metakernelbench as mkb
    attempt = mkb.agent.run_attempt("28", "cutedsl", "scripted/demo", device="cpu")
    print(attempt.final.status, attempt.skill_out.text)

Models are named by id -- ``openai/<m>``, ``anthropic/<m>``,
``openai-compatible/<m>@<base_url>`` (vLLM, SGLang, llama.cpp, LiteLLM, OpenRouter) and
``scripted/demo`` (a built-in script, not an LLM) -- or given as any Python object with a
``chat(messages, tools)`` method (see :class:`ModelAdapter`). The attempt loop, the clients, the
sandbox and the judge run in the C++ core; calls block without holding the GIL. docs/agent.md
describes the whole of it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _core
from .judge import gpu_list
from .suite import Problem, load_suite

RECEIVED_SKILL_HEADER: str = _core.RECEIVED_SKILL_HEADER
#: The scripted model that writes DSL kernels (the GPU demo): a script, not an LLM.
SCRIPTED_DSL_MODEL: str = _core.SCRIPTED_DSL_MODEL

parse_model_id = _core.parse_model_id
skill_rules = _core.skill_rules
render_received_skill = _core.render_received_skill


def check_model(model: str, **model_options: Any) -> None:
    """Raises what the first attempt with `model` would: InvalidArgumentError for a malformed
    id or an unknown provider, FailedPreconditionError when the provider's API key is not set.
    Makes no request."""
    _core.ChatModel(model, _model_options(model_options))


def make_skill(text: str, max_bytes: int = 16384) -> _core.Message:
    """A Skill message from a SKILL.md text: cut at `max_bytes`, SHA-256, flags (empty,
    truncated, contains_code with evidence lines)."""
    return _core.make_skill(text, max_bytes)


def model_cost(
    model: str,
    *,
    input_tokens: int = 0,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
    output_tokens: int = 0,
    prices: dict[str, dict[str, float]] | None = None,
) -> float:
    """USD for tokens at `model`'s price: the built-in list prices, overlaid by the JSON file
    MKB_PRICE_TABLE names and by `prices` ({"pattern": {"input", "cached_input", "cache_write",
    "output"}}, USD per million tokens)."""
    return _core.model_cost(
        model,
        input_tokens,
        cached_input_tokens,
        cache_write_tokens,
        output_tokens,
        json.dumps(prices) if prices else "",
    )


class ModelAdapter:
    """Lets any object with ``chat(messages, tools)`` act as an attempt's model.

    ``messages`` are dicts {"role": "system" | "user" | "assistant" | "tool", "content": str},
    assistant ones with "tool_calls" [{"id", "name", "arguments": dict}], tool ones with
    "tool_call_id" and "name"; ``tools`` are [{"name", "description", "parameters"}] (empty when
    the model uses the text protocol). ``chat`` returns a str (text only) or a dict {"content",
    "tool_calls": [{"id"?, "name", "arguments": dict | str}], "usage": {"input_tokens",
    "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens"}}.

    Optional attributes of the object: ``id`` (the model's name in the results), ``native_tools``
    (False: the text protocol), ``is_llm`` (False for stand-ins). Raising ConnectionError or
    TimeoutError marks a transient failure (the trial may be retried); other exceptions fail it.
    """

    def __init__(self, model: Any):
        if not callable(getattr(model, "chat", None)):
            raise _core.InvalidArgumentError(
                f"model: {type(model).__name__} has no chat(messages, tools) method"
            )
        self.model = model
        self.id = str(getattr(model, "id", None) or f"python/{type(model).__name__}")
        self.native_tools = bool(getattr(model, "native_tools", True))
        self.is_llm = bool(getattr(model, "is_llm", True))

    def chat_json(self, request_json: str) -> str:
        request = json.loads(request_json)
        reply = self.model.chat(request["messages"], request["tools"])
        if isinstance(reply, str):
            reply = {"content": reply}
        if not isinstance(reply, dict):
            raise TypeError(f"{self.id}.chat returned {type(reply).__name__}, not a dict or str")
        return json.dumps(reply)


def _model_arg(model: Any) -> Any:
    if isinstance(model, str) or hasattr(model, "chat_json"):
        return model
    return ModelAdapter(model)


def _model_options(options: dict[str, Any] | None) -> dict[str, Any] | None:
    if not options:
        return None
    out = dict(options)
    if isinstance(out.get("extra_body"), dict):
        out["extra_body"] = json.dumps(out["extra_body"])
    return out


def chat(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    max_output_tokens: int = 0,
    **model_options: Any,
) -> dict[str, Any]:
    """One request to a model through the C++ client, e.g. to check a key or an endpoint:
    ``chat("openai/gpt-5", [{"role": "user", "content": "hi"}])``. Returns {"content",
    "tool_calls", "usage", "stop_reason", "model"}. ``model_options``: api_key, base_url,
    request_timeout_s, connect_timeout_s, max_attempts, initial_backoff_s, max_backoff_s,
    max_retry_after_s, jitter, max_output_tokens, extra_body, extra_headers, prompt_caching.
    Blocks for the request and its retries (without the GIL)."""
    client = _core.ChatModel(model, _model_options(model_options))
    request = {"messages": messages, "tools": tools or [], "max_output_tokens": max_output_tokens}
    return json.loads(client.chat(json.dumps(request)))


def _problem_message(problem: Problem | str | int | _core.Message, suite_root: str | Path | None):
    if isinstance(problem, Problem):
        return problem.message
    if isinstance(problem, _core.Message):
        return problem
    return load_suite(suite_root).find(problem).message


def _device(device: str) -> str:
    if device not in ("auto", "cpu", "cuda"):
        raise _core.InvalidArgumentError(f"device: '{device}' is not one of auto, cpu, cuda")
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _environment() -> list[str]:
    return [f"{k}={v}" for k, v in os.environ.items()]


def _installed_toolchains() -> dict[str, list[str]]:
    """dsl -> the sys.path entries of its installed toolchain (the judge's worker and the agent's
    shell get only their variant's)."""
    from . import toolchains

    paths = {d: toolchains.python_path(d) for d in toolchains.DSLS}
    return {d: p for d, p in paths.items() if p}


def _default_guides_root() -> str:
    from ._paths import guides_root

    guides = guides_root()
    return str(guides) if guides and guides.is_dir() else ""


def run_attempt(
    problem: Problem | str | int | _core.Message,
    dsl: str,
    model: Any = "scripted/demo",
    *,
    workspace: str | os.PathLike | None = None,
    skill: str | _core.Message | dict | None = None,
    budget: dict[str, Any] | _core.Message | None = None,
    device: str = "auto",
    workload: str | None = None,
    judge_config: dict[str, Any] | None = None,
    target: str = "",
    guides_root: str | os.PathLike | None = None,
    model_options: dict[str, Any] | None = None,
    sandbox: dict[str, Any] | None = None,
    dsl_site_dirs: dict[str, list[str]] | None = None,
    prices: dict[str, dict[str, float]] | None = None,
    on_event: Callable[[str, _core.Message], None] | None = None,
    attempt_id: str = "",
    experiment: str = "",
    arm: str = "",
    replicate: int = 0,
    suite_root: str | Path | None = None,
    python: str | None = None,
) -> _core.Message:
    """Runs one attempt (SPEC §4) and returns its Attempt message: submissions with verdicts,
    the final regrade, the best submission, skill_out, usage and the whole trajectory.

    `model`: a model id or an object with ``chat`` (:class:`ModelAdapter`). `skill`: None for a
    solo attempt, else the skill it is conditioned on (a text, or a Skill message); a blank one
    makes the attempt "skipped". `budget`: Budget fields (agent_seconds, max_submissions, ...).
    `device`: the judge's device, 'auto' (CUDA when torch sees one), 'cpu' or 'cuda'.
    `workspace`: an empty or new folder (default: a fresh temporary one; it is kept).
    `sandbox`: shell options (require_isolation=False runs commands unisolated where bubblewrap
    cannot start; read_only / hidden_paths add to the shell's view, docs/agent.md).
    `dsl_site_dirs`: dsl -> site folders (default: the installed toolchains); the shell sees
    only the variant's. `on_event(kind, message)`: live reports, kind 'trajectory',
    'submission' or 'usage'.

    Blocks for the whole attempt -- model calls, shell commands and evaluations -- without the
    GIL (a Python model and `on_event` take it when called)."""
    if workspace is None:
        workspace = tempfile.mkdtemp(prefix="mkb-attempt-")
    python = python or sys.executable
    options: dict[str, Any] = {
        "attempt_id": attempt_id,
        "experiment": experiment,
        "arm": arm,
        "replicate": replicate,
        "dsl": dsl,
        "budget": budget,
        "skill": skill,
        "workspace": str(workspace),
        "guides_root": str(guides_root) if guides_root is not None else _default_guides_root(),
        "device": _device(device),
        "workload": workload or "",
        "judge_config": judge_config,
        "target": target,
        "sandbox": sandbox,
        "dsl_site_dirs": dsl_site_dirs if dsl_site_dirs is not None else _installed_toolchains(),
        "model_options": _model_options(model_options),
        "prices": json.dumps(prices) if prices else "",
    }
    return _core.run_attempt(
        _problem_message(problem, suite_root), _model_arg(model), options, python, _environment(), on_event
    )


class AgentTrialExecutor:
    """Runs protocol trials (TrialSpec) as attempts; the C++ object is ``.core``, which the
    protocol takes as its executor. `store_path`: the results store, hidden from the agent's
    shell wherever its view would hold it (the view is an allow-list: docs/agent.md).

    `gpus`: the judge's GPUs ("0,1" or [0, 1]; default every visible one): one evaluation per
    GPU at a time, the wait logged as GPU queueing. `evaluation_slots`: a further bound on
    evaluations at once (0: one per GPU). `evaluator`: a callable(request) -> Verdict that
    judges instead of a local judge (metakernelbench.distributed: GPU actors on a Ray cluster).

    `models`: None for the built-in clients, or a callable(model_id) returning an object with
    ``chat`` (or None to fall back to the built-in client for that id)."""

    def __init__(
        self,
        workspace_root: str | os.PathLike,
        *,
        suite_root: str | Path | None = None,
        device: str = "auto",
        target: str = "",
        evaluation_slots: int = 0,
        gpus: str | list[str | int] | None = None,
        evaluator: Callable[[_core.Message], Any] | None = None,
        guides_root: str | os.PathLike | None = None,
        dsl_site_dirs: dict[str, list[str]] | None = None,
        store_path: str | os.PathLike | None = None,
        judge_config: dict[str, Any] | None = None,
        model_options: dict[str, Any] | None = None,
        sandbox: dict[str, Any] | None = None,
        prices: dict[str, dict[str, float]] | None = None,
        models: Callable[[str], Any] | None = None,
        python: str | None = None,
    ):
        from ._paths import default_suite_root

        options = {
            "suite_root": str(suite_root or default_suite_root()),
            "workspace_root": str(workspace_root),
            "device": "" if device == "auto" else device,
            "target": target,
            "evaluation_slots": evaluation_slots,
            "gpus": gpu_list(gpus),
            "evaluator": evaluator,
            "guides_root": str(guides_root) if guides_root is not None else _default_guides_root(),
            "dsl_site_dirs": dsl_site_dirs if dsl_site_dirs is not None else _installed_toolchains(),
            "store_path": str(store_path) if store_path is not None else "",
            "judge_config": judge_config,
            "model_options": _model_options(model_options),
            "sandbox": sandbox,
            "prices": json.dumps(prices) if prices else "",
        }
        factory = None
        if models is not None:

            def factory(model_id: str):
                made = models(model_id)
                return None if made is None else _model_arg(made)

        self.core = _core.AgentTrialExecutor(options, python or sys.executable, _environment(), factory)

    def run(
        self,
        spec: dict[str, Any] | _core.Message,
        on_event: Callable[[str, _core.Message], None] | None = None,
    ) -> _core.Message:
        """Runs one trial and returns its Attempt. Blocks for the whole attempt (without the
        GIL). UnavailableError: a transient failure the protocol would retry."""
        return self.core.run(spec, on_event)


__all__ = [
    "RECEIVED_SKILL_HEADER",
    "SCRIPTED_DSL_MODEL",
    "AgentTrialExecutor",
    "check_model",
    "ModelAdapter",
    "chat",
    "make_skill",
    "model_cost",
    "parse_model_id",
    "render_received_skill",
    "run_attempt",
    "skill_rules",
]
