"""The host/worker channel's Python face: a failed send or key exchange is a Python exception.

Both used to raise while the GIL was released (building the exception needs it), so a send to a
peer that had gone, or a message over the limit, killed the process with SIGSEGV instead (red
team round 9: an oversized reply killed the worker, a send to a dead worker would have killed the
host). Each case runs in a child interpreter, so that a crash fails the test instead of pytest.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(body: str) -> subprocess.CompletedProcess:
    code = "from metakernelbench import _core\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "body, error",
    [
        (
            """
            a, b = _core.Channel.pair()
            del b
            try:
                a.send(b"hello")
            except _core.UnavailableError as e:
                print("raised", type(e).__name__)
            """,
            "UnavailableError",
        ),
        (
            """
            a, b = _core.Channel.pair()
            try:
                a.send(b"x" * (1 << 30))
            except _core.Error as e:
                print("raised", type(e).__name__)
            """,
            "Error",
        ),
        (
            """
            a, b = _core.Channel.pair()
            del b
            try:
                a.accept_key(1.0, "h", "w")
            except _core.Error as e:
                print("raised", type(e).__name__)
            """,
            "Error",
        ),
    ],
    ids=["send_to_gone_peer", "send_over_limit", "accept_key_from_gone_peer"],
)
def test_channel_failure_is_an_exception(body, error):
    proc = _run(body)
    assert proc.returncode == 0, f"rc {proc.returncode}: {proc.stderr[-2000:]}"
    assert "raised" in proc.stdout and error in proc.stdout, proc.stdout + proc.stderr
