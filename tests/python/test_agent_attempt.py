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
# One trial of problem 28's solo CuTe DSL arm, for a model that only probes the shell.
PROBE_TRIAL = {
    "experiment": "e",
    "trial_id": "e/28/solo_cutedsl/r0",
    "problem_slug": "fused_add_rmsnorm_h4096_llama31_8b_bf16",
    "arm": "solo_cutedsl",
    "dsl": "cutedsl",
    "model": "python/probe",
    "replicate": 0,
    "try_number": 1,
}
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
            command = (
                'echo "$MKB_DSL $MKB_TARGET_ARCH" > env.txt; echo "$PYTHONPATH" > path.txt; '
                'ls "$OTHER" > other.txt 2>&1; ls docs > docs.txt'
            )
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
    attempt = executor.run(dict(PROBE_TRIAL))
    ws = Path(attempt.workspace_dir)
    assert (ws / "env.txt").read_text().split() == ["cutedsl", "sm_90a"]
    # bubblewrap: the variant's site folder at the shell's MKB_DSL_HOME; unisolated: where it is.
    assert (ws / "path.txt").read_text().strip() == ("/mkb/dsl/cutedsl" if not sandbox_options else str(cute))
    assert (ws / "docs.txt").read_text().split() == ["cutedsl", "cutedsl.md"]
    if not sandbox_options:  # bubblewrap: the other DSL's directory is not there at all
        assert "No such file or directory" in (ws / "other.txt").read_text()


class StepsModel:
    """Takes the given steps, one per turn ("submit", or a shell command), then finishes."""

    def __init__(self, steps: list[str]):
        self.steps = steps
        self.results: list[str] = []

    def chat(self, messages, tools):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn > 0:
            self.results.append(messages[-1]["content"])
        if turn >= len(self.steps):
            return {"tool_calls": [{"name": "finish", "arguments": {}}]}
        step = self.steps[turn]
        if step == "submit":
            return {"tool_calls": [{"name": "submit", "arguments": {}}]}
        return {"tool_calls": [{"name": "bash", "arguments": {"command": step}}]}


def test_kernels_not_utf8_or_unparsable_are_invalid_never_judge_failures(tmp_path, sandbox_options):
    """Adversarial (item 4): bytes that crashed the judge host (not UTF-8; a UTF-8-encoded
    surrogate, which the judge's strict check refuses too) and a syntax error are invalid submissions the
    agent reads, not counted, never retried as judge failures."""
    model = StepsModel(
        [
            "printf 'def solve(*x):\\n    return \"\\xff\"\\n' > kernel.py",
            "submit",
            "printf '# surrogate\\nx = \"\\xed\\xa0\\x80\"\\n' > kernel.py",
            "submit",
            "printf 'def solve(*x:\\n    return x\\n' > kernel.py",
            "submit",
            write("kernel.py", HONEST["28"]),
        ]
    )
    attempt = agent.run_attempt(
        "28", "cutedsl", model, device="cpu", workspace=tmp_path / "ws", sandbox=sandbox_options
    )
    assert attempt.state == "finished"
    assert [(s.verdict.status, s.counted) for s in attempt.submissions] == [("invalid_submission", False)] * 3
    messages = [s.verdict.message for s in attempt.submissions]
    assert messages[0] == "invalid submission: kernel.py is not UTF-8 text (not counted)"
    assert messages[1] == "invalid submission: kernel.py is not UTF-8 text (not counted)"  # strict UTF-8
    assert "kernel.py does not parse: line 1:" in messages[2]
    assert not [e for e in attempt.trajectory if e.kind == "note" and "judge failure" in e.text]
    submit_results = [r for r in model.results if "Counted submissions" in r]
    assert len(submit_results) == 3 and all("was NOT counted" in r for r in submit_results)
    assert attempt.final.status == "passed"


def _needs_bubblewrap(sandbox_options):
    if sandbox_options:
        pytest.skip("bubblewrap cannot start here: the view is not in effect")


