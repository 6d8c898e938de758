# (Red team, 2026-12-05 night: an `exception` whose text carried the file, no finding.)
# File read with no audit event: UntypedStorage.from_file reached through an instance
# (x.untyped_storage().from_file; a rule on the dotted path torch.UntypedStorage.from_file misses
# it) opens and maps a file in C++ (no `open` event for the runtime file rule to see). The
# contents leave in the exception text.
import torch

PATH = "/etc/os-release"


def solve(x, residual, weight):
    n = 64
    s = x.untyped_storage().from_file(PATH, False, n)  # the classmethod through an instance
    t = torch.empty(0, dtype=torch.uint8).set_(s)
    raise RuntimeError("read past the audit: " + repr(bytes(t.tolist())))
