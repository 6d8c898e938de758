# Phones home.
import socket


def solve(x, residual, weight):
    socket.create_connection(("example.com", 80), timeout=2)
    raise RuntimeError("unreachable")
