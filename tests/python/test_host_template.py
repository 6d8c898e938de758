"""The host template (judge/template.py, mkb::HostTemplate): each evaluation's host is forked
from an interpreter that imported torch and the DSL once. These tests drive the template's
channel directly with a stand-in host program, then through the C++ judge."""

import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import _core
from processes import children, state

KERNELS = Path(__file__).resolve().parents[1] / "adversarial" / "kernels"
QUICK = {"timing_draws": 4, "warmup_calls": 1, "recheck_draws": 1}


def _request(suite) -> dict:
    """An honest kernel on problem 25's small workload, judged on the CPU with few draws."""
    return {
        "problem_dir": str(suite.find(25).directory),
        "kernel_source": (KERNELS / "honest_block_copy.py").read_text(),
        "dsl": "cutedsl",
        "device": "cpu",
        "config": QUICK,
    }


# A template whose forked "host" reports what it holds: its open descriptors, its GPU, its
# process group, and then does what its stdin asks (exit with a code, or sleep).
STAND_IN = textwrap.dedent(
    """
    import json, os, sys, time
    from metakernelbench.judge.template import serve
    if not serve(int(sys.argv[1])):
        sys.exit(0)
    fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
    report = {"fds": fds, "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
              "pgid": os.getpgid(0), "pid": os.getpid()}
    os.write(3, json.dumps(report).encode())
    command = sys.stdin.readline().split()
    if command[0] == "exit":
        sys.exit(int(command[1]))
    time.sleep(600)
    """
)


class Template:
    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.channel = ours
        self.process = subprocess.Popen(
            [sys.executable, "-c", STAND_IN, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
        )
        theirs.close()

    def fork(self, gpu: str = "") -> dict:
        pipes = {name: os.pipe() for name in ("stdin", "stdout", "stderr", "reply", "status")}
        passed = [
            pipes["stdin"][0],
            pipes["stdout"][1],
            pipes["stderr"][1],
            pipes["reply"][1],
            pipes["status"][1],
        ]
        self.channel.sendmsg(
            [f"GPU {gpu}".encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("5i", *passed))]
        )
        for fd in passed:
            os.close(fd)
        answer = self.channel.recv(512)
        pid = struct.unpack("<i", answer[:4])[0]
        assert pid > 0, answer
        return {
            "pid": pid,
            "stdin": pipes["stdin"][1],
            "reply": pipes["reply"][0],
            "status": pipes["status"][0],
            "stdout": pipes["stdout"][0],
            "stderr": pipes["stderr"][0],
        }

    def close(self):
        self.channel.close()
        self.process.wait(timeout=30)


def _report(host: dict) -> dict:
    import json

    data = b""
    while not data.endswith(b"}"):
        chunk = os.read(host["reply"], 4096)
        assert chunk, "the forked host wrote no report"
        data += chunk
    return json.loads(data)


def test_a_forked_host_holds_only_its_own_pipes_and_reports_its_exit_status():
    template = Template()
    try:
        host = template.fork("GPU-test-7")
        report = _report(host)
        # 0-3 are its stdin, stdout, stderr and reply pipe; the one above is listdir's own.
        # Nothing of the template's (its channel, its wakeup pipe, other hosts' status pipes).
        assert report["fds"][:4] == [0, 1, 2, 3] and len(report["fds"]) <= 5, report
        assert report["gpu"] == "GPU-test-7"
        assert report["pgid"] == report["pid"] == host["pid"]  # its own process group
        os.write(host["stdin"], b"exit 7\n")
        status = os.read(host["status"], 4)
        assert len(status) == 4
        wait_status = struct.unpack("<i", status)[0]
        assert os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 7
        # Reported, not yet reaped: the pid cannot be reused while the judge may signal it.
        assert state(host["pid"]) == "Z"
        os.close(host["status"])
        deadline = time.monotonic() + 10
        while state(host["pid"]) is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert state(host["pid"]) is None  # reaped once the judge let go
    finally:
        template.close()


