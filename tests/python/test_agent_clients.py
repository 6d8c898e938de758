"""The C++ model clients against a loopback mock of both APIs (tests/python/mock_llm.py):
tool-call conversations, usage, keys, retries with Retry-After, 5xx, truncated bodies, slow
answers, and the errors that must not be retried."""

from __future__ import annotations

import time

import metakernelbench as mkb
import pytest
from metakernelbench import agent
from mock_llm import MockLLM, Reply, anthropic_reply, error_body, openai_reply

TOOLS = [
    {
        "name": "bash",
        "description": "run a command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
    {"name": "submit", "description": "evaluate", "parameters": {"type": "object", "properties": {}}},
]
FAST = {"initial_backoff_s": 0.01, "max_backoff_s": 0.05}


@pytest.fixture
def llm():
    with MockLLM() as server:
        yield server


def compatible(llm: MockLLM) -> str:
    return f"openai-compatible/mock-model@{llm.openai_base}"


def test_model_ids():
    assert agent.parse_model_id("openai-compatible/org/m@http://h:1/v1") == {
        "provider": "openai-compatible",
        "model": "org/m",
        "base_url": "http://h:1/v1",
    }
    with pytest.raises(mkb.InvalidArgumentError, match="base URL"):
        agent.parse_model_id("openai-compatible/m")


def test_openai_tool_conversation(llm):
    llm.queue(
        openai_reply(
            "looking",
            [("bash", {"command": "ls"})],
            prompt_tokens=1200,
            completion_tokens=300,
            cached_tokens=1000,
            reasoning_tokens=250,
        )
    )
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    reply = agent.chat(compatible(llm), messages, TOOLS)
    assert reply["content"] == "looking"
    assert reply["tool_calls"] == [{"id": "call_0", "name": "bash", "arguments": {"command": "ls"}}]
    assert reply["usage"] == {
        "input_tokens": 1200,
        "cached_input_tokens": 1000,
        "cache_write_tokens": 0,
        "output_tokens": 300,
        "reasoning_tokens": 250,
    }
    sent = llm.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "mock-model"
    assert sent.body["tools"][0] == {"type": "function", "function": TOOLS[0]}
    assert "authorization" not in sent.headers  # no key set for a local server

    # The next turn carries the call and its result.
    llm.queue(openai_reply("done"))
    messages += [
        {"role": "assistant", "content": "looking", "tool_calls": reply["tool_calls"]},
        {"role": "tool", "tool_call_id": "call_0", "name": "bash", "content": "kernel.py"},
    ]
    assert agent.chat(compatible(llm), messages, TOOLS)["content"] == "done"
    second = llm.requests[1].body["messages"]
    assert second[2]["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"command":"ls"}'}
    assert second[3] == {"role": "tool", "tool_call_id": "call_0", "content": "kernel.py"}


def test_anthropic_tool_conversation(llm):
    llm.queue(
        anthropic_reply(
            "listing",
            [("bash", {"command": "ls"})],
            input_tokens=10,
            output_tokens=7,
            cache_read=900,
            cache_write=90,
        )
    )
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "t1", "name": "bash", "arguments": {"command": "pwd"}},
                {"id": "t2", "name": "submit", "arguments": {}},
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "name": "bash", "content": "/ws"},
        {"role": "tool", "tool_call_id": "t2", "name": "submit", "content": "passed"},
    ]
    reply = agent.chat("anthropic/claude-mock", messages, TOOLS, base_url=llm.base_url, api_key="sk-ant-test")
    assert reply["tool_calls"][0] == {"id": "toolu_0", "name": "bash", "arguments": {"command": "ls"}}
    assert reply["usage"]["input_tokens"] == 1000  # 10 uncached + 900 read + 90 written
    assert reply["usage"]["cached_input_tokens"] == 900
    assert reply["usage"]["cache_write_tokens"] == 90
    sent = llm.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"][0]["text"] == "sys"
    assert [m["role"] for m in sent.body["messages"]] == ["user", "assistant", "user"]
    results = sent.body["messages"][2]["content"]
    assert [b["tool_use_id"] for b in results] == ["t1", "t2"]
    assert sent.body["tools"][0]["input_schema"]["required"] == ["command"]


def test_keys_and_base_urls_come_from_the_environment(llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(mkb.FailedPreconditionError, match="OPENAI_API_KEY"):
        agent.chat("openai/gpt-5", [{"role": "user", "content": "hi"}])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_base)
    llm.queue(openai_reply("hi"))
    assert agent.chat("openai/gpt-5", [{"role": "user", "content": "hi"}])["content"] == "hi"
    assert llm.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert "max_completion_tokens" not in llm.requests[0].body


def test_429_waits_as_retry_after_ms_asks(llm):
    llm.queue(
        Reply(
            429,
            error_body("openai", "rate_limit", "Rate limit reached for requests"),
            {"retry-after-ms": "400"},
        ),
        openai_reply("ok"),
    )
    reply = agent.chat(compatible(llm), [{"role": "user", "content": "x"}], **FAST)
    assert reply["content"] == "ok"
    assert len(llm.requests) == 2
    assert llm.requests[1].at - llm.requests[0].at >= 0.38


