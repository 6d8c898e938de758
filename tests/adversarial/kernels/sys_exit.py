# Exits the worker cleanly in the middle of solve.
import sys


def solve(x, residual, weight):
    sys.exit(0)