def test_a_killed_host_reads_as_its_signal_and_a_second_host_is_independent():
    template = Template()
    try:
        first = template.fork()
        second = template.fork("1")
        assert _report(first)["gpu"] == os.environ.get("CUDA_VISIBLE_DEVICES")
        assert _report(second)["gpu"] == "1"
        os.killpg(first["pid"], signal.SIGKILL)
        wait_status = struct.unpack("<i", os.read(first["status"], 4))[0]
        assert os.WIFSIGNALED(wait_status) and os.WTERMSIG(wait_status) == signal.SIGKILL
        assert state(second["pid"]) in ("S", "R")  # untouched
    finally:
        template.close()
    # Closing the channel (the judge went away) kills every host the template forked.
    assert state(second["pid"]) is None


def test_a_judge_with_a_template_evaluates_and_survives_the_templates_death(suite):
    environment = [f"{k}={v}" for k, v in sorted(os.environ.items())]
    judge = _core.Judge(sys.executable, environment, host_template=True)
    request = _request(suite)
    others = set(children(b"--template-fd"))  # other tests' judges (mkb.evaluate's) may hold some
    judge.prewarm("cutedsl")
    templates = sorted(set(children(b"--template-fd")) - others)
    assert len(templates) == 1
    first = judge.evaluate(request)
    assert first.status == "passed", first
    assert sorted(set(children(b"--template-fd")) - others) == templates  # it serves the next one
    start = time.perf_counter()
    second = judge.evaluate(request)
    wall = time.perf_counter() - start
    assert second.status == "passed"
    # The forked host starts with torch imported: what is outside the evaluation itself is the
    # fork and the request's framing (a started host spends seconds importing torch).
    assert wall - second.phase_times.total_s < 1.0, (wall, second.phase_times.total_s)
    print(f"host start outside the evaluation: {wall - second.phase_times.total_s:.3f} s")
    os.kill(templates[0], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while state(templates[0]) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.01)
    third = judge.evaluate(request)  # a dead template is replaced, never blamed on the kernel
    assert third.status == "passed"
    replacement = sorted(set(children(b"--template-fd")) - others)
    assert len(replacement) == 1 and replacement != templates


def test_concurrent_evaluations_fork_their_hosts_from_one_template_each_with_its_gpu(suite):
    import threading

    environment = [f"{k}={v}" for k, v in sorted(os.environ.items())]
    others = set(children(b"--template-fd"))  # other tests' judges may hold some
    judges = [_core.Judge(sys.executable, environment, gpus="0,1", host_template=True)]
    request = _request(suite)
    verdicts: list = [None] * 4
    threads = [
        threading.Thread(target=lambda i=i: verdicts.__setitem__(i, judges[0].evaluate(request)))
        for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [v.status for v in verdicts] == ["passed"] * 4
    # Each forked host saw only its evaluation's GPU slot (set after the fork, in the host): one
    # GPU each, and both in use (the first two evaluations hold both slots at once). How the
    # last two share them depends on which of the first finishes first: 0,1,1,1 is as right
    # as 0,0,1,1 (a fresh `make test` under load read the former).
    seen = [v.environment.visible_devices for v in verdicts]
    assert set(seen) == {"0", "1"}, seen
    assert len(set(children(b"--template-fd")) - others) == 1  # one for the DSL, serving both slots
    # A judge going away closes its template's channel and waits for it to exit: without its
    # interpreter's teardown (torch loaded), that is quick (2.5 s with it on this project's CPU).
    start = time.perf_counter()
    judges.clear()
    assert time.perf_counter() - start < 1.5
    assert set(children(b"--template-fd")) - others == set()


def test_a_template_that_cannot_start_falls_back_to_a_started_host(suite):
    judge = _core.Judge("/nonexistent/python3", [], host_template=True)
    with pytest.raises(mkb.FailedPreconditionError, match="cannot start the judge host"):
        judge.evaluate(
            {
                "problem_dir": str(suite.find(28).directory),
                "kernel_source": "x = 1",
                "dsl": "cutedsl",
                "device": "cpu",
            }
        )