def test_retry_after_is_honoured_only_up_to_the_cap(llm):
    llm.queue(
        Reply(429, error_body("anthropic", "rate_limit_error", "slow down"), {"retry-after": "3600"}),
        anthropic_reply("ok"),
    )
    start = time.monotonic()
    reply = agent.chat(
        "anthropic/claude-mock",
        [{"role": "user", "content": "x"}],
        base_url=llm.base_url,
        api_key="k",
        max_retry_after_s=0.3,
        **FAST,
    )
    assert reply["content"] == "ok"
    waited = llm.requests[1].at - llm.requests[0].at
    assert 0.28 <= waited < 3
    assert time.monotonic() - start < 5


def test_server_errors_are_retried_with_backoff(llm):
    llm.queue(
        Reply(500, error_body("openai", "server_error", "boom")),
        Reply(503, "upstream unavailable"),
        Reply(529, error_body("anthropic", "overloaded_error", "Overloaded")),
        openai_reply("finally"),
    )
    assert agent.chat(compatible(llm), [{"role": "user", "content": "x"}], **FAST)["content"] == "finally"
    assert len(llm.requests) == 4


def test_retries_run_out_as_unavailable(llm):
    llm.queue(*[Reply(500, error_body("openai", "server_error", "still down"))] * 3)
    with pytest.raises(mkb.UnavailableError, match=r"3 attempt.*HTTP 500.*still down"):
        agent.chat(compatible(llm), [{"role": "user", "content": "x"}], max_attempts=3, **FAST)
    assert len(llm.requests) == 3


def test_truncated_and_malformed_bodies_are_retried(llm):
    llm.queue(
        Reply(200, openai_reply("cut short"), truncate=True),
        Reply(200, '{"choices": [{"message": {"content": "no end'),
        openai_reply("whole"),
    )
    assert agent.chat(compatible(llm), [{"role": "user", "content": "x"}], **FAST)["content"] == "whole"
    assert len(llm.requests) == 3


def test_slow_answers_time_out_and_are_retried(llm):
    llm.queue(Reply(200, openai_reply("late"), delay=2.0), openai_reply("on time"))
    start = time.monotonic()
    reply = agent.chat(compatible(llm), [{"role": "user", "content": "x"}], request_timeout_s=0.5, **FAST)
    assert reply["content"] == "on time"
    assert time.monotonic() - start < 1.8

    llm.queue(*[Reply(200, openai_reply("late"), delay=1.5)] * 2)
    with pytest.raises(mkb.UnavailableError, match="no complete answer within"):
        agent.chat(
            compatible(llm), [{"role": "user", "content": "x"}], request_timeout_s=0.3, max_attempts=2, **FAST
        )


@pytest.mark.parametrize(
    "status,body,error,match",
    [
        (
            401,
            error_body("openai", "invalid_request_error", "Incorrect API key provided"),
            mkb.PermissionDeniedError,
            "Incorrect API key.*api_key option",
        ),
        (
            403,
            error_body("openai", "permission_error", "not allowed"),
            mkb.PermissionDeniedError,
            "may not use",
        ),
        (
            400,
            error_body("openai", "invalid_request_error", "Unknown parameter: 'x'"),
            mkb.InvalidArgumentError,
            "rejected the request.*Unknown parameter",
        ),
        (
            400,
            error_body(
                "openai", "invalid_request_error", "maximum context length is 8192", "context_length_exceeded"
            ),
            mkb.InvalidArgumentError,
            "context window",
        ),
        (
            429,
            error_body(
                "openai",
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
            ),
            mkb.ResourceExhaustedError,
            "^spend cap",
        ),
        (
            400,
            error_body(
                "anthropic",
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API.",
            ),
            mkb.ResourceExhaustedError,
            "spend cap",
        ),
        (
            404,
            error_body("openai", "not_found", "The model does not exist"),
            mkb.NotFoundError,
            "does not exist",
        ),
    ],
)
def test_errors_that_are_not_retried(llm, status, body, error, match):
    llm.queue(Reply(status, body))
    with pytest.raises(error, match=match):
        agent.chat(compatible(llm), [{"role": "user", "content": "x"}], api_key="sk-bad", **FAST)
    assert len(llm.requests) == 1


def test_the_server_can_say_not_to_retry(llm):
    llm.queue(Reply(503, error_body("openai", "server_error", "maintenance"), {"x-should-retry": "false"}))
    with pytest.raises(mkb.UnavailableError, match="maintenance"):
        agent.chat(compatible(llm), [{"role": "user", "content": "x"}], **FAST)
    assert len(llm.requests) == 1


def test_extra_body_and_costs(llm):
    llm.queue(openai_reply("ok"))
    agent.chat(
        compatible(llm),
        [{"role": "user", "content": "x"}],
        max_output_tokens=256,
        extra_body={"temperature": 0.2, "reasoning_effort": "low"},
    )
    assert llm.requests[0].body["temperature"] == 0.2
    assert llm.requests[0].body["max_tokens"] == 256
    assert agent.model_cost(
        "anthropic/claude-sonnet-4-5",
        input_tokens=2_000_000,
        cached_input_tokens=1_000_000,
        output_tokens=1_000_000,
    ) == pytest.approx(3 + 0.3 + 15)
    assert agent.model_cost(
        "openai-compatible/m@http://h", input_tokens=10**6, prices={"openai-compatible/*": {"input": 0.5}}
    ) == pytest.approx(0.5)
