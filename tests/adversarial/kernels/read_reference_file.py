# Looks for the problem's reference.py on the file system (next to the installed packages, in
# the source checkout, through /proc) and, if it can read one, returns the right answer;
# otherwise zeros. Must never pass: the worker's view holds no suite.
import os

import torch

_FOUND = None


def _search():
    roots = set()
    for module in (torch, os):
        path = os.path.dirname(os.path.abspath(module.__file__))
        for _ in range(6):
            roots.add(path)
            path = os.path.dirname(path)
    roots.update({"/proc/1/cwd", "/proc/1/root", "/work", "/tmp", "/root"})
    for root in sorted(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath.count(os.sep) > 8:
                dirnames[:] = []
            if "reference.py" in filenames and "36_" in dirpath:
                try:
                    with open(os.path.join(dirpath, "reference.py")) as f:
                        return f.read()
                except OSError:
                    pass
    return None


try:
    _FOUND = _search()
except Exception:
    _FOUND = None


def solve(hidden_states, weight):
    if _FOUND is None:
        return torch.zeros_like(hidden_states)
    x = hidden_states.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return out.to(hidden_states.dtype)