def test_the_shell_sees_no_store_other_trial_judge_file_or_secret(tmp_path, sandbox_options, monkeypatch):
    """Adversarial (item 5), measured from inside the shell: every private file carries a marker;
    the shell lists the whole visible file system for their names and reads what it finds."""
    _needs_bubblewrap(sandbox_options)
    markers = {}

    def private(path: Path, marker: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{marker} = 1\n")
        markers[marker] = path
        return path

    workspaces = tmp_path / "results-workspaces"
    private(workspaces / "e/28/solo_tirx/r0/try1/kernel.py", "SIBLING_TRIALS_KERNEL")
    for suffix in ("", "-wal", "-shm"):
        private(tmp_path / f"results.db{suffix}", f"STORE_BESIDE{suffix.replace('-', '_').upper()}")
    # A store inside a folder the shell is shown (the variant's DSL site folder) stays hidden too.
    cute, tvm = tmp_path / "dsl" / "cutedsl", tmp_path / "dsl" / "tirx"
    private(tvm / "marker.py", "OTHER_DSL")
    store = cute / "results.db"
    for suffix in ("", "-wal", "-shm"):
        private(Path(f"{store}{suffix}"), f"STORE_INSIDE{suffix.replace('-', '_').upper()}")
    home = tmp_path / "home"
    private(home / ".env", "OPENAI_API_KEY_FROM_DOTENV")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-MUST_NOT_LEAK")
    monkeypatch.setenv("HF_TOKEN", "hf-MUST_NOT_LEAK_EITHER")
    solution = REPO / "problems/mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16/solutions/cutedsl.py"
    package_judge = Path(agent.__file__).parent / "judge"
    names = " -o ".join(
        f"-name '{n}'"
        for n in ("results.db*", "kernel.py", "reference.py", "*.env", ".env", "solutions", "marker.py")
    )
    model = StepsModel(
        [
            f"find / -path /proc -prune -o \\( {names} \\) -print 2>/dev/null > found.txt; "
            'while read -r f; do [ -f "$f" ] && cat "$f"; done < found.txt > contents.txt 2>&1; '
            f"env > env.txt; ls -A {package_judge} > judge.txt; "
            "python -c 'import metakernelbench, torch; print(\"python ok\")' > python.txt 2>&1; true",
        ]
    )
    executor = agent.AgentTrialExecutor(
        workspaces,
        device="cpu",
        dsl_site_dirs={"cutedsl": [str(cute)], "tirx": [str(tvm)]},
        store_path=store,
        models=lambda model_id: model,
    )
    attempt = executor.run(dict(PROBE_TRIAL))
    ws = Path(attempt.workspace_dir)
    seen = (ws / "contents.txt").read_text() + (ws / "env.txt").read_text()
    leaked = [m for m in [*markers, "MUST_NOT_LEAK", solution.read_text().splitlines()[0]] if m in seen]
    assert not leaked, (ws / "found.txt").read_text()
    found = (ws / "found.txt").read_text().split()
    assert f"{ws}/kernel.py" in found
    assert not [f for f in found if f.endswith("/solutions")]
    assert seen.count("def make_inputs(") == 1  # this problem's reference.py, as TASK.md shows it
    assert (ws / "judge.txt").read_text().split() == ["__init__.py"]
    assert "KEY" not in (ws / "env.txt").read_text() and "TOKEN" not in (ws / "env.txt").read_text()
    assert (ws / "python.txt").read_text().strip() == "python ok"


def test_a_store_path_relative_to_the_working_folder_is_hidden_too(tmp_path, sandbox_options, monkeypatch):
    """`mkb demo`'s default store is 'mkb-demo.db' in the working folder: every trial failed on
    the shell's view refusing a hidden path that is not absolute."""
    _needs_bubblewrap(sandbox_options)
    monkeypatch.chdir(tmp_path)
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"relative.db{suffix}").write_text(f"RELATIVE_STORE{suffix.replace('-', '_')} = 1\n")
    model = StepsModel(
        ["find / -path /proc -prune -o -name 'relative.db*' -print 2>/dev/null > found.txt; true"]
    )
    executor = agent.AgentTrialExecutor(
        "workspaces", device="cpu", store_path="relative.db", models=lambda model_id: model
    )
    attempt = executor.run(dict(PROBE_TRIAL))
    ws = Path(attempt.workspace_dir)
    assert ws.is_relative_to(tmp_path / "workspaces")
    assert (ws / "found.txt").read_text().split() == []


def _link_tree(source: Path, link: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(source, target_is_directory=True)
    return link


def test_mkb_check_and_the_dsl_work_in_the_shell_with_the_checkout_under_tmp(tmp_path, sandbox_options):
    """The checkout (its venv and DSL site folders) under /tmp, which the shell's private /tmp
    used to hide: the shell still has Python, its DSL only, and a working `mkb check`."""
    _needs_bubblewrap(sandbox_options)
    import sys

    from metakernelbench import toolchains

    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a virtual environment")
    if not toolchains.toolchain("cutedsl").installed:
        pytest.skip("cutedsl toolchain not installed")
    # The venv and the DSL site folders seen through paths under /tmp (tmp_path is there).
    venv = _link_tree(Path(sys.prefix), tmp_path / "checkout" / ".venv")
    sites = {}
    for dsl in toolchains.DSLS:
        tc = toolchains.toolchain(dsl)
        if tc.installed:
            site = _link_tree(tc.site.resolve(), tmp_path / "checkout" / ".dsl" / dsl)
            entries = [Path(p).relative_to(tc.site.resolve()) for p in toolchains.python_path(dsl)]
            sites[dsl] = [str(site / e) for e in entries]
    solution = REPO / "problems/mlp_norm/28_fused_add_rmsnorm_h4096_llama31_8b_bf16/solutions/cutedsl.py"
    model = StepsModel(
        [
            write("kernel.py", solution.read_text())
            + "\nmkb check kernel.py --dsl $MKB_DSL -p fused_add_rmsnorm_h4096_llama31_8b_bf16 "
            "> check.txt 2>&1; "
            "python -c 'import cutlass.cute, torch; print(\"cute ok\")' > cute.txt 2>&1; "
            "python -c 'import tvm' > tvm.txt 2>&1; which python > which.txt; true",
            write("kernel.py", HONEST["28"]),
        ]
    )
    executor = agent.AgentTrialExecutor(
        tmp_path / "results-workspaces",
        device="cpu",
        target="NVIDIA H200 (sm_90a)",
        dsl_site_dirs=sites,
        store_path=tmp_path / "results.db",
        models=lambda model_id: model,
        python=str(venv / "bin" / "python"),
    )
    attempt = executor.run(dict(PROBE_TRIAL))
    ws = Path(attempt.workspace_dir)
    assert (ws / "which.txt").read_text().strip() == str(venv / "bin" / "python")
    assert (ws / "cute.txt").read_text().strip() == "cute ok"
    assert "No module named 'tvm'" in (ws / "tvm.txt").read_text()
    check = (ws / "check.txt").read_text()
    assert "kernel.py: ok (cutedsl, sm_90a" in check, check
    assert attempt.final.status == "passed"
