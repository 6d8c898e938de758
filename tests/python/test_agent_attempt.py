"""Attempts end to end on the CPU judge: the scripted demo model (solo, then conditioned on its
own skill), a model behind the mock HTTP APIs, a Python model with the text protocol, and the
trial executor. Each evaluation takes a few seconds; the file makes about ten."""

from __future__ import annotations

import json
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import _core, agent
from mock_llm import MockLLM, Reply, anthropic_reply, openai_reply

REPO = Path(__file__).resolve().parents[2]
HONEST = {
    n: (REPO / "tests/adversarial/kernels" / f).read_text()
    for n, f in (("28", "honest_rmsnorm.py"), ("25", "honest_block_copy.py"))
}


@pytest.fixture(scope="module")
def sandbox_options(tmp_path_factory):
    """Bubblewrap where it can run; elsewhere the unisolated fallback, so that the attempt
    logic is still tested (tests/cpp/agent_sandbox_test.cc covers the isolation)."""
    try:
        _core.ShellSandbox(str(tmp_path_factory.mktemp("probe")))
        return {}
    except mkb.FailedPreconditionError:
        return {"require_isolation": False}


def write(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF'\n{text}EOF"


def test_scripted_model_solo_then_conditioned(tmp_path, sandbox_options):
    events: list[tuple[str, str]] = []
    solo = agent.run_attempt(
        "28",
        "cutedsl",
        "scripted/demo",
        device="cpu",
        workspace=tmp_path / "solo",
        sandbox=sandbox_options,
        on_event=lambda kind, m: events.append((kind, m.type_name)),
    )
    assert solo.model == "scripted/demo"
    assert solo.state == "finished" and solo.stop_reason == "finished_by_agent"
    assert [s.verdict.status for s in solo.submissions] == ["mismatch", "passed"]
    assert all(s.counted for s in solo.submissions)
    assert solo.best_submission == 1
    assert solo.final.status == "passed" and solo.final.has("speedup_vs_eager")
    skill = solo.skill_out
    assert not skill.flags.empty and not skill.flags.contains_code
    assert skill.sha256 == agent.make_skill(skill.text).sha256
    assert "not a language model" in solo.trajectory[0].text
    kinds = {e.kind for e in solo.trajectory}
    assert {"system", "user", "assistant", "tool_call", "tool_result", "note"} <= kinds
    assert ("submission", "Submission") in events and ("trajectory", "TrajectoryEvent") in events
    workspace = Path(solo.workspace_dir)
    assert (workspace / "TASK.md").read_text().count("def make_inputs") == 1
    assert (workspace / "SKILL.md").read_text() == skill.text

    conditioned = agent.run_attempt(
        "28",
        "tirx",
        "scripted/demo",
        device="cpu",
        skill=skill,
        workspace=tmp_path / "skill",
        sandbox=sandbox_options,
    )
    assert [s.verdict.status for s in conditioned.submissions] == ["passed"]
    assert conditioned.skill_in.text == skill.text
    assert conditioned.skill_digest == skill.sha256
    first_user = next(e for e in conditioned.trajectory if e.kind == "user")
    assert agent.RECEIVED_SKILL_HEADER in first_user.text


def test_blank_skill_skips_the_attempt(tmp_path):
    attempt = agent.run_attempt(
        "28", "tirx", "scripted/demo", device="cpu", skill="  \n", workspace=tmp_path / "ws"
    )
    assert attempt.state == "skipped"
    assert len(attempt.submissions) == 0


def kernel_writer(api: str, number: str, submit: bool):
    """A mock LLM that writes the honest kernel, optionally submits, then finishes."""
    plan = [("bash", {"command": write("kernel.py", HONEST[number])})]
    if submit:
        plan.append(("submit", {}))
    plan.append(("bash", {"command": "echo '- copying whole blocks in place passed' > SKILL.md"}))
    plan.append(("finish", {}))

    def respond(request):
        body = request.body
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        name, args = plan[min(turn, len(plan) - 1)]
        if api == "openai":
            return Reply(
                200,
                openai_reply(
                    f"step {turn}",
                    [(name, args)],
                    prompt_tokens=1000,
                    completion_tokens=50,
                    cached_tokens=600,
                ),
            )
        return Reply(
            200,
            anthropic_reply(
                f"step {turn}", [(name, args)], input_tokens=100, output_tokens=50, cache_read=900
            ),
        )

    return respond


def test_a_model_behind_the_openai_api(tmp_path, sandbox_options):
    with MockLLM(kernel_writer("openai", "25", submit=True)) as llm:
        attempt = agent.run_attempt(
            "25",
            "cutedsl",
            f"openai-compatible/mock-coder@{llm.openai_base}",
            device="cpu",
            workspace=tmp_path / "ws",
            sandbox=sandbox_options,
            prices={"openai-compatible/*": {"input": 1.0, "cached_input": 0.1, "output": 2.0}},
        )
        requests = [r.body for r in llm.requests]
    assert attempt.model.startswith("openai-compatible/mock-coder@")
    assert [s.verdict.status for s in attempt.submissions] == ["passed"]
    assert attempt.final.status == "passed"
    assert attempt.usage.requests == 4
    assert attempt.usage.input_tokens == 4000 and attempt.usage.cached_input_tokens == 2400
    assert attempt.usage.cost_usd == pytest.approx((1600 * 1.0 + 2400 * 0.1 + 200 * 2.0) / 1e6)
    # The model read the judge's report as the submit call's result.
    tool_results = [m for m in requests[2]["messages"] if m["role"] == "tool"]
    assert "verdict: passed" in tool_results[-1]["content"]
    assert "Counted submissions: 1 of 10 used" in tool_results[-1]["content"]
    assert attempt.skill_out.text.startswith("- copying whole blocks")


def test_a_model_behind_the_anthropic_api(tmp_path, sandbox_options):
    with MockLLM(kernel_writer("anthropic", "28", submit=False)) as llm:
        attempt = agent.run_attempt(
            "28",
            "tirx",
            "anthropic/claude-mock",
            device="cpu",
            workspace=tmp_path / "ws",
            sandbox=sandbox_options,
            model_options={"base_url": llm.base_url, "api_key": "k"},
        )
        first = llm.requests[0]
    assert first.headers["x-api-key"] == "k"
    assert attempt.final.status == "passed"
    assert len(attempt.submissions) == 0 and attempt.best_submission == -1
    assert attempt.usage.input_tokens == 3000 and attempt.usage.cached_input_tokens == 2700


def test_model_outage_is_unavailable(tmp_path):
    with MockLLM(lambda r: Reply(503, {"error": {"message": "down"}})) as llm:
        with pytest.raises(mkb.UnavailableError, match="down"):
            agent.run_attempt(
                "28",
                "tirx",
                f"openai-compatible/m@{llm.openai_base}",
                device="cpu",
                workspace=tmp_path / "ws",
                sandbox={"require_isolation": False},
                model_options={"max_attempts": 2, "initial_backoff_s": 0.01},
            )


class TextProtocolModel:
    """A Python model without tool calling: it acts through the text protocol."""

    id = "python/text-writer"
    native_tools = False

    def __init__(self):
        self.seen_tools: list = []

    def chat(self, messages, tools):
        self.seen_tools.append(tools)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return f"Writing it.\n<bash>\n{write('kernel.py', HONEST['28'])}\n</bash>"
        assert messages[-1]["content"].startswith('<output tool="bash">')
        return {"content": "Done. <finish/>", "usage": {"input_tokens": 7, "output_tokens": 3}}


def test_a_python_model_with_the_text_protocol(tmp_path, sandbox_options):
    model = TextProtocolModel()
    attempt = agent.run_attempt(
        "28", "cutedsl", model, device="cpu", workspace=tmp_path / "ws", sandbox=sandbox_options
    )
    assert attempt.model == "python/text-writer"
    assert model.seen_tools == [[], []]
    system = next(e for e in attempt.trajectory if e.kind == "system")
    assert "<bash>" in system.text  # the system prompt explains the protocol
    assert attempt.final.status == "passed"
    assert attempt.usage.output_tokens == 3


class ToolModel:
    def chat(self, messages, tools):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return {
                "tool_calls": [{"name": "bash", "arguments": {"command": write("kernel.py", HONEST["25"])}}]
            }
        return {"tool_calls": [{"name": "finish", "arguments": {}}]}


def test_the_trial_executor_from_python(tmp_path, sandbox_options):
    executor = agent.AgentTrialExecutor(
        tmp_path / "workspaces",
        device="cpu",
        sandbox=sandbox_options,
        models=lambda model_id: ToolModel() if model_id == "python/tool" else None,
    )
    # The protocol's executor interface (bound by the protocol's bindings when present).
    base = getattr(getattr(_core, "protocol", None), "TrialExecutor", None) or _core.TrialExecutor
    assert isinstance(executor.core, base)
    spec = {
        "experiment": "e",
        "trial_id": "e/25/solo_cutedsl/r0",
        "problem_slug": "batched_kv_cache_block_copy_remap_uint8",
        "arm": "solo_cutedsl",
        "dsl": "cutedsl",
        "model": "python/tool",
        "replicate": 0,
        "try_number": 1,
    }
    reports = []
    attempt = executor.run(spec, on_event=lambda kind, m: reports.append(kind))
    assert attempt.id == "e/25/solo_cutedsl/r0#1"
    assert attempt.final.status == "passed"
    assert "trajectory" in reports and "usage" in reports
    assert Path(attempt.workspace_dir).is_relative_to((tmp_path / "workspaces").resolve())
    with pytest.raises(mkb.InvalidArgumentError, match="unknown provider"):
        executor.run({**spec, "model": "acme/model", "trial_id": "e/25/x/r0"})
    bad = json.dumps({"x": 1})
    with pytest.raises(mkb.InvalidArgumentError, match="unknown option 'nope'"):
        _core.AgentTrialExecutor({"suite_root": "x", "nope": bad}, "python3", [], None)


class EnvProbeModel:
    """Looks at what its shell sees, then finishes."""

    def chat(self, messages, tools):
        if not any(m["role"] == "assistant" for m in messages):
            command = ('echo "$MKB_DSL $MKB_TARGET_ARCH" > env.txt; echo "$PYTHONPATH" > path.txt; '
                       'ls "$OTHER" > other.txt 2>&1; ls docs > docs.txt')
            return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
        return {"tool_calls": [{"name": "finish", "arguments": {}}]}


def test_the_shell_sees_only_its_own_dsl(tmp_path, sandbox_options, monkeypatch):
    cute, tvm = tmp_path / "dsl" / "cutedsl", tmp_path / "dsl" / "tirx"
    for site in (cute, tvm):
        site.mkdir(parents=True)
        (site / "marker.txt").write_text(site.name)
    guides = tmp_path / "guides"
    (guides / "cutedsl" / "official").mkdir(parents=True)
    (guides / "cutedsl.md").write_text("# guide\n")
    monkeypatch.setenv("OTHER", str(tvm))
    executor = agent.AgentTrialExecutor(
        tmp_path / "workspaces",
        device="cpu",
        target="NVIDIA H200 (sm_90a)",
        guides_root=guides,
        dsl_site_dirs={"cutedsl": [str(cute)], "tirx": [str(tvm)]},
        sandbox=sandbox_options,
        models=lambda model_id: EnvProbeModel(),
    )
    attempt = executor.run({"experiment": "e", "trial_id": "e/28/solo_cutedsl/r0",
                            "problem_slug": "fused_add_rmsnorm_h4096_llama31_8b_bf16", "arm": "solo_cutedsl",
                            "dsl": "cutedsl", "model": "python/probe", "replicate": 0, "try_number": 1})
    ws = Path(attempt.workspace_dir)
    assert (ws / "env.txt").read_text().split() == ["cutedsl", "sm_90a"]
    assert (ws / "path.txt").read_text().strip() == str(cute)
    assert (ws / "docs.txt").read_text().split() == ["cutedsl", "cutedsl.md"]
    if not sandbox_options:  # bubblewrap: the other DSL's directory is an empty tmpfs
        assert "marker.txt" not in (ws / "other.txt").read_text()
