"""The host template: a judge host that imports torch and the variant's DSL once, never touches
CUDA, and forks each evaluation's host on request (mkb::HostTemplate, libmkb/judge/judge.cc).

An evaluation's host would otherwise spend seconds importing (torch, the DSL and its lazy
modules) before it reads its request. A forked host starts with them imported, in a process that
has run nothing of any evaluation: the template holds no request, seed, key or kernel, and the
host it forks is as fresh as a spawned one, with its own process group.

The channel is a SOCK_SEQPACKET socket. The judge sends one message per host: "GPU " and the GPU
to make visible (UTF-8; nothing after the space: as the template's environment has it), with
five descriptors attached:
the host's stdin, stdout, stderr, its reply pipe (they become fds 0-3), and the write end of a
pipe for the host's exit status. The template answers the host's pid as a little-endian int32
(0 and a reason when it could not fork). When the host exits, the template writes its wait
status (4 bytes, the encoding of waitpid) into the status pipe and reaps it only once the judge
has closed that pipe's read end: until then the pid stays a zombie and the judge may still
signal the host's process group without hitting a reused pid. When the channel closes (the judge
went away), the template kills every host it forked and exits.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import struct
import sys

DESCRIPTORS = 5  # stdin, stdout, stderr, reply, exit status


def _wait_status(result: os.waitid_result) -> int:
    """waitid's result as the int waitpid would have stored (WIFEXITED / WIFSIGNALED decode it)."""
    if result.si_code == os.CLD_EXITED:
        return (result.si_status & 0xFF) << 8
    if result.si_code == os.CLD_DUMPED:
        return (result.si_status & 0x7F) | 0x80
    return result.si_status & 0x7F  # CLD_KILLED


def _received_fds(ancdata) -> list[int]:
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds.extend(struct.unpack(f"<{usable // 4}i", data[:usable]))
    return fds


class _Template:
    def __init__(self, control_fd: int):
        self.control = socket.socket(fileno=control_fd)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.poller = select.poll()
        self.poller.register(self.control.fileno(), select.POLLIN)
        self.poller.register(self.wake_r, select.POLLIN)
        self.running: dict[int, int] = {}  # pid -> write end of its status pipe
        self.reported: dict[int, int] = {}  # status fd -> pid, exited, waiting to be released

    def own_fds(self) -> list[int]:
        return [self.control.fileno(), self.wake_r, self.wake_w, *self.running.values(), *self.reported]

    def serve(self) -> bool:
        """Returns True in a forked host, False in the template when the judge went away."""
        while True:
            try:
                events = self.poller.poll()
            except InterruptedError:
                continue
            for fd, _ in events:
                if fd == self.control.fileno():
                    forked = self.fork_request()
                    if forked is None:
                        self.shutdown()
                        return False
                    if forked:
                        return True
                elif fd == self.wake_r:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    self.report_exits()
                elif fd in self.reported:
                    self.release(fd)

    def fork_request(self) -> bool | None:
        """One request: None when the channel closed, True in the forked host, False here."""
        try:
            message, ancdata, _, _ = self.control.recvmsg(4096, socket.CMSG_SPACE(DESCRIPTORS * 4))
        except (ConnectionError, OSError):
            return None
        fds = _received_fds(ancdata)
        if not message and not fds:
            return None
        if len(fds) != DESCRIPTORS or not message.startswith(b"GPU "):
            for fd in fds:
                os.close(fd)
            why = f"expected 'GPU <name>' and {DESCRIPTORS} descriptors, got {len(fds)}"
            return self.answer(struct.pack("<i", 0) + why.encode())
        gpu = message[4:].decode("utf-8", "replace")
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as e:
            for fd in fds:
                os.close(fd)
            return self.answer(struct.pack("<i", 0) + f"fork failed: {e}".encode())
        if pid == 0:
            self.become_host(gpu, fds)
            return True
        for fd in fds[:4]:
            os.close(fd)
        self.running[pid] = fds[4]
        if self.answer(struct.pack("<i", pid)) is None:
            return None
        self.report_exits()  # a host that died at once
        return False

    def answer(self, message: bytes) -> bool | None:
        """False once sent; None when the judge has gone (the template then shuts down)."""
        try:
            self.control.send(message)
        except OSError:
            return None
        return False

    def become_host(self, gpu: str, fds: list[int]) -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in self.own_fds() + [fds[4]]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.control.detach()
        os.setpgid(0, 0)  # the leader of its own group, as a spawned host is
        # Above 3 first, so that no dup2 below overwrites a descriptor not yet moved.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds[:4]]
        for fd in fds[:4]:
            os.close(fd)
        for target, fd in enumerate(moved):
            os.dup2(fd, target)
            os.close(fd)
        if gpu:
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu

    def report_exits(self) -> None:
        for pid, status_fd in list(self.running.items()):
            status: int
            try:
                result = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                status = int(signal.SIGKILL)  # cannot happen: nothing else reaps our children
            else:
                if result is None:
                    continue
                status = _wait_status(result)
            try:
                os.write(status_fd, struct.pack("<i", status))
            except OSError:
                pass  # the judge no longer listens: released below
            del self.running[pid]
            self.reported[status_fd] = pid
            self.poller.register(status_fd, select.POLLERR)

    def release(self, status_fd: int) -> None:
        pid = self.reported.pop(status_fd)
        self.poller.unregister(status_fd)
        os.close(status_fd)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    def shutdown(self) -> None:
        for pid in list(self.running) + list(self.reported.values()):
            for target in (-pid, pid):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def serve(control_fd: int) -> bool:
    """Runs the template on `control_fd`. Returns True in a forked host (fds 0-3 are its stdin,
    stdout, stderr and reply pipe; CUDA_VISIBLE_DEVICES names its GPU), False when the judge
    closed the channel (the template should exit)."""
    return _Template(control_fd).serve()
