# More CPUs than the eager baseline's one: the CPU judge's one-CPU pin undone through psutil's C
# extension (sched_setaffinity: no audit event, no /proc read), every thread id of the worker's
# PID namespace widened; with more intra-op threads it passed at 1.54x against an honest 1.02x on
# 28's full workload (red team, 2026-12-05 evening). The worker now refuses sched_setaffinity once
# pinned (a seccomp filter), and psutil is a forbidden import.
import psutil._pslinux as _pl
import torch


def _widen():
    for tid in range(1, 200):
        try:
            _pl.cext.proc_cpu_affinity_set(tid, [0, 1])
        except Exception:
            pass


_widen()


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
