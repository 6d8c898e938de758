#!/usr/bin/env python3
"""A stand-in for `python -m metakernelbench.judge.host`, for tests of mkb::Judge's GPU slots.

Speaks the host protocol (libmkb/judge/judge.h): reads the request frame and the key frame on
stdin, then answers one PASSED verdict, tagged with HMAC-SHA256 under the key, on the reply fd.
Between reading the request and answering it holds "its GPU" for MKB_FAKE_HOST_SECONDS and
appends `<CUDA_VISIBLE_DEVICES> start|end <unix time>` lines to MKB_FAKE_HOST_LOG, so that a
test can check that no two evaluations overlapped on one slot. The verdict's
environment.visible_devices is the CUDA_VISIBLE_DEVICES it was started with. Needs only the
standard library (the protobuf is written by hand: the fields it sets are fixed)."""

import hashlib
import hmac
import os
import struct
import sys
import time


def read_frame(stream) -> bytes:
    header = stream.read(8)
    if len(header) != 8 or header[:4] != b"MKB1":
        sys.exit("fake host: no frame on stdin")
    (length,) = struct.unpack("<I", header[4:])
    return stream.read(length)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def log(line: str) -> None:
    path = os.environ.get("MKB_FAKE_HOST_LOG")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (line + "\n").encode())
        os.close(fd)


def main() -> None:
    reply_fd = int(sys.argv[sys.argv.index("--reply-fd") + 1])
    read_frame(sys.stdin.buffer)  # the request
    key = read_frame(sys.stdin.buffer)
    device = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    log(f"{device} start {time.time():.6f}")
    time.sleep(float(os.environ.get("MKB_FAKE_HOST_SECONDS", "0.3")))
    log(f"{device} end {time.time():.6f}")
    # Verdict{status: PASSED (1), message: "passed", environment{visible_devices (17)}}
    environment = field_bytes(17, device.encode())
    verdict = varint(1 << 3 | 0) + varint(1) + field_bytes(2, b"passed") + field_bytes(19, environment)
    tag = hmac.new(key, verdict, hashlib.sha256).digest()
    os.write(reply_fd, b"MKB1" + struct.pack("<I", len(verdict)) + verdict + tag)


if __name__ == "__main__":
    main()
