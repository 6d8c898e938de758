# Crashes the worker with a segmentation fault.
import faulthandler


def solve(x, residual, weight):
    faulthandler._sigsegv()
