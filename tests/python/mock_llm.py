"""A loopback mock of the two model APIs the agent speaks, for tests.

    with MockLLM() as llm:
        llm.queue(openai_reply(tool_calls=[("bash", {"command": "ls"})]))
        ... point a client at llm.openai_base (OpenAI) or llm.base_url (Anthropic) ...
        llm.requests[0].body   # what the client sent

Routes: POST /v1/chat/completions (OpenAI Chat Completions) and POST /v1/messages (Anthropic
Messages). Each request takes the next queued reply; when the queue is empty the `responder`
(a function of the Recorded request) answers, else 500. A Reply can be delayed (slow server),
cut short mid-body (truncate), or carry any status and headers (429 with Retry-After, ...).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict / list (sent as JSON), str or bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    truncate: bool = False  # announce the whole body, send half of it, close

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body if self.body is not None else {}).encode()


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it does not parse
    at: float

    @property
    def api(self) -> str:
        return "anthropic" if self.path.endswith("/messages") else "openai"


def openai_reply(
    content: str | None = None,
    tool_calls: list[tuple[str, dict]] = (),
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    finish_reason: str | None = None,
) -> dict:
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "model": "mock-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
        },
    }


def anthropic_reply(
    text: str | None = None,
    tool_uses: list[tuple[str, dict]] = (),
    *,
    input_tokens: int = 50,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
) -> dict:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for i, (name, args) in enumerate(tool_uses):
        content.append({"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args})
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": "mock-claude",
        "content": content,
        "stop_reason": "tool_use" if tool_uses else "end_turn",
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


def error_body(api: str, kind: str, message: str, code: str | None = None) -> dict:
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": code}}


class MockLLM:
    def __init__(self, responder: Callable[[Recorded], Reply] | None = None):
        self.requests: list[Recorded] = []
        self.responder = responder
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                recorded = Recorded(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()
                )
                with mock._lock:
                    mock.requests.append(recorded)
                    reply = mock._queue.popleft() if mock._queue else None
                if reply is None:
                    if self.path not in ("/v1/chat/completions", "/v1/messages"):
                        reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                    elif mock.responder is not None:
                        reply = mock.responder(recorded)
                    else:
                        reply = Reply(500, {"error": {"message": "mock: nothing queued"}})
                if reply.delay:
                    time.sleep(reply.delay)
                payload = reply.payload()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    if reply.truncate:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2] if reply.truncate else payload)
                    self.wfile.flush()
                    if reply.truncate:
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_base(self) -> str:
        return self.base_url + "/v1"

    def queue(self, *replies: Reply | dict) -> None:
        with self._lock:
            for r in replies:
                self._queue.append(r if isinstance(r, Reply) else Reply(200, r))

    def __enter__(self) -> MockLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
